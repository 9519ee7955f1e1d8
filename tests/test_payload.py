from __future__ import annotations

import msgspec

from sitegen.eventlog import payload
from sitegen.eventlog.payload import task_duration


def test_stages_tolerate_old_new_and_unknown_shapes() -> None:
    raw = msgspec.json.encode(
        {
            "stages": [
                {
                    "stage_id": "1",
                    "stage_status": "Successful",
                    "input_rows": 10,
                    "future_field": {"x": 1},
                    "tasks": [
                        {"id": 0, "status": "Successful", "partition_id": 3},
                        {"id": 1, "status": "Successful", "partition_id": [4, 5]},
                        {
                            "id": 2,
                            "status": {"Failed": {"reason": "R", "error": "E", "retryable": True}},
                            "start_exec_time": 10,
                            "end_exec_time": 25,
                        },
                        {"id": "3", "status": {"Failed": "plain message"}},
                        {"status": {"SomethingNew": {}}},
                        "not a task",
                    ],
                },
                {"stage_id": 2, "tasks": None, "task_duration_percentiles": {"min": 1}},
                "garbage",
            ]
        }
    )
    stages = payload.stages(raw)
    assert [s.stage_id for s in stages] == ["1", "2"]
    tasks = stages[0].task_list
    assert [t.partition_id for t in tasks[:2]] == [3, [4, 5]]
    assert tasks[2].state == payload.TaskStatus("Failed", "R", "E")
    assert task_duration(tasks[2]) == 15
    assert tasks[3].id == 3 and tasks[3].state.error == "plain message"
    assert tasks[4].state.word == "SomethingNew" and tasks[4].id is None
    assert len(tasks) == 5
    assert stages[1].stage_status == "Unknown" and stages[1].task_list == []
    assert stages[1].task_duration_percentiles == payload.Percentiles(min=1)


def test_unreadable_payloads_give_empty_views() -> None:
    assert payload.stages(b"not json") == []
    assert payload.stages(b'{"stages": 5}') == []
    assert payload.stages(b"[]") == []
    assert payload.plans(b"[1]") == payload.Plans(None, None, None)
    assert payload.plans(b'{"logical_plan": "L", "stage_plan": 7}').logical == "L"


def test_coercions() -> None:
    assert payload.as_int(True) is None
    assert payload.as_int(2.9) == 2
    assert payload.as_int(" 7 ") == 7
    assert payload.as_int(float("nan")) is None
    assert payload.as_str(3) == "3" and payload.as_str([1]) is None
    assert payload.task_status(None).word == "Unknown"


def test_todays_shape_takes_the_typed_path() -> None:
    raw = msgspec.json.encode(
        {"stages": [{"stage_id": "7", "stage_status": "Running", "extra": 1,
                     "tasks": [{"id": 1, "status": "Running", "partition_id": 2, "new": []}]}]}
    )  # fmt: skip
    (stage,) = payload.stages(raw)
    assert stage.stage_id == "7" and stage.task_list[0].partition_id == 2
    assert task_duration(stage.task_list[0]) is None
