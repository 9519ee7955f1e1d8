"""Escape text for HTML: log text in pages and pictures, and API bodies served as HTML.

``esc`` is the one escaper of the string-built markup (task rows, the jobs listing, the
SVG pictures); the templates escape through markupsafe, byte for byte the same.

Zero-config hosts (GitHub Pages, ``python -m http.server``) answer ``/api/x`` by
redirecting to ``/api/x/`` and serving ``index.html`` as HTML on the site's own
origin. A job named ``<script>`` must never become markup there.
"""

from __future__ import annotations


def esc(text: str) -> str:
    """Escape text for HTML content and quoted attributes, byte for byte as markupsafe does."""
    # markupsafe's entities (&#34; &#39;), not html.escape's (&quot; &#x27;): a page that
    # mixes template and string-built parts then escapes one way. The checks skip the
    # copies: log text rarely holds any of these characters.
    if "&" in text:
        text = text.replace("&", "&amp;")
    if "<" in text:
        text = text.replace("<", "&lt;")
    if ">" in text:
        text = text.replace(">", "&gt;")
    if '"' in text:
        text = text.replace('"', "&#34;")
    if "'" in text:
        text = text.replace("'", "&#39;")
    return text


def json_for_html(body: bytes) -> bytes:
    """Escape ``<``, ``>``, ``&`` as ``\\u003c`` etc.: still the same JSON value."""
    # In JSON these characters can only occur inside strings, where \uXXXX escapes
    # decode to the very same characters.
    return body.replace(b"<", b"\\u003c").replace(b">", b"\\u003e").replace(b"&", b"\\u0026")


def text_for_html(body: bytes) -> bytes:
    """Escape ``&``, ``<``, ``>`` as HTML entities (Graphviz reads them as the same characters)."""
    return body.replace(b"&", b"&amp;").replace(b"<", b"&lt;").replace(b">", b"&gt;")
