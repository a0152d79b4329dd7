"""Window clauses in each system's own syntax (oracle/clauses): what they parse to, and errors
that point at the offending token."""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel.oracle import Aggregation, FixedWindows, InvalidSpec, parse_scenario, replay
from windtunnel.oracle.clauses import parse_clause
from windtunnel.oracle.model.conditions import parse_condition
from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.oracle.profiles.ekuiper.spec import EkuiperWindows
from windtunnel.oracle.profiles.kdb.spec import KdbCountWindows, KdbTimerWindows, KdbTimeWindows
from windtunnel.oracle.profiles.timeplus.spec import EmitPolicy, TimeplusWindows


def test_tql_window_clause_with_group_and_summarize() -> None:
    query = parse_clause(
        "group {user: user, src_ip: src_ip} { window size=10min, every=1min, on=ts, "
        "tolerance=2min, idle_timeout=5min { summarize failures=count(), "
        "target_hosts=distinct(host) } }", "tql")
    assert query.window == FixedWindows(600_000, on="ts", every_ms=60_000, tolerance_ms=120_000,
                                        idle_timeout_ms=300_000)
    assert query.group_by == ("user", "src_ip")
    assert query.aggregate == (Aggregation("failures", "count"),
                               Aggregation("target_hosts", "distinct", "host"))


def test_tql_summarize_by_field_and_now() -> None:
    query = parse_clause("window size=1h, on=now(), tolerance=5min { summarize severity, "
                         "events=count() }", "tql")
    assert query.window.on == "now()"
    assert query.aggregate_by == ("severity",)


def test_ekuiper_group_by_clause_with_filter() -> None:
    query = parse_clause("GROUP BY ID, HOPPINGWINDOW(ss, 10, 5) FILTER (WHERE x > 1)", "ekuiper")
    window = query.window
    assert isinstance(window, EkuiperWindows)
    assert (window.window, window.size_ms, window.hop_ms, str(window.filter)) == (
        "hopping", 10_000, 5_000, "x > 1")
    assert query.group_by == ("ID",)


def test_ekuiper_select_where_having_and_sliding_over_when() -> None:
    query = parse_clause(
        "SELECT count(*), avg(t) AS mean FROM demo WHERE t > 20 GROUP BY SLIDINGWINDOW(mi, 5, 1) "
        "OVER (WHEN t > 30) HAVING count(*) > 2", "ekuiper")
    window = query.window
    assert isinstance(window, EkuiperWindows)
    assert (window.size_ms, window.delay_ms) == (300_000, 60_000)
    assert (str(window.where), str(window.when), str(window.having)) == (
        "t > 20", "t > 30", "count(*) > 2")
    assert query.aggregate == (Aggregation("count", "count"), Aggregation("mean", "avg", "t"))


def test_ekuiper_session_and_count_arguments() -> None:
    session = parse_clause("GROUP BY SESSIONWINDOW(ss, 10, 2)", "ekuiper").window
    assert isinstance(session, EkuiperWindows)
    assert (session.max_duration_ms, session.timeout_ms) == (10_000, 2_000)
    count = parse_clause("GROUP BY COUNTWINDOW(5, 2)", "ekuiper").window
    assert isinstance(count, EkuiperWindows)
    assert (count.count, count.interval) == (5, 2)


def test_timeplus_select_over_tumble_with_emit_policy() -> None:
    query = parse_clause(
        "SELECT window_start, window_end, device, avg(cpu_usage) AS avg_cpu "
        "FROM tumble(device_metrics, event_time, 5s) GROUP BY window_start, device "
        "EMIT AFTER WINDOW CLOSE WITH DELAY 2s", "timeplus")
    assert query.window == TimeplusWindows("tumble", 5000, on="event_time",
                                           emit=EmitPolicy(delay_ms=2000))
    assert query.group_by == ("device",)
    assert [a.name for a in query.aggregate or ()] == ["window_start", "window_end", "avg_cpu"]


def test_timeplus_hop_takes_the_hop_first_and_now_is_processing_time() -> None:
    query = parse_clause("SELECT count(*) FROM hop(s, now(), 1s, 5s)", "timeplus")
    assert query.window == TimeplusWindows("hop", 5000, on="now()", hop_ms=1000)
    with pytest.raises(InvalidSpec, match="takes the hop first"):
        parse_clause("SELECT count(*) FROM hop(s, ts, 5s, 1s)", "timeplus")


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        (".qsp.window.tumbling[00:00:10; `time; .qsp.use ``lateness!(::;00:00:02)]",
         KdbTimeWindows(10_000, on="time", lateness_ms=2_000)),
        (".qsp.window.tumbling[00:00:15; `timestamp; .qsp.use ``sort!11b]",
         KdbTimeWindows(15_000, on="timestamp", sort=True)),
        (".qsp.window.tumbling[00:00:10; `timestamp; .qsp.use enlist[`passthrough]!enlist 1b]",
         KdbTimeWindows(10_000, on="timestamp", passthrough=True)),
        (".qsp.window.tumbling[00:00:05; `timestamp; .qsp.use (enlist `countTrigger)!enlist 10000]",
         KdbTimeWindows(5_000, on="timestamp", count_trigger=10_000)),
        (".qsp.window.sliding[00:00:05; 00:00:10; `time]", KdbTimeWindows(5_000, 10_000, on="time")),
        (".qsp.window.sliding[0D00:00:02.000; 00:00:05; `timestamp]",
         KdbTimeWindows(2_000, 5_000, on="timestamp")),
        (".qsp.window.count[10; 5]", KdbCountWindows(10, 5)),
        (".qsp.window.timer[00:00:05; .qsp.use enlist[`countTrigger]!enlist 10000]",
         KdbTimerWindows(5_000, count_trigger=10_000)),
        (".qsp.window.tumbling[00:00:10; `t; .qsp.use `lateness`skipEmptyWindows!(00:00:02;1b)]",
         KdbTimeWindows(10_000, on="t", lateness_ms=2_000, skip_empty_windows=True)),
    ],
)
def test_kdb_operators_and_options_as_on_the_page(text: str, spec: Any) -> None:
    assert parse_clause(text, "kdb").window == spec


@pytest.mark.parametrize(
    ("syntax", "text", "token"),
    [
        ("tql", "window size=10min, on=ts { summarize p=median(x) }", "'median' at offset 39"),
        ("tql", "window size=10min, every=soon", "'soon' at offset 25"),
        ("ekuiper", "GROUP BY ID, HOPPINGWINDOW(weeks, 10, 5)", "'weeks' at offset 27"),
        ("ekuiper", "GROUP BY ID", "the end of the text"),
        ("ekuiper", "SELECT median(x) FROM s GROUP BY TUMBLINGWINDOW(ss, 1)", "'median'"),
        ("timeplus", "SELECT quantile(x) FROM tumble(s, 5s)", "'quantile' at offset 7"),
        ("timeplus", "SELECT count(*) FROM tumble(s, 5s) EMIT CHANGELOG", "'CHANGELOG' at offset 40"),
        ("timeplus", "SELECT count(*) FROM tumble(s, 5s) EMIT ON CHANGE", "'CHANGE' at offset 43"),
        ("timeplus", "FROM tumble(s, 5s) EMIT AFTER WINDOW CLOSE WITH DELAY 2x",
         "'2x' at offset 54"),
        ("timeplus", "FROM tumble(s, 5s) EMIT TIMEOUT 3s WITH DELAY 2s", "'WITH' at offset 35"),
        ("kdb", ".qsp.window.global[{x}]", "'.qsp.window.global'"),
        ("kdb", ".qsp.window.tumbling[00:00:10; `time; .qsp.use ``timeAssigner!(::;00:00:01)]",
         "'`timeAssigner'"),
    ],
)
def test_unsupported_text_points_at_the_token_and_says_what_is_supported(
    syntax: str, text: str, token: str
) -> None:
    with pytest.raises(InvalidSpec) as info:
        parse_clause(text, syntax)
    message = str(info.value)
    assert token in message
    assert "supported:" in message


# --- scenario files ---------------------------------------------------------------------------


def test_a_scenario_query_uses_the_profiles_syntax_and_the_aggregate_block() -> None:
    scenario = parse_scenario({
        "profile": "kdb",
        "query": ".qsp.window.count[2]",
        "aggregate": {"n": "count()"},
        "input": [{"x": 1}, {"x": 2}],
    })
    assert [e.row for e in replay(scenario).emissions] == [{"n": 2}]


def test_ekuiper_event_time_comes_from_the_query_mapping() -> None:
    scenario = parse_scenario({
        "profile": "ekuiper",
        "query": {"text": "SELECT count(*) FROM s GROUP BY TUMBLINGWINDOW(ms, 10)", "on": "ts",
                  "lateness": 2},
        "input": [{"ts": 1}, {"ts": 12}],
    })
    window = scenario.query.window
    assert isinstance(window, EkuiperWindows)
    assert (window.on, window.lateness_ms) == ("ts", 2)
    assert [e.row for e in replay(scenario).emissions] == [{"count": 1}]


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"window": {"kind": "fixed", "size": 10}}, "window"),
        ({"aggregate": {"n": "count()"}}, "aggregate"),
        ({"query": {"text": "GROUP BY COUNTWINDOW(2)", "size": 3}}, "query.size"),
        ({"query": {"text": "GROUP BY COUNTWINDOW(2)", "syntax": "flinksql"}}, "query.syntax"),
    ],
)
def test_query_conflicts_and_unknown_keys_are_input_errors(extra: dict[str, Any],
                                                           field: str) -> None:
    data = {"profile": "ekuiper", "query": "SELECT count(*) FROM s GROUP BY COUNTWINDOW(2)",
            "input": [{"x": 1}], **extra}
    with pytest.raises(InvalidInput) as info:
        parse_scenario(data)
    assert info.value.field == field


@pytest.mark.parametrize(
    ("syntax", "text"),
    [
        ("tql", "window size=10min, every=1min, on=ts, tolerance=2min, idle_timeout=5min"),
        ("ekuiper", "GROUP BY ID, HOPPINGWINDOW(ss, 10, 5) FILTER (WHERE x > 1)"),
        ("timeplus", "FROM tumble(stream, event_time, 5s) EMIT AFTER WINDOW CLOSE WITH DELAY 2s"),
        ("kdb", ".qsp.window.tumbling[00:00:10; `time; .qsp.use ``lateness!(::;00:00:02)]"),
    ],
)
def test_each_syntaxs_clause_parses_to_the_same_window_as_the_scenario_form(
    syntax: str, text: str
) -> None:
    window = parse_clause(text, syntax).window
    expected = {
        "tql": FixedWindows(600_000, on="ts", every_ms=60_000, tolerance_ms=120_000,
                            idle_timeout_ms=300_000),
        "ekuiper": EkuiperWindows("hopping", unit="ss", size_ms=10_000, hop_ms=5_000,
                                  filter=parse_condition("x > 1", "f")),
        "timeplus": TimeplusWindows("tumble", 5_000, on="event_time",
                                    emit=EmitPolicy("close", delay_ms=2_000)),
        "kdb": KdbTimeWindows(10_000, on="time", lateness_ms=2_000),
    }[syntax]
    assert window == expected


def test_the_api_runs_a_clause_directly() -> None:
    from windtunnel.oracle import Batch, Event, parse_clause, profile_named, run

    query = parse_clause("SELECT count(*) AS n FROM tumble(s, t, 5ms) EMIT ON UPDATE", "timeplus")
    items = [Batch((Event(0, {"t": 1}), Event(1, {"t": 2}))), Event(2, {"t": 3})]
    result = run(query, items, profile="timeplus", rules=profile_named("timeplus").rules)
    assert [e.row["n"] for e in result.emissions] == [2, 3]


@pytest.mark.parametrize("profile", ["tenzir", "flink", "spark", "kdb", "timeplus", "ekuiper"])
def test_a_tql_clause_in_a_scenario_runs_under_every_profile(profile: str) -> None:
    # one window [0, 10 s) holding both events, closed by the third (10 s wide windows)
    scenario = parse_scenario({
        "profile": profile,
        "query": {"syntax": "tql", "text": "group user { window size=10s, on=ts "
                                          "{ summarize n=count() } }"},
        "input": [{"ts": 1000, "user": "a"}, {"ts": 2000, "user": "a"}, {"ts": 25000, "user": "a"}],
    })
    assert isinstance(scenario.query.window, FixedWindows)
    rows = [(e.window.start_ms, e.row["n"]) for e in replay(scenario).emissions]
    assert rows[0] == (0, 2)
