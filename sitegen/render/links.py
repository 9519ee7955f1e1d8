"""A page's view of the URL table: relative links from one page, for templates and code."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import PurePosixPath

from sitegen.render import urls


class Linker:
    """Build relative hrefs from one page (templates call it as ``u``)."""

    def __init__(self, page: PurePosixPath, root: str | None = None) -> None:
        """Link from ``page``; a given ``root`` (the site's base URL) makes links absolute."""
        self.page = page
        self.root = urls.root_of(page) if root is None else root

    def __call__(self, target: PurePosixPath | str, fragment: str = "") -> str:
        """Return the link to any site file."""
        link = self.root + urls.encoded(target)
        return f"{link}#{fragment}" if fragment else link

    def jobs(self, name: str | None = None) -> str:
        """Return the link to the front page of the jobs list, or to its archive page ``name``."""
        return self(urls.FRONT if name is None else urls.list_page(name))

    def job(self, job_id: str, fragment: str = "") -> str:
        """Return the link to a job's page (the same as ``self(urls.job_page(job_id))``)."""
        # From encoded segments: the jobs list calls it once per job, no PurePosixPath per link.
        link = self.root + urls.job_file(urls.encoded_segment(job_id), urls.INDEX)
        return f"{link}#{fragment}" if fragment else link

    def stage(self, job_id: str, segment: str) -> str:
        """Return the link to a stage's page (the same as ``self(urls.stage_page(…))``)."""
        # Like job(): no PurePosixPath per link.
        name = urls.encoded_segment(urls.stage_file_name(segment))
        return self.root + urls.job_file(urls.encoded_segment(job_id), name)

    def stage_tasks(self, job_id: str, segment: str, page: int) -> str:
        """Return the link to a page of a stage's task table (page 1: the stage page)."""
        if page <= 1:
            return self.stage(job_id, segment)
        # Like job(): no PurePosixPath per link (a pager makes four of them, twice a page).
        name = urls.encoded_segment(f"tasks-{segment}")
        return self.root + urls.job_file(urls.encoded_segment(job_id), f"{name}/{page}.html")

    def stage_tasks_pages(self, job_id: str, segment: str) -> Callable[[int], str]:
        """Return a function that links page ``n`` of a stage's task table (for a pager)."""
        return functools.partial(self.stage_tasks, job_id, segment)

    def raw_log(self, job_id: str) -> str:
        """Return the link to a job's gzip-compressed original event log."""
        return self(urls.raw_log(job_id))

    def name(self, job_name: str) -> str:
        """Return the link to the page of a recurring job (all runs of ``job_name``)."""
        return self(urls.name_page(job_name))

    def static(self, name: str) -> str:
        """Return the link to a shipped asset."""
        return self(f"{urls.STATIC_DIR}/{name}")

    def api(self, template: str, **segments: str) -> str:
        """Return the link to an API endpoint's exact-body file."""
        return self.root + urls.api_href(template, **segments)
