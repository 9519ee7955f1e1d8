"""Escape text for HTML: log text in pages and pictures, and API bodies served as HTML.

``esc`` is the one escaper of the string-built markup (task rows, the jobs listing, the
SVG pictures); the templates escape through markupsafe, byte for byte the same.

``visible_controls`` replaces the control characters HTML forbids, in text of every kind
(templates through Jinja's ``finalize``, ``esc`` for string-built markup, API copies).

Zero-config hosts (GitHub Pages, ``python -m http.server``) answer ``/api/x`` by
redirecting to ``/api/x/`` and serving ``index.html`` as HTML on the site's own
origin. A job named ``<script>`` must never become markup there.
"""

from __future__ import annotations

import re

from markupsafe import Markup, escape

from sitegen.text.shorten import MAX_SHOWN_TEXT, Whole, shorten

# Control characters are parse errors in HTML (a NUL in a job name broke 867 pages): C0 but
# tab, newline, form feed and carriage return; DEL; C1. Kept visible, never dropped.
_CONTROLS = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")
_search_control = _CONTROLS.search
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
    # Every printed value comes through here, a hundred a page: the common kinds first, with
    # visible_controls and shorten inlined (their calls were a fifth of rendering a page).
    kind = value.__class__
    if kind is str:
        text: str = value  # type: ignore[assignment]
        if len(text) > MAX_SHOWN_TEXT:
            text = shorten(text)
        return text if _search_control(text) is None else _CONTROLS.sub(_stand_in, text)
    if kind is int:
        return value
    if isinstance(value, Whole):
        return visible_controls(value)
    # Markup made elsewhere (Markdown, cells, pictures) keeps being markup. Fragments are
    # spliced in as bytes (their builders escape through visible_controls already), and
    # print placeholders that carry a NUL on purpose: left alone.
    if isinstance(value, Markup) and value.__class__ is Markup:
        scrubbed = visible_controls(value)
        return value if scrubbed is value else Markup(scrubbed)
    return value


# markupsafe 3's escaper itself, as its ``escape`` picks it (C where built), without the Markup
# object ``escape`` wraps the result in: a printed value is joined into its page, never kept.
try:
    from markupsafe._speedups import _escape_inner
except ImportError:  # pragma: no cover (no compiled speedups, or markupsafe 2)
    try:
        from markupsafe._native import _escape_inner
    except ImportError:

        def _escape_inner(s: str, /) -> str:
            """Return ``s`` escaped for HTML, as markupsafe's ``escape`` does, as text."""
            return str(escape(s))


def print_html(value: object) -> str:
    """Return a printed value as a page holds it: ``escape(finalize(value))``, as text.

    The templates' code calls this once for each ``{{ … }}`` (``render.templates``), where
    Jinja calls ``finalize`` and then ``escape``: two calls and a Markup object a value, a
    hundred values a page. The common kinds first; anything else takes Jinja's own path.
    """
    kind = value.__class__
    if kind is str:
        text: str = value  # type: ignore[assignment]
        if len(text) > MAX_SHOWN_TEXT:
            text = shorten(text)
        if _search_control(text) is not None:
            text = _CONTROLS.sub(_stand_in, text)
        return _escape_inner(text)
    if kind is int:
        return str(value)  # digits and a sign: nothing to escape or scrub
    if kind is Markup:  # made elsewhere (cells, pictures): scrubbed, not escaped
        markup: str = value  # type: ignore[assignment]
        return markup if _search_control(markup) is None else _CONTROLS.sub(_stand_in, markup)
    return str(escape(finalize(value)))


def esc(text: str) -> str:
    """Escape text for HTML content and quoted attributes, byte for byte as the templates do."""
    # markupsafe's entities (&#34; &#39;), not html.escape's (&quot; &#x27;): a page that
    # mixes template and string-built parts then escapes one way. The checks skip the
    # copies: log text rarely holds any of these characters. Control characters first, as
    # the templates' ``finalize`` does.
    text = visible_controls(shorten(text))
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
