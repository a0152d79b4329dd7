"""The engines' SQL as people write it (eKuiper and Timeplus forms), parsed and run."""

from __future__ import annotations

import pytest

from windtunnel.oracle.clauses import parse_clause
from windtunnel.oracle.clauses.sql import parse_ekuiper_sql
from windtunnel.oracle.engine import run
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.results import Drop, Emission
from windtunnel.oracle.model.spec import Aggregation
from windtunnel.oracle.model.stream import Event, Watermark
from windtunnel.oracle.profiles import profile_named
from windtunnel.oracle.profiles.ekuiper.spec import EkuiperWindows
from windtunnel.oracle.profiles.timeplus.spec import EmitPolicy, TimeplusWindows

# --- eKuiper ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ("window_start()", Aggregation("window_start", "window_start")),
        ("window_end() AS e", Aggregation("e", "window_end")),
        ("window_start", Aggregation("window_start", "window_start")),
        ("collect(x) AS xs", Aggregation("xs", "collect", "x")),
        ("last_value(x, true) AS lx", Aggregation("lx", "last", "x")),
        ("last_value(x)", Aggregation("last_value", "last", "x")),
        ("event_time() AS t", Aggregation("t", "last", "ts")),
        ("count(*)", Aggregation("count", "count")),
    ],
)
def test_ekuiper_select_items(item: str, expected: Aggregation) -> None:
    query = parse_ekuiper_sql(f"SELECT {item} FROM s GROUP BY TUMBLINGWINDOW(ss, 10)", on="ts")
    assert query.aggregate == (expected,)


def test_ekuiper_order_by_is_accepted_after_having() -> None:
    text = ("SELECT k, count(*) AS n FROM s GROUP BY k, TUMBLINGWINDOW(ss, 10) "
            "HAVING count(*) > 1 ORDER BY k DESC, n")
    query = parse_ekuiper_sql(text, on="ts")
    assert query.group_by == ("k",)
    assert isinstance(query.window, EkuiperWindows)
    assert query.window.having is not None and query.window.having.text == "count(*) > 1"


# --- Timeplus --------------------------------------------------------------------------


def test_timeplus_as_people_write_it() -> None:
    query = parse_clause(
        "SELECT window_start, dev, count(), emit_version() AS v "
        "FROM tumble(metrics, ts, interval 5 second) PARTITION BY dev WHERE cpu > 1 "
        "GROUP BY window_start, dev EMIT STREAM AFTER WATERMARK WITH DELAY 2s;",
        "timeplus",
    )
    window = query.window
    assert isinstance(window, TimeplusWindows)
    assert (window.window, window.size_ms, window.on) == ("tumble", 5000, "ts")
    assert window.emit == EmitPolicy("close", delay_ms=2000)
    assert (str(window.where), window.partition_by, window.emit_version) == (
        "cpu > 1", ("dev",), "v")
    assert query.group_by == ("dev",)
    assert query.aggregate == (Aggregation("window_start", "window_start"),
                               Aggregation("count()", "count"))


@pytest.mark.parametrize(
    ("emit", "policy"),
    [
        ("EMIT STREAM", EmitPolicy()),
        ("EMIT AFTER WATERMARK", EmitPolicy()),
        ("EMIT STREAM ON UPDATE", EmitPolicy("update")),
        ("EMIT AFTER WINDOW CLOSE WITH DELAY interval 2 seconds", EmitPolicy("close", delay_ms=2000)),
    ],
)
def test_timeplus_emit_forms(emit: str, policy: EmitPolicy) -> None:
    query = parse_clause(f"SELECT count() FROM hop(s, ts, 1s, interval 1 minute) {emit}",
                         "timeplus")
    assert isinstance(query.window, TimeplusWindows)
    assert (query.window.hop_ms, query.window.size_ms) == (1000, 60_000)
    assert query.window.emit == policy


def timeplus_run(text: str, items: list[object]) -> list[object]:
    query = parse_clause(text, "timeplus")
    return list(run(query, items, profile="timeplus",  # type: ignore[arg-type]
                    rules=profile_named("timeplus").rules).outputs)


def test_timeplus_where_filters_before_the_window_and_moves_no_watermark() -> None:
    out = timeplus_run("SELECT count() AS n FROM tumble(s, ts, 10ms) WHERE ok = true",
                       [Event(0, {"ts": 1, "ok": True}), Event(1, {"ts": 50, "ok": False}),
                        Event(2, {"ts": 2, "ok": True}), Event(3, {"ts": 12, "ok": True})])
    assert [(o.seq, o.reason) for o in out if isinstance(o, Drop)] == [(1, "filtered")]
    assert [(o.row["n"], o.reason) for o in out if isinstance(o, Emission)] == [(2, "close")]


def test_timeplus_partition_by_gives_each_key_its_own_watermark() -> None:
    items = [Event(0, {"ts": 1, "k": "a"}), Event(1, {"ts": 30, "k": "b"}),
             Event(2, {"ts": 2, "k": "a"})]
    shared = timeplus_run("SELECT count() AS n FROM tumble(s, ts, 10ms) GROUP BY k", items)
    assert [(o.seq, o.reason) for o in shared if isinstance(o, Drop)] == [(2, "late")]
    split = timeplus_run("SELECT count() AS n FROM tumble(s, ts, 10ms) PARTITION BY k", items)
    assert not [o for o in split if isinstance(o, Drop)]  # a's watermark is still at 1
    # an injected watermark moves every partition's watermark (W1)
    moved = timeplus_run("SELECT count() AS n FROM tumble(s, ts, 10ms) PARTITION BY k",
                         [*items, Watermark(10), Event(3, {"ts": 3, "k": "c"})])
    assert [(o.group, o.row["n"]) for o in moved if isinstance(o, Emission)] == [("a", 2)]
    assert [(o.seq, o.reason) for o in moved if isinstance(o, Drop)] == [(3, "late")]


def test_timeplus_emit_version_numbers_each_emitted_window_from_zero() -> None:
    items = [Event(0, {"ts": 1, "k": "a"}), Event(1, {"ts": 2, "k": "b"}),
             Event(2, {"ts": 15, "k": "a"}), Event(3, {"ts": 25, "k": "a"})]
    out = timeplus_run("SELECT count() AS n, emit_version() AS v FROM tumble(s, ts, 10ms) "
                       "GROUP BY k", items)
    rows = [(o.window.start_ms, o.group, o.row["v"]) for o in out if isinstance(o, Emission)]
    assert rows == [(0, "a", 0), (0, "b", 0), (10, "a", 1)]  # one window's rows share one


# --- still unsupported: the error points at the token ---------------------------------------


@pytest.mark.parametrize(
    ("syntax", "text", "token"),
    [
        ("ekuiper", "SELECT last_value(x, false) FROM s GROUP BY TUMBLINGWINDOW(ss, 1)",
         "'false' at offset 21"),
        ("ekuiper", "SELECT event_time() FROM s GROUP BY TUMBLINGWINDOW(ss, 1)",
         "'event_time' at offset 7"),
        ("ekuiper", "SELECT collect(x, y) FROM s GROUP BY TUMBLINGWINDOW(ss, 1)", "'y' at offset 18"),
        ("ekuiper", "SELECT window_start(x) FROM s GROUP BY TUMBLINGWINDOW(ss, 1)",
         "'window_start' at offset 7"),
        ("ekuiper", "SELECT deduplicate(x) FROM s GROUP BY TUMBLINGWINDOW(ss, 1)", "'deduplicate'"),
        ("ekuiper", "GROUP BY TUMBLINGWINDOW(ss, 1) ORDER k", "'k' at offset 37"),
        ("timeplus", "SELECT count() FROM tumble(s, ts, interval 5 fortnight)",
         "'fortnight' at offset 45"),
        ("timeplus", "SELECT count() FROM tumble(s, 5s) EMIT PERIODIC 1s", "'PERIODIC' at offset 39"),
        ("timeplus", "SELECT count() FROM tumble(s, 5s) EMIT STREAM SOON", "'SOON' at offset 46"),
        ("timeplus", "SELECT emit_version() FROM tumble(s, 5s)", "'emit_version' at offset 7"),
        ("timeplus", "SELECT collect(x) FROM tumble(s, 5s)", "'collect' at offset 7"),
        ("timeplus", "SELECT count() FROM tumble(s, 5s) SETTINGS x=1", "'SETTINGS' at offset 34"),
    ],
)
def test_unsupported_forms_point_at_the_token(syntax: str, text: str, token: str) -> None:
    with pytest.raises(InvalidSpec) as info:
        parse_clause(text, syntax)
    assert token in str(info.value) and "supported:" in str(info.value)
