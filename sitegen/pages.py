"""Render the HTML pages: one context per page type, fed from the same model as the API."""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

import jinja2

from sitegen.eventlog.reader import LogRead
from sitegen.model import JobSummary, Problem, RunningJob
from sitegen.templates import default_template_dir, environment
from sitegen.writer import SiteWriter

SITE_TITLE = "Ballista job history"


class PageRenderer:
    """Hold the Jinja environment; picklable so process-pool workers can use it."""

    def __init__(self, template_dir: str | None = None) -> None:
        self.template_dir = template_dir
        self._env: jinja2.Environment | None = None

    def __getstate__(self) -> dict[str, Any]:
        """Drop the environment when pickled; workers rebuild it."""
        return {"template_dir": self.template_dir, "_env": None}

    @property
    def env(self) -> jinja2.Environment:
        """Return the (lazily built) Jinja environment."""
        if self._env is None:
            self._env = environment(Path(self.template_dir) if self.template_dir else None)
        return self._env

    def template_dirs(self) -> list[Path]:
        """Return the directories templates are loaded from (for the build fingerprint)."""
        dirs = [Path(self.template_dir)] if self.template_dir else []
        return [*dirs, default_template_dir()]

    def render(self, template: str, root: str, **context: Any) -> bytes:
        """Render one page; ``root`` is the relative path back to the site root."""
        page = self.env.get_template(template)
        return page.render(root=root, site_title=SITE_TITLE, **context).encode()

    def job_roots(self, job_id: str) -> list[str]:
        """Return the directories a job's pages live in (moved into place as a unit)."""
        return []

    def job_pages(self, writer: SiteWriter, read: LogRead, summary: JobSummary) -> None:
        """Write one job's HTML pages."""

    def site_pages(
        self,
        writer: SiteWriter,
        jobs: list[JobSummary],
        running: list[RunningJob],
        problems: list[Problem],
    ) -> None:
        """Write the listing pages and the 404 page."""
        writer.write(PurePosixPath("404.html"), self.render("404.html", root=""))
        ordered = sorted(jobs, key=lambda j: j.job_id)
        ordered.sort(key=lambda j: j.start_time, reverse=True)
        writer.write(
            PurePosixPath("index.html"),
            self.render("jobs.html", root="", jobs=ordered, running=running, problems=problems),
        )
