"""Storage URLs, object keys and their headers: the pieces a publish to object storage uses."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import sitegen.builder.pipeline as pipeline
from sitegen.builder.options import BuildOptions
from sitegen.cli import cli
from sitegen.eventlog.discover import as_log_dirs
from sitegen.eventlog.localdir import LocalDir
from sitegen.eventlog.storage import RemoteDir, object_time
from sitegen.layout import content_type, object_key
from sitegen.publish.bucket import default_state_url, tier
from sitegen.publish.hosting import PAGE_CACHE, STATIC_CACHE, cache_control
from sitegen.text.storage_url import is_url, redact, split_credentials


def test_urls_are_told_from_paths() -> None:
    assert is_url("s3://bucket/logs/") and is_url("gs://b/p") and is_url("az://c/p")
    assert not is_url("logs") and not is_url("/var/log/ballista") and not is_url("C:\\logs")
    assert not is_url("file:///var/log")
    dirs = as_log_dirs(["s3://b/logs", "s3://b/logs/", "logs"])
    assert dirs == (RemoteDir("s3://b/logs/"), LocalDir(Path("logs")))


def test_credentials_are_hidden_and_taken_out() -> None:
    assert redact("s3://AKID:SeCrEt@bucket/p/") == "s3://***@bucket/p/"
    assert redact("az://acct/c?sv=1&sig=abc") == "az://acct/c?sv=1&sig=***"
    assert redact("s3://bucket/p/") == "s3://bucket/p/"
    assert split_credentials("s3://AK:S%2Fx@b/p") == ("s3://b/p", "AK", "S/x")
    shown = RemoteDir("s3://AK:SeCrEt@b/logs/")
    assert "SeCrEt" not in str(shown) and "SeCrEt" not in repr(shown)
    assert "SeCrEt" not in str(shown / "x.eventlog")


def test_object_keys_are_url_paths() -> None:
    assert object_key("api/job/abc/index.json") == "api/job/abc"
    assert object_key("api/job/abc/index.html") is None
    assert object_key("api/job/abc/stages") == "api/job/abc/stages"
    assert object_key("jobs/abc/index.html") == "jobs/abc/index.html"
    assert object_key("api/jobs") == "api/jobs"


def test_each_object_gets_the_type_and_cache_a_host_sends() -> None:
    assert content_type("api/job/a+b") == "application/json"
    assert content_type("api/job/x/stage/3/dot") == "text/plain; charset=utf-8"
    assert content_type("api/metrics") == "text/plain; charset=utf-8"
    assert content_type("api/jobs") == "application/json"
    assert content_type("index.html") == "text/html; charset=utf-8"
    assert content_type("static/style.css") == "text/css; charset=utf-8"
    assert content_type("static/tables.js") == "text/javascript; charset=utf-8"
    assert content_type("static/favicon.svg") == "image/svg+xml"
    assert content_type("jobs/x/eventlog.gz") == "application/gzip"
    assert cache_control("/static/style.css") == STATIC_CACHE
    assert cache_control("/api/jobs") == cache_control("/index.html") == PAGE_CACHE


def test_jobs_go_up_before_what_lists_them() -> None:
    assert tier("static/style.css") < tier("api/job/x") == tier("jobs/x/index.html")
    assert tier("jobs/x/index.html") < tier("api/jobs") == tier("index.html")


def test_the_state_defaults_to_beside_the_site() -> None:
    assert default_state_url("s3://b/site/") == "s3://b/site.sitegen-state/"
    assert default_state_url("s3://b/a/site") == "s3://b/a/site.sitegen-state/"
    assert default_state_url("s3://b/") == "s3://b/.sitegen-state/"


def test_an_objects_identity_holds_its_etag() -> None:
    from datetime import UTC, datetime

    when = datetime(2026, 1, 1, tzinfo=UTC)
    one = object_time({"LastModified": when, "ETag": '"a"'})
    other = object_time({"LastModified": when, "ETag": '"b"'})
    assert one != other and one // 10**9 == other // 10**9 == int(when.timestamp())


def test_storage_options_come_from_a_table_in_sitegen_toml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "sitegen.toml"
    config.write_text(
        'output = "s3://b/site/"\nstate = "s3://b/elsewhere/"\n'
        '[storage_options]\nendpoint_url = "http://127.0.0.1:1"\nanon = true\n'
    )
    seen: list[BuildOptions] = []

    def fake_build(options: BuildOptions, **_: object) -> None:
        seen.append(options)
        raise SystemExit(0)

    monkeypatch.setattr(pipeline, "build", fake_build)
    result = CliRunner().invoke(cli, ["build", "--config", str(config)])
    assert result.exit_code == 0, result.output
    [options] = seen
    assert options.storage_options == {"endpoint_url": "http://127.0.0.1:1", "anon": True}
    assert options.publish_url == "s3://b/site/" and options.state_url == "s3://b/elsewhere/"
    assert options.output.name == "site" and options.output.parent.parent.name == "sites"
