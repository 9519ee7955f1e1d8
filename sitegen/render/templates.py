"""Locate the shipped templates, build the Jinja environment, name a template's errors."""

from __future__ import annotations

import os
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from sitegen.errors import TemplateError

if TYPE_CHECKING:
    import jinja2

# An override extends or includes the shipped template it replaces by this prefix:
# ``{% extends "sitegen/base.html" %}``.
SHIPPED_PREFIX = "sitegen"

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

    from sitegen.render.printing import PrintingEnvironment
    from sitegen.text.htmlsafe import finalize
    from sitegen.version import __version__

    search = [str(override)] if override else []
    search.append(str(default_template_dir()))
    shipped = jinja2.PrefixLoader({SHIPPED_PREFIX: jinja2.FileSystemLoader(search[-1])})
    return PrintingEnvironment(
        # "sitegen/x.html" is always the shipped x.html; any other name, the override first.
        loader=jinja2.ChoiceLoader([shipped, jinja2.FileSystemLoader(search)]),
        # Compiling the templates costs a third of an incremental build; Jinja keeps the
        # compiled code per template file and source checksum in its private per-user temp
        # directory. The version in the name: a new sitegen may compile with other settings.
        # "-print": compiled to call ``print_html`` (code compiled before it would call
        # ``finalize`` and ``escape``, or print control characters raw).
        bytecode_cache=jinja2.FileSystemBytecodeCache(
            pattern=f"sitegen-{__version__}-print-%s.cache"
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


def _template_frame(exc: BaseException, dirs: list[Path]) -> tuple[str, int] | None:
    """Return the innermost frame of a template file in ``exc``'s traceback, if any."""
    # Jinja rewrites its tracebacks so that template code shows as frames of the
    # template's file and line: the innermost such frame is where the error is.
    prefixes = tuple(os.path.join(d, "") for d in dirs)
    found = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename.startswith(prefixes) and frame.lineno:
            found = (frame.filename, frame.lineno)
    return found


def template_error(exc: Exception, template: str, override: Path | None) -> TemplateError:
    """Return a Jinja error (or a template loop) met rendering ``template`` as one line."""
    import jinja2

    dirs = template_sources(override)
    if isinstance(exc, jinja2.TemplateSyntaxError):
        where = exc.filename or exc.name or template
        return TemplateError(f"template syntax error: {exc.message}", where, exc.lineno)
    if isinstance(exc, jinja2.TemplateNotFound):
        frame = _template_frame(exc, dirs) or (template, None)
        return TemplateError(f"template not found: {exc.message}", *frame)
    if isinstance(exc, RecursionError):
        message = (
            "template extends or includes itself; an override extends the template it "
            f'replaces as "{SHIPPED_PREFIX}/<name>"'
        )
    else:
        message = f"template error: {exc}"
    frame = _template_frame(exc, dirs) or (template, None)
    return TemplateError(message, *frame)
