"""One escaper, one badge, one severity policy, one count of stage colours."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markupsafe import escape

from sitegen.model import PUBLISHED_WITH, SEVERITY, Problem, ProblemKind, ProblemSeverity
from sitegen.render.cells import problem_badge, status_badge
from sitegen.render.pages import PageRenderer
from sitegen.render.templates import default_template_dir
from sitegen.svg import timeline
from sitegen.text.htmlsafe import esc, visible_controls


@pytest.mark.slow  # fuzzing against Jinja's escape
@given(st.text())
def test_esc_is_byte_for_byte_what_the_templates_print(text: str) -> None:
    # Templates print escape(visible_controls(value)) (Jinja's finalize, then autoescape).
    assert esc(text) == str(escape(visible_controls(text)))
    assert not any(ord(c) < 0x20 and c not in "\t\n\x0c\r" for c in esc(text))


def test_esc_escapes_quotes_as_the_templates_do() -> None:
    assert esc("<a href=\"x\" title='y'>&") == "&lt;a href=&#34;x&#34; title=&#39;y&#39;&gt;&amp;"


def test_the_templates_badge_filter_is_the_string_builders_badge() -> None:
    env = PageRenderer().env
    for word in ("Successful", "<Failed & 'odd'>", ""):
        assert env.from_string("{{ w|badge }}").render(w=word) == status_badge(word)


def test_problem_badges_follow_the_severity_policy() -> None:
    env = PageRenderer().env
    shown = {
        kind: env.from_string("{{ p|problem_badge }}").render(p=Problem(kind, "f", "m"))
        for kind in ProblemKind
    }
    for kind, html in shown.items():
        css = "st-failed" if SEVERITY[kind] is ProblemSeverity.ERROR else "st-warning"
        assert html == f'<span class="badge {css}">{kind}</span>'
    assert problem_badge(Problem(ProblemKind.INCOMPLETE, "f", "m")).count("st-warning") == 1


def test_only_warnings_publish_and_every_kind_has_a_severity() -> None:
    assert set(SEVERITY) == set(ProblemKind)
    for kind in ProblemKind:
        problem = Problem(kind, "f", "m")
        assert problem.severity is SEVERITY[kind]
        assert problem.skipped is (
            kind not in PUBLISHED_WITH
        )  # an abandoned run: a warning, no job


def test_the_stylesheet_has_one_colour_class_per_stage_colour() -> None:
    css = (default_template_dir() / "static/style.css").read_text(encoding="utf-8")
    defined = {
        int(n) for n in re.findall(r"^\s*\.c(\d+) \{|\} \.c(\d+) \{", css, re.M) for n in n if n
    }
    assert defined == set(range(timeline.COLOURS))


def test_the_stage_table_swatch_wraps_at_the_stage_colours() -> None:
    env = PageRenderer().env
    source = (default_template_dir() / "_stages_table.html").read_text(encoding="utf-8")
    assert "% stage_colours" in source and "% 10" not in source
    assert env.globals["stage_colours"] == timeline.COLOURS
