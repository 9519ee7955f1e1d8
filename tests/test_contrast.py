"""Colour contrast of the timeline, computed from the stylesheet's own values (WCAG 2.x)."""

from __future__ import annotations

import colorsys
import re

import pytest

from sitegen.render.templates import default_template_dir

# WCAG 1.4.11: a graphical mark against what is next to it.
MIN_MARK_CONTRAST = 3.0
# A colour "reads as red" within this many degrees of pure red, unless nearly grey.
RED_HUE_DEGREES = 20.0
MIN_RED_SATURATION = 0.25
CSS = (default_template_dir() / "static" / "style.css").read_text()


def _block(css: str, dark: bool) -> dict[str, str]:
    """Return the custom properties the root sets in one colour scheme."""
    light = re.search(r":root\s*\{(.*?)\}", css, re.S)
    assert light is not None
    props = dict(re.findall(r"--([\w-]+):\s*([^;]+);", light.group(1)))
    if dark:
        media = re.search(r"prefers-color-scheme:\s*dark\)\s*\{\s*:root\s*\{(.*?)\}", css, re.S)
        assert media is not None
        props.update(re.findall(r"--([\w-]+):\s*([^;]+);", media.group(1)))
    return props


def _resolve(props: dict[str, str], name: str) -> str:
    value = props[name].strip()
    while value.startswith("var(--"):
        value = props[value[6:-1]].strip()
    return value


def _luminance(hex_colour: str) -> float:
    def channel(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: str, b: str) -> float:
    """Return the WCAG contrast ratio of two #rrggbb colours."""
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def reads_as_red(hex_colour: str) -> bool:
    """Return whether a colour's hue is close to red and it is not nearly grey."""
    r, g, b = (int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
    hue, _, saturation = colorsys.rgb_to_hls(r, g, b)
    degrees = hue * 360
    return min(degrees, 360 - degrees) <= RED_HUE_DEGREES and saturation >= MIN_RED_SATURATION


def test_the_failed_bar_is_marked_with_the_mark_colour() -> None:
    assert re.search(r"\.tl-bar\.failed\s*\{[^}]*stroke:\s*var\(--mark\)", CSS)
    assert re.search(r"\.failed-swatch\s*\{[^}]*var\(--mark\)", CSS)


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_failed_mark_stands_out_from_every_stage_colour(dark: bool) -> None:
    props = _block(CSS, dark)
    mark = _resolve(props, "mark")
    stages = [_resolve(props, f"c{n}") for n in range(10)]
    ratios = {colour: round(contrast(mark, colour), 2) for colour in stages}
    assert min(ratios.values()) >= MIN_MARK_CONTRAST, (mark, ratios)
    # The bars stand out from the page behind them too.
    background = _resolve(props, "bg")
    assert min(contrast(background, c) for c in stages) >= MIN_MARK_CONTRAST


def test_no_stage_colour_reads_as_failed() -> None:
    for dark in (False, True):
        props = _block(CSS, dark)
        reds = [n for n in range(10) if reads_as_red(_resolve(props, f"c{n}"))]
        assert reds == []


def test_the_checks_fire_on_the_old_palette() -> None:
    # The colours this replaced: a red stage (c9) and a red mark too faint on several stages.
    assert reads_as_red("#e15759") and reads_as_red("#cf222e")
    assert contrast("#cf222e", "#e15759") < MIN_MARK_CONTRAST
    assert contrast("#f85149", "#4e79a7") < MIN_MARK_CONTRAST
    assert not reads_as_red("#bab0ac")  # a warm grey is not red


# WCAG 1.4.3: a badge's word (small text) against its own background.
MIN_TEXT_CONTRAST = 4.5
# The status badge rules: ``.st-a, .st-b { color: var(--x); background: var(--y); }``.
_BADGE_RULE = re.compile(
    r"^((?:\.st-[\w-]+,\s*)*\.st-[\w-]+)\s*\{\s*color:\s*var\(--([\w-]+)\);"
    r"\s*background:\s*var\(--([\w-]+)\);",
    re.M,
)


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_every_status_badge_reads_against_its_background(dark: bool) -> None:
    props = _block(CSS, dark)
    rules = {
        selector: (_resolve(props, fg), _resolve(props, bg))
        for selector, fg, bg in _BADGE_RULE.findall(CSS)
    }
    ratios = {s: round(contrast(fg, bg), 2) for s, (fg, bg) in rules.items()}
    assert len(ratios) >= 4 and min(ratios.values()) >= MIN_TEXT_CONTRAST, ratios
    # An Invalid job is a failure: its badge is the failed badge, in red.
    (failed,) = [s for s in rules if ".st-failed" in s.split(", ")]
    assert ".st-invalid" in failed.split(", ") and reads_as_red(rules[failed][0])
