"""Every /api endpoint of a built site, from the layout table (shared by the hosting tests)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from sitegen.layout import JOB_ENDPOINTS, SITE_ENDPOINTS, Endpoint, api_url_path, endpoint_file


def endpoints(site: Path) -> Iterator[tuple[str, Path, Endpoint]]:
    """Yield (URL path, file with the exact body, endpoint) for every endpoint of a site."""
    for endpoint in SITE_ENDPOINTS:
        yield api_url_path(endpoint), endpoint_file(endpoint), endpoint
    job, stages, config, dot, stage_dot = JOB_ENDPOINTS
    for entry in json.loads((site / "api/jobs").read_bytes()):
        ids = {"job_id": entry["job_id"]}
        for endpoint in (job, stages, config, dot):
            yield api_url_path(endpoint, **ids), endpoint_file(endpoint, **ids), endpoint
        for stage in sorted((site / "api/job" / entry["job_id"] / "stage").iterdir()):
            sid = {"stage_id": stage.name, **ids}
            yield api_url_path(stage_dot, **sid), endpoint_file(stage_dot, **sid), stage_dot
