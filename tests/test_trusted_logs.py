"""--trust-finished-logs: a build that lists the same files stats only the unfinished logs."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.builder.plan import inputs, planner
from sitegen.builder.plan import listing as trusted_module
from sitegen.builder.report import BuildReport
from sitegen.cli import cli
from sitegen.eventlog import discover
from tests.helpers.logs import job_lines, write
from tests.helpers.sitetree import tree


def trusted(logs: Path | tuple[Path, ...], site: Path) -> BuildReport:
    return build(BuildOptions(logs, site, trust_finished_logs=True))


def same_report(a: BuildReport, b: BuildReport) -> None:
    assert (a.logs, a.published, a.classifications, a.site_bytes) == (
        b.logs,
        b.published,
        b.classifications,
        b.site_bytes,
    )
    assert a.problems == b.problems  # in log order
    assert a.running == b.running


def no_full_listing(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make stat-ing every log fail the test; return the keys stat-ed one by one."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a trusted no-op stat-ed every log")

    stat_ed: list[str] = []

    def spy(dirs: tuple[Path, ...], keys: list[str], follow: bool = False) -> object:
        stat_ed.extend(keys)
        return discover.discover_keys(dirs, keys, follow)

    monkeypatch.setattr(planner, "discover_all", refuse)
    monkeypatch.setattr(planner, "discover_keys", spy)
    monkeypatch.setattr(trusted_module, "discover_keys", spy)
    return stat_ed


def test_trusted_builds_stat_only_the_names_in_and_the_unfinished_logs(
    tmp_path: Path, example_logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    full = build(BuildOptions(example_logs, site))
    unfinished = sorted(
        p.file
        for p in full.problems
        if p.kind in ("incomplete", "malformed", "unreadable", "ended-unrecorded")
    )
    first = next(p for p in sorted(example_logs.glob("*.eventlog")) if p.name not in unfinished)
    lines = job_lines("added", name="solo", start_ms=5_000_000_000_000)
    write(example_logs / "added.eventlog", lines)
    (example_logs / "README").write_text("not a log\n")
    steps = []
    for change in ("added", "removed"):
        if change == "removed":
            first.unlink()
        with monkeypatch.context() as m:
            stat_ed = no_full_listing(m)
            steps.append(trusted(example_logs, site))
        # The new name and the logs not read as completed; never every log.
        assert sorted(stat_ed) == sorted(unfinished + (["added.eventlog"] * (change == "added")))
    assert [(r.published, r.rebuilt, r.up_to_date) for r in steps] == [
        (full.published + 1, 1, False),
        (full.published, 0, False),
    ]
    clean = tmp_path / "clean"
    same_report(steps[-1], build(BuildOptions(example_logs, clean)))
    assert tree(site) == tree(clean)


def test_a_trusted_no_op_stats_only_the_unfinished_logs(
    tmp_path: Path, example_logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    full = build(BuildOptions(example_logs, site))
    unfinished = sorted(
        p.file
        for p in full.problems
        if p.kind in ("incomplete", "malformed", "unreadable", "ended-unrecorded")
    )
    assert len(unfinished) == 3  # the running log, the one that ended unrecorded, the damaged one
    with monkeypatch.context() as m:
        stat_ed = no_full_listing(m)
        quick = trusted(example_logs, site)
    assert quick.up_to_date and quick.rebuilt == 0
    assert sorted(stat_ed) == unfinished
    same_report(quick, full)
    # A file that is not a log changes the listing: compared log by log once, then quick again.
    (example_logs / "README").write_text("the scheduler's event logs\n")
    assert trusted(example_logs, site).up_to_date
    with monkeypatch.context() as m:
        no_full_listing(m)
        same_report(trusted(example_logs, site), full)


@pytest.mark.slow  # six builds of the examples
def test_trusted_builds_see_new_gone_and_growing_logs(tmp_path: Path, example_logs: Path) -> None:
    site = tmp_path / "site"
    trusted(example_logs, site)
    steps = []
    write(example_logs / "added.eventlog", job_lines("added", start_ms=5_000_000_000_000))
    steps.append(trusted(example_logs, site))
    # A log written in place as its job runs: the same name, listed alike, still seen. Beside
    # a .running log (Ballista #2405 naming) a .eventlog without JobEnd ended unrecorded, and
    # is looked at again on every build as a running one is.
    lines = job_lines("grows", start_ms=5_000_000_100_000)
    write(example_logs / "grows.eventlog", lines[:-1])
    steps.append(trusted(example_logs, site))
    assert steps[-1].classifications["ended-unrecorded"] == 2
    with open(example_logs / "grows.eventlog", "ab") as f:
        f.write(lines[-1])
    steps.append(trusted(example_logs, site))
    (example_logs / "added.eventlog").unlink()
    steps.append(trusted(example_logs, site))
    assert [r.published for r in steps] == [26, 26, 27, 26]
    assert not any(r.up_to_date for r in steps)
    clean = tmp_path / "clean"
    build(BuildOptions(example_logs, clean))
    assert tree(site) == tree(clean)


def test_a_finished_log_rewritten_in_place_is_trusted_until_a_stat_of_each(
    tmp_path: Path, example_logs: Path
) -> None:
    site = tmp_path / "site"
    log = write(example_logs / "added.eventlog", job_lines("added", name="tpch-q1"))
    trusted(example_logs, site)
    # Rewritten where it is (no rename): the dir lists the same names.
    with open(log, "r+b") as f:
        f.truncate(0)
        f.writelines(job_lines("added", name="renamed query", stages=3))
    assert trusted(example_logs, site).up_to_date
    assert "renamed query" not in (site / "jobs/added/index.html").read_text()
    # --verify-logs stats every log, and sees it.
    assert not build(BuildOptions(example_logs, site, trust_finished_logs=False)).up_to_date
    assert "renamed query" in (site / "jobs/added/index.html").read_text()


def test_several_log_dirs_report_alike_when_trusted(
    tmp_path: Path, example_logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "archive"
    other.mkdir()
    for path in sorted(example_logs.iterdir())[::2]:
        shutil.move(path, other / path.name)
    write(other / "zz-broken.eventlog", [b"{not json\n"])
    write(example_logs / "aa-broken.eventlog", [b"{not json\n"])
    dirs = (example_logs, other)
    site = tmp_path / "site"
    full = build(BuildOptions(dirs, site))
    assert len({p.file.split("/")[0] for p in full.problems}) == 2  # problems in both dirs
    assert trusted(dirs, site).up_to_date
    with monkeypatch.context() as m:
        stat_ed = no_full_listing(m)
        quick = trusted(dirs, site)
    assert len(stat_ed) == 5  # the unfinished logs: running, ended unrecorded, damaged
    same_report(quick, full)
    # A log added to the second dir: seen, and the site is what a clean build makes.
    write(other / "added.eventlog", job_lines("added", start_ms=5_000_000_000_000))
    assert trusted(dirs, site).published == full.published + 1
    clean = tmp_path / "clean"
    build(BuildOptions(dirs, clean))
    assert tree(site) == tree(clean)


def test_trusting_is_the_default_and_verify_logs_stats_each(
    tmp_path: Path, example_logs: Path
) -> None:
    site = tmp_path / "site"
    args = ["build", "--event-log-dir", str(example_logs), "--output", str(site)]
    runner = CliRunner()
    log = write(example_logs / "added.eventlog", job_lines("added", name="solo"))
    assert runner.invoke(cli, args).exit_code == 0
    with open(log, "r+b") as f:  # rewritten in place: only a stat of each log sees it
        f.truncate(0)
        f.writelines(job_lines("added", name="renamed"))
    for trusting in (args, [*args, "--trust-finished-logs"]):
        result = runner.invoke(cli, trusting)
        assert result.exit_code == 0, result.output
        assert " is up to date: 26 jobs from 29 logs, nothing changed;" in result.output
    # The off switch: the flag, the config key or the variable.
    config = tmp_path / "sitegen.toml"
    config.write_text("trust_finished_logs = false\n")
    for verifying, env in (
        ([*args, "--verify-logs"], {}),
        ([*args, "--config", str(config)], {}),
        (args, {"SITEGEN_TRUST_FINISHED_LOGS": "false"}),
    ):
        with open(log, "r+b") as f:
            f.truncate(0)
            f.writelines(job_lines("added", name=f"renamed {len(verifying)} {len(env)}"))
        result = runner.invoke(cli, verifying, env=env)
        assert result.output.startswith("Published 26 jobs from 29 logs"), result.output
        assert "; 1 log read, 28 unchanged)" in result.output


def test_a_trusting_build_stats_each_log_when_the_names_cannot_be_spliced(
    tmp_path: Path, example_logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    full = build(BuildOptions(example_logs, site))
    listed: list[int] = []

    def counting(*args: object, **kwargs: object) -> object:
        found = discover.discover_all(*args, **kwargs)
        listed.append(len(found))
        return found

    monkeypatch.setattr(planner, "discover_all", counting)
    # More names in and out than splicing is worth: every log is stat-ed.
    with monkeypatch.context() as m:
        m.setattr(trusted_module, "SPLICE_LIMIT", 0)
        write(example_logs / "added.eventlog", job_lines("added", name="solo"))
        assert trusted(example_logs, site).published == full.published + 1
    assert listed == [full.logs + 1]
    # A name that is not ASCII (an undecodable one is keyed otherwise): the same.
    write(example_logs / "jöb.eventlog", job_lines("jöb", name="solo"))
    assert trusted(example_logs, site).published == full.published + 2
    assert listed == [full.logs + 1, full.logs + 2]
    clean = tmp_path / "clean"
    build(BuildOptions(example_logs, clean))
    assert tree(site) == tree(clean)


def _settle(path: Path) -> None:
    """Set a dir's modification time a minute back, as if nothing had come for a while."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 60_000_000_000))


def test_a_log_dir_with_the_stamps_of_the_last_listing_is_not_listed_again(
    tmp_path: Path, example_logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    os.utime(example_logs)  # modified now (the fixture's copy keeps the examples' times)
    full = build(BuildOptions(example_logs, site))
    listed: list[object] = []

    def counting(dirs: tuple[Path, ...]) -> list[list[str]]:
        listed.append(dirs)
        return discover.list_dirs(dirs)

    monkeypatch.setattr(inputs, "list_dirs", counting)
    monkeypatch.setattr(planner, "list_dirs", counting)
    # Modified just now: a file could still come within the dir clock's tick, unseen.
    assert build(BuildOptions(example_logs, site)).up_to_date
    assert build(BuildOptions(example_logs, site)).up_to_date
    assert len(listed) == 2
    _settle(example_logs)
    same_report(build(BuildOptions(example_logs, site)), full)  # records the settled stamps
    assert len(listed) == 3
    quick = build(BuildOptions(example_logs, site))
    assert quick.up_to_date and len(listed) == 3  # not listed
    same_report(quick, full)
    # --verify-logs lists and stats every log.
    assert build(BuildOptions(example_logs, site, trust_finished_logs=False)).up_to_date
    assert len(listed) == 4
    # A log renamed into place changes the dir's time: listed, and published.
    write(example_logs / "added.eventlog", job_lines("added", name="solo"))
    report = build(BuildOptions(example_logs, site))
    assert len(listed) == 5 and report.published == full.published + 1
    # An unfinished log that grows changes no dir's time: it is stat-ed on every build.
    _settle(example_logs)
    build(BuildOptions(example_logs, site))
    running = next(example_logs.glob("*.eventlog.running"))
    with running.open("ab") as f:
        f.write(b"\n")
    calls = len(listed)
    assert not build(BuildOptions(example_logs, site)).up_to_date
    assert len(listed) == calls + 1  # the plan lists what it compares
