"""Run shell commands in a private mount namespace, where tests may mount a tmpfs."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import IN_CI


def q(path: object) -> str:
    """Quote a path for the shell."""
    return shlex.quote(str(path))


def in_mount_namespace(script: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` in a private mount namespace: its mounts vanish when it exits."""
    unshare = shutil.which("unshare")
    if unshare is None:
        message = "unshare (util-linux) is not installed"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return subprocess.run(
        [unshare, "--mount", "--propagation", "private", "sh", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
    )


def require_mounts(directory: Path) -> None:
    """Skip unless this process may mount a tmpfs at ``directory`` in its own namespace."""
    probe = in_mount_namespace(f"mount -t tmpfs tmpfs {q(directory)}")
    if probe.returncode != 0:
        # A privilege, not a package CI could install: the simulated tests still run.
        pytest.skip(f"this machine does not let the tests mount a tmpfs: {probe.stderr.strip()}")
