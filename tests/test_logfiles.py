"""Every log of a build in columns: the same logs, in the same order, as a list of them."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitegen.eventlog.logfiles import LogFile, LogList, split_name

names = st.text("abAB.é", min_size=1, max_size=5).map(lambda s: f"{s}.eventlog") | st.text(
    "ab", min_size=1, max_size=3
).map(lambda s: f"{s}.eventlog.running")


def _log(directory: Path, name: str, label: str, size: int, skip: str = "") -> LogFile:
    parsed = split_name(name)
    assert parsed is not None
    return LogFile(directory, name, *parsed, size, size * 7, f"{label}{name}", skip)


@given(
    st.lists(
        st.tuples(st.lists(names, unique=True, max_size=8), st.booleans(), st.booleans()),
        min_size=1,
        max_size=3,
    )
)
def test_a_log_list_holds_the_logs_it_was_given_and_finds_each_by_key(dirs: list) -> None:
    whole = LogList()
    expected: list[LogFile] = []
    for n, (dir_names, shuffled, skipped) in enumerate(dirs):
        directory, label = Path(f"d{n}"), f"d{n}/" if len(dirs) > 1 else ""
        ordered = sorted(dir_names, reverse=shuffled)
        part = [_log(directory, name, label, i, "a FIFO" if skipped and i == 0 else "")
                for i, name in enumerate(ordered)]  # fmt: skip
        whole.extend(LogList.of(part))
        expected += part
    assert list(whole) == expected and whole == expected
    assert len(whole) == len(expected) and whole[-1:] == expected[-1:]
    assert whole.keys == [log.key for log in expected]
    assert list(whole.sizes) == [log.size for log in expected]
    assert list(whole.times) == [log.mtime_ns for log in expected]
    for n, log in enumerate(expected):
        assert whole.position(log.key) == n
        assert whole.name_id(n) == log.name_id
    with pytest.raises(KeyError):
        whole.position("none.eventlog")
    with pytest.raises(IndexError):
        whole[-len(expected) - 1]


def test_a_replaced_log_is_found_by_its_new_key() -> None:
    logs = LogList.of(_log(Path("d"), name, "", 1) for name in ("a.eventlog", "b.eventlog"))
    odd = LogFile(Path("d"), "b.eventlog", "b", False, 0, 0, "b\\xff.eventlog", "undecodable")
    logs.replace(1, odd)
    assert logs[1] == odd and logs.position("b\\xff.eventlog") == 1
    with pytest.raises(KeyError):
        logs.position("b.eventlog")
