from __future__ import annotations

import json
import tarfile
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.cli import cli
from sitegen.errors import SitegenError, UsageError
from sitegen.layout import STATE_NAME
from sitegen.publish import archive as archive_module
from tests.helpers.endpoints import endpoints
from tests.helpers.logs import job_lines, write
from tests.helpers.servers import Response, get, http_server

# Ids that need percent-encoding in URLs and unicode or long names in archive members.
UGLY_IDS = ["with space", "100%done", "a#b", "why?", "ünïcødé-日本", ".dotted"]


def snapshot(root: Path) -> tuple[dict[str, bytes], set[str]]:
    """Return every file's bytes and every directory, by relative path."""
    files = {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    dirs = {str(p.relative_to(root)) for p in root.rglob("*") if p.is_dir()}
    return files, dirs


def follow(port: int, path: str) -> tuple[Response, int]:
    """GET ``path``, following redirects as the Ballista TUI does; return the answer and hops."""
    hops = 0
    resp = get(port, path)
    while resp.status in (301, 302, 307, 308):
        hops += 1
        assert hops < 5, path
        resp = get(port, resp.headers["location"])
    return resp, hops


def unpack(archive: Path, into: Path) -> Path:
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(into)
    else:
        with tarfile.open(archive) as tar:
            tar.extractall(into, filter="data")
    return into


@pytest.fixture(scope="module")
def ugly_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Logs whose job ids need escaping, unicode and long paths in archive member names."""
    logs = tmp_path_factory.mktemp("ugly-logs")
    for n, job_id in enumerate(UGLY_IDS):
        write(logs / f"ugly-{n}.eventlog", job_lines(job_id, stages=3))
    write(logs / "long.eventlog", job_lines("x" * 150))
    return logs


@pytest.mark.parametrize("name", ["site.tar.gz", "site.tgz", "site.zip"])
def test_archive_unpacks_to_the_published_site(tmp_path: Path, ugly_logs: Path, name: str) -> None:
    out = tmp_path / "site"
    report = build(BuildOptions(ugly_logs, out, archive=tmp_path / "dist" / name))
    assert report.archive is not None
    assert report.archive.path == tmp_path / "dist" / name
    assert report.archive.files == report.files_written
    assert report.archive.bytes == (tmp_path / "dist" / name).stat().st_size
    unpacked = unpack(tmp_path / "dist" / name, tmp_path / "unpacked")
    files, dirs = snapshot(unpacked)
    published, published_dirs = snapshot(out)
    # The build's state stays out: it is the build's, and holds every log's path.
    assert set(published) - set(files) == {STATE_NAME}
    del published[STATE_NAME]
    assert (files, dirs) == (published, published_dirs)
    assert ".nojekyll" in files and "api/jobs" in files and "api/job/with space/index.json" in files
    assert any(len(f) > 150 for f in files) and any("日本" in f for f in files)
    # Nothing but the two outputs was written, and no temporary archive was left behind.
    assert sorted(p.name for p in (tmp_path / "dist").iterdir()) == [name]


def test_tar_members_are_relative_sorted_and_anonymous(tmp_path: Path, ugly_logs: Path) -> None:
    target = tmp_path / "site.tar.gz"
    build(BuildOptions(ugly_logs, tmp_path / "site", archive=target))
    with tarfile.open(target) as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    assert all(not n.startswith(("/", "./")) and ".." not in n.split("/") for n in names)
    # Parents come before their contents, siblings sorted by name.
    assert names.index("api") < names.index("api/job") < names.index("api/job/with space")
    assert names.index("api/job/with space") < names.index("api/job/with space/index.json")
    for parent in {n.rsplit("/", 1)[0] for n in names if "/" in n}:
        siblings = [n for n in names if n.rsplit("/", 1)[0] == parent and "/" in n]
        assert siblings == sorted(siblings)
    assert {(m.uid, m.gid, m.uname, m.gname) for m in members} == {(0, 0, "", "")}
    assert {m.mode for m in members if m.isdir()} == {0o755}
    assert {m.mode for m in members if m.isfile()} == {0o644}
    assert all(m.isdir() or m.isfile() for m in members)


@pytest.mark.parametrize("name", ["site.tar.gz", "site.zip"])
def test_archives_are_reproducible(
    tmp_path: Path, ugly_logs: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    build(BuildOptions(ugly_logs, tmp_path / "a" / "site", archive=tmp_path / "a" / name))
    build(BuildOptions(ugly_logs, tmp_path / "b" / "site", archive=tmp_path / "b" / name))
    assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


@pytest.mark.slow  # a real server
@pytest.mark.parametrize(("which", "jobs"), [("examples", 25), ("ugly", len(UGLY_IDS) + 1)])
def test_unpacked_archive_is_served_by_python_http_server(
    tmp_path: Path, example_logs: Path, ugly_logs: Path, which: str, jobs: int
) -> None:
    target = tmp_path / "site.tar.gz"
    logs = example_logs if which == "examples" else ugly_logs
    build(BuildOptions(logs, tmp_path / "site", archive=target))
    site = unpack(target, tmp_path / "unpacked")
    with http_server(site) as port:
        home = get(port, "/")
        assert home.status == 200 and b"tpch-q1" in home.body
        found = list(endpoints(site))
        assert len(found) > 5 * jobs
        for url, exact, endpoint in found:
            resp, hops = follow(port, url + "?plan_format=tree")
            assert resp.status == 200 and hops <= 1, url
            if endpoint.is_prefix:
                # Zero-config hosts serve the HTML-safe copy beside the exact body.
                assert resp.body == (site / exact).with_name("index.html").read_bytes(), url
                assert json.loads(resp.body) == json.loads((site / exact).read_bytes()), url
            else:
                assert resp.body == (site / exact).read_bytes(), url
        assert len(json.loads(follow(port, "/api/jobs")[0].body)) == jobs
        assert get(port, "/api/job/no-such-job/").status == 404


@pytest.mark.parametrize(
    ("archive", "message"),
    [
        ("{out}/site.tar.gz", "archive must not be inside the output dir"),
        ("{logs}/../logs/sub/site.tgz", "archive must not be inside the event-log dir"),
        ("{logs}/site.zip", "archive must not be inside the event-log dir"),
        ("{tmp}/site.rar", "archive name must end in .tar.gz, .tgz or .zip"),
        ("{tmp}/.tar.gz", "archive name must end in .tar.gz, .tgz or .zip"),
        ("{tmp}/adir.zip", "archive path is a directory"),
    ],
)
def test_bad_archive_paths_are_refused_before_building(
    tmp_path: Path, example_logs: Path, archive: str, message: str
) -> None:
    (tmp_path / "adir.zip").mkdir()
    out = tmp_path / "site"
    target = Path(archive.format(out=out, logs=example_logs, tmp=tmp_path))
    logs_before = sorted(p.name for p in example_logs.iterdir())
    with pytest.raises(UsageError, match=message):
        build(BuildOptions(example_logs, out, archive=target))
    assert not out.exists()
    assert sorted(p.name for p in example_logs.iterdir()) == logs_before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir.zip", "logs"]


def test_cli_archive_option_and_summary(tmp_path: Path, example_logs: Path) -> None:
    out = tmp_path / "site"
    target = tmp_path / "site.zip"
    args = ["build", "--event-log-dir", str(example_logs), "--output", str(out)]
    result = CliRunner().invoke(cli, [*args, "--archive", str(target)])
    assert result.exit_code == 0, result.output
    size = target.stat().st_size
    files = sum(1 for p in out.rglob("*") if p.is_file() and p.name != STATE_NAME)
    assert result.output.splitlines()[1] == (
        f"Archived the site to {target} ({files} files, {size} bytes)."
    )
    result = CliRunner().invoke(cli, [*args, "--archive", str(target), "--format", "json"])
    assert json.loads(result.output)["archive"] == {
        "path": str(target),
        "format": "zip",
        "files": files,
        "bytes": target.stat().st_size,
    }
    result = CliRunner().invoke(cli, [*args, "--archive", str(out / "x.zip")])
    assert result.exit_code == 1
    assert result.output == f"Error: {out / 'x.zip'}: archive must not be inside the output dir\n"


def test_failed_archive_keeps_the_old_one_and_leaves_no_temp(
    tmp_path: Path, example_logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "dist" / "site.tar.gz"
    build(BuildOptions(example_logs, tmp_path / "site", archive=target))
    before = target.read_bytes()

    def broken(path: Path, entries: object, mtime: int) -> None:
        path.write_bytes(b"half an archive")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(archive_module, "_write_tar_gz", broken)
    with pytest.raises(SitegenError) as err:
        build(BuildOptions(example_logs, tmp_path / "site", archive=target))
    assert str(err.value) == (
        f"{target}: the site was published to {tmp_path / 'site'}, "
        "but cannot write the archive: No space left on device"
    )
    assert target.read_bytes() == before
    assert [p.name for p in target.parent.iterdir()] == ["site.tar.gz"]
