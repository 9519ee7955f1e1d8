"""The example site's HTML pages against a committed copy.

Regenerate after an intended change, then review the diff like code:

    SITEGEN_REGENERATE_GOLDEN=1 python -m pytest tests/test_golden.py
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from sitegen.builder.report import BuildReport
from tests.helpers.sitecheck import html_pages

GOLDEN = Path(__file__).parent / "golden"


def normalise(text: str) -> str:
    """Drop trailing whitespace, so editors and templates' spacing do not matter."""
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def test_example_site_matches_golden(example_site: tuple[Path, BuildReport]) -> None:
    site, _ = example_site
    built = {p.relative_to(site).as_posix(): p for p in html_pages(site)}
    if os.environ.get("SITEGEN_REGENERATE_GOLDEN"):
        shutil.rmtree(GOLDEN, ignore_errors=True)
        for rel, path in built.items():
            target = GOLDEN / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(normalise(path.read_text(encoding="utf-8")), encoding="utf-8")
    golden = {p.relative_to(GOLDEN).as_posix() for p in GOLDEN.rglob("*.html")}
    assert sorted(built) == sorted(golden), "pages added or removed: regenerate (see docstring)"
    changed = [
        rel
        for rel, path in built.items()
        if normalise(path.read_text(encoding="utf-8")) != (GOLDEN / rel).read_text(encoding="utf-8")
    ]
    assert changed == [], "pages differ from tests/golden: regenerate (see docstring) and review"
