"""Builds that read logs from and publish to S3 through a proxy that errs (503, 500, resets, stalls).

Moto's server on loopback, a fault proxy (``tests/helpers/faultproxy.py``) in front of it
that the builds talk to, and every check made against moto directly: whatever a build met,
the published site stays whole, and once the faults stop the next build publishes it all.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.builder.report import BuildReport
from sitegen.builder.targets.bucket import local_copy
from sitegen.commands.output import summary_json, summary_lines
from sitegen.errors import SitegenError
from sitegen.publish import bucket as objects
from tests.helpers.faultproxy import Request, at_rate, fault_proxy
from tests.helpers.logs import job_lines
from tests.helpers.sitecheck import broken_object_links
from tests.test_object_storage import (  # noqa: F401 (s3: the moto server fixture, by name)
    _readable,
    bucket,
    expected_objects,
    fs,
    s3,
    site_keys,
)

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("s3")]


def moto() -> str:
    """Return moto's endpoint (the ``s3`` fixture's, set as AWS_ENDPOINT_URL)."""
    return os.environ["AWS_ENDPOINT_URL"]


# What the builds are told besides the proxy: a stall (the proxy's is 2 s) becomes a retry after
# 1 s of silence rather than the 15 s sitegen's defaults wait, so that the test stays short.
QUICK = {"connect_timeout": 1, "read_timeout": 1}


def add_logs(b: str, logs: Path, first: int, count: int) -> None:
    """Write jobs ``job<first>``… to a local dir and to the bucket's ``logs/`` (not proxied)."""
    for n in range(first, first + count):
        data = b"".join(
            job_lines(f"job{n:02}", name=f"q{n % 3}", start_ms=1_767_000_000_000 + 60_000 * n)
        )
        (logs / f"job{n:02}.eventlog").write_bytes(data)
        fs().pipe_file(f"{b}/logs/job{n:02}.eventlog", data)


def build_through(
    b: str, endpoint: str, cache: Path, retries: dict[str, Any] | None = None
) -> BuildReport:
    """Build ``s3://b/logs/`` into ``s3://b/site/`` with every request sent to ``endpoint``."""
    config: dict[str, Any] = dict(QUICK)
    if retries is not None:
        config["retries"] = retries
    options = {"endpoint_url": endpoint, "config_kwargs": config}
    url = f"s3://{b}/site/"
    return build(
        BuildOptions(
            log_dirs=f"s3://{b}/logs/",  # type: ignore[arg-type]
            output=local_copy(url, cache),
            publish_url=url,
            storage_options=options,
            workers=1,
        )
    )


def published(b: str) -> dict[str, bytes]:
    """Return the published site's objects (read from moto, not through the proxy)."""
    return {key: fs().cat_file(f"{b}/site/{key}") for key in site_keys(b)}


def assert_whole(b: str) -> set[str]:
    """Check that every link and every /api/jobs entry of the published site resolves."""
    jobs = _readable(moto(), b)
    assert broken_object_links(published(b)) == []
    return jobs


def reference(logs: Path, keep: set[str], into: Path) -> dict[str, bytes]:
    """Build the logs ``keep`` names locally, without faults; return the objects it publishes."""
    shutil.rmtree(into, ignore_errors=True)
    only = into / "logs"
    only.mkdir(parents=True)
    for path in logs.iterdir():
        if path.name in keep:
            shutil.copy(path, only / path.name)
    build(BuildOptions(log_dirs=only, output=into / "site", workers=1))
    return expected_objects(into / "site")


def test_a_lock_create_whose_answer_is_reset_is_known_as_the_builds_own(
    tmp_path: Path,
) -> None:
    """botocore resends the create, moto says 412: the lock is this build's, not waited on."""
    b = bucket(moto())
    first = [True]

    def reset_the_lock_create(request: Request) -> str | None:
        if (
            first[0]
            and request.method == "PUT"
            and request.path.split("?")[0].endswith("/lock")
            and request.header("if-none-match") == "*"
        ):
            first[0] = False
            return "reset"
        return None

    with fault_proxy(moto(), reset_the_lock_create) as (endpoint, proxy):
        state = objects.Store(
            f"s3://{b}/site.sitegen-state/", {"endpoint_url": endpoint, "config_kwargs": QUICK}
        )
        waited: list[str] = []
        began = time.monotonic()
        lock = objects.acquire(state, waited.append)
        took = time.monotonic() - began
        assert proxy.injected == {"reset": 1}
        creates = [f for f in proxy.faulted if f[1] == "PUT"]
        assert len(creates) == 1
        assert waited == [] and took < objects.LOCK_POLL
        body = json.loads(fs().cat_file(f"{b}/site.sitegen-state/lock"))
        assert body["owner"] == lock.owner
        lock.release()
    assert not fs().exists(f"{b}/site.sitegen-state/lock")


def test_a_log_whose_every_fetch_fails_is_named_left_out_and_read_by_the_next_build(
    tmp_path: Path,
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    b = bucket(moto())
    add_logs(b, logs, 0, 4)
    cache = tmp_path / "cache"
    assert build_through(b, moto(), cache).published == 4
    add_logs(b, logs, 4, 2)  # job04 and job05: job05's every GET is cut off mid-body

    def reset_job05(request: Request) -> str | None:
        return "reset" if request.method == "GET" and "job05" in request.path else None

    with fault_proxy(moto(), reset_job05) as (endpoint, proxy):
        report = build_through(b, endpoint, cache, {"mode": "standard", "max_attempts": 2})
    assert proxy.injected["reset"] >= 2
    print(f"\nfaults {dict(proxy.injected)} of {proxy.requests} requests")
    assert list(report.unread) == ["job05.eventlog"]
    assert "could not fetch s3://" in report.unread["job05.eventlog"]
    assert "job05" in "\n".join(summary_lines(report))
    assert json.loads(summary_json(report))["unread"][0]["file"] == "job05.eventlog"
    assert not [p for p in report.problems if "job05" in p.file]  # not recorded as damaged
    assert assert_whole(b) == {f"job{n:02}" for n in range(5)}
    names = {f"job{n:02}.eventlog" for n in range(5)}
    expected = reference(logs, names, tmp_path / "ref")
    assert published(b) == expected
    # The check sees a torn site: a job's page with its API object gone.
    torn = {k: v for k, v in expected.items() if k != "api/job/job01/stages"}
    assert broken_object_links(torn) and not broken_object_links(expected)
    # The store answers again: the next build reads it (its size and time are unchanged).
    report = build_through(b, moto(), cache)
    assert report.unread == {} and report.rebuilt == 1 and report.published == 6
    names.add("job05.eventlog")
    assert published(b) == reference(logs, names, tmp_path / "ref")
    # A published log rewritten (another name) whose fetches fail: its old pages stay.
    changed = b"".join(job_lines("job02", name="renamed", start_ms=1_767_000_000_000 + 120_000))
    (logs / "job02.eventlog").write_bytes(changed)
    fs().pipe_file(f"{b}/logs/job02.eventlog", changed)

    def reset_job02(request: Request) -> str | None:
        return "reset" if request.method == "GET" and "job02" in request.path else None

    with fault_proxy(moto(), reset_job02) as (endpoint, proxy):
        report = build_through(b, endpoint, cache, {"mode": "standard", "max_attempts": 2})
    assert list(report.unread) == ["job02.eventlog"] and report.published == 6
    assert assert_whole(b) == {f"job{n:02}" for n in range(6)}
    assert b"renamed" not in fs().cat_file(f"{b}/site/api/jobs")
    report = build_through(b, moto(), cache)
    assert report.unread == {} and report.rebuilt >= 1  # (job05 too: its name's runs changed)
    assert b"renamed" in fs().cat_file(f"{b}/site/api/jobs")
    assert published(b) == reference(logs, names, tmp_path / "ref")


def test_a_publish_whose_listing_puts_fail_names_what_failed_and_keeps_the_old_site(
    tmp_path: Path,
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    b = bucket(moto())
    add_logs(b, logs, 0, 3)
    cache = tmp_path / "cache"
    direct = moto()
    build_through(b, direct, cache)
    add_logs(b, logs, 3, 2)

    def fail_api_jobs(request: Request) -> str | None:
        return "error" if request.method == "PUT" and request.path.endswith("/api/jobs") else None

    with (
        fault_proxy(moto(), fail_api_jobs) as (endpoint, proxy),
        pytest.raises(SitegenError) as failed,
    ):
        build_through(b, endpoint, cache, {"mode": "standard", "max_attempts": 2})
    assert proxy.injected["error"] >= 2  # retried (bounded), then the build stops
    assert "publishing to object storage stopped" in str(failed.value)
    assert "writing 'api/jobs': We encountered an internal error" in str(failed.value)
    assert assert_whole(b) == {"job00", "job01", "job02"}
    report = build_through(b, direct, cache)
    assert report.published == 5
    names = {p.name for p in logs.iterdir()}
    assert published(b) == reference(logs, names, tmp_path / "ref")


def test_builds_through_random_faults_lose_nothing_and_never_tear_the_site(
    tmp_path: Path,
) -> None:
    """A fifth of the requests of each build faulted: 503s, 500s, resets and stalls.

    Each build publishes the fault-free site less the logs it names as unread, or fails
    saying what failed; after each, the published site is whole; then one build without
    faults publishes every job.
    """
    logs = tmp_path / "logs"
    logs.mkdir()
    b = bucket(moto())
    cache = tmp_path / "cache"
    figures = {"builds": 0, "failed": 0, "unread": 0, "torn": 0}
    began = time.monotonic()
    # SITEGEN_FAULT_RATE reruns it at another rate (docs/robustness.md's figures).
    rate = float(os.environ.get("SITEGEN_FAULT_RATE", "0.2"))
    with fault_proxy(moto(), at_rate(rate, seed=54), stall=2.0) as (endpoint, proxy):
        for round_ in range(4):
            add_logs(b, logs, 3 * round_, 3)
            figures["builds"] += 1
            try:
                report = build_through(b, endpoint, cache)
            except SitegenError as exc:
                figures["failed"] += 1
                assert "s3://" in str(exc) or "object storage" in str(exc), exc
                print(f"\nbuild {round_ + 1} failed: {exc}")
            else:
                figures["unread"] += len(report.unread)
                names = {p.name for p in logs.iterdir()} - set(report.unread)
                seen = published(b)
                assert seen == reference(logs, names, tmp_path / "ref")
            try:
                assert_whole(b)
            except AssertionError:
                figures["torn"] += 1
                raise
    injected = dict(proxy.injected)
    # The faults stopped: one build publishes every job.
    recovering = time.monotonic()
    report = build_through(b, moto(), cache)
    recovered = time.monotonic() - recovering
    assert report.unread == {} and report.published == 12
    assert published(b) == reference(logs, {p.name for p in logs.iterdir()}, tmp_path / "ref")
    assert set(injected) == {"slowdown", "error", "reset", "stall"}, injected
    print(
        f"\nfaults {injected} of {proxy.requests} requests; {figures}; "
        f"{time.monotonic() - began:.1f} s in all, recovered in {recovered:.1f} s"
    )
