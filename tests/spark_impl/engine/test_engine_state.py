"""The engine's state codec: state written for another query, another format version, not
engine state at all, truncated, or an update read as a snapshot is refused with one clear
line; the dirty-keys view names what an incremental write must carry; a snapshot plus later
updates (the end of input's deletions included) decodes to the slice that wrote them."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest

from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import Aggregation, FixedWindows, Query
from windtunnel.spark_impl.jvm.engine_spec import engine_spec

from .harness import HarnessProcess

pytestmark = pytest.mark.process  # the Java engine in a JVM

QUERY = Query(FixedWindows(10, idle_timeout_ms=50), ("k",), (Aggregation("n", "count"), Aggregation("s", "sum", "v")))
OTHER = Query(FixedWindows(20), ("k",), (Aggregation("n", "count"),))


def spec(query: Query = QUERY) -> dict[str, Any]:
    return {"spec": engine_spec(query, Rules(), 1, 0)}


def event(seq: int, t: int, key: str, at: int) -> dict[str, Any]:
    return {"seq": seq, "at": at, "event": {"ts": t, "k": key, "v": seq}}


@pytest.fixture
def engine(harness: HarnessProcess) -> Iterator[HarnessProcess]:
    """The shared harness, its scenario reset after the test."""
    yield harness
    harness.reset()


def encoded(harness: HarnessProcess, lines: list[dict[str, Any]], kind: str = "full") -> bytes:
    _, answer = harness.until([*lines, {"encode": kind}], "state")
    assert "state" in answer, answer
    return base64.b64decode(answer["state"][0])


def decode(harness: HarnessProcess, state: bytes, kind: str = "full") -> dict[str, Any]:
    _, answer = harness.until([{"decode": [base64.b64encode(state).decode()], "kind": kind}], "decoded")
    return answer


STREAM = [event(0, 3, "a", 1), event(1, 5, "b", 2), event(2, 14, "a", 3)]


def test_state_of_another_query_is_refused(engine: HarnessProcess) -> None:
    state = encoded(engine, [spec(), *STREAM])
    engine.reset()
    _, answer = engine.until(
        [spec(OTHER), {"decode": [base64.b64encode(state).decode()], "kind": "full"}], "decoded"
    )
    assert answer["error"].startswith("StateFormatException: engine state was written for another query (fingerprint")


@pytest.mark.parametrize(
    ("mangle", "message"),
    [
        (lambda b: b"XXXX" + b[4:], "not windtunnel engine state (magic 0x58585858, expected 0x57544553)"),
        (lambda b: b[:4] + (2).to_bytes(4, "big") + b[8:], "engine state format version 2, this engine reads version 1"),
        (lambda b: b[: len(b) // 2], "engine state is truncated"),
        (lambda b: b + b"\x00", "corrupt state: 1 bytes after the last key record"),
    ],
)
def test_damaged_state_is_refused(engine: HarnessProcess, mangle: Any, message: str) -> None:
    state = encoded(engine, [spec(), *STREAM])
    assert decode(engine, mangle(state)) == {"error": f"StateFormatException: {message}"}


def test_an_update_is_not_a_snapshot(engine: HarnessProcess) -> None:
    update = encoded(engine, [spec(), *STREAM], "update")
    assert decode(engine, update) == {"error": "StateFormatException: expected a snapshot, found an update"}


def test_dirty_keys_name_what_changed_since_the_last_write(engine: HarnessProcess) -> None:
    # key a first seen at seq 0, b at seq 1; windows [0, 10) of a and b, [10, 20) of a
    encoded(engine, [spec(), *STREAM], "update")
    _, clean = engine.until([{"dirty": True}], "dirty")
    assert clean == {"dirty": [[]], "deleted": [[]]}
    _, after_event = engine.until([event(3, 15, "a", 4), {"dirty": True}], "dirty")
    assert after_event == {"dirty": [[0]], "deleted": [[]]}
    # the wall clock at 53 idle-closes b's window [0, 10) (last delivery at wall 2)
    records, after_idle = engine.until([{"at": 53}, {"dirty": True}], "dirty")
    assert [(r["reason"], r["group"]) for r in records] == [("idle_timeout", '"b"')]
    assert after_idle == {"dirty": [[0, 1]], "deleted": [[]]}
    _, after_end = engine.until([{"end": True}, {"dirty": True}], "dirty")
    assert after_end == {"dirty": [[]], "deleted": [[0, 1]]}


def test_a_snapshot_and_its_updates_decode_to_the_slice_that_wrote_them(engine: HarnessProcess) -> None:
    full = encoded(engine, [spec(), *STREAM])
    first = encoded(engine, [event(3, 25, "b", 4)], "update")
    second = encoded(engine, [{"end": True}], "update")
    engine.reset()
    _, answer = engine.until([spec(), {"decode": [base64.b64encode(full).decode()], "kind": "full"}], "decoded")
    assert answer == {"decoded": True}
    for update in (first, second):
        assert decode(engine, update, "update") == {"decoded": True}
    _, dirty = engine.until([{"dirty": True}], "dirty")
    assert dirty == {"dirty": [[]], "deleted": [[]]}
    # the decoded slice has ended: an event now is refused
    _, refused = engine.until([event(4, 30, "a", 5), {"dirty": True}], "dirty")
    assert refused["error"] == "IllegalStateException: event 4 after the end of input"
