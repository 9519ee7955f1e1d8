"""The string-built stages table rows against the template loop they replaced."""

from __future__ import annotations

import json
from pathlib import Path

from sitegen.diagnose.analysis import analyse
from sitegen.eventlog.reader import read_log
from sitegen.examples import EXAMPLE_LOG_DIR
from sitegen.render import urls
from sitegen.render.jobpage import build_stages
from sitegen.render.links import Linker
from sitegen.render.pages import PageRenderer
from sitegen.render.stages_table import stage_table_rows
from tests.helpers.logs import job_lines, write

# The loop ``_stages_table.html`` printed its rows with, value by value: the reference bytes.
LOOP = """\
{% for info in job.stages %}
{% set st = info.stage %}
<tr>
<th scope="row"><span class="swatch c{{ info.colour % stage_colours }}"></span>\
<a href="{{ u.stage(s.job_id, info.segment) }}">Stage {{ st.stage_id }}</a></th>
<td data-v="{{ info.shown.word }}">{{ info.shown.word|badge }}{% if info.shown.note %}<br>\
<small class="muted">{{ info.shown.note }}</small>{% endif %}</td>
<td class="num" data-v="{{ st.task_list|length }}">{{ st.task_list|length|number }}\
{% if info.failed_tasks %} <span class="bad">({{ info.failed_tasks }} failed)</span>{% endif %}</td>
{{ st.input_rows|stage_rows_cell(st.task_list) }}{{ st.output_rows|stage_rows_cell(st.task_list) }}
<td class="num">{{ st.elapsed_compute|compute_time }}</td>
{{ st.task_input_percentiles|rows_cells }}{{ st.task_duration_percentiles|duration_cells }}</tr>
{% endfor %}"""


def _hostile(text: bytes) -> bytes:
    """Give the JobEnd's stages markup, controls and odd numbers where the log has text."""
    lines = text.splitlines(keepends=True)
    record = json.loads(lines[-1])
    stages = record["data"]["stages"]["stages"]
    for n, stage in enumerate(stages):
        stage["stage_id"] = f'<b>"{n}"\x07&'
        stage["stage_status"] = "Fa<i>led\x1b"
        stage["elapsed_compute"] = "<script>1</script>" if n % 2 else "12.5ms"
    lines[-1] = json.dumps(record, separators=(",", ":")).encode() + b"\n"
    return b"".join(lines)


def _logs(tmp_path: Path) -> list[Path]:
    """Return the bundled examples and generated logs of every outcome, one of them hostile."""
    found = sorted(EXAMPLE_LOG_DIR.glob("*.eventlog*"))
    for n, outcome in enumerate(("failed", "cancelled", "succeeded")):
        lines = job_lines(f"gen{n}", outcome=outcome, retries=n, stages=3 + 5 * n)
        found.append(write(tmp_path / f"gen{n}.eventlog", lines))
    hostile = tmp_path / "hostile.eventlog"
    hostile.write_bytes(_hostile(b"".join(job_lines("hostile", retries=1))))
    return [*found, hostile]


def test_the_rows_are_the_template_loop_byte_for_byte(tmp_path: Path) -> None:
    env = PageRenderer().env
    loop = env.from_string(LOOP)
    checked = 0
    for path in _logs(tmp_path):
        read = read_log(path)
        if read.job_end is None:
            continue
        analysis = analyse(read, path.name)
        job_id = analysis.summary.job_id
        infos = build_stages(analysis)
        link = Linker(urls.job_page(job_id))
        expected = loop.render(job={"stages": infos}, s=analysis.summary, u=link)
        rows = str(stage_table_rows(infos, job_id, link))
        assert rows == expected
        if path.name == "hostile.eventlog":  # its text escaped and its controls shown
            assert "Stage &lt;b&gt;&#34;0&#34;\u2407&amp;" in rows and "<b>" not in rows
            assert "&lt;script&gt;" in rows and "\x1b" not in rows
        checked += len(infos)
    assert checked > 20  # stages compared, the hostile ones among them
