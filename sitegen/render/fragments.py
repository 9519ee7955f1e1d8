"""Large prebuilt markup (a stage's task table) spliced into a rendered page as bytes.

A page is rendered to text and encoded once. A 60 KB task table joined into that text
is copied again, and widened to two or four bytes a character when the page has any
non-ASCII text (``·``, ``—``), only to be narrowed back by the UTF-8 encoder. While a
render that splices it is running, a fragment prints as a short placeholder instead;
the renderer then encodes the page around it and puts the fragment's own bytes in.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Sequence

from markupsafe import Markup


class Fragment(Markup):
    """Markup that a splicing render prints as a placeholder; anywhere else, as itself."""

    token: str | None = None

    def __html__(self) -> Fragment:
        """Return the placeholder while a render splices this fragment, else the markup."""
        return self if self.token is None else Fragment(self.token)


class Splicer:
    """Render text with fragments as placeholders, then splice their bytes in."""

    def __init__(self) -> None:
        # Unguessable, so text from a log can never pass for a placeholder.
        self.nonce = f"\x00sitegen-{secrets.token_hex(8)}-"
        self._pattern = re.compile(re.escape(self.nonce) + r"(\d+)\x00")

    def __call__(self, render: Callable[[], str], fragments: Sequence[Fragment]) -> bytes:
        """Return ``render()`` encoded as UTF-8, each fragment spliced in where it is printed."""
        for n, fragment in enumerate(fragments):
            fragment.token = f"{self.nonce}{n}\x00"
        try:
            text = render()
        finally:
            for fragment in fragments:
                fragment.token = None
        if not fragments:
            return text.encode()
        pieces = self._pattern.split(text)
        # split() alternates text with the captured fragment numbers.
        return b"".join(
            piece.encode() if n % 2 == 0 else str.encode(fragments[int(piece)])
            for n, piece in enumerate(pieces)
        )
