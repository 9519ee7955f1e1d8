"""A map's chunks shrink towards its end, and the local pool hands results on in order."""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.builder.map import pool
from sitegen.builder.map.chunks import GUIDE, guided


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 5_000_000), max_size=400),
    st.integers(1, 8),
    st.integers(1, 64),
    st.integers(1, 16_000_000),
)
def test_chunks_cover_the_items_in_order_within_their_bounds(
    weights: list[int], workers: int, most: int, most_bytes: int
) -> None:
    lengths = guided(weights, workers, most, most_bytes)
    assert sum(lengths) == len(weights) and all(n >= 1 for n in lengths)
    at = 0
    for n in lengths:
        held = weights[at : at + n]
        assert n <= most and (n == 1 or sum(held) <= most_bytes)
        at += n
    if lengths:
        assert lengths[-1] == 1  # no worker maps a long last chunk while the others wait


def test_chunks_of_even_items_are_full_then_shrink_by_the_share_left() -> None:
    lengths = guided([450_000] * 1000, 2, 16, 8 << 20)
    assert lengths[:30] == [16] * 30 and lengths[-3:] == [1, 1, 1]
    assert lengths == sorted(lengths, reverse=True)
    # Each is at most 1 / (GUIDE x workers) of what was left when it was cut.
    left = 1000
    for n in lengths:
        assert n <= max(1, -(-left // (GUIDE * 2)))
        left -= n


def test_a_heavy_item_goes_alone_and_light_ones_fill_a_chunk() -> None:
    assert guided([1, 1, 100, 1, 1, 1], 1, 16, 10)[:2] == [2, 1]


def _twice(n: int) -> tuple[int, int]:
    """Return twice ``n`` and the process that made it."""
    return 2 * n, os.getpid()


def test_the_pool_hands_results_on_in_order_from_its_workers() -> None:
    items = list(range(200))
    weights = [(n % 7) * 1_000_000 for n in items]
    with pool.pool_map(_twice, items, 2, weights=weights) as results:
        found = list(results)
    assert [n for n, _ in found] == [2 * n for n in items]
    assert os.getpid() not in {pid for _, pid in found}
