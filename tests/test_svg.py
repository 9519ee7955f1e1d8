from __future__ import annotations

import copy
import itertools
import xml.etree.ElementTree as ET
from collections import Counter

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from sitegen.eventlog import dotgraph
from sitegen.eventlog.schema import TaskEnd
from sitegen.svg import dag, histogram, timeline
from sitegen.svg.layered import Box, layered

BALLISTA_DOT = """digraph G {
\tsubgraph cluster0 {
\t\tlabel = "Stage 1 [Successful]";
\t\tstage_1_0 [shape=box, label="ShuffleWriter [4 partitions]"]
\t\tstage_1_0_0 [shape=box, label="Filter: a@0 > 5 AND b = \\"x\\"
output_rows=10"]
\t\tstage_1_0_0 -> stage_1_0
\t}
\tsubgraph cluster1 {
\t\tlabel = "Stage 2 [Failed]";
\t\tstage_2_0 [shape=box, label="ShuffleWriter [1 partitions]"]
\t\tstage_2_0_0 [shape=box, label="<script>alert(1)</script>"]
\t\tstage_2_0_0 -> stage_2_0
\t}
\tsubgraph cluster2 {
\t\tstage_3_0 [shape=box, label="no label on this cluster"]
\t}
\t// a comment
\tstage_1_0 -> stage_2_0_0 -> stage_3_0
}
"""


def test_parse_ballista_dot() -> None:
    graph = dotgraph.parse(BALLISTA_DOT)
    assert [(s.stage_id, s.status) for s in graph.stages] == [
        ("1", "Successful"),
        ("2", "Failed"),
        ("3", ""),
    ]
    label = graph.stages[0].operators["stage_1_0_0"].label
    assert label == 'Filter: a@0 > 5 AND b = "x"\noutput_rows=10'
    assert graph.stage_edges() == [("1", "2"), ("2", "3")]


def test_parse_never_raises_on_garbage() -> None:
    for text in ["", "{", 'digraph { "unterminated', "digraph { a -> ; [ = ] }", "}}}{{{"]:
        dotgraph.parse(text)


def test_layout_places_every_edge_downwards_without_overlap() -> None:
    keys = "abcdefg"
    edges = [("a", "c"), ("b", "c"), ("c", "d"), ("a", "d"), ("e", "f"), ("f", "g"), ("a", "g")]
    layout = layered([Box(k, 30 + 5 * i, 20) for i, k in enumerate(keys)], edges)
    for route in layout.routes:
        ys = [y for _, y in route.points]
        assert ys == sorted(ys), route
    for a, b in itertools.combinations(layout.nodes.values(), 2):
        if a.y == b.y:
            assert a.x + a.width <= b.x or b.x + b.width <= a.x
    assert all(p.x >= 0 and p.x + p.width <= layout.width for p in layout.nodes.values())


def test_layout_survives_cycles_and_self_loops() -> None:
    layout = layered([Box("a", 10, 10), Box("b", 10, 10)], [("a", "b"), ("b", "a"), ("a", "a")])
    assert len(layout.routes) == 2


def test_dag_svg_is_well_formed_and_escaped() -> None:
    graph = dotgraph.parse(BALLISTA_DOT)
    svg = dag.stage_dag(graph, {"1": "stage-1.html?a=<b>"}, 'title "x"')
    root = ET.fromstring(svg)
    assert len(root.findall(".//{http://www.w3.org/2000/svg}g")) == 3
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    ops = dag.operator_graph(graph.stages[1], "ops")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in ops
    ET.fromstring(ops)


def _task(
    stage: int, task: int, executor: str, start: int, end: int, failed: bool = False
) -> TaskEnd:
    status = {"Failed": {"reason": "R", "error": "<b>"}} if failed else "Successful"
    return TaskEnd(stage, task, executor, status, start_exec_time=start, end_exec_time=end)


def test_timeline_has_a_lane_per_executor_and_a_bar_per_task() -> None:
    tasks = [
        _task(1, 0, "e1", 1000, 1100),
        _task(1, 1, "e1", 1050, 1150),  # overlaps: gets its own row
        _task(2, 0, "e<2>", 1100, 1300, failed=True),
    ]
    svg = timeline.timeline(tasks, lambda s: s, lambda e: f"lane-{len(e)}", "t")
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    assert len([g for g in root.iter(f"{ns}g") if g.get("class") == "tl-lane"]) == 2
    bars = [r for r in root.iter(f"{ns}rect") if "tl-bar" in r.get("class", "")]
    assert len(bars) == 3
    assert bars[0].get("y") != bars[1].get("y")
    # Bars are in milliseconds since the first start, scaled onto the axis by their group.
    assert [(b.get("x"), b.get("width")) for b in bars] == [
        ("0", "100"),
        ("50", "100"),
        ("100", "200"),
    ]
    group = next(g for g in root.iter(f"{ns}g") if g.get("class") == "tl-bars")
    scale = float(group.get("transform", "").split("scale(")[1].split()[0])
    assert 300 * scale == pytest.approx(timeline.WIDTH - timeline.GUTTER - timeline.RIGHT)
    assert "failed" in (bars[2].get("class") or "")
    assert "e&lt;2&gt;" in svg
    assert timeline.timeline([], lambda s: s, str, "t") == ""
    assert timeline.timeline([_task(1, 0, "e", 0, 0)], lambda s: s, str, "t") == ""


def test_timeline_bars_are_at_least_a_pixel_wide() -> None:
    tasks = [_task(1, 0, "e", 1, 1), _task(1, 1, "e", 1, 1_000_001)]
    svg = timeline.timeline(tasks, lambda s: s, str, "t")
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    group = next(g for g in root.iter(f"{ns}g") if g.get("class") == "tl-bars")
    scale = float(group.get("transform", "").split("scale(")[1].split()[0])
    widths = [int(r.get("width", "")) for r in group.iter(f"{ns}rect")]
    assert min(widths) * scale >= 1 > (min(widths) - 1) * scale


def test_histogram() -> None:
    svg = histogram.histogram([5, 10, 10, 400, 20], "h")
    root = ET.fromstring(svg)
    assert sum(1 for r in root.iter("{http://www.w3.org/2000/svg}rect")) >= 2
    assert histogram.histogram([], "h") == ""
    ET.fromstring(histogram.histogram([7], "one"))


def _first_free_rows(tasks: list[TaskEnd]) -> list[tuple[int, TaskEnd]]:
    """The plain definition of the lane packing: each task takes the lowest free row."""
    rows_end: list[int] = []
    spilled = 0
    placed = []
    for task in sorted(tasks, key=lambda t: (t.start_exec_time, t.end_exec_time, t.task_id)):
        for row, end in enumerate(rows_end):
            if end <= task.start_exec_time:
                rows_end[row] = task.end_exec_time
                break
        else:
            row = len(rows_end)
            if row < timeline.MAX_ROWS:
                rows_end.append(task.end_exec_time)
            else:
                # Every row busy: the rows take the extra tasks in turn.
                row = spilled % timeline.MAX_ROWS
                spilled += 1
                rows_end[row] = max(rows_end[row], task.end_exec_time)
        placed.append((row, task))
    return placed


def _drawn_rows(tasks: list[TaskEnd]) -> list[tuple[int, TaskEnd]]:
    """Read each bar's row and task back from a one-lane timeline, in drawing order."""
    ns = "{http://www.w3.org/2000/svg}"
    root = ET.fromstring(timeline.timeline(tasks, lambda s: s, str, "t"))
    by_id = {t.task_id: t for t in tasks}
    top = timeline.AXIS + timeline.LANE_PAD
    return [
        (
            (int(bar.get("y", "")) - top) // timeline.PITCH,
            by_id[int((bar.findtext(f"{ns}title") or "").split()[1])],
        )
        for bar in root.iter(f"{ns}rect")
        if "tl-bar" in bar.get("class", "")
    ]


@given(st.lists(st.tuples(st.integers(1, 400), st.integers(-5, 300)), min_size=1, max_size=150))
@example([(10, 50)] * 60 + [(70, 5), (30, 10)])  # more than MAX_ROWS at once
def test_lane_packing_takes_the_first_free_row(spans: list[tuple[int, int]]) -> None:
    tasks = [_task(1, n, "e", start, start + took) for n, (start, took) in enumerate(spans)]
    assert _drawn_rows(tasks) == _first_free_rows(tasks)


def test_a_pile_of_simultaneous_tasks_spreads_over_every_row() -> None:
    # A big job: 600 attempts at once on one executor, far more than a lane has rows.
    tasks = [_task(1, n, "e", 1000 + n % 7, 5000 + n) for n in range(600)]
    per_row = Counter(row for row, _ in _drawn_rows(tasks))
    assert len(per_row) == timeline.MAX_ROWS
    assert max(per_row.values()) <= -(-600 // timeline.MAX_ROWS), per_row


@given(st.lists(st.tuples(st.integers(1, 400), st.integers(0, 300)), min_size=1, max_size=120))
def test_no_bars_overlap_in_a_row_while_rows_suffice(spans: list[tuple[int, int]]) -> None:
    tasks = [_task(1, n, "e", start, start + took) for n, (start, took) in enumerate(spans)]
    busiest = max(sum(1 for s, t in spans if s <= at < s + t) for at in range(1, 701))
    rows: dict[int, list[TaskEnd]] = {}
    for row, task in _drawn_rows(tasks):
        rows.setdefault(row, []).append(task)
    if busiest <= timeline.MAX_ROWS:
        for placed in rows.values():
            for a, b in itertools.pairwise(sorted(placed, key=lambda t: t.start_exec_time)):
                assert a.end_exec_time <= b.start_exec_time


def _unquote_by_hand(token: str) -> str:
    """The plain definition of DOT string unquoting, one character at a time."""
    if not token.startswith('"'):
        return token
    body = token[1:-1] if len(token) > 1 and token.endswith('"') else token[1:]
    out, i = [], 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            out.append(
                {"n": "\n", "l": "\n", "r": "\n", '"': '"', "\\": "\\"}.get(
                    body[i + 1], body[i : i + 2]
                )
            )
            i += 2
        else:
            out.append(body[i])
            i += 1
    return "".join(out)


@given(st.text(alphabet='ab\\"nlr\n x', max_size=30))
def test_unquote_resolves_escapes_like_the_definition(text: str) -> None:
    for token in (text, '"' + text, '"' + text + '"'):
        assert dotgraph._unquote(token) == _unquote_by_hand(token)


def test_drawing_leaves_the_cached_graph_as_parsed() -> None:
    # parse() hands the same JobGraph to every job with this DOT: drawing must not change it.
    graph = dotgraph.parse(BALLISTA_DOT)
    pristine = copy.deepcopy(graph)
    dag.stage_dag(graph, {"1": "stage-1.html"}, "DAG")
    for stage in graph.stages:
        dag.operator_graph(stage, "ops")
    assert graph == pristine
    assert dotgraph.parse(BALLISTA_DOT) is graph


def _dense_stage_dot(clusters: int, edges: int) -> str:
    """A DOT with one operator per stage and ``edges`` stage-to-stage links (a dense DAG)."""
    lines = ["digraph G {"]
    for n in range(clusters):
        lines.append(f'subgraph cluster{n} {{ label = "Stage {n + 1} [Successful]";')
        lines.append(f'stage_{n + 1}_0 [shape=box, label="ShuffleWriter"] }}')
    pairs = itertools.islice(
        (
            (a, b)
            for span in range(1, clusters)
            for a in range(1, clusters + 1 - span)
            for b in (a + span,)
        ),
        edges,
    )
    lines += [f"stage_{a}_0 -> stage_{b}_0" for a, b in pairs]
    lines.append("}")
    return "\n".join(lines)


def test_dense_stage_dag_is_simplified_and_says_so() -> None:
    """The issue's 299 clusters and about 12,800 edges: capped work, a note under the picture."""
    graph = dotgraph.parse(_dense_stage_dot(299, 12_800))
    assert len(graph.stage_edges()) == 12_800
    svg = dag.stage_dag(graph, {}, "dense")
    ET.fromstring(svg)
    assert dag.SIMPLIFIED in svg
    assert svg.count('class="dag-edge"') == 12_800  # every edge is still drawn


def test_long_chain_of_1000_stages_is_not_simplified() -> None:
    boxes = [Box(str(n), 120, 60) for n in range(1000)]
    tree = [(str(n // 2), str(n)) for n in range(1, 1000)]
    layout = layered(boxes, tree)
    assert not layout.simplified
    assert len(layout.routes) == 999


@st.composite
def small_dags(draw: st.DrawFn) -> tuple[list[Box], list[tuple[str, str]]]:
    """Healthy stage DAGs: up to 40 stages and 80 edges (at most 3,040 long-edge dummies)."""
    n = draw(st.integers(2, 40))
    pairs = st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))
    edges = draw(st.lists(pairs, max_size=80))
    return [Box(str(k), 100, 40) for k in range(n)], [(str(a), str(b)) for a, b in edges]


@given(small_dags())
def test_healthy_dags_are_never_simplified(
    dag_input: tuple[list[Box], list[tuple[str, str]]],
) -> None:
    boxes, edges = dag_input
    assert not layered(boxes, edges).simplified


@given(
    st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=30),
    st.permutations(list(range(7))),
    st.permutations(list(range(7))),
)
def test_crossing_count_matches_the_pairwise_definition(
    edges: list[tuple[int, int]], upper_order: list[int], lower_order: list[int]
) -> None:
    from sitegen.svg.layered import _crossings

    upper = [f"u{k}" for k in upper_order]
    lower = [f"l{k}" for k in lower_order]
    down: dict[str, list[str]] = {k: [] for k in upper}
    for a, b in dict.fromkeys(edges):
        down[f"u{a}"].append(f"l{b}")
    pos_u = {k: i for i, k in enumerate(upper)}
    pos_l = {k: i for i, k in enumerate(lower)}
    pairs = [(pos_u[a], pos_l[b]) for a in upper for b in down[a]]
    expected = sum(
        1 for (a, b), (c, d) in itertools.combinations(pairs, 2) if (a - c) * (b - d) < 0
    )
    assert _crossings(upper, lower, down) == expected
