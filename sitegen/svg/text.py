"""Helpers shared by the SVG writers: escaping, text width guesses, status classes."""

from __future__ import annotations

import html
import re

from sitegen.render.htmlsafe import visible_controls

# Width guesses for text we cannot measure at build time (12 px monospace ≈ 7.2 px a glyph).
MONO_CHAR = 7.3
SANS_CHAR = 7.6
_NOT_CLASS = re.compile(r"[^a-z0-9]+")


def esc(text: str) -> str:
    """Escape text for SVG/HTML content and double-quoted attributes."""
    return html.escape(visible_controls(text), quote=True)


def clip(text: str, limit: int) -> str:
    """Shorten ``text`` to ``limit`` characters with an ellipsis."""
    return text if len(text) <= limit else text[: max(1, limit - 1)] + "…"


def status_class(status: str) -> str:
    """Return a CSS class for a status word (``Successful`` → ``st-successful``)."""
    word = _NOT_CLASS.sub("-", status.lower()).strip("-")
    return f"st-{word or 'unknown'}"


def num(value: float) -> str:
    """Format a coordinate compactly."""
    text = f"{value:.1f}"
    return text.removesuffix(".0")
