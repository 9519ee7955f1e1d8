"""Make the test environment's lock, check it against pyproject.toml, and report its drift.

    python scripts/lock.py compile   # rewrite requirements/test.lock with uv; --upgrade takes
                                     # the newest releases (docs/dependencies.md)
    python scripts/lock.py check     # exit 1 if pyproject.toml's requirements and the lock disagree
    python scripts/lock.py installed # exit 1 if this environment's versions are not the lock's
    python scripts/lock.py drift     # resolve the test extra without the lock in fresh venvs and
                                     # print what would change; exits 0 whatever it finds

The lock pins every package `pip install -e '.[test]'` would install, and the build backend,
each with its hashes, so `pip install --require-hashes -r requirements/test.lock` installs the
same files on any day, with any pip since 20.3. Runs on the standard library and `packaging`
(which pip and pytest bring), so `check` works in the test environment it describes.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import tomllib
import venv
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
LOCK = Path("requirements/test.lock")
BUILD_IN = Path("requirements/build.in")
EXTRA = "test"
COMPILE_COMMAND = "python scripts/lock.py compile"
# What the lock is resolved for: uv's universal mode writes one file whose markers cover every
# OS and Python from 3.11 on (the project's requires-python), with the hashes of every file of a
# pinned release, so pip takes whichever wheel fits the machine.
UV_ARGS = ["--universal", "--python-version", "3.11", "--generate-hashes"]
# The extras a user installs by themselves (the test extra brings them all together).
USER_EXTRAS = ("s3", "dask", "sql", "s3,dask")
# The packages whose releases broke a resolve before (issue 36): named in every report.
KEY_PACKAGES = ("s3fs", "aiobotocore", "botocore", "boto3", "moto", "distributed", "pyarrow")
# A fresh resolve of the test extra can take pip 23.2 minutes of backtracking; past this it is
# reported as not resolved.
DRIFT_TIMEOUT_S = 600


@dataclass(frozen=True)
class Pin:
    """One `name==version` line of the lock, with its environment marker and hashes."""

    name: str
    version: str
    marker: Marker | None
    hashes: tuple[str, ...]

    def applies(self, environment: Mapping[str, str] | None = None) -> bool:
        """Tell whether pip installs this pin in the environment (this interpreter's by default)."""
        return self.marker is None or self.marker.evaluate(dict(environment or {}))


def read_lock(text: str) -> list[Pin]:
    """Parse a hashed requirements file as uv and pip-compile write it."""
    pins: list[Pin] = []
    # A requirement and its `--hash` options are one logical line, continued with backslashes.
    logical = re.sub(r"\\\n", " ", text)
    for number, line in enumerate(logical.splitlines(), start=1):
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        hashes = tuple(re.findall(r"--hash=(\S+)", line))
        requirement = Requirement(re.sub(r"--hash=\S+", "", line).strip())
        specs = list(requirement.specifier)
        if len(specs) != 1 or specs[0].operator != "==":
            raise ValueError(f"{LOCK}: logical line {number}: {line!r} is not pinned with ==")
        pins.append(
            Pin(canonicalize_name(requirement.name), specs[0].version, requirement.marker, hashes)
        )
    return pins


def project_requirements(pyproject: Mapping[str, object], extra: str) -> list[Requirement]:
    """List what installing the project with `extra` asks for, its own extras expanded."""
    project = pyproject["project"]
    assert isinstance(project, dict)
    name = canonicalize_name(project["name"])
    optional: dict[str, list[str]] = project.get("optional-dependencies", {})
    wanted, seen, out = [extra], set(), [Requirement(r) for r in project["dependencies"]]
    while wanted:
        current = wanted.pop()
        if current in seen:
            continue
        seen.add(current)
        for text in optional[current]:
            requirement = Requirement(text)
            if canonicalize_name(requirement.name) == name:
                wanted.extend(requirement.extras)
            else:
                out.append(requirement)
    return out


def disagreements(
    requirements: Iterable[Requirement],
    pins: Iterable[Pin],
    environment: Mapping[str, str] | None = None,
) -> list[str]:
    """Say each requirement the lock leaves out or pins outside its range, in one environment."""
    env = dict(environment or {})
    locked = {pin.name: pin for pin in pins if pin.applies(env)}
    problems = []
    for requirement in requirements:
        if requirement.marker is not None and not requirement.marker.evaluate(env):
            continue
        pin = locked.get(canonicalize_name(requirement.name))
        if pin is None:
            problems.append(f"{requirement}: not in {LOCK}")
        elif not requirement.specifier.contains(pin.version, prereleases=True):
            problems.append(f"{requirement}: {LOCK} pins {pin.name}=={pin.version}")
    for pin in locked.values():
        if not pin.hashes:
            problems.append(f"{pin.name}=={pin.version}: no --hash in {LOCK}")
    return problems


def build_requirements(root: Path = ROOT) -> list[Requirement]:
    """Read the build backend's requirements the lock holds (requirements/build.in)."""
    lines = (root / BUILD_IN).read_text(encoding="utf-8").splitlines()
    return [Requirement(line) for line in lines if line.strip() and not line.startswith("#")]


def check(root: Path = ROOT) -> list[str]:
    """Say every way pyproject.toml and the lock disagree, on this interpreter's platform."""
    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    pins = read_lock((root / LOCK).read_text(encoding="utf-8"))
    wanted = project_requirements(pyproject, EXTRA) + build_requirements(root)
    problems = disagreements(wanted, pins)
    backend_requires = pyproject["build-system"]["requires"]
    backend = {canonicalize_name(Requirement(r).name) for r in backend_requires}
    listed = {canonicalize_name(r.name) for r in build_requirements(root)}
    problems += [f"build-system requires {name}: not in {BUILD_IN}" for name in backend - listed]
    return problems


def installed_versions() -> dict[str, str]:
    """Return the version of every distribution this interpreter sees, by canonical name."""
    versions: dict[str, str] = {}
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        if name:  # a half-removed install leaves metadata without one
            versions.setdefault(canonicalize_name(name), dist.version)
    return versions


def installed_differences(
    pins: Iterable[Pin],
    installed: Mapping[str, str],
    environment: Mapping[str, str] | None = None,
) -> list[str]:
    """Say each pin of the environment that is missing or at another version in ``installed``.

    What the lock does not name (pip, sitegen itself) is not looked at: the lock says what the
    tests run on, not all that may be beside it.
    """
    wrong = []
    for pin in pins:
        if not pin.applies(environment):
            continue
        version = installed.get(pin.name)
        if version is None:
            wrong.append(f"{pin.name}: locked {pin.version}, not installed")
        elif version != pin.version:
            wrong.append(f"{pin.name}: locked {pin.version}, installed {version}")
    return wrong


def compare(locked: Mapping[str, str], resolved: Mapping[str, str]) -> list[str]:
    """List what a fresh resolve would change in the lock, one line a package, by name."""
    lines = []
    for name in sorted(locked.keys() | resolved.keys()):
        old, new = locked.get(name), resolved.get(name)
        if old == new:
            continue
        if old is None:
            lines.append(f"+ {name}=={new}")
        elif new is None:
            lines.append(f"- {name}=={old}")
        else:
            arrow = "up" if Version(new) > Version(old) else "DOWN"
            lines.append(f"~ {name} {old} -> {new} ({arrow})")
    return lines


def fresh_venv(tmp: Path, pip: str) -> tuple[str, str]:
    """Make a venv with the pip it comes with (or the newest); its python and pip's version."""
    venv.create(tmp / "venv", with_pip=True)
    python = str(tmp / "venv" / "bin" / "python")
    if pip == "newest":
        upgrade = [python, "-m", "pip", "install", "-q", "--upgrade", "pip"]
        subprocess.run(upgrade, check=True, capture_output=True)
    version = subprocess.run(
        [python, "-m", "pip", "--version"], capture_output=True, text=True, check=True
    ).stdout.split()[1]
    return python, version


def resolve(python: str, targets: list[str], report: Path, timeout: float) -> Resolved:
    """Resolve targets as `pip install` would, installing nothing; the versions or pip's error."""
    command = [python, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet"]
    command += ["--report", str(report), *targets]
    started = time.monotonic()
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Resolved(timeout, error=f"not resolved within {timeout:.0f} s")
    seconds = time.monotonic() - started
    if done.returncode != 0:
        tail = [line for line in done.stderr.splitlines() if not line.startswith("WARNING")]
        return Resolved(seconds, error="\n".join(tail[-12:]))
    project = canonicalize_name("sitegen")
    versions: dict[str, str] = {}
    for item in json.loads(report.read_text(encoding="utf-8"))["install"]:
        name = canonicalize_name(item["metadata"]["name"])
        if name != project:
            versions[name] = item["metadata"]["version"]
    return Resolved(seconds, versions=versions)


@dataclass(frozen=True)
class Resolved:
    """What one fresh resolve gave: the versions it picked, or pip's error."""

    seconds: float
    versions: dict[str, str] | None = None
    error: str = ""


def drift(pips: list[str], timeout: float) -> None:
    """Print, for each pip, what a resolve without the lock picks: the lock's diff, the extras."""
    locked = {
        pin.name: pin.version
        for pin in read_lock((ROOT / LOCK).read_text(encoding="utf-8"))
        if pin.applies()
    }
    # The test extra with the build backend is what the lock holds; the user extras must resolve
    # by themselves, with any pip, for `pip install 'sitegen[s3]'` to work on any day.
    targets = {f".[{EXTRA}]": [f".[{EXTRA}]", "-r", str(BUILD_IN)]}
    targets |= {f".[{extra}]": [f".[{extra}]"] for extra in USER_EXTRAS}
    for pip in pips:
        with tempfile.TemporaryDirectory(prefix="sitegen-drift-") as tmp:
            python, version = fresh_venv(Path(tmp), pip)
            with ThreadPoolExecutor(len(targets)) as pool:
                futures = {
                    name: pool.submit(resolve, python, args, Path(tmp) / f"{i}.json", timeout)
                    for i, (name, args) in enumerate(targets.items())
                }
            for name, future in futures.items():
                print(drift_lines(f"pip {version} ({pip}), {name}", future.result(), name, locked))


def drift_lines(head: str, outcome: Resolved, target: str, locked: Mapping[str, str]) -> str:
    """Put one resolve's outcome in words: against the lock for the test extra, else its keys."""
    if outcome.versions is None:
        return f"drift: {head}: DOES NOT RESOLVE after {outcome.seconds:.0f} s\n{outcome.error}"
    took = f"resolved in {outcome.seconds:.0f} s"
    if target != f".[{EXTRA}]":
        keys = [f"{n}=={outcome.versions[n]}" for n in KEY_PACKAGES if n in outcome.versions]
        return f"drift: {head}: {took}: {' '.join(keys)}"
    changes = compare(locked, outcome.versions)
    verdict = f"{len(changes)} change(s) from {LOCK}" if changes else f"the same as {LOCK}"
    return "\n".join(
        [f"drift: {head} without the lock: {verdict}, {took}"] + [f"  {line}" for line in changes]
    )


def compile_lock(upgrade: bool) -> None:
    """Rewrite the lock with uv from pyproject.toml's test extra and the build backend."""
    uv = Path(sys.executable).with_name("uv")
    command = [str(uv) if uv.exists() else "uv", "pip", "compile", "pyproject.toml", str(BUILD_IN)]
    command += ["--extra", EXTRA, *UV_ARGS, "--custom-compile-command", COMPILE_COMMAND]
    # Without --upgrade uv keeps every pin the requirements still allow: an added dependency
    # moves nothing else.
    command += ["--upgrade"] if upgrade else []
    command += ["--output-file", str(LOCK)]
    subprocess.run(command, cwd=ROOT, check=True, env={**os.environ, "UV_NO_CONFIG": "1"})


def main(argv: list[str] | None = None) -> int:
    """Run one of the four commands."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    compile_parser = sub.add_parser("compile", help="rewrite the lock from pyproject.toml (uv)")
    compile_parser.add_argument(
        "--upgrade", action="store_true", help="take the newest releases, not only what changed"
    )
    sub.add_parser("check", help="exit 1 if pyproject.toml and the lock disagree")
    sub.add_parser("installed", help="exit 1 if this environment's versions are not the lock's")
    drift_parser = sub.add_parser("drift", help="print what a resolve without the lock changes")
    drift_parser.add_argument(
        "--pip",
        default="bundled,newest",
        help="which pips resolve, comma-separated: bundled (a fresh venv's), newest",
    )
    drift_parser.add_argument("--timeout", type=float, default=DRIFT_TIMEOUT_S)
    args = parser.parse_args(argv)
    if args.command == "compile":
        compile_lock(args.upgrade)
    elif args.command == "check":
        problems = check()
        for problem in problems:
            print(f"lock: {problem}", file=sys.stderr)
        if problems:
            print(f"lock: refresh it with `{COMPILE_COMMAND}`", file=sys.stderr)
            return 1
        print(f"lock: {LOCK} agrees with pyproject.toml")
    elif args.command == "installed":
        pins = read_lock((ROOT / LOCK).read_text(encoding="utf-8"))
        wrong = installed_differences(pins, installed_versions())
        for line in wrong:
            print(f"lock: {line}", file=sys.stderr)
        if wrong:
            print(f"lock: install through {LOCK} (docs/dependencies.md)", file=sys.stderr)
            return 1
        print(f"lock: this environment is {LOCK}'s ({sys.executable})")
    else:
        drift(args.pip.split(","), args.timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
