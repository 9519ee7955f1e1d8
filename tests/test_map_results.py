"""The columns a build keeps of the logs it mapped behave as a dict of their entries."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitegen.builder.map.mapped import MapResult, MapResults, Pick
from sitegen.eventlog.logfiles import LogFile

SIZE = 40
entries = st.builds(
    MapResult,
    st.none() | st.builds(Pick, st.text(max_size=3), st.text(max_size=3), st.integers(0, 9)),
    st.none() | st.sampled_from(["0", "1", "2"]) | st.text(max_size=4),  # some their log's
    st.integers(0, 2**31 - 1),
    st.integers(0, 2**63 - 1),
    st.booleans(),
)
steps = st.lists(
    st.tuples(st.sampled_from(["set", "del"]), st.integers(-1, SIZE), entries), max_size=60
)


class Logs(list[LogFile]):
    """Logs whose job ids are not their names' (a LogList gives a name's without a LogFile)."""

    def name_id(self, n: int) -> str:
        return self[n].name_id


@given(steps)
def test_fresh_logs_are_a_dict_by_position_iterated_in_order(script: list) -> None:
    logs = Logs(
        LogFile(Path("d"), f"{n}.eventlog", str(n % 3), False, 1, 1, str(n)) for n in range(SIZE)
    )
    table, model = MapResults(logs), {}
    for op, n, entry in script:
        if op == "set" and 0 <= n < SIZE:
            table[n] = model[n] = entry
        elif n in model:
            del table[n], model[n]
        else:
            with pytest.raises(KeyError):
                del table[n]
        assert len(table) == len(model)
    assert list(table) == sorted(model)
    assert dict(table.items()) == model
    for n in range(-1, SIZE + 1):
        assert (n in table) == (n in model)
        assert table.get(n) == model.get(n)
        if n in model:
            assert table.has_job(n) == (model[n].job_id is not None)
        else:
            with pytest.raises(KeyError):
                table.has_job(n)
