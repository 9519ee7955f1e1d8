"""Draw a job's stage DAG and a stage's operator graph as inline SVG."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Mapping, Sequence

from sitegen.eventlog.dotgraph import JobGraph, StageGraph
from sitegen.eventlog.payload import stage_key
from sitegen.svg.layered import Box, Layout, layered, path_data, topological_order
from sitegen.svg.text import MONO_CHAR, SANS_CHAR, clip, num, status_class
from sitegen.text.htmlsafe import esc

LINE = 16.0
PAD = 8.0
MAX_OPS = 8
OP_CHARS = 40
LABEL_CHARS = 56
LABEL_LINES = 6


def _marker(marker_id: str) -> str:
    """Return the arrowhead definition (ids are per picture, so one page can hold two)."""
    return (
        f'<defs><marker id="{marker_id}" viewBox="0 0 10 10" refX="9" refY="5" '
        'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
        '<path d="M0,0L10,5L0,10z" class="dag-arrow"/></marker></defs>'
    )


def _edges(
    layout: Layout, marker_id: str, critical: frozenset[tuple[str, str]] = frozenset()
) -> list[str]:
    """Return one path per routed edge; those in ``critical`` are drawn as the critical path."""
    return [
        f'<path class="dag-edge{" critical" if (r.src, r.dst) in critical else ""}" '
        f'd="{path_data(r.points)}" marker-end="url(#{marker_id})"/>'
        for r in layout.routes
    ]


def _flow_order(stage: StageGraph) -> list[str]:
    """Return a stage's operators in data-flow order (scans first, the writer last)."""
    order = topological_order(stage.operators, stage.edges)
    placed = set(order)
    return order + [k for k in stage.operators if k not in placed]


# Said under a picture whose layout hit a cap (see layered.MAX_DUMMIES): bounded time first.
SIMPLIFIED = "Picture simplified: too many edges to route each one round the boxes."


def _svg(layout: Layout, label: str, body: list[str], css_class: str, role: str) -> str:
    """Wrap drawn parts into a scalable ``<svg>`` element."""
    width, height = num(layout.width), num(layout.height)
    if layout.simplified:
        body = [
            *body,
            f'<text class="dag-note" x="4" y="{num(layout.height + LINE)}">{SIMPLIFIED}</text>',
        ]
        width = num(max(layout.width, len(SIMPLIFIED) * SANS_CHAR + 8))
        height = num(layout.height + LINE + PAD)
    return (
        f'<svg class="{css_class}" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="{role}" aria-label="{esc(label)}" '
        f'xmlns="http://www.w3.org/2000/svg">{"".join(body)}</svg>'
    )


# Recurring queries have the same stage boxes job after job: keep the last few layouts.
# A cached Layout is shared, so nothing may change it.
@functools.lru_cache(maxsize=256)
def _stage_layout(boxes: tuple[Box, ...], edges: tuple[tuple[str, str], ...]) -> Layout:
    """Lay the stage DAG out."""
    return layered(list(boxes), list(edges), rank_gap=34, node_gap=24)


def stage_dag(
    graph: JobGraph,
    links: dict[str, str],
    title: str,
    critical: Sequence[str] = (),
    shown: Mapping[str, tuple[str, str]] | None = None,
) -> str:
    """Return the job's stage DAG: one box per stage (status in its label), producer above.

    ``critical`` is the critical path's stages in order: their boxes and the edges between
    them are drawn heavier, and their tooltips say so (not only a colour). ``shown`` gives,
    by stage id, the status word to show instead of the DOT's and the note that says why
    (a failed job's stage the DOT still calls Running). Stages are laid out in stage order.
    """
    words = {s.stage_id: (s.status, "") for s in graph.stages}
    if shown:
        words.update((sid, shown[sid]) for sid in words.keys() & shown.keys())
    boxes = []
    lines_of: dict[str, list[str]] = {}
    for stage in sorted(graph.stages, key=lambda s: stage_key(s.stage_id)):
        ops = [stage.operators[k].label.split("\n", 1)[0].strip() for k in _flow_order(stage)]
        if len(ops) > MAX_OPS:
            ops = [*ops[: MAX_OPS - 1], f"… {len(ops) - MAX_OPS + 1} more"]
        lines = [clip(op, OP_CHARS) for op in ops]
        lines_of[stage.stage_id] = lines
        head = f"Stage {stage.stage_id} · {words[stage.stage_id][0] or 'unknown'}"
        width = max([len(head) * SANS_CHAR, *(len(t) * MONO_CHAR for t in lines), 110.0])
        height = LINE * (1 + len(lines)) + PAD * 1.5
        boxes.append(Box(stage.stage_id, width + 2 * PAD, height))
    layout = _stage_layout(tuple(boxes), tuple(graph.stage_edges()))
    on_path = set(critical)
    path_edges = frozenset(itertools.pairwise(critical))
    body = [_marker("dag-arrow"), *_edges(layout, "dag-arrow", path_edges)]
    for stage_id, placed in layout.nodes.items():
        word, why = words[stage_id]
        word = word or "unknown"
        x, y = placed.x, placed.y
        mark, note = (" critical", " · on the critical path") if stage_id in on_path else ("", "")
        if why:
            note = f": {why}{note}"
        parts = [
            f'<g class="dag-node {status_class(word)}{mark}" data-stage="{esc(stage_id)}">',
            f"<title>{esc(f'Stage {stage_id} [{word}]{note}')}</title>",
            f'<rect x="{num(x)}" y="{num(y)}" width="{num(placed.width)}" '
            f'height="{num(placed.height)}" rx="6"/>',
            f'<text class="dag-head" x="{num(x + PAD)}" y="{num(y + PAD + 11)}">'
            f'Stage {esc(stage_id)} · <tspan class="dag-status">{esc(word)}</tspan></text>',
        ]
        for n, line in enumerate(lines_of[stage_id], 1):
            parts.append(
                f'<text class="dag-op" x="{num(x + PAD)}" y="{num(y + PAD + 11 + n * LINE)}">'
                f"{esc(line)}</text>"
            )
        parts.append("</g>")
        link = links.get(stage_id)
        if link:
            parts = [f'<a href="{esc(link)}">', *parts, "</a>"]
        body.extend(parts)
    # "group", not "img": an image role would hide the stage links from assistive technology.
    return _svg(layout, title, body, "dag", "group")


def operator_graph(stage: StageGraph, title: str) -> str:
    """Return one stage's operator graph: each operator with its full (wrapped) label."""
    labels = tuple((name, op.label) for name, op in stage.operators.items())
    return _operator_graph(labels, tuple(stage.edges), title)


# Recurring queries draw the same stages job after job: keep the last few pictures.
@functools.lru_cache(maxsize=256)
def _operator_graph(
    labels: tuple[tuple[str, str], ...], edges: tuple[tuple[str, str], ...], title: str
) -> str:
    """Draw an operator graph from its (name, label) pairs and edges."""
    boxes = []
    texts: dict[str, list[str]] = {}
    for name, label in labels:
        raw = [line.strip() for line in label.split("\n") if line.strip()] or [name]
        lines: list[str] = []
        for line in raw:
            while len(line) > LABEL_CHARS:
                lines.append(line[:LABEL_CHARS])
                line = line[LABEL_CHARS:]
            lines.append(line)
        if len(lines) > LABEL_LINES:
            lines = [*lines[: LABEL_LINES - 1], "…"]
        texts[name] = lines
        width = max([len(t) * MONO_CHAR for t in lines] + [60.0])
        boxes.append(Box(name, width + 2 * PAD, LINE * len(lines) + PAD * 1.5))
    layout = layered(boxes, list(edges), rank_gap=30, node_gap=20)
    body = [_marker("op-arrow"), *_edges(layout, "op-arrow")]
    label_of = dict(labels)
    for name, placed in layout.nodes.items():
        x, y = placed.x, placed.y
        body.append(f'<g class="op-node"><title>{esc(label_of[name])}</title>')
        body.append(
            f'<rect x="{num(x)}" y="{num(y)}" width="{num(placed.width)}" '
            f'height="{num(placed.height)}" rx="4"/>'
        )
        for n, line in enumerate(texts[name]):
            cls = "op-name" if n == 0 else "op-detail"
            body.append(
                f'<text class="{cls}" x="{num(x + PAD)}" y="{num(y + PAD + 10 + n * LINE)}">'
                f"{esc(line)}</text>"
            )
        body.append("</g>")
    return _svg(layout, title, body, "dag ops", "img")
