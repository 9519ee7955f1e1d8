"""Locate the shipped templates and build the Jinja environment."""

from __future__ import annotations

from pathlib import Path

import jinja2

PACKAGE_TEMPLATES = Path(__file__).parent / "templates"  # inside an installed wheel
SOURCE_TEMPLATES = Path(__file__).parent.parent / "templates"  # a source checkout


def default_template_dir() -> Path:
    """Return the templates shipped with sitegen (wheel first, then the checkout)."""
    return PACKAGE_TEMPLATES if PACKAGE_TEMPLATES.is_dir() else SOURCE_TEMPLATES


def environment(override: Path | None = None) -> jinja2.Environment:
    """Return the Jinja environment: autoescape on, StrictUndefined, overrides first."""
    search = [str(override)] if override else []
    search.append(str(default_template_dir()))
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(search),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        # One environment serves one build: skip the stat() of every template per render.
        auto_reload=False,
    )
