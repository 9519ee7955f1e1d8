"""remove_tree: a replaced site's tree goes, in bounded memory, and no link is followed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sitegen.publish import removal
from sitegen.publish.removal import remove_tree


def test_a_tree_of_many_entries_goes_a_batch_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(removal, "BATCH", 3)  # many batches, and subdirectories among them
    site = tmp_path / "old-site"
    for n in range(10):
        job = site / "jobs" / f"job{n}"
        (job / "stage" / "1").mkdir(parents=True)
        (job / "index.html").write_text("page")
        (job / "stage" / "1" / "dot").write_text("dot")
    (site / "index.html").write_text("front")
    (site / "empty").mkdir()
    remove_tree(site)
    assert not site.exists() and list(tmp_path.iterdir()) == []


def test_links_are_removed_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "keep").mkdir(parents=True)
    (outside / "keep" / "file").write_text("not the site's")
    site = tmp_path / "old-site"
    (site / "jobs").mkdir(parents=True)
    os.symlink(outside / "keep", site / "jobs" / "dir-link")
    os.symlink(outside / "keep" / "file", site / "file-link")
    remove_tree(site)
    assert not site.exists()
    assert (outside / "keep" / "file").read_text() == "not the site's"
