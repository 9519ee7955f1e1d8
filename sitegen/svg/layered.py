"""A small layered (Sugiyama-style) layout for DAGs: top to bottom, no native binary.

Longest-path layering, dummy nodes on long edges, barycenter ordering sweeps that keep
the ordering with the fewest crossings, then x positions by isotonic regression
(each node as close as the ordering allows to the mean of its neighbours).
"""

from __future__ import annotations

import itertools
from collections import defaultdict, deque
from collections.abc import Iterable
from dataclasses import dataclass, field

Point = tuple[float, float]

# A picture must cost bounded time whatever the log says. Past these sizes the layout is
# simplified (``Layout.simplified``) and the page says so:
# long edges cross this many layers in all: drawn straight instead of routed round nodes;
MAX_DUMMIES = 5_000
# edge segments between adjacent layers: the ordering sweeps (which cut crossings) skipped.
MAX_ORDERED_SEGMENTS = 20_000


@dataclass(frozen=True)
class Box:
    """A node to place: a key and its size."""

    key: str
    width: float
    height: float


@dataclass(frozen=True)
class Placed:
    """A placed node: top-left corner and size."""

    x: float
    y: float
    width: float
    height: float

    @property
    def cx(self) -> float:
        """Return the horizontal centre."""
        return self.x + self.width / 2


@dataclass(frozen=True)
class Route:
    """An edge as a list of points from the source's bottom to the target's top."""

    src: str
    dst: str
    points: list[Point]


@dataclass
class Layout:
    """Every node's place, every edge's route and the drawing's size."""

    nodes: dict[str, Placed] = field(default_factory=dict)
    routes: list[Route] = field(default_factory=list)
    width: float = 0.0
    height: float = 0.0
    # True when a cap above was hit: the picture is still complete, but drawn more simply.
    simplified: bool = False


def _acyclic(keys: list[str], edges: list[tuple[str, str]]) -> list[tuple[str, str, bool]]:
    """Return the edges with back edges reversed (flagged), so the graph is a DAG."""
    succ: dict[str, list[str]] = defaultdict(list)
    for a, b in edges:
        succ[a].append(b)
    state: dict[str, int] = {}  # 1 on the DFS stack, 2 done
    back: set[tuple[str, str]] = set()
    for root in keys:
        if root in state:
            continue
        stack = [(root, iter(succ[root]))]
        state[root] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
            elif state.get(child) == 1:
                back.add((node, child))
            elif child not in state:
                state[child] = 1
                stack.append((child, iter(succ[child])))
    return [(b, a, True) if (a, b) in back else (a, b, False) for a, b in edges]


def topological_order(keys: Iterable[str], edges: Iterable[tuple[str, str]]) -> list[str]:
    """Return ``keys`` sources first (Kahn, first ready first); keys on a cycle are left out.

    Edges with an end outside ``keys`` are ignored.
    """
    indegree = dict.fromkeys(keys, 0)
    succ: dict[str, list[str]] = defaultdict(list)
    for a, b in edges:
        if a in indegree and b in indegree:
            succ[a].append(b)
            indegree[b] += 1
    ready = deque(k for k, d in indegree.items() if d == 0)
    order: list[str] = []
    while ready:
        node = ready.popleft()
        order.append(node)
        for nxt in succ[node]:
            indegree[nxt] -= 1
            if indegree[nxt] == 0:
                ready.append(nxt)
    return order


def _layers(keys: list[str], edges: list[tuple[str, str, bool]]) -> dict[str, int]:
    """Assign longest-path layers, then pull sources down next to their first consumer."""
    preds: dict[str, list[str]] = defaultdict(list)
    succs: dict[str, list[str]] = defaultdict(list)
    for a, b, _ in edges:
        preds[b].append(a)
        succs[a].append(b)
    order = topological_order(keys, ((a, b) for a, b, _ in edges))
    layer: dict[str, int] = {}
    for node in order:
        layer[node] = max((layer[p] + 1 for p in preds[node]), default=0)
    for node in order:
        if not preds[node] and succs[node]:
            layer[node] = min(layer[s] for s in succs[node]) - 1
    return layer


def _crossings(upper: list[str], lower: list[str], down: dict[str, list[str]]) -> int:
    """Count edge crossings between two adjacent layers (inversions, in O(E log V))."""
    pos = {k: i for i, k in enumerate(lower)}
    # Edges sorted by upper end, then lower end: each crossing is a later edge whose lower
    # end lies strictly left of an earlier one's. A Fenwick tree counts them.
    ends = [e for k in upper for e in sorted(pos[t] for t in down[k] if t in pos)]
    tree = [0] * (len(lower) + 1)
    count = 0
    for seen, end in enumerate(ends):
        i, not_right = end + 1, 0
        while i > 0:  # how many earlier edges end at or left of this one
            not_right += tree[i]
            i -= i & -i
        count += seen - not_right
        i = end + 1
        while i <= len(lower):
            tree[i] += 1
            i += i & -i
    return count


def _isotonic(targets: list[float], gaps: list[float]) -> list[float]:
    """Return x as close as possible to ``targets`` with x[i] - x[i-1] >= gaps[i] (PAV)."""
    offsets = []
    total = 0.0
    for gap in gaps:
        total += gap
        offsets.append(total)
    shifted = [t - o for t, o in zip(targets, offsets, strict=True)]
    blocks: list[list[float]] = []  # [mean, weight]
    for value in shifted:
        blocks.append([value, 1.0])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            v2, w2 = blocks.pop()
            v1, w1 = blocks[-1]
            blocks[-1] = [(v1 * w1 + v2 * w2) / (w1 + w2), w1 + w2]
    result = []
    for mean, weight in blocks:
        result.extend([mean] * int(weight))
    return [r + o for r, o in zip(result, offsets, strict=True)]


@dataclass
class _Graph:
    """The layered graph the phases share: layers, links and widths, dummies included."""

    layer: dict[str, int]
    widths: dict[str, float]
    down: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    up: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    chains: list[tuple[str, str, bool, list[str]]] = field(default_factory=list)
    # True when a cap (MAX_DUMMIES, MAX_ORDERED_SEGMENTS) was hit: drawn more simply.
    simplified: bool = False


def _with_dummies(
    size: dict[str, Box], dag: list[tuple[str, str, bool]], layer: dict[str, int]
) -> _Graph:
    """Return the graph with one zero-width dummy per layer a long edge crosses."""
    # Long edges get one zero-width dummy per layer they cross, so they route around nodes.
    graph = _Graph(layer=layer, widths={k: b.width for k, b in size.items()})
    dummies = sum(max(0, layer[b] - layer[a] - 1) for a, b, _ in dag)
    graph.simplified = dummies > MAX_DUMMIES
    for n, (a, b, flipped) in enumerate(dag):
        chain = [a]
        for step in range(layer[a] + 1, layer[a] + 1 if graph.simplified else layer[b]):
            dummy = f"\0{n}.{step}"
            layer[dummy] = step
            graph.widths[dummy] = 0.0
            chain.append(dummy)
        chain.append(b)
        for u, v in itertools.pairwise(chain):
            graph.down[u].append(v)
            graph.up[v].append(u)
        graph.chains.append((a, b, flipped, chain))
    return graph


def _initial_rows(layer: dict[str, int]) -> list[list[str]]:
    """Return the keys of each layer, real nodes before dummies."""
    depth = max(layer.values(), default=-1) + 1
    rows: list[list[str]] = [[] for _ in range(depth)]
    for key in sorted(layer, key=lambda k: (k.startswith("\0"), 0)):
        rows[layer[key]].append(key)
    return rows


def _order(rows: list[list[str]], graph: _Graph, sweeps: int) -> list[list[str]]:
    """Reorder each layer by barycenter sweeps; return the ordering with the fewest crossings."""
    depth = len(rows)
    down, up = graph.down, graph.up

    def total_crossings() -> int:
        return sum(_crossings(rows[i], rows[i + 1], down) for i in range(depth - 1))

    if sum(map(len, down.values())) > MAX_ORDERED_SEGMENTS:
        sweeps, graph.simplified = 0, True
    best = [list(r) for r in rows]
    best_score = total_crossings() if sweeps else 0
    for sweep in range(sweeps):
        if best_score == 0:
            break  # no sweep can beat no crossings, and only a better one is kept
        downward = sweep % 2 == 0
        span = range(1, depth) if downward else range(depth - 2, -1, -1)
        for i in span:
            ref = rows[i - 1] if downward else rows[i + 1]
            where = {k: p for p, k in enumerate(ref)}
            links = up if downward else down
            current = {k: p for p, k in enumerate(rows[i])}

            def bary(
                key: str,
                where: dict[str, int] = where,
                links: dict[str, list[str]] = links,
                current: dict[str, int] = current,
            ) -> float:
                near = [where[n] for n in links[key] if n in where]
                # Scale own index so unconnected nodes keep their relative place.
                return (
                    sum(near) / len(near)
                    if near
                    else current[key] * len(where) / max(1, len(current))
                )

            rows[i].sort(key=bary)
        score = total_crossings()
        if score < best_score:
            best, best_score = [list(r) for r in rows], score
    return best


def _x_positions(rows: list[list[str]], graph: _Graph, node_gap: float) -> dict[str, float]:
    """Return each key's centre x: packed left, then pulled towards its neighbours' mean."""
    widths, up, down = graph.widths, graph.up, graph.down
    x: dict[str, float] = {}
    for row in rows:
        cursor = 0.0
        for key in row:
            x[key] = cursor + widths[key] / 2
            cursor += widths[key] + node_gap
    for it in range(8):
        span_rows = rows if it % 2 == 0 else list(reversed(rows))
        for row in span_rows:
            if len(row) == 1:  # chains are common: a lone node just takes its target
                (key,) = row
                near = [x[n] for n in (up[key] + down[key])]
                # "+ 0.0" is what _isotonic's offset arithmetic does (it turns -0.0 into 0.0).
                x[key] = (sum(near) / len(near) if near else x[key]) + 0.0
                continue
            targets = []
            for key in row:
                near = [x[n] for n in (up[key] + down[key])]
                targets.append(sum(near) / len(near) if near else x[key])
            gaps = [0.0] + [
                (widths[a] + widths[b]) / 2
                + (node_gap if widths[a] and widths[b] else node_gap / 2)
                for a, b in itertools.pairwise(row)
            ]
            for key, value in zip(row, _isotonic(targets, gaps), strict=True):
                x[key] = value
    return x


def _place(
    size: dict[str, Box],
    rows: list[list[str]],
    graph: _Graph,
    x: dict[str, float],
    *,
    rank_gap: float,
    margin: float,
) -> Layout:
    """Return the layout: nodes at their rows' tops, edges routed through their dummies."""
    widths, layer = graph.widths, graph.layer
    left = min((x[k] - widths[k] / 2 for k in x), default=0.0)
    heights = [max((size[k].height for k in row if k in size), default=0.0) for row in rows]
    tops = []
    cursor = margin
    for h in heights:
        tops.append(cursor)
        cursor += h + rank_gap
    layout = Layout(height=max(cursor - rank_gap + margin, 0.0), simplified=graph.simplified)
    right = 0.0
    for key, box in size.items():
        top = tops[layer[key]] + (heights[layer[key]] - box.height) / 2
        placed = Placed(x[key] - box.width / 2 - left + margin, top, box.width, box.height)
        layout.nodes[key] = placed
        right = max(right, placed.x + placed.width)
    layout.width = right + margin

    for a, b, flipped, chain in graph.chains:
        src, dst = layout.nodes[a], layout.nodes[b]
        points: list[Point] = [(src.cx, src.y + src.height)]
        for dummy in chain[1:-1]:
            rank = layer[dummy]
            cx = x[dummy] - left + margin
            points.append((cx, tops[rank]))
            points.append((cx, tops[rank] + heights[rank]))
        points.append((dst.cx, dst.y))
        if flipped:
            layout.routes.append(Route(b, a, points[::-1]))
        else:
            layout.routes.append(Route(a, b, points))
    return layout


def layered(
    boxes: list[Box],
    edges: list[tuple[str, str]],
    *,
    rank_gap: float = 36.0,
    node_gap: float = 20.0,
    margin: float = 4.0,
    sweeps: int = 6,
) -> Layout:
    """Lay ``boxes`` out in layers so every edge points down; return positions and routes."""
    size = {b.key: b for b in boxes}
    keys = list(size)
    clean = list(dict.fromkeys((a, b) for a, b in edges if a in size and b in size and a != b))
    dag = _acyclic(keys, clean)
    graph = _with_dummies(size, dag, _layers(keys, dag))
    rows = _order(_initial_rows(graph.layer), graph, sweeps)
    x = _x_positions(rows, graph, node_gap)
    return _place(size, rows, graph, x, rank_gap=rank_gap, margin=margin)


def path_data(points: list[Point]) -> str:
    """Return SVG path data: straight through layers, smooth S-curves between them."""
    (x0, y0), rest = points[0], points[1:]
    parts = [f"M{x0:.1f},{y0:.1f}"]
    for x1, y1 in rest:
        if x1 == x0:
            parts.append(f"L{x1:.1f},{y1:.1f}")
        else:
            mid = (y0 + y1) / 2
            parts.append(f"C{x0:.1f},{mid:.1f} {x1:.1f},{mid:.1f} {x1:.1f},{y1:.1f}")
        x0, y0 = x1, y1
    return "".join(parts)
