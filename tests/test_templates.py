from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

import jinja2
import pytest
from click.testing import CliRunner, Result

from sitegen.builder.map.pool import MIN_ITEMS
from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.builder.report import BuildReport
from sitegen.cli import cli
from sitegen.examples import EXAMPLE_LOG_DIR
from sitegen.render.pager import pager_nav
from sitegen.render.pages import PageRenderer
from sitegen.render.templates import default_template_dir
from tests.helpers.logs import FAILED_JOB, job_lines, write


def test_environment_is_strict_and_escapes() -> None:
    env = PageRenderer().env
    assert env.undefined is jinja2.StrictUndefined
    with pytest.raises(jinja2.UndefinedError):
        env.from_string("{{ missing }}").render()
    assert env.from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"


def test_templates_call_plain_functions_and_those_that_take_the_context() -> None:
    @jinja2.pass_context
    def title_of(context: jinja2.runtime.Context, suffix: str) -> str:
        return f"{context['title']}{suffix}"

    class Shout:
        def word(self, text: str) -> str:
            return text.upper()

    page = PageRenderer().env.from_string(
        "{{ plain('<x>') }}|{{ shout.word('a') }}|{{ title_of('!') }}|{{ ns.f(2) }}"
    )
    ns = type("Ns", (), {"f": staticmethod(lambda n: n * 21)})
    text = page.render(plain=str.strip, shout=Shout(), title_of=title_of, title="T", ns=ns)
    assert text == "&lt;x&gt;|A|T!|42"


def test_markup_filters_escape_and_the_old_macros_still_print_them() -> None:
    env = PageRenderer().env
    render = env.from_string(
        '{% import "_macros.html" as m %}'
        "{{ s|badge }}|{{ m.badge(s) }}|{{ t|time_tag }}|{{ m.time(t) }}|{{ 0|time_tag }}|"
        "{{ n|num_cell }}|{{ m.num(n) }}|{{ none|num_cell }}|{{ x|num_cell }}"
    ).render
    parts = render(s="<Failed>", t=1_767_225_600_123, n=1234567, x=2500.5).split("|")
    assert parts == [
        '<span class="badge st-failed">&lt;Failed&gt;</span>',
        '<span class="badge st-failed">&lt;Failed&gt;</span>',
        '<time datetime="2026-01-01T00:00:00.123Z">2026-01-01T00:00:00Z</time>',
        '<time datetime="2026-01-01T00:00:00.123Z">2026-01-01T00:00:00Z</time>',
        "—",
        '<td class="num" data-v="1234567">1,234,567</td>',
        '<td class="num" data-v="1234567">1,234,567</td>',
        '<td class="num">—</td>',
        '<td class="num" data-v="2500.5">2,500.5</td>',
    ]


def test_the_macros_are_there_without_an_import_in_an_override(tmp_path: Path) -> None:
    # An override page that extends the frame and calls m.badge, as one written for the frame
    # that imported _macros.html did: m is a global now, made once.
    (tmp_path / "custom.html").write_text(
        '{% extends "sitegen/base.html" %}{% block title %}T {{ s }}{% endblock %}'
        "{% block content %}{{ m.badge(s) }}|{{ self.title() }}{% endblock %}"
    )
    renderer = PageRenderer(template_dir=tmp_path)
    text = renderer.render("custom.html", PurePosixPath("x.html"), s="<b>").decode()
    badge = str(renderer.env.from_string("{{ s|badge }}").render(s="<b>"))
    assert "&lt;b&gt;</span>" in badge
    assert f'<main id="main">\n{badge}|T &lt;b&gt;</main>' in text
    assert "<title>T &lt;b&gt;</title>" in text
    assert '<meta name="description" content="T &lt;b&gt;. Built from' in text


def test_a_pager_links_first_previous_next_last_and_the_macro_prints_the_same() -> None:
    env = PageRenderer().env
    macro = env.from_string(
        '{% import "_macros.html" as m %}{{ m.pager(n, c, href, w, "Task <pages>", "top") }}'
    ).render
    function = env.from_string('{{ pager_nav(n, c, href, w, "Task <pages>", "top") }}').render
    href = "p{}.html?a&b".format
    words = ("First", "Previous", "Next", "Last")
    pages = [macro(n=n, c=3, href=href, w=words) for n in (1, 2, 3)]
    assert pages == [function(n=n, c=3, href=href, w=words) for n in (1, 2, 3)]
    nav = '<nav class="pager" aria-label="Task &lt;pages&gt;, top">\n'
    back = (
        '<a href="p1.html?a&amp;b">« First</a> <a rel="prev" href="p{}.html?a&amp;b">‹ Previous</a>'
    )
    on = '<a rel="next" href="p{}.html?a&amp;b">Next ›</a> <a href="p3.html?a&amp;b">Last »</a>'
    assert pages == [
        f"{nav}<span>Page 1 of 3</span>\n{on.format(2)}</nav>\n",
        f"{nav}{back.format(1)}<span>Page 2 of 3</span>\n{on.format(3)}</nav>\n",
        f"{nav}{back.format(2)}<span>Page 3 of 3</span>\n</nav>\n",
    ]
    assert macro(n=1, c=1, href=href, w=words) == ""  # one page: no pager
    # Its defaults and keywords are pager_nav's own.
    plain = env.from_string('{% import "_macros.html" as m %}{{ m.pager(2, 3, href) }}')
    keyed = env.from_string(
        '{% import "_macros.html" as m %}{{ m.pager(2, 3, href, place="bottom") }}'
    )
    assert plain.render(href=href) == str(pager_nav(2, 3, href))
    assert keyed.render(href=href) == str(pager_nav(2, 3, href, place="bottom"))
    assert 'aria-label="Pages, bottom"' in keyed.render(href=href)
    assert "« Newest</a>" in plain.render(href=href)


def test_every_shipped_template_is_used(example_site: tuple[Path, BuildReport]) -> None:
    # The example build renders every page template under StrictUndefined (page.html is
    # covered by the --pages test); a template nobody renders would hide its errors.
    names = {p.name for p in default_template_dir().glob("*.html")}
    assert names == {
        "404.html", "_macros.html", "_stages_table.html", "base.html", "executors.html",
        "job.html", "jobs.html", "page.html", "problems.html", "running.html", "stage.html",
        "_runs.html", "recurring.html", "name.html", "failures.html", "insights.html",
        "sql.html", "compare.html", "compare_any.html",
    }  # fmt: skip


def test_pages_say_noindex_by_default_and_carry_a_csp(
    example_site: tuple[Path, BuildReport],
) -> None:
    site, _ = example_site
    for rel in ("index.html", f"jobs/{FAILED_JOB}/index.html", "404.html"):
        text = (site / rel).read_text()
        assert '<meta name="robots" content="noindex, nofollow">' in text
        assert "script-src 'self'" in text and "style-src 'self'" in text
        assert "<script>" not in text and " style=" not in text and "<style" not in text


def test_example_counts_and_listing(example_site: tuple[Path, BuildReport]) -> None:
    site, report = example_site
    index = (site / "index.html").read_text()
    assert index.count("<tr>") == len(report.jobs) + 1  # rows plus the header row
    assert "Job failed due to stage 5 failed: Arrow error: Divide by zero error" in index
    assert "daily revenue &lt;report&gt; &amp; &#34;audit&#34;" in index
    problems = (site / "problems" / "index.html").read_text()
    assert "0d9TH4Q.eventlog" in problems and ">14<" in problems
    running = (site / "running" / "index.html").read_text()
    assert "GHZbKoX" in running


def test_options_robots_title_templates_pages_and_notes(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    for log in EXAMPLE_LOG_DIR.glob(f"{FAILED_JOB}.eventlog"):
        (logs / log.name).write_bytes(log.read_bytes())
    (logs / "notes").mkdir()
    (logs / "notes" / f"{FAILED_JOB}.md").write_text(
        "Known flaky: **divide by zero** in q9.\n\n<script>alert(1)</script>"
        '<a href="javascript:alert(2)">x</a> <b onclick="alert(3)">y</b>\n'
    )
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "runbook.md").write_text("# On-call runbook\n\n| a | b |\n|:--|--:|\n| 1 | 2 |\n")
    (pages / "about.md").write_text("No heading here.\n")
    theme = tmp_path / "theme"
    (theme / "static").mkdir(parents=True)
    (theme / "404.html").write_text(
        '{% extends "base.html" %}{% block content %}<p>custom 404</p>{% endblock %}'
    )
    (theme / "static" / "style.css").write_text("body { color: teal; }\n")
    result = CliRunner().invoke(
        cli,
        [
            "build", "--event-log-dir", str(logs), "--output", str(tmp_path / "site"),
            "--pages", str(pages), "--templates", str(theme), "--title", "Prod <history>",
            "--robots", "--workers", "1",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    site = tmp_path / "site"
    job = (site / "jobs" / FAILED_JOB / "index.html").read_text()
    assert "noindex" not in job
    assert "Prod &lt;history&gt;" in job
    assert "<strong>divide by zero</strong>" in job
    assert "alert(" not in job.split("Operator note", 1)[1].split("</section>", 1)[0]
    assert "custom 404" in (site / "404.html").read_text()
    assert "Stage DAG" in job  # templates not overridden stay the shipped ones
    assert (site / "static" / "style.css").read_text() == "body { color: teal; }\n"
    assert (site / "static" / "tables.js").is_file()
    runbook = (site / "pages" / "runbook" / "index.html").read_text()
    assert '<th align="right">b</th>' in runbook
    assert 'href="../../pages/runbook/index.html" aria-current="page">On-call runbook' in runbook
    assert ">about</a>" in job  # a page without a heading is titled by its file name


def test_build_options_defaults_keep_the_shipped_look(tmp_path: Path) -> None:
    options = BuildOptions(log_dirs=EXAMPLE_LOG_DIR, output=tmp_path / "site", workers=1)
    assert options.robots is False and options.title == "Ballista job history"
    report = build(options)
    assert report.published == 25


def test_cli_default_title_is_the_renderers() -> None:
    import inspect

    from sitegen.cli import cli
    from sitegen.render.pages import PageRenderer

    (title,) = (p for p in cli.commands["build"].params if p.name == "title")
    assert title.default == inspect.signature(PageRenderer).parameters["title"].default


def _build_with(tmp_path: Path, templates: dict[str, str], workers: str = "1") -> Result:
    """Build the failed example job with these override templates, quietly, via the CLI."""
    theme = tmp_path / "theme"
    theme.mkdir(exist_ok=True)
    for name, text in templates.items():
        (theme / name).write_text(text, encoding="utf-8")
    logs = tmp_path / "logs"
    logs.mkdir(exist_ok=True)
    example = EXAMPLE_LOG_DIR / f"{FAILED_JOB}.eventlog"
    (logs / example.name).write_bytes(example.read_bytes())
    args = ["build", "--event-log-dir", str(logs), "--output", str(tmp_path / "site")]
    return CliRunner().invoke(cli, [*args, "--templates", str(theme), "-q", "--workers", workers])


@pytest.mark.parametrize(
    ("templates", "where", "message"),
    [
        (
            {"job.html": '{% extends "sitegen/job.html" %}\n{% block content %}\n{{ x + }}\n'},
            "job.html:3",
            "template syntax error: unexpected 'end of print statement'",
        ),
        (
            {"job.html": '{% extends "sitegen/job.html" %}\n'
             "{% block content %}\n<p>{{ nonesuch }}</p>\n{% endblock %}\n"},
            "job.html:3",
            "template error: 'nonesuch' is undefined",
        ),
        (
            {"base.html": '{% extends "base.html" %}\n'},
            "base.html:1",
            'template extends or includes itself; an override extends the template it '
            'replaces as "sitegen/<name>"',
        ),
        (
            {"stage.html": '{% extends "sitegen/stage.html" %}\n{% include "nowhere.html" %}\n'},
            "stage.html:2",
            "template not found: nowhere.html",
        ),
    ],
    ids=["syntax", "undefined", "extends-itself", "missing-include"],
)  # fmt: skip
def test_a_broken_override_is_one_line_naming_its_file_and_line(
    tmp_path: Path, templates: dict[str, str], where: str, message: str
) -> None:
    result = _build_with(tmp_path, templates)
    assert result.exit_code == 1
    assert result.output == f"Error: {tmp_path / 'theme'}/{where}: {message}\n"
    assert not (tmp_path / "site").exists()  # nothing half-written is published


def test_a_template_error_in_a_worker_process_reads_the_same(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    for n in range(MIN_ITEMS):  # enough logs for a pool of workers
        write(logs / f"j{n}.eventlog", job_lines(f"j{n}"))
    theme = tmp_path / "theme"
    theme.mkdir()
    (theme / "job.html").write_text(
        '{% extends "sitegen/job.html" %}{% block content %}{{ nope.x }}{% endblock %}\n'
    )
    args = ["build", "--event-log-dir", str(logs), "--output", str(tmp_path / "site")]
    result = CliRunner().invoke(cli, [*args, "--templates", str(theme), "-q", "--workers", "2"])
    assert result.exit_code == 1
    assert result.output == f"Error: {theme}/job.html:1: template error: 'nope' is undefined\n"


def test_the_documented_banner_override_adds_a_banner_and_changes_nothing_else(
    tmp_path: Path,
) -> None:
    doc = (Path(__file__).parent.parent / "docs" / "code-layout.md").read_text()
    (banner,) = re.findall(r"^```jinja\n(.*?)^```", doc, flags=re.M | re.S)
    result = _build_with(tmp_path, {"base.html": banner})
    assert result.exit_code == 0, result.output
    plain = tmp_path / "plain"
    build(BuildOptions(tmp_path / "logs", plain, workers=1))
    line = '<p class="banner">Staging cluster: jobs older than 30 days are removed.</p>\n'
    for page in ("index.html", f"jobs/{FAILED_JOB}/index.html", "problems/index.html"):
        themed = (tmp_path / "site" / page).read_text()
        assert f'Skip to content</a>\n{line}<header class="site">' in themed
        assert themed.replace(line, "") == (plain / page).read_text()
