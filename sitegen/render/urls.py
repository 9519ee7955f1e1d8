"""Where each HTML page lives and how pages link to each other and to the API files.

Every link is relative (the site works from ``file://``, under a sub-path and at a
host's root), ends in an explicit ``index.html`` or file name (``file://`` has no
directory index), and percent-encodes every segment that came from a log. A job's
pages share one directory, ``jobs/<id>/``, which the pipeline moves into place whole.
"""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import PurePosixPath
from urllib.parse import quote

from sitegen.layout import BY_TEMPLATE, endpoint_parts

INDEX = "index.html"
# A stage's task table is split into pages of this many rows (a stage may have 800,000).
# Measured in headless Chromium (benchmarks/pages.py, docs/phones-and-big-jobs.md): a task
# page's load waits for its first frame, whose table layout and paint grow with the rows
# (about 0.7 ms of main-thread CPU a row). 50 rows halve that part, and the redraw after a
# sort, against 100; 1,000 rows spent over a second in layout alone.
TASKS_PER_PAGE = 50
JOBS_DIR = "jobs"
STATIC_DIR = "static"
# Listing pages live outside ``jobs/`` so that no job id (``page``, ``list``) can collide.
LIST_DIR = "list"
EXECUTORS = PurePosixPath("executors") / INDEX
PROBLEMS = PurePosixPath("problems") / INDEX
RUNNING = PurePosixPath("running") / INDEX
NOT_FOUND = PurePosixPath("404.html")
# Recurring jobs (one page per job name), failure groups, findings across jobs.
NAMES_DIR = "names"
RECURRING = PurePosixPath(NAMES_DIR) / INDEX
FAILURES = PurePosixPath("failures") / INDEX
INSIGHTS = PurePosixPath("insights") / INDEX
# The query page, its engine's local copy (--sql-engine) and the tables it reads (data/).
# Any two runs of a name side by side (``?a=<id>&b=<id>``), computed in the browser.
COMPARE = PurePosixPath("compare") / INDEX
SQL_DIR = "sql"
SQL = PurePosixPath(SQL_DIR) / INDEX
SQL_ENGINE_DIR = f"{SQL_DIR}/engine"
DATA_MANIFEST = PurePosixPath("data") / "manifest.json"
NAMES_JSON = PurePosixPath("names.json")
FAILURES_JSON = PurePosixPath("failures.json")
# The fleet's executors and their verdicts, and the schedulers (render/fleet.py).
FLEET_JSON = PurePosixPath("fleet.json")
SCHEDULERS_DIR = "schedulers"
_SLUG_CHARS = re.compile(r"[^a-z0-9]+")
SLUG_LENGTH = 40
# Names the parts of the find index (every job's id, name, status and start, one part per
# UTC span of up to 2,000 jobs), for finding a job on any listing page.
FIND_INDEX = PurePosixPath(LIST_DIR) / "jobs.js"
OPERATOR_PAGES_DIR = "pages"
_PLAIN_SEGMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


# An absolute path, or an http(s) URL; no spaces, query or fragment.
# A path starts with one slash: ``//host/`` (and ``/\\host/``, which browsers read alike)
# would lead to another host.
_BASE_URL = re.compile(r"(?:https?://[^/\\\s?#]+)?/(?![/\\])(?:[^\\\s?#]*/)?")


def base_url(text: str) -> str:
    """Return ``text`` as the site's base URL, ending in ``/``; raise ValueError if unusable."""
    # It becomes the start of every link on the 404 page: anything else (``javascript:``,
    # a relative path) would not lead to the site's root.
    url = text if text.endswith("/") else text + "/"
    if not _BASE_URL.fullmatch(url):
        raise ValueError(
            f"base URL {text!r} must be a path starting with a single / (/history/) or an "
            "http(s) URL, without spaces, backslashes, query or fragment"
        )
    return url


FRONT = PurePosixPath(INDEX)


def list_page(name: str) -> PurePosixPath:
    """Return the file of the archive page of the jobs list named ``name`` (a UTC span)."""
    return PurePosixPath(list_page_file(name))


def list_page_file(name: str) -> str:
    """Return ``list_page(name)`` as text (the reduce names thousands each build)."""
    # Files, not directories: a directory per page costs more to make than its file.
    return f"{LIST_DIR}/{name}.html"


def find_part(span: str) -> PurePosixPath:
    """Return the file of one part of the find index (named by its UTC span, as pages are)."""
    return PurePosixPath(find_part_file(span))


def find_part_file(span: str) -> str:
    """Return ``find_part(span)`` as text."""
    return f"{LIST_DIR}/find-{span}.js"


def job_pages_dir(job_id: str) -> PurePosixPath:
    """Return the pages directory of one job (moved into place as a unit; not its API files)."""
    # One path parsed, not two and a join: a job makes a dozen of these (its id is safe).
    return PurePosixPath(f"{JOBS_DIR}/{job_id}")


def job_file(job_dir: str, name: str) -> str:
    """Return where a job's file ``name`` lives, from segments raw (paths) or encoded (links)."""
    return f"{JOBS_DIR}/{job_dir}/{name}"


def job_page(job_id: str) -> PurePosixPath:
    """Return the file of a job's page (``job_id`` is raw; the writer checked it is safe)."""
    return PurePosixPath(job_file(job_id, INDEX))


def stage_file_name(stage_segment: str) -> str:
    """Return the file name of one stage's page within its job's directory."""
    return f"stage-{stage_segment}.html"


def stage_page(job_id: str, stage_segment: str) -> PurePosixPath:
    """Return the file of one stage's page, beside the job page."""
    # A file, not a directory per stage: creating directories dominates the cost of a build.
    return PurePosixPath(job_file(job_id, stage_file_name(stage_segment)))


def stage_tasks_page(job_id: str, stage_segment: str, page: int) -> PurePosixPath:
    """Return the file of page ``page`` of a stage's task table; page 1 is the stage page."""
    if page <= 1:
        return stage_page(job_id, stage_segment)
    # A directory only for stages with more than one page. No stage page's file name starts
    # with "tasks-", so no stage id can make the two meet.
    return job_pages_dir(job_id) / f"tasks-{stage_segment}" / f"{page}.html"


@functools.lru_cache(maxsize=4096)
def name_page(job_name: str) -> PurePosixPath:
    """Return the page of one recurring job: ``names/<slug>-<hash>/index.html``.

    Names are arbitrary text: the slug keeps the address readable, and 128 bits of the
    name's hash keep two names from ever sharing a page (even on a case-blind file system,
    as the slug is lower-case and the hash hex).
    """
    slug = _SLUG_CHARS.sub("-", job_name.lower()).strip("-")[:SLUG_LENGTH].strip("-") or "job"
    digest = hashlib.blake2s(job_name.encode("utf-8", "surrogatepass"), digest_size=16)
    return PurePosixPath(NAMES_DIR) / f"{slug}-{digest.hexdigest()}" / INDEX


@functools.lru_cache(maxsize=256)
def scheduler_dir(scheduler: str) -> str:
    """Return the directory of one scheduler's jobs list: ``schedulers/<slug>-<hash>``.

    A scheduler's id is log text (``host:50050``): named as a job name's page is, a slug to
    read and a hash to keep two ids apart.
    """
    slug = _SLUG_CHARS.sub("-", scheduler.lower()).strip("-")[:SLUG_LENGTH].strip("-") or "s"
    digest = hashlib.blake2s(scheduler.encode("utf-8", "surrogatepass"), digest_size=16)
    return f"{SCHEDULERS_DIR}/{slug}-{digest.hexdigest()}"


def scheduler_page(scheduler: str, name: str | None = None) -> PurePosixPath:
    """Return a scheduler's jobs list: its newest jobs, or its archive page ``name`` (a span)."""
    return PurePosixPath(scheduler_dir(scheduler)) / (INDEX if name is None else f"{name}.html")


def findings_file(job_id: str) -> PurePosixPath:
    """Return the file of a job's findings as JSON (see docs/findings.md)."""
    return PurePosixPath(job_file(job_id, "findings.json"))


def compare_file(job_id: str) -> PurePosixPath:
    """Return the file of a run side by side with its previous successful run."""
    return PurePosixPath(job_file(job_id, "compare.html"))


def trace_file(job_id: str) -> PurePosixPath:
    """Return the file of a job's task attempts in the Chrome Trace Event format."""
    return PurePosixPath(job_file(job_id, "trace.json"))


def raw_log(job_id: str) -> PurePosixPath:
    """Return the file of a job's original event log, gzip-compressed."""
    return PurePosixPath(job_file(job_id, "eventlog.gz"))


def operator_page(slug: str) -> PurePosixPath:
    """Return the file of an operator Markdown page."""
    return PurePosixPath(OPERATOR_PAGES_DIR) / slug / INDEX


def static(name: str) -> PurePosixPath:
    """Return the file of a shipped CSS/JS/icon asset."""
    return PurePosixPath(STATIC_DIR) / name


def sql_engine_file(name: str) -> PurePosixPath:
    """Return the file of one of the query page's engine files in its local copy."""
    return PurePosixPath(SQL_ENGINE_DIR) / name


def api_href(template: str, **segments: str) -> str:
    """Return the site-root-relative link to an endpoint's exact-body file (``layout``'s)."""
    encoded_segments = {k: encoded_segment(v) for k, v in segments.items()}
    return "api/" + "/".join(endpoint_parts(BY_TEMPLATE[template], **encoded_segments))


def stage_segments(stage_ids: list[str]) -> list[str]:
    """Return a safe file-name part per stage, unique even when ids repeat (ids are untrusted)."""
    taken: set[str] = set()
    result = []
    for n, stage_id in enumerate(stage_ids, 1):
        segment = stage_id if _PLAIN_SEGMENT.match(stage_id) else f"stage-{n}"
        while segment in taken:
            segment += f"-{n}"
        taken.add(segment)
        result.append(segment)
    return result


def lane_anchor(executor_id: str) -> str:
    """Return the fragment id of an executor's timeline lane (safe whatever the id holds)."""
    return (
        "lane-"
        + hashlib.blake2s(executor_id.encode("utf-8", "surrogatepass"), digest_size=5).hexdigest()
    )


def root_of(page: PurePosixPath) -> str:
    """Return the relative prefix (``""``, ``"../../"``) from ``page`` back to the site root."""
    return "../" * (len(page.parts) - 1)


# A page names its job's id in a dozen links, and every page the same few files (assets,
# nav): remember them.
@functools.lru_cache(maxsize=4096)
def encoded_segment(text: str) -> str:
    """Return one segment of a relative URL percent-encoded (all but letters, digits, ``_.-~``)."""
    # safe="" also encodes "%", so an id like "a%2Fb" stays a literal directory name on file://.
    return quote(text, safe="")


@functools.lru_cache(maxsize=4096)
def encoded(target: PurePosixPath | str) -> str:
    """Return a site file's path as a relative URL, every segment percent-encoded."""
    return "/".join(map(encoded_segment, PurePosixPath(target).parts))


def href(page: PurePosixPath, target: PurePosixPath | str, fragment: str = "") -> str:
    """Return the relative link from ``page`` to ``target``, every segment percent-encoded."""
    link = root_of(page) + encoded(target)
    return f"{link}#{fragment}" if fragment else link
