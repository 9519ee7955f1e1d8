"""The same event-log dir named twice (any spelling, or a link) is read once, with a warning."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from sitegen.cli import cli


@pytest.mark.parametrize("command", ["build", "check"])
def test_the_same_dir_named_twice_is_read_once(
    tmp_path: Path, example_logs: Path, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    os.symlink("logs", tmp_path / "link")
    args = [command, "--event-log-dir", "logs", "--event-log-dir", "./logs/"]
    args += ["--event-log-dir", "link"]
    if command == "build":
        args += ["--output", "site"]
    result = CliRunner().invoke(cli, args)
    assert "duplicate-id" not in result.stdout
    assert result.stderr.splitlines() == [
        "Warning: event-log dir logs is named twice: read once.",
        "Warning: event-log dir link is the same directory as logs: read once.",
    ]
    if command == "build":
        assert result.exit_code == 0
        assert result.stdout.startswith("Published 25 jobs from 28 logs")
    else:
        assert "Checked 28 logs in logs: 25 completed" in result.stdout
