"""Logs read from and sites published to a real S3 API: moto's server, started on loopback.

``gs://`` and ``az://`` go through the same fsspec code; S3 is the protocol tested here.
"""

from __future__ import annotations

import gzip
import http.client
import json
import logging
import multiprocessing
import os
import secrets
import shutil
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import zstandard
from click.testing import CliRunner

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.cli import cli
from sitegen.examples import EXAMPLE_LOG_DIR
from sitegen.layout import content_type, object_key
from sitegen.publish import bucket as objects
from sitegen.publish.hosting import HIDDEN, cache_control
from sitegen.text.storage_url import redact
from tests.conftest import require_module
from tests.helpers.logs import job_lines, write
from tests.helpers.sitetree import tree

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def s3() -> Iterator[str]:
    """A moto S3 server on 127.0.0.1 for this module, reached as the standard env vars say."""
    require_module("s3fs", "s3")
    server_module = require_module("moto.server", "test")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = server_module.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    saved = {k: os.environ.get(k) for k in ENV}
    os.environ.update(
        AWS_ENDPOINT_URL=endpoint,
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_DEFAULT_REGION="us-east-1",
    )
    import s3fs

    s3fs.S3FileSystem.clear_instance_cache()
    try:
        yield endpoint
    finally:
        server.stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        s3fs.S3FileSystem.clear_instance_cache()
        _stop_fsspec_thread()


def _stop_fsspec_thread() -> None:
    """Stop fsspec's event-loop thread: later tests in this process expect no other thread."""
    import fsspec.asyn

    loop, thread = fsspec.asyn.loop[0], fsspec.asyn.iothread[0]
    if loop is None or thread is None:
        return
    import asyncio

    # Its default executor (name lookups) has a thread of its own: end it first.
    asyncio.run_coroutine_threadsafe(loop.shutdown_default_executor(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
    fsspec.asyn.loop[0] = None
    fsspec.asyn.iothread[0] = None


ENV = ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION")
_buckets = iter(range(10_000))


def bucket(s3: str) -> str:
    """Make a new bucket and return its name."""
    import fsspec

    # Random: test_dask imports this module under another name, with a counter of its own.
    name = f"b{os.getpid()}-{next(_buckets)}-{secrets.token_hex(3)}"
    fsspec.filesystem("s3").mkdir(name)
    public_read(name)
    return name


def fs() -> Any:
    import fsspec

    return fsspec.filesystem("s3")


def public_read(b: str) -> None:
    """Give the bucket the docs' policy: the site readable by anyone, the state not."""
    import boto3

    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": "*",
                "Action": "s3:GetObject",
                "Resource": f"arn:aws:s3:::{b}/site/*",
            }
        ],
    }
    boto3.client("s3").put_bucket_policy(Bucket=b, Policy=json.dumps(policy))


def upload_dir(local: Path, url_path: str) -> None:
    """Put every file of ``local`` under ``bucket/prefix`` (``url_path``)."""
    for path in sorted(local.iterdir()):
        if path.is_file():
            fs().pipe_file(f"{url_path}/{path.name}", path.read_bytes())


def http_get(endpoint: str, path: str) -> tuple[int, dict[str, str], bytes]:
    """GET ``path`` from the S3 server over plain HTTP (path-style, anonymous enough for moto)."""
    host, port = endpoint.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def mixed_logs(tmp_path: Path) -> Path:
    """The example logs with a few compressed (.gz, .zst) beside the plain and .running ones."""
    logs = tmp_path / "logs"
    shutil.copytree(EXAMPLE_LOG_DIR, logs)
    for name, kind in (("1UXXFWX", "gz"), ("z5LJF3h", "zst")):
        plain = logs / f"{name}.eventlog"
        data = plain.read_bytes()
        packed = gzip.compress(data, mtime=0) if kind == "gz" else zstandard.compress(data)
        (logs / f"{name}.eventlog.{kind}").write_bytes(packed)
        plain.unlink()
    assert any(p.name.endswith(".running") for p in logs.iterdir())
    return logs


def expected_objects(local: Path) -> dict[str, bytes]:
    """Return the objects a local build's files are published as (the state, configs aside)."""
    found = {}
    for rel, data in tree(local).items():
        if rel in HIDDEN or rel.rpartition("/")[2].startswith("."):
            continue
        key = object_key(rel)
        if key is not None:
            found[key] = data
    return found


def run_cli(args: list[str], cache: Path) -> tuple[int, str]:
    env = {"XDG_CACHE_HOME": str(cache)}
    result = CliRunner().invoke(cli, args, env=env, catch_exceptions=False)
    return result.exit_code, result.output


def three_jobs_in_bucket(s3: str, tmp_path: Path, name: str) -> tuple[Path, str]:
    """Write jobs job0-job2 (named ``name`` and their number) to a dir and a new bucket."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for n in range(3):
        write(logs / f"job{n}.eventlog", job_lines(f"job{n}", name=f"{name}{n}"))
    b = bucket(s3)
    upload_dir(logs, f"{b}/logs")
    return logs, b


def build_in_bucket(b: str, cache: Path, *extra: str) -> tuple[int, str]:
    """Build ``s3://b/logs/`` into ``s3://b/site/`` with the CLI, as a user would."""
    return run_cli(
        ["build", "--event-log-dir", f"s3://{b}/logs/", "--output", f"s3://{b}/site/", *extra],
        cache,
    )


def site_keys(bucket_name: str, prefix: str = "site") -> set[str]:
    return {p[len(f"{bucket_name}/{prefix}/") :] for p in fs().find(f"{bucket_name}/{prefix}")}


def test_a_site_built_from_s3_logs_into_s3_serves_the_bytes_and_headers_of_a_local_build(
    s3: str, tmp_path: Path
) -> None:
    logs = mixed_logs(tmp_path)
    b = bucket(s3)
    upload_dir(logs, f"{b}/logs")
    code, out = build_in_bucket(b, tmp_path / "cache", "--format", "json")
    assert code == 0, out
    summary = json.loads(out)
    assert summary["output"] == f"s3://{b}/site/"
    local = tmp_path / "local"
    build(BuildOptions(log_dirs=logs, output=local))
    expected = expected_objects(local)
    assert "api/job/1UXXFWX" in expected and "api/job/1UXXFWX/stages" in expected
    assert summary["objects_uploaded"] == len(expected)
    assert site_keys(b) == set(expected)
    for key, data in expected.items():
        status, headers, body = http_get(s3, f"/{b}/site/{quote(key)}")
        assert status == 200, key
        assert body == data, key
        assert headers["content-type"] == content_type(key), key
        assert headers["cache-control"] == cache_control(f"/{key}"), key
    assert content_type("api/job/1UXXFWX") == "application/json"
    assert content_type("api/job/1UXXFWX/dot") == "text/plain; charset=utf-8"
    # The state is beside the site, not in it, and not readable by the public.
    state = json.loads(fs().cat_file(f"{b}/site.sitegen-state/objects.json"))
    assert set(state["objects"]) == set(expected)
    assert http_get(s3, f"/{b}/site.sitegen-state/objects.json")[0] == 403


def test_an_incremental_publish_uploads_only_what_changed(s3: str, tmp_path: Path) -> None:
    _, b = three_jobs_in_bucket(s3, tmp_path, "name")
    code, out = build_in_bucket(b, tmp_path / "cache", "--format", "json")
    assert code == 0, out
    before = json.loads(fs().cat_file(f"{b}/site.sitegen-state/objects.json"))["objects"]
    # Nothing changed: nothing uploaded.
    code, out = build_in_bucket(b, tmp_path / "cache", "--format", "json")
    assert json.loads(out)["objects_uploaded"] == 0
    # A new log: its job's objects, and the listings that name it.
    fs().pipe_file(
        f"{b}/logs/job9.eventlog",
        b"".join(job_lines("job9", name="name9", start_ms=1_767_000_000_000 + 99_000)),
    )
    code, out = build_in_bucket(b, tmp_path / "cache", "--format", "json")
    assert code == 0, out
    after = json.loads(fs().cat_file(f"{b}/site.sitegen-state/objects.json"))["objects"]
    changed = {k for k, h in after.items() if before.get(k) != h}
    assert json.loads(out)["objects_uploaded"] == len(changed)
    new_job = {k for k in after if "job9" in k}
    assert new_job and new_job <= changed
    assert not {k for k in changed if "job0" in k or "job1" in k or "job2" in k}
    assert "api/jobs" in changed
    assert len(changed - new_job) < 15  # listings, not the other jobs
    # Only what the build changed was read and hashed: the new job and the listings, not the
    # other jobs' files (the whole site was, on the first publish).
    copy = next((tmp_path / "cache/sitegen/sites").glob("*/site"))
    whole = sum(
        p.stat().st_size for p in copy.rglob("*") if p.is_file() and ".sitegen" not in p.name
    )
    others = sum(
        p.stat().st_size
        for job in ("job0", "job1", "job2")
        for root in (copy / "jobs" / job, copy / "api/job" / job)
        for p in root.rglob("*")
        if p.is_file()
    )
    hashed = json.loads(out)["objects_hashed_bytes"]
    assert 0 < hashed < whole - others
    # A log rewritten in place with as many bytes (another ETag) is read again.
    original = fs().cat_file(f"{b}/logs/job1.eventlog")
    renamed = original.replace(b"name1", b"nameX")
    assert len(renamed) == len(original) and renamed != original
    fs().pipe_file(f"{b}/logs/job1.eventlog", renamed)
    code, out = build_in_bucket(b, tmp_path / "cache", "--format", "json")
    summary = json.loads(out)
    assert code == 0 and summary["objects_uploaded"] > 0
    jobs = json.loads(fs().cat_file(f"{b}/site/api/jobs"))
    assert "nameX" in json.dumps(jobs)
    # A removed log: its objects deleted, last.
    fs().rm(f"{b}/logs/job2.eventlog")
    code, out = build_in_bucket(b, tmp_path / "cache", "--format", "json")
    assert json.loads(out)["objects_deleted"] > 0
    assert not {k for k in site_keys(b) if "job2" in k}
    # Without the local copy (another machine): built afresh, still only changes uploaded.
    code, out = build_in_bucket(b, tmp_path / "other-cache", "--format", "json")
    assert code == 0, out
    assert json.loads(out)["objects_uploaded"] == 0


def _killed_publish(b: str, cache: Path, after: int) -> None:
    """Build into ``s3://b/site/`` and die by SIGKILL after ``after`` uploads (in a child)."""
    os.environ["XDG_CACHE_HOME"] = str(cache)
    real = objects.Store.put_many
    count = [0]

    def put_many(self: objects.Store, items: list[tuple[str, bytes, dict[str, Any]]]) -> None:
        for item in items:
            count[0] += 1
            if count[0] > after:
                os.kill(os.getpid(), signal.SIGKILL)
            real(self, [item])

    objects.Store.put_many = put_many  # type: ignore[method-assign]
    from sitegen.builder.targets.bucket import local_copy

    url = f"s3://{b}/site/"
    build(
        BuildOptions(log_dirs=f"s3://{b}/logs/", output=local_copy(url), publish_url=url, workers=1)
    )


def _readable(endpoint: str, b: str) -> set[str]:
    """Check that every job /api/jobs lists resolves, and return the jobs listed."""
    status, _, body = http_get(endpoint, f"/{b}/site/api/jobs")
    assert status == 200
    ids = {job["job_id"] for job in json.loads(body)}
    for job_id in ids:
        for tail in ("", "/stages", "/config", "/dot"):
            status, _, _ = http_get(endpoint, f"/{b}/site/api/job/{quote(job_id)}{tail}")
            assert status == 200, (job_id, tail)
        status, _, _ = http_get(endpoint, f"/{b}/site/jobs/{quote(job_id)}/index.html")
        assert status == 200, job_id
    return ids


def test_a_publish_killed_midway_leaves_a_readable_site_and_the_next_one_finishes(
    s3: str, tmp_path: Path
) -> None:
    logs, b = three_jobs_in_bucket(s3, tmp_path, "n")
    cache = tmp_path / "cache"
    code, out = build_in_bucket(b, cache)
    assert code == 0, out
    assert _readable(s3, b) == {"job0", "job1", "job2"}
    for n in (7, 8):
        fs().pipe_file(
            f"{b}/logs/job{n}.eventlog",
            b"".join(job_lines(f"job{n}", name=f"n{n}", start_ms=1_767_000_000_000 + 50_000 * n)),
        )
    fs().rm(f"{b}/logs/job0.eventlog")
    ctx = multiprocessing.get_context("fork")
    for after in (3, 25):  # among the jobs' objects; among the listings
        child = ctx.Process(target=_killed_publish, args=(b, cache, after))
        child.start()
        child.join(120)
        assert child.exitcode == -signal.SIGKILL
        # The old site, with some of the new jobs' objects: every listed job resolves.
        assert _readable(s3, b) == {"job0", "job1", "job2"} or after > 3
        _readable(s3, b)
    # The lock of the killed build (a dead process of this machine) does not hold the next.
    code, out = build_in_bucket(b, cache, "--format", "json")
    assert code == 0, out
    assert _readable(s3, b) == {"job1", "job2", "job7", "job8"}
    local = tmp_path / "local"
    shutil.rmtree(logs)
    logs.mkdir()
    for n in (1, 2, 7, 8):
        (logs / f"job{n}.eventlog").write_bytes(fs().cat_file(f"{b}/logs/job{n}.eventlog"))
    build(BuildOptions(log_dirs=logs, output=local))
    assert site_keys(b) == set(
        expected_objects(local)
    )  # the leftovers of the killed publishes are gone


def test_a_non_empty_prefix_without_state_is_refused(s3: str, tmp_path: Path) -> None:
    b = bucket(s3)
    fs().pipe_file(f"{b}/site/index.html", b"someone else's site")
    code, out = run_cli(["build", "--output", f"s3://{b}/site/"], tmp_path / "cache")
    assert code == 1
    assert "not empty" in out and "refusing to replace it" in out
    assert fs().cat_file(f"{b}/site/index.html") == b"someone else's site"


def test_credentials_in_urls_appear_in_no_output_state_or_page(s3: str, tmp_path: Path) -> None:
    secret = "SeCrEt" + "x" * 10
    b = bucket(s3)
    for n in range(2):
        fs().pipe_file(f"{b}/logs/job{n}.eventlog", b"".join(job_lines(f"job{n}")))
    cache = tmp_path / "cache"
    logs_url = f"s3://AKIDTEST:{secret}@{b}/logs/"
    site_url = f"s3://AKIDTEST:{secret}@{b}/site/"
    outputs = []
    for fmt in ("text", "json"):
        code, out = run_cli(
            ["build", "--event-log-dir", logs_url, "--output", site_url, "--format", fmt], cache
        )
        assert code == 0, out
        outputs.append(out)
    # An error names the URL too: still without the secret.
    code, out = run_cli(
        ["build", "--event-log-dir", f"s3://AKIDTEST:{secret}@nobucket-{b}/x/"], cache
    )
    assert code != 0
    outputs.append(out)
    code, out = run_cli(["check", "--event-log-dir", logs_url, "--format", "json"], cache)
    outputs.append(out)
    assert "AKIDTEST" not in "".join(outputs) and secret not in "".join(outputs)
    assert "s3://***@" in outputs[0]
    for path in fs().find(b):
        assert secret.encode() not in fs().cat_file(path), path
    for path in cache.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    assert redact(f"az://u:{secret}@c/p?sig={secret}&x=1") == "az://***@c/p?sig=***&x=1"


def test_a_second_build_waits_for_the_lock_and_a_dead_one_is_taken_over(
    s3: str, tmp_path: Path
) -> None:
    b = bucket(s3)
    state = objects.Store(f"s3://{b}/site.sitegen-state/", {})
    # Held by a live build elsewhere: waited for until it is released.
    other = json.dumps({"owner": "ci@elsewhere:1:ab", "expires": time.time() + 60}).encode()
    state.put(objects.LOCK, other)
    waited: list[str] = []
    releaser = threading.Timer(1.0, lambda: state.delete([objects.LOCK]))
    releaser.start()
    began = time.monotonic()
    lock = objects.acquire(state, waited.append)
    assert waited == ["ci@elsewhere:1:ab"] and time.monotonic() - began >= 0.9
    # Held: a second build cannot create it.
    assert not state.create(objects.LOCK, b"x")
    lock.release()
    assert state.get(objects.LOCK) is None
    # Left by a build killed on this machine: taken over at once.
    dead = multiprocessing.get_context("fork").Process(target=os._exit, args=(0,))
    dead.start()
    dead.join()
    owner = f"me@{socket.gethostname()}:{dead.pid}:cd"
    state.put(objects.LOCK, json.dumps({"owner": owner, "expires": time.time() + 60}).encode())
    objects.acquire(state, waited.append).release()
    assert len(waited) == 1


def test_watch_polls_an_object_storage_prefix(s3: str, tmp_path: Path) -> None:
    from sitegen.builder.watch import Publish, Watcher

    b = bucket(s3)
    fs().pipe_file(f"{b}/logs/job1.eventlog", b"".join(job_lines("job1")))
    options = BuildOptions(log_dirs=f"s3://{b}/logs/", output=tmp_path / "site", workers=1)
    published: list[Publish] = []
    watcher = Watcher(options, lambda o, hint: build(o, hint=hint), published.append, poll=0.2)
    thread = threading.Thread(target=watcher.run)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not published and time.monotonic() < deadline:
            time.sleep(0.05)
        fs().pipe_file(
            f"{b}/logs/job2.eventlog",
            b"".join(job_lines("job2", start_ms=1_767_000_000_000 + 70_000)),
        )
        while len(published) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        watcher.stop.set()
        thread.join(30)
    assert [p.reason for p in published[:2]] == ["first build", "changed"], published
    assert published[1].report is not None and published[1].report.published == 2
    assert (tmp_path / "site/api/job/job2/index.json").is_file()


def test_a_first_publish_whose_workers_uploaded_before_it_died_is_finished(
    s3: str, tmp_path: Path
) -> None:
    """No manifest yet, the mark of workers' uploads, a job no listing names: it goes."""
    logs, b = three_jobs_in_bucket(s3, tmp_path, "name")
    fs().pipe_file(f"{b}/site/jobs/ghost/index.html", b"<p>half a job</p>")
    fs().pipe_file(f"{b}/site/api/job/ghost", b"{}")
    fs().pipe_file(f"{b}/site.sitegen-state/{objects.DIRECT}", b"")
    code, out = build_in_bucket(b, tmp_path / "cache", "--format", "json")
    assert code == 0, out
    local = tmp_path / "local"
    build(BuildOptions(log_dirs=logs, output=local))
    assert site_keys(b) == set(expected_objects(local))
    assert not fs().exists(f"{b}/site.sitegen-state/{objects.DIRECT}")
    # Without the mark, a prefix holding objects and no state is still refused.
    other = bucket(s3)
    fs().pipe_file(f"{other}/site/index.html", b"someone else's")
    upload_dir(logs, f"{other}/logs")
    code, out = build_in_bucket(other, tmp_path / "cache2")
    assert code != 0 and "refusing to replace it" in out


def test_a_bucket_log_is_fetched_once_by_a_build_in_one_process(
    s3: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sitegen.eventlog import storage
    from sitegen.eventlog.discover import discover

    logs = mixed_logs(tmp_path)
    b = bucket(s3)
    upload_dir(logs, f"{b}/logs")
    fetched: dict[str, int] = {}
    for name in ("open", "read_bytes"):
        fetch = getattr(storage.RemotePath, name)

        def counted(self: Any, fetch: Any = fetch) -> Any:
            fetched[self.name] = fetched.get(self.name, 0) + 1
            return fetch(self)

        monkeypatch.setattr(storage.RemotePath, name, counted)
    out = tmp_path / "site"
    build(BuildOptions((f"s3://{b}/logs/",), out, workers=1))  # type: ignore[arg-type]
    read = {log.key for log in discover(logs) if not log.skip}
    assert {n for n in fetched if n in read} == read  # the .gz and .zst ones among them
    assert {n: fetched[n] for n in read} == dict.fromkeys(read, 1)
