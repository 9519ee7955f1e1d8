"""Every module imports only from its own layer or the layers below (docs/code-layout.md).

Every import counts: at the top of a module, under ``TYPE_CHECKING`` and inside functions.
"""

from __future__ import annotations

import ast
import graphlib
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "sitegen"

# Bottom-up; a module belongs to the first entry that is it or a package holding it.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "vocabulary",
        (
            "sitegen.errors",
            "sitegen.version",
            "sitegen.text",
            "sitegen.finding",
            "sitegen.model",
            "sitegen.layout",
            "sitegen.config",
            "sitegen.examples",
        ),
    ),
    ("read logs", ("sitegen.eventlog",)),
    ("write the site", ("sitegen.publish",)),
    ("analyse", ("sitegen.diagnose",)),
    ("draw", ("sitegen.svg",)),
    ("render", ("sitegen.render",)),
    ("build", ("sitegen.builder",)),
    ("serve and check", ("sitegen.serve", "sitegen.check", "sitegen.python_api")),
    ("commands", ("sitegen.commands",)),
    ("command line", ("sitegen.cli", "sitegen.__main__", "sitegen")),
]


@dataclass(frozen=True)
class Import:
    """One name a module imports from another module of sitegen."""

    module: str
    line: int
    target: str
    name: str


def module_name(path: Path) -> str:
    """Return the dotted name of a module file of the package."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    """Return every module of the package by dotted name."""
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(name: str, path: Path, known: set[str]) -> list[Import]:
    """Return what one module imports from sitegen, a submodule taken as the target."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "sitegen":
                    found.append(Import(name, node.lineno, alias.name, alias.name))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            if source.split(".")[0] != "sitegen":
                continue
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                target = sub if sub in known else source
                found.append(Import(name, node.lineno, target, alias.name))
    return found


def layer_of(name: str) -> int:
    """Return the index of the layer a module belongs to."""
    for n, (_, members) in enumerate(LAYERS):
        for member in members:
            if name == member or (member != "sitegen" and name.startswith(member + ".")):
                return n
    raise AssertionError(f"{name} is in no layer: add it to LAYERS and docs/code-layout.md")


def group_of(name: str) -> str:
    """Return the sub-package (or top-level module) a module belongs to."""
    parts = name.split(".")
    return ".".join(parts[:2])


ALL = modules()
EVERY_IMPORT = [i for name, path in ALL.items() for i in imports(name, path, set(ALL))]


def test_the_scan_sees_imports_of_every_kind() -> None:
    # Function-level and TYPE_CHECKING imports count: the scan must find some of each.
    assert len(EVERY_IMPORT) > 300
    assert any(i.module == "sitegen" and i.target == "sitegen.python_api" for i in EVERY_IMPORT)
    assert any(i.target == "sitegen.text.formatting" for i in EVERY_IMPORT)


def test_every_module_has_a_layer() -> None:
    for name in ALL:
        layer_of(name)


def test_no_import_runs_up_a_layer() -> None:
    upward = [
        f"{i.module} (line {i.line}) imports {i.name} from {i.target}: "
        f"{LAYERS[layer_of(i.target)][0]} is above {LAYERS[layer_of(i.module)][0]}"
        for i in EVERY_IMPORT
        if layer_of(i.target) > layer_of(i.module)
    ]
    assert upward == []


def test_packages_import_each_other_in_one_direction() -> None:
    graph: dict[str, set[str]] = {group_of(name): set() for name in ALL}
    for i in EVERY_IMPORT:
        if group_of(i.target) != group_of(i.module):
            graph[group_of(i.module)].add(group_of(i.target))
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        pytest.fail(f"packages import each other: {' -> '.join(exc.args[1])}")


def test_modules_import_each_other_in_one_direction() -> None:
    graph: dict[str, set[str]] = {name: set() for name in ALL}
    for i in EVERY_IMPORT:
        if i.target != i.module and i.target in ALL:
            graph[i.module].add(i.target)
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        pytest.fail(f"modules import each other: {' -> '.join(exc.args[1])}")


def test_the_build_state_imports_neither_analysis_nor_rendering() -> None:
    # docs/code-layout.md: the map step hands the state finished rows; it computes none.
    found = [
        f"{i.module} (line {i.line}) imports {i.name} from {i.target}"
        for i in EVERY_IMPORT
        if i.module.startswith("sitegen.builder.state")
        and i.target.startswith(("sitegen.diagnose", "sitegen.render", "sitegen.svg"))
    ]
    assert found == []


def test_modules_stay_within_the_sizes_the_layout_doc_promises() -> None:
    # docs/code-layout.md, "Module size": 600 lines a module (the seeded generator aside), and a
    # command line that only wires options.
    limits = {"sitegen.cli": 350, "sitegen.examples.generator": None}
    over = []
    for name, path in ALL.items():
        limit = limits.get(name, 600)
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if limit is not None and lines > limit:
            over.append(f"{name}: {lines} lines, over {limit}")
    assert over == []
    assert len(ALL) > 100


def test_the_check_catches_an_upward_import(tmp_path: Path) -> None:
    # The rule itself can fail: a reader that imported a renderer would be named.
    module = tmp_path / "reader.py"
    module.write_text("def f():\n    from sitegen.render.pages import PageRenderer\n")
    found = imports("sitegen.eventlog.reader", module, set(ALL))
    assert [(i.line, i.target, i.name) for i in found] == [
        (2, "sitegen.render.pages", "PageRenderer")
    ]
    assert layer_of(found[0].target) > layer_of("sitegen.eventlog.reader")
