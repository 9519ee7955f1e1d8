"""Everything one job's pages show, computed in the map step from its log."""

from __future__ import annotations

import html
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from markupsafe import Markup

from sitegen import dot, dotgraph, payload, urls
from sitegen.eventlog.reader import LogRead
from sitegen.eventlog.schema import TaskEnd
from sitegen.formatting import NONE, clock, duration, rows
from sitegen.layout import JOB_ENDPOINTS
from sitegen.links import Linker
from sitegen.model import JobSummary
from sitegen.svg import dag, histogram, timeline
from sitegen.svg.text import status_class

esc = html.escape


@dataclass
class StageInfo:
    """One stage as the job and stage pages show it."""

    stage: payload.Stage
    segment: str
    colour: int
    graph: dotgraph.StageGraph | None
    task_ends: list[TaskEnd] = field(default_factory=list)

    failed_tasks: int = 0

    def __post_init__(self) -> None:
        """Count failed attempts once (from TaskEnd records, else from the summary)."""
        ends = sum(1 for t in self.task_ends if payload.task_status(t.status).failed)
        self.failed_tasks = ends or sum(1 for t in self.stage.task_list if t.state.failed)


@dataclass(frozen=True)
class ApiLink:
    """One JSON/text endpoint of the job: its REST path and the file that holds it."""

    rest_path: str
    file: PurePosixPath
    content_type: str


def api_links(job_id: str, job_dot: str) -> list[ApiLink]:
    """List every ``/api`` endpoint the build wrote for this job (the same table api.py uses)."""
    found = []
    stage_ids = [c.stage_id for c in dot.clusters(job_dot)]
    for endpoint in JOB_ENDPOINTS:
        combos = (
            [{"job_id": job_id, "stage_id": s} for s in stage_ids]
            if "{stage_id}" in endpoint.template
            else [{"job_id": job_id}]
        )
        for segments in combos:
            rest = "/api/" + endpoint.template.format(**segments)
            file = urls.api_file(endpoint.template, **segments)
            found.append(ApiLink(rest, file, endpoint.body.value.split(";")[0]))
    return found


class TaskIndex:
    """Find the TaskEnd record (and so the executor) of a TaskSummary."""

    def __init__(self, tasks: list[TaskEnd]) -> None:
        self.by_id: dict[tuple[int, int], list[TaskEnd]] = defaultdict(list)
        self.by_time: dict[tuple[int, int | None, int | None], TaskEnd] = {}
        for task in tasks:
            self.by_id[(task.stage_id, task.task_id)].append(task)
            self.by_time[(task.stage_id, task.start_exec_time, task.end_exec_time)] = task

    def find(self, stage_id: int | None, task: payload.TaskSummary) -> TaskEnd | None:
        """Match by stage and task id with equal times, else by times, else a lone id match."""
        if stage_id is None:
            return None
        candidates = self.by_id.get((stage_id, task.id), []) if task.id is not None else []
        for cand in candidates:
            if (
                cand.start_exec_time == task.start_exec_time
                and cand.end_exec_time == task.end_exec_time
            ):
                return cand
        by_time = self.by_time.get((stage_id, task.start_exec_time, task.end_exec_time))
        if by_time is not None:
            return by_time
        return candidates[0] if len(candidates) == 1 else None


def _sorted_cell(value: int | None, text: str) -> str:
    """Return a cell showing ``text`` that sorts by ``value``."""
    if value is None:
        return f"<td>{NONE}</td>"
    return f'<td data-v="{value}">{text}</td>'


def _rows_cell(value: int | None) -> str:
    """Return a row-count cell: ``1.5M`` shown, the exact count on hover and for sorting."""
    if value is None:
        return f"<td>{NONE}</td>"
    return f'<td data-v="{value}" title="{value:,}">{rows(value)}</td>'


def task_rows(stage: StageInfo, index: TaskIndex) -> Markup:
    """Return the ``<tr>`` rows of a stage's task table, built as one string (fast).

    Cells carry no classes: the stylesheet right-aligns the numeric columns of
    ``table.tasks`` by position, which keeps 800-task pages small.
    """
    sid = payload.as_int(stage.stage.stage_id)
    out = []
    # Executors and statuses repeat across thousands of rows: escape each once.
    executors: dict[str, str] = {}
    badges: dict[str, str] = {}
    for task in stage.stage.task_list:
        end = index.find(sid, task)
        executor = NONE
        if end is not None:
            executor = executors.get(end.executor_id) or executors.setdefault(
                end.executor_id, esc(end.executor_id)
            )
        state = task.state
        badge = badges.get(state.word)
        if badge is None:
            badge = badges[state.word] = (
                f'<span class="badge {status_class(state.word)}">{esc(state.word)}</span>'
            )
        out.append(
            f"{'<tr class=failed>' if state.failed else '<tr>'}"
            f"<td>{NONE if task.id is None else task.id}</td>"
            f"<td>{badge}</td>"
            f"<td>{task.partitions or NONE}</td>"  # digits and commas only: nothing to escape
            f"<td>{executor}</td>"
            f"<td>{clock(task.launch_time)}</td><td>{clock(task.start_exec_time)}</td>"
            f"<td>{clock(task.end_exec_time)}</td>"
            f"{_sorted_cell(task.duration, duration(task.duration))}"
            f"{_rows_cell(task.input_rows)}{_rows_cell(task.output_rows)}</tr>"
        )
    return Markup("\n".join(out))


@dataclass(frozen=True)
class Failure:
    """One failed task attempt with its reason and error text."""

    task_id: int | None
    executor: str
    start: int | None
    reason: str
    error: str


def failures(stage: StageInfo) -> list[Failure]:
    """List failed attempts: every failed TaskEnd, plus failed summaries without one."""
    found = []
    seen = set()
    for t in stage.task_ends:
        status = payload.task_status(t.status)
        if status.failed:
            seen.add((t.start_exec_time, t.end_exec_time))
            found.append(
                Failure(t.task_id, t.executor_id, t.start_exec_time, status.reason, status.error)
            )
    for s in stage.stage.task_list:
        state = s.state
        if state.failed and (s.start_exec_time, s.end_exec_time) not in seen:
            found.append(Failure(s.id, "", s.start_exec_time, state.reason, state.error))
    return found


def build_stages(read: LogRead, graph: dotgraph.JobGraph) -> list[StageInfo]:
    """Join the stages payload, the DOT clusters and the TaskEnd records per stage."""
    assert read.job_end is not None
    stages = payload.stages(read.job_end.stages)
    by_cluster = {g.stage_id: g for g in graph.stages}
    segments = urls.stage_segments([s.stage_id for s in stages])
    ends: dict[int, list[TaskEnd]] = defaultdict(list)
    for task in read.tasks:
        ends[task.stage_id].append(task)
    infos = []
    for n, (stage, segment) in enumerate(zip(stages, segments, strict=True)):
        sid = payload.as_int(stage.stage_id)
        infos.append(
            StageInfo(
                stage=stage,
                segment=segment,
                colour=n,
                graph=by_cluster.get(stage.stage_id),
                task_ends=ends.get(sid, []) if sid is not None else [],
            )
        )
    return infos


def colour_map(infos: list[StageInfo], tasks: list[TaskEnd]) -> dict[int, int]:
    """Give each stage id a colour slot: payload order first, then any other ids seen."""
    colours: dict[int, int] = {}
    for info in infos:
        sid = payload.as_int(info.stage.stage_id)
        if sid is not None and sid not in colours:
            colours[sid] = len(colours)
    for sid in sorted({t.stage_id for t in tasks}):
        colours.setdefault(sid, len(colours))
    return colours


@dataclass
class JobPage:
    """What the job page template receives."""

    summary: JobSummary
    stages: list[StageInfo]
    dag_svg: Markup
    timeline_svg: Markup
    legend: list[tuple[str, int]]
    plans: list[tuple[str, str]]
    config: dict[str, str]
    api: list[ApiLink]
    note: Markup | None
    executors: int


def job_page(
    read: LogRead, summary: JobSummary, page: PurePosixPath, note: Markup | None
) -> tuple[JobPage, dotgraph.JobGraph, TaskIndex]:
    """Compute the job page's content."""
    assert read.job_end is not None
    end = read.job_end
    graph = dotgraph.parse(end.dot)
    infos = build_stages(read, graph)
    link = Linker(page)
    stage_links: dict[str, str] = {}
    for info in infos:  # a repeated stage id links to its first stage page
        stage_links.setdefault(info.stage.stage_id, link.stage(summary.job_id, info.segment))
    colours = colour_map(infos, read.tasks)
    dag_svg = (
        dag.stage_dag(graph, stage_links, f"Stage DAG of job {summary.job_id}")
        if graph.stages
        else ""
    )
    timeline_svg = timeline.timeline(
        read.tasks,
        lambda sid: colours.get(sid, 0),
        urls.lane_anchor,
        f"Task timeline of job {summary.job_id}",
    )
    for info in infos:
        sid = payload.as_int(info.stage.stage_id)
        info.colour = colours.get(sid, info.colour) if sid is not None else info.colour
    legend = [(str(sid), c % timeline.COLOURS) for sid, c in colours.items()]
    plans = payload.plans(end.job)
    start = read.job_start
    plan_list = [
        ("Logical plan", plans.logical or (start.logical_plan if start else None)),
        ("Physical plan", plans.physical or (start.physical_plan if start else None)),
        ("Stage plans", plans.stage),
    ]
    return (
        JobPage(
            summary=summary,
            stages=infos,
            dag_svg=Markup(dag_svg),
            timeline_svg=Markup(timeline_svg),
            legend=legend,
            plans=[(title, text) for title, text in plan_list if text],
            config=read.config,
            api=api_links(summary.job_id, end.dot),
            note=note,
            executors=len(summary.executors),
        ),
        graph,
        TaskIndex(read.tasks),
    )


def stage_pictures(info: StageInfo, job_id: str) -> tuple[Markup, Markup]:
    """Return a stage's operator graph and duration histogram."""
    graph = ""
    if info.graph is not None and info.graph.operators:
        graph = dag.operator_graph(info.graph, f"Operators of stage {info.stage.stage_id}")
    durations = [d for d in (t.duration for t in info.stage.task_list) if d is not None and d >= 0]
    if not durations:
        durations = [max(0, t.end_exec_time - t.start_exec_time) for t in info.task_ends]
    hist = histogram.histogram(
        durations, f"Task durations of stage {info.stage.stage_id} of job {job_id}"
    )
    return Markup(graph), Markup(hist)
