"""Cut the job DOT Ballista writes into per-stage DOT texts, keeping their bytes.

This serves ``/api/job/{id}/stage/{sid}/dot``, which must read like the live endpoint, so
it slices text rather than parsing it. ``dotgraph`` parses the same DOT into a graph for
the SVG pictures.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

_SUBGRAPH = re.compile(r"subgraph\s+(\S+)\s*$")
_LABEL = re.compile(r'^\s*label\s*=\s*"Stage (\d+)(?: \[([^\]"]*)\])?"\s*;?\s*$')


@dataclass(frozen=True)
class Cluster:
    """One ``subgraph clusterN`` of the job DOT: a stage and its operator lines."""

    stage_id: str
    status: str
    body: str


_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[{}]', re.DOTALL)


def _unquoted_braces(text: str) -> list[tuple[int, str]]:
    """Return the positions of braces that are not inside double-quoted strings."""
    return [(m.start(), m.group()) for m in _TOKENS.finditer(text) if m.group() in "{}"]


# The API files and the job page both ask for the same job's clusters: remember the last few.
@functools.lru_cache(maxsize=8)
def clusters(dot: str) -> tuple[Cluster, ...]:
    """Split a job DOT into its stage clusters (Ballista labels them ``Stage <id> [<status>]``)."""
    result = []
    depth = 0
    open_at = 0
    for pos, ch in _unquoted_braces(dot):
        if ch == "{":
            depth += 1
            if depth == 2:
                open_at = pos
            continue
        depth -= 1
        if depth != 1:
            continue
        line_start = dot.rfind("\n", 0, open_at) + 1
        if not _SUBGRAPH.search(dot[line_start:open_at].strip()):
            continue
        inner = dot[open_at + 1 : dot.rfind("\n", 0, pos) + 1].lstrip(" \t").removeprefix("\n")
        lines = inner.split("\n")
        stage_id = status = ""
        kept = []
        for line in lines:
            label = _LABEL.match(line)
            if label and not stage_id:
                stage_id, status = label.group(1), label.group(2) or ""
            else:
                kept.append(line)
        if stage_id:
            result.append(Cluster(stage_id, status, "\n".join(kept)))
    return tuple(result)


def stage_dot(cluster: Cluster) -> str:
    """Render one stage's DOT the way the live ``/stage/{id}/dot`` endpoint does."""
    return "digraph G {\n" + cluster.body + "}\n"
