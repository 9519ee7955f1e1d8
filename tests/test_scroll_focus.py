"""Scroll boxes (tables, plans) are reachable by keyboard on a phone: axe-core at 375 px."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.render import urls
from tests.helpers.logs import job_lines, write
from tests.helpers.servers import http_server

AXE = Path(__file__).parent / "vendor" / "axe.min.js"


@pytest.mark.slow
def test_scroll_boxes_are_focusable_at_375_px(tmp_path: Path, browser: Any) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    for n in range(3):  # a recurring name: its page and the runs table
        lines = job_lines(f"wide{n}", name="wide-plans", stages=1, start_ms=1_000_000 * (n + 1))
        end = json.loads(lines[-1])
        end["data"]["stages"]["stages"][0]["stage_plan"] = "ShuffleWriterExec: " + "x" * 3000
        end["data"]["job"]["physical_plan"] = "ProjectionExec: " + "y" * 3000
        lines[-1] = json.dumps(end).encode() + b"\n"
        write(logs / f"wide{n}.eventlog", lines)
    site = tmp_path / "site"
    build(BuildOptions(logs, site, workers=1))
    pages = ["jobs/wide2/index.html", "jobs/wide2/stage-1.html", str(urls.INSIGHTS)]
    pages += [str(urls.RECURRING), str(urls.name_page("wide-plans"))]
    found = {}
    with http_server(site) as port:
        context = browser.new_context(viewport={"width": 375, "height": 800}, bypass_csp=True)
        page = context.new_page()
        for path in pages:
            assert (site / path).is_file(), path
            page.goto(f"http://127.0.0.1:{port}/{path}")
            page.add_script_tag(path=str(AXE))
            result = page.evaluate("axe.run(document, {runOnly: ['scrollable-region-focusable']})")
            found[path] = [[n["target"] for n in v["nodes"]] for v in result["violations"]]
        context.close()
    assert all(v == [] for v in found.values()), found
