from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.builder.report import BuildReport
from sitegen.examples import EXAMPLE_LOG_DIR

# Builds are reproducible: the metrics' build timestamp follows SOURCE_DATE_EPOCH.
os.environ.setdefault("SOURCE_DATE_EPOCH", "1767225600")

IN_CI = os.environ.get("CI") == "true"
# Headless Debian Chromium as root, with nothing reaching out to the (closed) network.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def require(tool: str) -> str:
    """Return the path of ``tool``; skip without it locally, fail in CI."""
    # Servers live in sbin, which is not on every user's PATH.
    path = shutil.which(tool) or shutil.which(tool, path="/usr/sbin:/sbin")
    if path is None:
        message = f"{tool} is not installed (CI installs it in .ci/run)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return path


def require_module(name: str, extra: str) -> Any:
    """Import and return module ``name``; skip without it locally, fail in CI."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        message = f"{name} is not installed (pip install -e '.[{extra}]'; CI installs it)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless Chromium per session (per xdist worker); tests open their own contexts."""
    executable = require("chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        message = "playwright is not installed (install through requirements/test.lock: README)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def example_logs(tmp_path: Path) -> Path:
    """A writable copy of the bundled example logs."""
    target = tmp_path / "logs"
    shutil.copytree(EXAMPLE_LOG_DIR, target)
    return target


@pytest.fixture(scope="session")
def example_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, BuildReport]:
    """The bundled examples built once per session (read-only for tests)."""
    root = tmp_path_factory.mktemp("example-site")
    report = build(BuildOptions(log_dirs=EXAMPLE_LOG_DIR, output=root / "site", workers=2))
    return root / "site", report
