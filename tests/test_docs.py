"""The documented commands exist, and the GitHub Pages workflow runs against real logs."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from sitegen.cli import cli
from sitegen.examples import EXAMPLE_LOG_DIR
from tests.conftest import require

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / "docs/github-pages-workflow.yml"
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
OPERATORS = {"|", "||", "&&", ";", "&", ">", ">>", "<", "(", ")", "{", "}"}


def sitegen_commands(script: str) -> list[list[str]]:
    """Return the arguments of every ``sitegen`` invocation in a shell script or unit file."""
    commands = []
    for line in script.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            tokens = list(lexer)
        except ValueError:
            continue
        for i, token in enumerate(tokens):
            # `sitegen` where a command starts, `python -m sitegen`, or an executable path
            # (`/opt/sitegen/bin/sitegen`, `ExecStart=/…/sitegen`) anywhere.
            command_position = i == 0 or tokens[i - 1] in OPERATORS | {"-m"}
            if (command_position and token == "sitegen") or token.endswith("/sitegen"):
                args = []
                for arg in tokens[i + 1 :]:
                    if arg in OPERATORS:
                        break
                    args.append(arg)
                if args and not args[0].startswith("#"):
                    commands.append(args)
    return commands


def fenced_blocks(markdown: str) -> list[tuple[str, str]]:
    """Return (language, body) of every fenced code block."""
    return re.findall(r"^ *```(\w*)\n(.*?)^ *```", markdown, flags=re.M | re.S)


def documented_commands() -> list[tuple[str, list[str]]]:
    found = []
    for doc in DOCUMENTS:
        for lang, body in fenced_blocks(doc.read_text()):
            if lang in ("sh", "ini", "bash", ""):
                found += [(doc.name, c) for c in sitegen_commands(body)]
    workflow = yaml.safe_load(WORKFLOW.read_text())
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            found += [(WORKFLOW.name, c) for c in sitegen_commands(step.get("run", ""))]
    return found


def test_docs_run_sitegen_commands() -> None:
    where = {name for name, _ in documented_commands()}
    assert {"README.md", "nginx.md", "github-pages-workflow.yml"} <= where


@pytest.mark.parametrize(
    ("where", "args"),
    documented_commands(),
    ids=lambda v: " ".join(v) if isinstance(v, list) else v,
)
def test_every_documented_command_and_option_exists(where: str, args: list[str]) -> None:
    help_args = [args[0], "--help"] if not args[0].startswith("-") else ["--help"]
    result = CliRunner().invoke(cli, help_args)
    assert result.exit_code == 0, f"{where}: sitegen {' '.join(args)}: {result.output}"
    for arg in args[1:]:
        if arg.startswith("--"):
            option = arg.split("=", 1)[0]
            assert re.search(rf"(^|[\s,]){re.escape(option)}\b", result.output), (
                f"{where}: `sitegen {args[0]}` has no option {option}"
            )


def load_workflow() -> dict[Any, Any]:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    assert isinstance(workflow, dict)
    return workflow


def test_workflow_is_a_pages_deployment() -> None:
    workflow = load_workflow()
    # YAML 1.1 reads the key `on` as True.
    triggers = workflow.get("on", workflow.get(True))
    assert {"push", "workflow_dispatch"} <= set(triggers)
    build, deploy = workflow["jobs"]["build"], workflow["jobs"]["deploy"]
    uses = [s["uses"] for job in (build, deploy) for s in job["steps"] if "uses" in s]
    assert all(re.fullmatch(r"actions/[a-z-]+@[0-9a-f]{40}", u) for u in uses), uses
    names = [u.split("@")[0] for u in uses]
    assert names[-2:] == ["actions/upload-pages-artifact", "actions/deploy-pages"]
    assert deploy["needs"] == "build"
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert deploy["environment"]["name"] == "github-pages"
    # Never the unrelated PyPI project of the same name.
    assert workflow["env"]["SITEGEN"].startswith("sitegen @ ")
    for step in build["steps"]:
        if "run" in step:
            check = subprocess.run(["bash", "-n", "-c", step["run"]], capture_output=True)
            assert check.returncode == 0, (step["run"], check.stderr)


def test_markdown_embeds_the_workflow_verbatim() -> None:
    doc = (ROOT / "docs/github-pages.md").read_text()
    yaml_blocks = [body for lang, body in fenced_blocks(doc) if lang == "yaml"]
    assert yaml_blocks == [WORKFLOW.read_text()]


def test_workflow_steps_build_what_they_upload(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run the workflow's sitegen commands on the example logs, as the runner would."""
    workflow = load_workflow()
    env = {k: str(v) for k, v in workflow["env"].items()}
    shutil.copytree(EXAMPLE_LOG_DIR, tmp_path / env["EVENT_LOG_DIR"])
    monkeypatch.chdir(tmp_path)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    # What GitHub fills in for a project site named "history".
    expressions = {"${{ steps.pages.outputs.base_path }}": "/history"}
    ran = 0
    for step in workflow["jobs"]["build"]["steps"]:
        for key, value in step.get("env", {}).items():
            monkeypatch.setenv(key, expressions.get(value, value))
        script = step.get("run", "").replace("\\\n", " ")
        if script.startswith("rm "):  # the one shell step that is not sitegen's
            subprocess.run(["bash", "-c", script], check=True)
        for line in script.splitlines():
            for args in sitegen_commands(line):
                expanded = [os.path.expandvars(a) for a in args]
                result = CliRunner().invoke(cli, expanded)
                ran += 1
                if result.exit_code != 0:
                    # The example logs include a damaged one: only a step allowed to fail may.
                    assert step.get("continue-on-error") is True, (args, result.output)
                    assert result.exit_code == 1 and "error: malformed" in result.output
                redirect = re.search(r"sitegen .*?>\s*(\S+)", line)
                if redirect:
                    Path(redirect.group(1)).write_text(result.stdout)
    assert ran == 2
    summary = json.loads(Path("build-summary.json").read_text())
    assert summary["jobs_published"] == 25
    uploads = {
        s["uses"].split("@")[0]: s["with"]["path"]
        for s in workflow["jobs"]["build"]["steps"]
        if "with" in s and "path" in s["with"]
    }
    site = Path(uploads["actions/upload-pages-artifact"])
    assert (site / "index.html").is_file() and (site / "api/jobs").is_file()
    assert not list(site.glob(".sitegen-state*"))  # the build's state is not deployed
    assert 'href="/history/static/style.css"' in (site / "404.html").read_text()
    with tarfile.open(uploads["actions/upload-artifact"]) as tar:
        assert "api/jobs" in tar.getnames()
    assert summary["archive"]["path"] == uploads["actions/upload-artifact"]


# Pages other issues add; README.md and docs/index.md link them ahead of time. Links to these may
# dangle until they land, every other relative link must resolve.
PENDING_PAGES: set[Path] = set()
LINK = re.compile(r"!?\[[^\]]*\]\(([^()\s]+)\)")


def without_blocks(markdown: str) -> str:
    """Return the markdown without fenced blocks (a `# comment` in a block is no heading)."""
    return re.sub(r"^ *```\w*\n.*?^ *```", "", markdown, flags=re.M | re.S)


def prose(markdown: str) -> str:
    """Return the markdown without fenced blocks and code spans, where links are not links."""
    return re.sub(r"`[^`]*`", "", without_blocks(markdown))


def anchors(markdown: str) -> set[str]:
    """Return the fragment ids GitHub gives the headings of a markdown file."""
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *$", without_blocks(markdown), flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        found.add(slug if n == 0 else f"{slug}-{n}")
    return found


def broken_links(doc: Path, pending: set[Path] = PENDING_PAGES) -> list[str]:
    """Return every relative link of ``doc`` whose file or heading does not exist."""
    broken = []
    for target in LINK.findall(prose(doc.read_text())):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # https:, mailto:: not a file of this repository
        path_part, _, fragment = target.partition("#")
        path = (doc.parent / path_part).resolve() if path_part else doc
        if path in pending and not path.exists():
            continue
        if not path.exists():
            broken.append(f"{doc.name}: {target}: no such file")
        elif fragment and path.suffix == ".md" and fragment not in anchors(path.read_text()):
            broken.append(f"{doc.name}: {target}: no such heading")
    return broken


def test_every_relative_link_in_the_docs_resolves() -> None:
    assert [b for doc in DOCUMENTS for b in broken_links(doc)] == []


def test_link_check_finds_a_missing_file_and_a_missing_heading(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# The `/api/*` mirror\n\n```sh\n# not a heading\n```\n")
    doc = tmp_path / "doc.md"
    doc.write_text(
        "[ok](other.md#the-api-mirror) [gone](missing.md) [bad](other.md#not-a-heading)\n"
        "[pending](later.md) [web](https://example.org/x.md) `[code](nowhere.md)`\n"
    )
    assert broken_links(doc, pending={tmp_path / "later.md"}) == [
        "doc.md: missing.md: no such file",
        "doc.md: other.md#not-a-heading: no such heading",
    ]


def test_readme_and_index_link_every_docs_page() -> None:
    pages = {p.name for p in (ROOT / "docs").glob("*.md")} - {"index.md"}
    pages |= {p.name for p in PENDING_PAGES}
    for doc in (ROOT / "README.md", ROOT / "docs/index.md"):
        linked = {Path(t.partition("#")[0]).name for t in LINK.findall(prose(doc.read_text()))}
        assert pages - linked == set(), doc.name


def _linter(name: str) -> str:
    """Return a linter from the test extras: beside this Python first, else on PATH."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.is_file() else require(name)


def _zizmor(workflow: Path) -> subprocess.CompletedProcess[str]:
    """Run zizmor offline (no GitHub API calls) over one workflow file."""
    return subprocess.run(
        [_linter("zizmor"), "--offline", "--no-progress", "--format", "plain", str(workflow)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_zizmor_finds_nothing_in_the_workflow(tmp_path: Path) -> None:
    """Every action is pinned by commit and checkout keeps no credentials (zizmor agrees)."""
    result = _zizmor(WORKFLOW)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No findings" in result.stdout + result.stderr
    # The same check fails on the workflow as it was: tags, credentials persisted.
    unpinned = re.sub(r"@[0-9a-f]{40} # (v\d+)\.\d+\.\d+", r"@\1", WORKFLOW.read_text())
    unpinned = re.sub(
        r"\n        with:\n(          #.*\n)*          persist-credentials: false", "", unpinned
    )
    (tmp_path / "unpinned.yml").write_text(unpinned)
    bad = _zizmor(tmp_path / "unpinned.yml")
    assert bad.returncode != 0
    assert "unpinned-uses" in bad.stdout and "artipacked" in bad.stdout


def test_workflow_pins_each_action_with_its_tag() -> None:
    for job in load_workflow()["jobs"].values():
        for step in job["steps"]:
            if "uses" in step:
                assert re.fullmatch(r"actions/[a-z-]+@[0-9a-f]{40}", step["uses"]), step["uses"]
    for line in WORKFLOW.read_text().splitlines():
        if "uses:" in line:
            assert re.search(r"@[0-9a-f]{40} # v\d+\.\d+\.\d+$", line), line


def test_workflow_matches_the_github_workflows_schema(tmp_path: Path) -> None:
    """The SchemaStore github-workflows schema (vendored in check-jsonschema: no network)."""
    command = [_linter("check-jsonschema"), "--builtin-schema", "vendor.github-workflows"]
    good = subprocess.run([*command, str(WORKFLOW)], capture_output=True, text=True, timeout=120)
    assert good.returncode == 0, good.stdout + good.stderr
    broken = tmp_path / "broken.yml"
    broken.write_text(WORKFLOW.read_text().replace("runs-on:", "runs_on:", 1))
    bad = subprocess.run([*command, str(broken)], capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0


# Code names in the docs: a backticked source path (`sitegen/render/urls.py`, `builder/plan/planner.py`,
# `benchmarks/cpu.py`) or a dotted name (`sitegen.render.urls.TASKS_PER_PAGE`,
# `eventlog.sources.LogSource`) must name something in the tree as it is when the test runs.
# A path or name whose first segment is a package of sitegen (`builder`, `render`…) is taken as
# inside sitegen/; other paths from the repository's root when their first folder is there.
# Sections of a dated record (a heading with a date, in DATED_DOCS) say what the code was that
# day: they are left as written.
DATED_DOCS = {"performance.md", "scale.md"}
DATED_HEADING = re.compile(r"^(#{1,6}) .*\b\d{4}-\d{2}-\d{2}\b")
HEADING = re.compile(r"^(#{1,6}) ")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
SOURCE_PATH = re.compile(r"(?<![\w./-])((?:[\w.-]+/)+\w+\.py)\b")
DOTTED_NAME = re.compile(r"(?<![\w./-])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)")
# Dotted words that are files, not Python names.
NOT_NAMES = {"sitegen.toml"}


def undated(markdown: str, dated: bool) -> str:
    """Return the markdown without its dated sections (each up to the next heading as high)."""
    if not dated:
        return markdown
    kept: list[str] = []
    skipping = 0  # the level of the dated heading being skipped; 0: none
    fenced = False
    for line in markdown.splitlines():
        if re.match(r"^ *```", line):
            fenced = not fenced
        heading = None if fenced else HEADING.match(line)  # a `# comment` in a block is none
        if heading and skipping and len(heading.group(1)) <= skipping:
            skipping = 0
        if heading and not skipping and DATED_HEADING.match(line):
            skipping = len(heading.group(1))
        if not skipping:
            kept.append(line)
    return "\n".join(kept) + "\n"


def code_texts(markdown: str) -> list[str]:
    """Return the text of every code span and fenced block."""
    blocks = [body for _, body in fenced_blocks(markdown)]
    return blocks + CODE_SPAN.findall(without_blocks(markdown))


def sitegen_packages(root: Path) -> set[str]:
    """Return the names of sitegen's sub-packages, as the tree has them now."""
    return {p.parent.name for p in (root / "sitegen").glob("*/__init__.py")}


def path_exists(path: str, root: Path, packages: set[str]) -> bool | None:
    """Tell whether a source path names a file; None: not a path of this repository."""
    first = path.split("/", 1)[0]
    if first == "sitegen":
        return (root / path).is_file()
    if first in packages:
        return (root / "sitegen" / path).is_file()
    if (root / first).is_dir():
        return (root / path).is_file()
    return None


def name_exists(dotted: str) -> bool:
    """Tell whether ``sitegen.a.b.c`` is a module, or an attribute reached from the longest one."""
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        tried = ".".join(parts[:cut])
        try:
            found: object = importlib.import_module(tried)
        except ModuleNotFoundError as exc:
            if exc.name is None or not f"{tried}.".startswith(f"{exc.name}."):
                raise  # the module is there but needs another that is not installed
            continue
        for attribute in parts[cut:]:
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    return False


def stale_code_names(doc: Path, root: Path = ROOT) -> list[str]:
    """Return each source path or dotted sitegen name in ``doc`` that the tree does not have."""
    packages = sitegen_packages(root)
    text = undated(doc.read_text(encoding="utf-8"), doc.name in DATED_DOCS)
    stale: list[str] = []
    for code in code_texts(text):
        for path in SOURCE_PATH.findall(code):
            if path_exists(path, root, packages) is False and path not in stale:
                stale.append(path)
        for dotted in DOTTED_NAME.findall(code):
            first = dotted.split(".", 1)[0]
            if dotted in NOT_NAMES or (first != "sitegen" and first not in packages):
                continue
            name = dotted if first == "sitegen" else f"sitegen.{dotted}"
            if not name_exists(name) and dotted not in stale:
                stale.append(dotted)
    return [f"{doc.name}: {name}" for name in stale]


def test_every_code_path_and_dotted_name_in_the_docs_exists() -> None:
    assert [s for doc in DOCUMENTS for s in stale_code_names(doc)] == []


def test_the_code_name_check_finds_a_moved_module_and_a_gone_name(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    for package in ("sitegen", "sitegen/text", "sitegen/render", "benchmarks"):
        (root / package).mkdir(parents=True)
        (root / package / "__init__.py").touch()
    (root / "sitegen/text/htmlsafe.py").touch()
    (root / "benchmarks/cpu.py").touch()
    doc = root / "scale.md"
    doc.write_text(
        "# Scale\n\nEscaped by `sitegen/text/htmlsafe.py` and `text/htmlsafe.py`, not by\n"
        "`sitegen/render/htmlsafe.py` nor `render/gone.py`; `benchmarks/cpu.py` measures,\n"
        "`benchmarks/nope.py` does not; `other/thing.py` is no path of this repository.\n"
        "Names: `sitegen.render.urls.TASKS_PER_PAGE`, `render.urls.NO_SUCH(x)`,\n"
        "`sitegen.builder.manifest.built_from(output)`, `sitegen.build(...)`, `./sitegen.toml`,\n"
        "`other.module.name`.\n\n```sh\npython -m sitegen.examples.generator\n"
        "python -m sitegen.examples.nothing\n```\n\n"
        "## Measured (2026-12-02)\n\n`sitegen/builder/foresight.py` then; `render.old.name`.\n\n"
        "### Its detail\n\n`render/older.py` too.\n\n## Today\n\n`render/now_gone.py`.\n"
    )
    assert stale_code_names(doc, root) == [
        "scale.md: sitegen.examples.nothing",
        "scale.md: sitegen/render/htmlsafe.py",
        "scale.md: render/gone.py",
        "scale.md: benchmarks/nope.py",
        "scale.md: render.urls.NO_SUCH",
        "scale.md: sitegen.builder.manifest.built_from",
        "scale.md: render/now_gone.py",
    ]
    # Outside DATED_DOCS a dated heading is no exemption.
    doc.rename(root / "robustness.md")
    assert "robustness.md: sitegen/builder/foresight.py" in stale_code_names(
        root / "robustness.md", root
    )
