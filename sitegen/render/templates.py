"""Locate the shipped templates and build the Jinja environment."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import jinja2

_PACKAGE = Path(__file__).parent.parent
PACKAGE_TEMPLATES = _PACKAGE / "templates"  # inside an installed wheel
SOURCE_TEMPLATES = _PACKAGE.parent / "templates"  # a source checkout


def default_template_dir() -> Path:
    """Return the templates shipped with sitegen (wheel first, then the checkout)."""
    return PACKAGE_TEMPLATES if PACKAGE_TEMPLATES.is_dir() else SOURCE_TEMPLATES


def template_sources(override: Path | None) -> list[Path]:
    """Return the directories pages are rendered from: part of the build fingerprint."""
    return [
        *([override] if override is not None and override.is_dir() else []),
        default_template_dir(),
    ]


def environment(override: Path | None = None) -> jinja2.Environment:
    """Return the Jinja environment: autoescape on, StrictUndefined, overrides first."""
    import jinja2  # here, not at the top: a build with nothing to do never renders

    from sitegen import __version__
    from sitegen.render.htmlsafe import finalize

    search = [str(override)] if override else []
    search.append(str(default_template_dir()))
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(search),
        # Compiling the templates costs a third of an incremental build; Jinja keeps the
        # compiled code per template file and source checksum in its private per-user temp
        # directory. The version in the name: a new sitegen may compile with other settings.
        # "-fin": compiled with ``finalize``, which changes the code (a cache of code compiled
        # without it would print control characters raw).
        bytecode_cache=jinja2.FileSystemBytecodeCache(
            pattern=f"sitegen-{__version__}-fin-%s.cache"
        ),
        autoescape=True,
        # Control characters from a log or a note become visible stand-ins in every page.
        finalize=finalize,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        # One environment serves one build: skip the stat() of every template per render.
        auto_reload=False,
    )
