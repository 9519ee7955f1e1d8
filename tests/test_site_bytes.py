"""The site's size an incremental build reports: measured again only where it wrote."""

from __future__ import annotations

from pathlib import Path

import pytest

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.builder.state.store import State, open_published
from tests.helpers.logs import job_lines, write


def measured(site: Path) -> int:
    """Return the site's bytes by a stat of every site-wide file."""
    state = open_published(site)
    assert state is not None
    try:
        return state.site_bytes(site)
    finally:
        state.close()


def test_a_build_stopped_in_its_update_leaves_the_next_one_a_true_size(
    tmp_path: Path, example_logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    options = BuildOptions(example_logs, site)
    assert build(options).site_bytes == measured(site)
    write(example_logs / "added.eventlog", job_lines("added", start_ms=5_000_000_000_000))
    # Stopped after its files replaced the site's, before the state committed.
    with monkeypatch.context() as m:

        def stop(self: State) -> None:
            raise KeyboardInterrupt

        m.setattr(State, "commit", stop)
        with pytest.raises(KeyboardInterrupt):
            build(options)
    report = build(options)  # redoes the update
    assert not report.up_to_date
    assert report.site_bytes == measured(site)
    (example_logs / "added.eventlog").unlink()
    assert build(options).site_bytes == measured(site)
