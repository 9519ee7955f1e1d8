"""Cut a map's items into chunks that shrink towards its end (guided self-scheduling).

Both mappers hand items to their workers a chunk at a time: a chunk costs a round trip, so the
first ones are long, but a long last chunk keeps one worker busy while the others wait (with
chunks of 16 logs of 800 tasks, 0.17 s of a build of 1,000 on 2 workers). Each chunk is at most
``1 / (GUIDE x workers)`` of the items (and bytes) still to cut, so the last are one item each.
"""

from __future__ import annotations

from collections.abc import Sequence

# Each chunk is at most this share of what is left to cut, a worker (1 / (GUIDE x workers)).
GUIDE = 2


def guided(weights: Sequence[int], workers: int, most: int, most_bytes: int) -> list[int]:
    """Return the lengths of the consecutive chunks of items weighing ``weights`` (bytes).

    A chunk holds at most ``most`` items and ``most_bytes`` of them (but one item, whatever it
    weighs), and at most a ``1 / (GUIDE x workers)`` share of the items and bytes still to cut.
    """
    lengths: list[int] = []
    count = len(weights)
    left, left_bytes = count, sum(weights)
    share = GUIDE * workers
    at = 0
    while at < count:
        items = max(1, min(most, -(-left // share)))
        budget = max(1, min(most_bytes, -(-left_bytes // share)))
        start, held = at, weights[at]
        at += 1
        while at < count and at - start < items and held + weights[at] <= budget:
            held += weights[at]
            at += 1
        lengths.append(at - start)
        left -= at - start
        left_bytes -= held
    return lengths
