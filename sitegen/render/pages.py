"""Render the HTML pages: one context per page type, fed from the same model as the API."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple

import jinja2
from markupsafe import Markup

from sitegen.diagnose.analysis import JobAnalysis
from sitegen.diagnose.diagnosis import findings_json
from sitegen.diagnose.failures import ExecutorError
from sitegen.diagnose.fleet import HEALTHY, FleetExecutor
from sitegen.diagnose.recurring import RunContext
from sitegen.diagnose.replanned import DROPPED, stages_named
from sitegen.diagnose.trace import trace
from sitegen.eventlog.logfiles import label_of
from sitegen.eventlog.notes import Note
from sitegen.eventlog.payload import PERCENTILE_KEYS, as_int
from sitegen.eventlog.reader import LogRead
from sitegen.finding import Finding
from sitegen.layout import DEFAULT_TITLE
from sitegen.model import JobSummary, Problem, RunningJob
from sitegen.publish.writer import SiteWriter
from sitegen.render import cells, runs, sqlpage, urls
from sitegen.render.compare import comparison
from sitegen.render.finding_links import shown
from sitegen.render.fleet import verdict_words
from sitegen.render.fragments import Fragment, Splicer
from sitegen.render.jobpage import FAILURES_SHOWN, TaskTable, failures, job_page, stage_pictures
from sitegen.render.links import Linker
from sitegen.render.listing import ListPage, job_rows
from sitegen.render.markdown_pages import OperatorPage, discover_pages
from sitegen.render.markdown_pages import render as render_md
from sitegen.render.pager import pager_nav
from sitegen.render.schedulers import SchedulerRow
from sitegen.render.stages_table import stage_table_rows
from sitegen.render.templates import default_template_dir, environment, template_error
from sitegen.svg import fleet as fleet_svg
from sitegen.svg import timeline
from sitegen.svg.text import status_class
from sitegen.text import formatting
from sitegen.text.htmlsafe import esc
from sitegen.text.shorten import Whole

JOBS_PER_EXECUTOR = 50
# The most frequent errors of an executor's failed attempts the page and fleet.json show.
ERRORS_PER_EXECUTOR = 5
# What the page comparing any two runs puts in its file patterns where a job id goes.
COMPARE_ID = "__ID__"


@dataclass
class ExecutorRow:
    """One executor across the whole site; ``jobs`` keeps only the newest few."""

    executor_id: str
    tasks: int = 0
    failed: int = 0
    busy_ms: int = 0
    job_count: int = 0
    jobs: list[tuple[JobSummary, int, int, int]] = field(default_factory=list)
    # What its failed attempts ended with, the most frequent first.
    errors: list[ExecutorError] = field(default_factory=list)


# Compiling the templates costs more than rendering a job's pages. Each process keeps its
# environments (and their compiled templates); pickled renderers sent to workers find them.
_ENVIRONMENTS: dict[tuple[Path | None, str], jinja2.Environment] = {}


# The header link of the page being shown.
CURRENT = ' aria-current="page"'


class Nav(NamedTuple):
    """A page's header links: (label, href, current?) each, and the same as ``<li>`` markup."""

    links: list[tuple[str, str, bool]]
    items: Markup


class PageRenderer:
    """Hold the Jinja environment and page options; picklable so workers can use it.

    It only renders: how each log is read, and what is written of it beside its pages, are
    the map step's own options, which carry the renderer to the workers with them.
    """

    def __init__(
        self,
        template_dir: Path | str | None = None,
        *,
        title: str = DEFAULT_TITLE,
        robots: bool = False,
        base_url: str | None = None,
        pages_dir: Path | None = None,
        cache_key: str = "",
        sql_engine: Path | None = None,
        data: bool = False,
    ) -> None:
        self.template_dir = Path(template_dir) if template_dir else None
        self.title = title
        self.robots = robots
        self.base_url = base_url
        # The query page's engine: copied from this directory into the site, else the CDN's;
        # and whether the site has the tables it reads (data/).
        self.sql_engine = sql_engine
        self.data = data
        # Says which templates these are (the build fingerprint): environments are shared
        # per process under it, so a changed template (sitegen serve) is never served stale.
        self.cache_key = cache_key
        self.operator_pages: list[OperatorPage] = discover_pages(pages_dir)
        self._env: jinja2.Environment | None = None
        # The pages' templates by name, once compiled: the environment's own cache is an LRU
        # behind a lock, looked up again on every page.
        self._templates: dict[str, jinja2.Template] = {}
        self._splice = Splicer()
        # The header's links: their targets, and their links and markup by the root a page
        # links from and the target it is (None: none), the same few on every page of a depth.
        self._nav_targets = [
            ("Jobs", urls.FRONT),
            ("Running", urls.RUNNING),
            ("Executors", urls.EXECUTORS),
            ("Recurring", urls.RECURRING),
            ("Failures", urls.FAILURES),
            ("Insights", urls.INSIGHTS),
            ("Problems", urls.PROBLEMS),
            ("SQL", urls.SQL),
        ]
        self._nav_targets += [(p.title, urls.operator_page(p.slug)) for p in self.operator_pages]
        self._nav_pages = {target for _, target in self._nav_targets}
        self._navs: dict[tuple[str, PurePosixPath | None], Nav] = {}

    def __getstate__(self) -> dict[str, Any]:
        """Drop the environment when pickled; workers rebuild it."""
        state = dict(self.__dict__)
        state["_env"] = None
        state["_templates"] = {}
        return state

    @property
    def env(self) -> jinja2.Environment:
        """Return the Jinja environment, built once per process and templates."""
        if self._env is None:
            key = (self.template_dir, self.cache_key)
            env = _ENVIRONMENTS.get(key)
            if env is None:
                # A long `sitegen serve` sees many template edits: keep only the newest.
                _ENVIRONMENTS.clear()
                env = _ENVIRONMENTS[key] = self._build_env()
            self._env = env
        return self._env

    def warm(self) -> None:
        """Compile the per-job templates now, so forked workers inherit them compiled."""
        for name in ("job.html", "stage.html", "compare.html"):
            try:
                self._templates[name] = self.env.get_template(name)
            except (jinja2.TemplateError, RecursionError) as exc:
                raise template_error(exc, name, self.template_dir) from exc

    def _build_env(self) -> jinja2.Environment:
        """Build the Jinja environment with the formatting filters."""
        env = environment(self.template_dir)
        env.filters.update(
            number=formatting.number,
            rows=formatting.rows,
            duration=formatting.duration,
            timestamp=formatting.timestamp,
            timestamp_ms=formatting.timestamp_ms,
            compute_time=formatting.compute_time,
            page_text=lambda text: Whole(formatting.page_text(text)),
            filesize=formatting.filesize,
            status_class=status_class,
            lane_id=urls.lane_anchor,
            num_cell=cells.num_cell,
            badge=cells.badge,
            problem_badge=cells.problem_badge,
            time_tag=cells.time_tag,
            rows_cell=cells.rows_cell,
            stage_rows_cell=cells.stage_rows_cell,
            rows_text=cells.rows_text,
            duration_cell=cells.duration_cell,
            rows_cells=cells.rows_cells,
            duration_cells=cells.duration_cells,
            comparison_rows=runs.comparison_rows,
            side_by_side_rows=runs.side_by_side_rows,
        )
        env.globals.update(
            urls=urls,
            zip=zip,
            pager_nav=pager_nav,
            pkeys=PERCENTILE_KEYS,
            stage_colours=timeline.COLOURS,
            dropped_stage=DROPPED,
            dropped_list=stages_named,
            change=runs.change,
            job_row=runs.job_row,
            stage_table_rows=stage_table_rows,
            rows_change=runs.rows_change,
            recorded=cells.recorded,
        )
        # The old macros, made once (they read only filters and globals): an import in the
        # page frame made them again for every page.
        env.globals["m"] = env.get_template("_macros.html").module
        return env

    def nav(self, link: Linker) -> Nav:
        """Return the header links (label, href, current?) for one page, and their markup."""
        current = link.page if link.page in self._nav_pages else None
        key = (link.root, current)
        found = self._navs.get(key)
        if found is None:
            links = [(label, link(to), to == link.page) for label, to in self._nav_targets]
            markup = Markup(
                "\n".join(
                    f'<li><a href="{esc(href)}"{CURRENT if here else ""}>{esc(label)}</a></li>'
                    for label, href, here in links
                )
            )
            found = self._navs[key] = Nav(links, markup)
        return found

    def render(
        self,
        template: str,
        page: PurePosixPath,
        *,
        fragments: Sequence[Fragment] = (),
        root: str | None = None,
        **context: Any,
    ) -> bytes:
        """Render one page; ``fragments`` go in as bytes.

        Links in it are relative to ``page``, or absolute from ``root`` when given.
        """
        link = Linker(page, root)
        nav = self.nav(link)
        try:
            compiled = self._templates.get(template)
            if compiled is None:
                compiled = self._templates[template] = self.env.get_template(template)
            return self._splice(
                lambda: compiled.render(
                    u=link,
                    root=link.root,
                    site_title=self.title,
                    robots=self.robots,
                    nav=nav.links,
                    nav_items=nav.items,
                    **context,
                ),
                fragments,
            )
        except (jinja2.TemplateError, RecursionError) as exc:
            # One line naming the template and its line, not a traceback through Jinja.
            raise template_error(exc, template, self.template_dir) from exc

    def job_dirs(self, job_id: str) -> list[str]:
        """Return the directories a job's pages live in (moved into place as a unit)."""
        return [str(urls.job_pages_dir(job_id))]

    def job_dirs_parents(self) -> list[str]:
        """Return the directories every job's ``job_dirs`` live in (made before the map)."""
        return [urls.JOBS_DIR]

    def job_pages(
        self,
        writer: SiteWriter,
        read: LogRead,
        analysis: JobAnalysis,
        note: Note | None = None,
        context: RunContext | None = None,
    ) -> None:
        """Write one job's page and its stage pages (map step, in a worker)."""
        summary = analysis.summary
        job_id = summary.job_id
        page = urls.job_page(job_id)
        job = job_page(read, analysis, page, render_md(note.text) if note else None, context)
        damaged = read.damage_message()
        # Named where the log names it, or where the site reads several log dirs (each a
        # scheduler's): a one-dir site of logs without the key has one scheduler, unnamed.
        start = read.job_start
        named = (start is not None and start.scheduler_id is not None) or label_of(summary.file)
        html = self.render(
            "job.html",
            page,
            job=job,
            damaged=damaged,
            fragments=[job.timeline_svg],
            scheduler=summary.scheduler if named else None,
        )
        writer.write(page, html)
        compared = comparison(summary, read.config, context) if context else None
        if compared is not None:
            # Beside the job page, from its run context: built ahead, works from file://.
            compared_page = urls.compare_file(job_id)
            writer.write(compared_page, self.render("compare.html", compared_page, c=compared))
        # Beside the pages, not under /api (that tree mirrors Ballista's REST API).
        regression = context.regression if context else None
        writer.write(
            urls.findings_file(job_id),
            findings_json(
                job_id,
                summary.findings,
                summary.what_if,
                regression,
                summary.counting,
                {f.stage_id: f.failed for f in summary.stages if f.failed},
            ),
        )
        writer.write(
            urls.trace_file(job_id),
            trace(job_id, read.tasks, [i.stage for i in job.stages], analysis.statuses),
        )
        for info in job.stages:
            graph_svg, hist_svg = stage_pictures(info, job_id)
            failed = failures(info)
            sid = as_int(info.stage.stage_id)
            flags = job.diagnosis.flagged_rows.get(sid) if sid is not None else None
            table = TaskTable(info, flags)
            stage_findings = job.diagnosis.for_stage(sid)
            # Page 1 is the stage page; the others hold only the rest of its task table.
            for number in range(1, table.pages + 1):
                page_file = urls.stage_tasks_page(job_id, info.segment, number)
                rows = table.rows(number)
                writer.write(
                    page_file,
                    self.render(
                        "stage.html",
                        page_file,
                        job=job,
                        info=info,
                        graph_svg=graph_svg,
                        histogram_svg=hist_svg,
                        task_rows=rows,
                        tasks_page=table.page(number),
                        failures=failed[:FAILURES_SHOWN],
                        failures_total=len(failed),
                        findings=shown(stage_findings, job.places, Linker(page_file)),
                        fragments=[rows],
                    ),
                )

    def front_page(
        self,
        writer: SiteWriter,
        jobs: list[JobSummary],
        counts: dict[str, int],
        running: int,
        problems: int,
        older: str | None,
        extra: Mapping[str, Finding] | None = None,
        schedulers: Sequence[SchedulerRow] = (),
    ) -> None:
        """Write the front page of the jobs list: the newest jobs and the site's counts.

        ``extra`` holds the reduce step's findings (regressions) by job id; ``schedulers``
        the site's schedulers when it holds more than one (else none).
        """
        by_count = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        self._jobs_list(
            writer,
            urls.FRONT,
            None,
            jobs,
            extra,
            bool(schedulers),
            total=sum(counts.values()),
            counts=by_count,
            running=running,
            problems=problems,
            newer=None,
            older=older,
            finder=older is not None,
            schedulers=schedulers,
        )

    def archive_page(
        self,
        writer: SiteWriter,
        archive: ListPage,
        jobs: list[JobSummary],
        newer: str | None,
        older: str | None,
        extra: Mapping[str, Finding] | None = None,
        schedulers: Sequence[SchedulerRow] = (),
    ) -> None:
        """Write one archive page of the jobs list (``newer`` None: the front page is newer)."""
        page = urls.list_page(archive.name)
        self._jobs_list(
            writer,
            page,
            archive,
            jobs,
            extra,
            bool(schedulers),
            newer=newer,
            older=older,
            finder=True,
            schedulers=schedulers,
        )

    def scheduler_page(
        self,
        writer: SiteWriter,
        scheduler: str,
        archive: ListPage | None,
        jobs: list[JobSummary],
        newer: str | None,
        older: str | None,
        schedulers: Sequence[SchedulerRow],
        extra: Mapping[str, Finding] | None = None,
    ) -> None:
        """Write one page of a scheduler's jobs list: its newest jobs (``archive`` None) or a span.

        ``newer`` and ``older`` name its neighbours among the scheduler's archive pages
        (``newer`` None: its newest jobs are newer).
        """
        page = urls.scheduler_page(scheduler, archive.name if archive else None)
        link = Linker(page)
        self._jobs_list(
            writer,
            page,
            archive,
            jobs,
            extra,
            True,
            # Its own pages only: the find box of the whole list would leave the filter.
            finder=False,
            newer=None,
            older=None,
            scheduler=scheduler,
            schedulers=schedulers,
            sched_pager={
                "newest": link(urls.scheduler_page(scheduler)),
                "newer": link(urls.scheduler_page(scheduler, newer)),
                "older": link(urls.scheduler_page(scheduler, older)) if older else None,
            },
        )

    def _jobs_list(
        self,
        writer: SiteWriter,
        page: PurePosixPath,
        archive: ListPage | None,
        jobs: list[JobSummary],
        extra: Mapping[str, Finding] | None,
        named: bool,
        **context: Any,
    ) -> None:
        """Write one page of a jobs list (``jobs.html``): its rows, and what the page adds.

        ``named``: the site holds several schedulers, and each row names its own.
        """
        rows = job_rows(jobs, Linker(page), extra or {}, named)
        writer.write(
            page,
            self.render(
                "jobs.html",
                page,
                fragments=[rows],
                archive=archive,
                jobs=jobs,
                job_rows=rows,
                **context,
            ),
        )

    def executors_page(
        self,
        writer: SiteWriter,
        executors: list[ExecutorRow],
        fleet: Sequence[FleetExecutor] = (),
    ) -> None:
        """Write the executors page: the totals, the fleet verdict and its picture over time."""
        judged = {e.executor_id: e for e in fleet}
        writer.write(
            urls.EXECUTORS,
            self.render(
                "executors.html",
                urls.EXECUTORS,
                executors=executors,
                fleet=judged,
                verdicts=verdict_words(fleet),
                bad=[e for e in fleet if e.verdict != HEALTHY],
                # Built from escaped text only (sitegen.svg.fleet escapes every label).
                fleet_chart=Markup(fleet_svg.chart(fleet)),
            ),
        )

    def site_pages(
        self,
        writer: SiteWriter,
        running: list[RunningJob],
        problems: list[Problem],
        published: AbstractSet[str] = frozenset(),
    ) -> set[str]:
        """Write the problems, running, operator and query pages, assets, the 404 page (reduce).

        ``published``: the site-wide files the site holds (by the build state); return those
        left as they are (the query page's engine, see ``sqlpage.write_engine``).
        """
        writer.write(urls.PROBLEMS, self.render("problems.html", urls.PROBLEMS, problems=problems))
        writer.write(
            urls.RUNNING,
            self.render(
                "running.html",
                urls.RUNNING,
                running=sorted(running, key=lambda r: (-r.submitted_at, r.job_id)),
            ),
        )
        for op in self.operator_pages:
            page = urls.operator_page(op.slug)
            body = render_md(op.source.read_text(encoding="utf-8", errors="replace"))
            writer.write(page, self.render("page.html", page, title=op.title, body=body))
        # Hosts show the 404 page at any missing address, at any depth: relative links
        # only resolve at the top level, so it links from the base URL, by default the
        # host's root, where every generated host config (nginx, Caddy, Apache's
        # ErrorDocument, sitegen serve) serves the site and looks for this page.
        not_found = self.render(
            "404.html", urls.NOT_FOUND, root=self.base_url or "/", base_url=self.base_url
        )
        writer.write(urls.NOT_FOUND, not_found)
        for name, data in self.static_files().items():
            writer.write(urls.static(name), data)
        # Any two runs side by side, computed in the browser from the site's own files.
        writer.write(urls.COMPARE, self.render("compare_any.html", urls.COMPARE, id=COMPARE_ID))
        return self.sql_page(writer, published)

    def sql_page(self, writer: SiteWriter, published: AbstractSet[str] = frozenset()) -> set[str]:
        """Write the query page, and the engine's files when the site serves them.

        Return the engine's files left as ``published`` has them.
        """
        local = self.sql_engine is not None
        engine = sqlpage.engine(Linker(urls.SQL), local)
        html = self.render(
            "sql.html",
            urls.SQL,
            engine=engine,
            policy=sqlpage.policy(local),
            data=self.data,
            examples=sqlpage.EXAMPLES,
        )
        writer.write(urls.SQL, html)
        if self.sql_engine is None:
            return set()
        return sqlpage.write_engine(writer, self.sql_engine, published)

    def static_files(self) -> dict[str, bytes]:
        """Return the shipped assets; a file in ``--templates DIR/static`` replaces its twin."""
        found: dict[str, bytes] = {}
        dirs = [default_template_dir() / "static"]
        if self.template_dir is not None:
            dirs.append(self.template_dir / "static")
        for directory in dirs:
            if directory.is_dir():
                for path in sorted(directory.iterdir()):
                    if path.is_file() and not path.name.startswith("."):
                        found[path.name] = path.read_bytes()
        return found
