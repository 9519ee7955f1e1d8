"""Make text safe for HTML: API copies served as ``text/html``, control characters.

Zero-config hosts (GitHub Pages, ``python -m http.server``) answer ``/api/x`` by
redirecting to ``/api/x/`` and serving ``index.html`` as HTML on the site's own
origin. A job named ``<script>`` must never become markup there.
"""

from __future__ import annotations

import re

from markupsafe import Markup

# Control characters are parse errors in HTML (a NUL in a job name broke 867 pages): C0 but
# tab, newline, form feed and carriage return; DEL; C1. Kept visible, never dropped.
_CONTROLS = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")
_CONTROL_BYTES = re.compile(b"[\x00-\x08\x0b\x0e-\x1f\x7f]|\xc2[\x80-\x9f]")


def _stand_in(found: re.Match[str]) -> str:
    """Return the visible stand-in of one control character: ␀ … ␟, ␡, or U+FFFD (C1)."""
    code = ord(found.group())
    if code < 0x20:
        return chr(0x2400 + code)
    return "\u2421" if code == 0x7F else "\ufffd"


def visible_controls(text: str) -> str:
    """Replace the control characters HTML forbids by visible stand-ins (``␀``, ``␛``, ``�``)."""
    if _CONTROLS.search(text) is None:  # nearly always: no copy
        return text
    return _CONTROLS.sub(_stand_in, text)


def finalize(value: object) -> object:
    """Scrub every value a template prints (Jinja's ``finalize``): text and markup alike."""
    if value.__class__ is str:
        return visible_controls(value)
    # Markup made elsewhere (Markdown, cells, pictures) keeps being markup. Fragments are
    # spliced in as bytes (their builders escape through visible_controls already), and
    # print placeholders that carry a NUL on purpose: left alone.
    if isinstance(value, Markup) and value.__class__ is Markup:
        scrubbed = visible_controls(value)
        return value if scrubbed is value else Markup(scrubbed)
    return value


def json_for_html(body: bytes) -> bytes:
    """Escape ``<``, ``>``, ``&`` as ``\\u003c`` etc.: still the same JSON value."""
    # In JSON these characters can only occur inside strings, where \uXXXX escapes
    # decode to the very same characters.
    body = body.replace(b"<", b"\\u003c").replace(b">", b"\\u003e").replace(b"&", b"\\u0026")
    # DEL and C1 may stand raw in JSON strings, but not in HTML: \uXXXX, the same value.
    if _CONTROL_BYTES.search(body) is None:
        return body
    return _CONTROL_BYTES.sub(lambda m: b"\\u%04x" % ord(m.group().decode()), body)


def text_for_html(body: bytes) -> bytes:
    """Escape ``&``, ``<``, ``>`` as HTML entities (Graphviz reads them as the same characters)."""
    escaped = body.replace(b"&", b"&amp;").replace(b"<", b"&lt;").replace(b">", b"&gt;")
    # This copy is served as HTML: its control characters get their stand-ins too.
    if _CONTROL_BYTES.search(escaped) is None:
        return escaped
    return visible_controls(escaped.decode("utf-8", "replace")).encode()
