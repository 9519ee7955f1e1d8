"""The job page's stages table rows, built as one string (``_stages_table.html`` prints them)."""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup

from sitegen.render.cells import badge, duration_cells, rows_cells, stage_rows_cell
from sitegen.render.jobpage import StageInfo
from sitegen.render.links import Linker
from sitegen.svg.timeline import COLOURS
from sitegen.text.formatting import compute_time, number
from sitegen.text.htmlsafe import print_html


def stage_table_rows(stages: Sequence[StageInfo], job_id: str, link: Linker) -> Markup:
    """Return the stages table's rows, as its template loop printed them value by value.

    Each value goes through ``print_html`` as a ``{{ … }}`` does (text escaped, controls
    shown); one string instead of a loop of 17 columns' calls on every job page.
    """
    out = []
    for info in stages:
        stage, shown = info.stage, info.shown
        tasks = len(stage.task_list)
        note = f'<br><small class="muted">{print_html(shown.note)}</small>' if shown.note else ""
        failed = info.failed_tasks
        failed_note = f' <span class="bad">({print_html(failed)} failed)</span>' if failed else ""
        href = print_html(link.stage(job_id, info.segment))
        rows_in = stage_rows_cell(stage.input_rows, stage.task_list)
        rows_out = stage_rows_cell(stage.output_rows, stage.task_list)
        out.append(
            "<tr>\n"
            f'<th scope="row"><span class="swatch c{print_html(info.colour % COLOURS)}"></span>'
            f'<a href="{href}">Stage {print_html(stage.stage_id)}</a></th>\n'
            f'<td data-v="{print_html(shown.word)}">{print_html(badge(shown.word))}{note}</td>\n'
            f'<td class="num" data-v="{tasks}">{print_html(number(tasks))}{failed_note}</td>\n'
            f"{print_html(rows_in)}{print_html(rows_out)}\n"
            f'<td class="num">{print_html(compute_time(stage.elapsed_compute))}</td>\n'
            f"{print_html(rows_cells(stage.task_input_percentiles))}"
            f"{print_html(duration_cells(stage.task_duration_percentiles))}</tr>\n"
        )
    return Markup("".join(out))
