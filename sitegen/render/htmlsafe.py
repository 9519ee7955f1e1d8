"""Make copies of API bodies that are safe to serve as ``text/html``.

Zero-config hosts (GitHub Pages, ``python -m http.server``) answer ``/api/x`` by
redirecting to ``/api/x/`` and serving ``index.html`` as HTML on the site's own
origin. A job named ``<script>`` must never become markup there.
"""

from __future__ import annotations


def json_for_html(body: bytes) -> bytes:
    """Escape ``<``, ``>``, ``&`` as ``\\u003c`` etc.: still the same JSON value."""
    # In JSON these characters can only occur inside strings, where \uXXXX escapes
    # decode to the very same characters.
    return body.replace(b"<", b"\\u003c").replace(b">", b"\\u003e").replace(b"&", b"\\u0026")


def text_for_html(body: bytes) -> bytes:
    """Escape ``&``, ``<``, ``>`` as HTML entities (Graphviz reads them as the same characters)."""
    return body.replace(b"&", b"&amp;").replace(b"<", b"&lt;").replace(b">", b"&gt;")
