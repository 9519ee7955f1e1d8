"""One escaper, one badge, one severity policy, one count of stage colours."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markupsafe import Markup, escape

from sitegen.diagnose.analysis import analyse
from sitegen.eventlog.reader import read_log
from sitegen.model import PUBLISHED_WITH, SEVERITY, Problem, ProblemKind, ProblemSeverity
from sitegen.render import urls
from sitegen.render.cells import problem_badge, status_badge
from sitegen.render.jobpage import build_stages
from sitegen.render.links import Linker
from sitegen.render.pages import PageRenderer
from sitegen.render.stages_table import stage_table_rows
from sitegen.render.templates import default_template_dir
from sitegen.svg import timeline
from sitegen.text.htmlsafe import esc, finalize, print_html, visible_controls
from sitegen.text.shorten import MAX_SHOWN_TEXT, Whole
from tests.helpers.logs import job_lines, write


@pytest.mark.slow  # fuzzing against Jinja's escape
@given(st.text())
def test_esc_is_byte_for_byte_what_the_templates_print(text: str) -> None:
    # Templates print escape(visible_controls(value)) (Jinja's finalize, then autoescape).
    assert esc(text) == str(escape(visible_controls(text)))
    assert not any(ord(c) < 0x20 and c not in "\t\n\x0c\r" for c in esc(text))


class _Html:
    """An object that prints itself as markup (``__html__``)."""

    def __html__(self) -> str:
        return "<b>\x1b</b>"


@pytest.mark.slow  # fuzzing against Jinja's own path
@given(
    st.one_of(
        st.text(),
        st.text(min_size=MAX_SHOWN_TEXT - 2, max_size=MAX_SHOWN_TEXT + 2),
        st.integers(),
        st.booleans(),
        st.floats(),
        st.none(),
        st.text().map(Markup),
        st.text().map(Whole),
        st.just(_Html()),
    )
)
def test_a_printed_value_is_what_jinja_would_print(value: object) -> None:
    # The templates compile ``{{ value }}`` to print_html(value), where Jinja's own code
    # is escape(finalize(value)): the same text for every kind of value.
    assert print_html(value) == str(escape(finalize(value)))


def test_the_templates_print_through_print_html() -> None:
    env = PageRenderer().env
    page = env.from_string("{{ a }}|{{ b }}|{{ c }}|{{ d }}").render(
        a="<x>\x00", b=7, c=Markup("<i>\x1b</i>"), d=Whole("&" * 3)
    )
    assert page == "&lt;x&gt;\u2400|7|<i>\u241b</i>|&amp;&amp;&amp;"
    assert "print_html(" in env.compile("{{ a }}", raw=True)


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


def test_the_stage_table_swatch_wraps_at_the_stage_colours(tmp_path: Path) -> None:
    # The stages table's rows (render/stages_table.py) colour a stage's swatch by its place
    # modulo the timeline's colours, as its bars are.
    path = write(tmp_path / "many.eventlog", job_lines("many", stages=timeline.COLOURS + 2))
    read = read_log(path)
    infos = build_stages(analyse(read, path.name))
    rows = str(stage_table_rows(infos, "many", Linker(urls.job_page("many"))))
    swatches = re.findall(r'class="swatch c(\d+)"', rows)
    assert swatches == [str(n % timeline.COLOURS) for n in range(timeline.COLOURS + 2)]
    assert PageRenderer().env.globals["stage_colours"] == timeline.COLOURS
