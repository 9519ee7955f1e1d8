from __future__ import annotations

import jinja2
from markupsafe import Markup

from sitegen.render.fragments import Fragment, Splicer


def _render(source: str, **context: object) -> str:
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    return env.from_string(source).render(**context)


def test_fragments_are_spliced_where_printed_as_bytes() -> None:
    splice = Splicer()
    rows, other = Fragment("<tr><td>1</td></tr>"), Fragment("<b>é</b>")
    source = "<p>·{{ name }}</p>{{ rows }}{% if rows %}|{{ rows }}{% endif %}{{ other }}"
    page = splice(lambda: _render(source, name="<x>", rows=rows, other=other), [rows, other])
    expected = "<p>·&lt;x&gt;</p><tr><td>1</td></tr>|<tr><td>1</td></tr><b>é</b>"
    assert page == expected.encode()
    # Outside a splicing render a fragment is plain markup.
    assert _render("{{ rows }}", rows=rows) == "<tr><td>1</td></tr>"
    assert rows.token is None and isinstance(rows, Markup)


def test_unprinted_fragments_and_forged_placeholders_change_nothing() -> None:
    splice = Splicer()
    rows = Fragment("<tr></tr>")
    forged = "\x00sitegen-0000000000000000-0\x00"
    page = splice(lambda: _render("{{ text }}", text=forged), [rows])
    assert page == forged.encode()
    assert splice(lambda: "plain", []) == b"plain"
