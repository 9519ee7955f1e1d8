"""The test environment's lock (requirements/test.lock) against pyproject.toml, and `installed`.

Whether this environment was installed from the lock is `.ci/run`'s step
(`python scripts/lock.py installed`), not a test: a suite run from `pip install -e '.[test]'` passes.

Regenerate the lock with `python scripts/lock.py compile` (docs/dependencies.md).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent


def load_lock_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("lock_script", ROOT / "scripts" / "lock.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


lock = load_lock_script()


def test_the_lock_agrees_with_pyproject() -> None:
    assert lock.check(ROOT) == []


def test_every_pin_is_exact_and_hashed() -> None:
    pins = lock.read_lock((ROOT / lock.LOCK).read_text(encoding="utf-8"))
    assert len(pins) > 100
    for pin in pins:
        assert pin.hashes, pin
        assert all(h.startswith("sha256:") and len(h) == len("sha256:") + 64 for h in pin.hashes)
    names = {pin.name for pin in pins if pin.applies()}
    # The packages whose releases broke the unlocked install (issue 36), and the build backend.
    assert {"s3fs", "aiobotocore", "botocore", "boto3", "moto", "distributed"} <= names
    assert {"hatchling", "editables"} <= names


def test_the_check_names_a_requirement_missing_from_the_lock_and_a_pin_outside_its_range() -> None:
    lock_text = (
        "click==8.1.7 \\\n    --hash=sha256:" + "a" * 64 + "\n"
        "jinja2==3.0.0 \\\n    --hash=sha256:" + "b" * 64 + "\n"
        "colorama==0.4.6 ; sys_platform == 'win32' \\\n    --hash=sha256:" + "c" * 64 + "\n"
        "nohash==1.0\n"
    )
    pins = lock.read_lock(lock_text)
    wanted = [Requirement(r) for r in ["click>=8.1", "jinja2>=3.1", "orjson>=3.9", "nohash"]]
    wanted.append(Requirement("pywin32>=300; sys_platform == 'win32'"))
    linux = {"sys_platform": "linux"}
    assert lock.disagreements(wanted, pins, linux) == [
        "jinja2>=3.1: requirements/test.lock pins jinja2==3.0.0",
        "orjson>=3.9: not in requirements/test.lock",
        "nohash==1.0: no --hash in requirements/test.lock",
    ]
    # On Windows the marker-guarded requirement must be pinned too.
    windows = {"sys_platform": "win32"}
    assert 'pywin32>=300; sys_platform == "win32": not in requirements/test.lock' in (
        lock.disagreements(wanted, pins, windows)
    )


def test_a_pin_must_be_exact() -> None:
    with pytest.raises(ValueError, match="not pinned with =="):
        lock.read_lock("click>=8.1 \\\n    --hash=sha256:" + "a" * 64 + "\n")


def test_the_project_requirements_expand_its_own_extras() -> None:
    pyproject = {
        "project": {
            "name": "sitegen",
            "dependencies": ["click>=8.1"],
            "optional-dependencies": {
                "s3": ["s3fs>=2024.2"],
                "dask": ["distributed>=2024.2"],
                "test": ["sitegen[s3,dask]", "pytest>=8"],
            },
        }
    }
    got = sorted(str(r) for r in lock.project_requirements(pyproject, "test"))
    assert got == ["click>=8.1", "distributed>=2024.2", "pytest>=8", "s3fs>=2024.2"]


def test_the_drift_report_says_what_a_fresh_resolve_changes() -> None:
    locked = {"boto3": "1.43.117", "botocore": "1.43.117", "six": "1.16.0"}
    resolved = {"boto3": "1.44.8", "botocore": "1.43.100", "urllib3": "2.2.0"}
    assert lock.compare(locked, resolved) == [
        "~ boto3 1.43.117 -> 1.44.8 (up)",
        "~ botocore 1.43.117 -> 1.43.100 (DOWN)",
        "- six==1.16.0",
        "+ urllib3==2.2.0",
    ]
    failed = lock.Resolved(12.0, error="ResolutionImpossible")
    assert lock.drift_lines("pip 23.2.1 (bundled), .[test]", failed, ".[test]", locked) == (
        "drift: pip 23.2.1 (bundled), .[test]: DOES NOT RESOLVE after 12 s\nResolutionImpossible"
    )
    same = lock.Resolved(3.0, versions=dict(locked))
    assert lock.drift_lines("pip 26.3 (newest), .[test]", same, ".[test]", locked) == (
        "drift: pip 26.3 (newest), .[test] without the lock: the same as "
        "requirements/test.lock, resolved in 3 s"
    )
    extra = lock.Resolved(5.0, versions={"s3fs": "2026.9.0", "botocore": "1.43.117", "six": "1"})
    assert lock.drift_lines("pip 26.3 (newest), .[s3]", extra, ".[s3]", locked) == (
        "drift: pip 26.3 (newest), .[s3]: resolved in 5 s: s3fs==2026.9.0 botocore==1.43.117"
    )


def test_installed_names_each_pin_missing_or_at_another_version() -> None:
    lock_text = (
        "click==8.1.7 \\\n    --hash=sha256:" + "a" * 64 + "\n"
        "jinja2==3.1.4 \\\n    --hash=sha256:" + "b" * 64 + "\n"
        "orjson==3.10.0 \\\n    --hash=sha256:" + "c" * 64 + "\n"
        "colorama==0.4.6 ; sys_platform == 'win32' \\\n    --hash=sha256:" + "d" * 64 + "\n"
    )
    pins = lock.read_lock(lock_text)
    # pip and sitegen itself are beside the locked packages, never in the lock: not looked at.
    installed = {"click": "8.1.7", "jinja2": "3.1.5", "pip": "23.2.1", "sitegen": "0.1"}
    linux = {"sys_platform": "linux"}
    assert lock.installed_differences(pins, installed, linux) == [
        "jinja2: locked 3.1.4, installed 3.1.5",
        "orjson: locked 3.10.0, not installed",
    ]
    everything = {**installed, "jinja2": "3.1.4", "orjson": "3.10.0"}
    assert lock.installed_differences(pins, everything, linux) == []
    # On Windows the marker-guarded pin must be installed too.
    windows = {"sys_platform": "win32"}
    assert lock.installed_differences(pins, everything, windows) == [
        "colorama: locked 0.4.6, not installed"
    ]


def test_installed_exits_1_naming_the_differences(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command `.ci/run` runs after the install, on a fake installed set (no venv made)."""
    pins = lock.read_lock((ROOT / lock.LOCK).read_text(encoding="utf-8"))
    applying = [pin for pin in pins if pin.applies()]
    exact = {pin.name: pin.version for pin in applying}
    monkeypatch.setattr(lock, "installed_versions", lambda: dict(exact))
    assert lock.main(["installed"]) == 0
    assert "this environment is requirements/test.lock's" in capsys.readouterr().out
    first, second = applying[0], applying[1]
    drifted = {**exact, first.name: first.version + ".post1"}
    del drifted[second.name]
    monkeypatch.setattr(lock, "installed_versions", lambda: drifted)
    assert lock.main(["installed"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"lock: {first.name}: locked {first.version}, installed {first.version}.post1",
        f"lock: {second.name}: locked {second.version}, not installed",
        "lock: install through requirements/test.lock (docs/dependencies.md)",
    ]


def test_installed_versions_are_keyed_by_canonical_name() -> None:
    versions = lock.installed_versions()
    # Distributions named with capitals or underscores (Jinja2, typing_extensions) are found
    # under the lock's spelling; pytest runs, so it is installed.
    assert versions["pytest"] == importlib.metadata.version("pytest")
    assert all(name == canonicalize_name(name) for name in versions)
