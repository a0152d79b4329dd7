"""The ``kdb`` profile: its rules, its scenario window kinds and its operators.

Scenario kinds (``window.kind``): ``kdb_tumbling``, ``kdb_sliding``, ``kdb_count``,
``kdb_global``, ``kdb_timer``; the generic ``fixed`` kind runs as ``kdb_sliding`` with
period = every, duration = size, lateness = tolerance; ``count`` as ``kdb_count`` (size = count,
frequency = every).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from windtunnel.oracle.engine import register_operator
from windtunnel.oracle.model.errors import InvalidScenario
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import CountWindows, FixedWindows
from windtunnel.oracle.profiles import Profile, register
from windtunnel.oracle.profiles.kdb.count_windows import (
    KdbCountOperator,
    KdbGlobalOperator,
    KdbTimerOperator,
    high_water_mark,
    split_on_value,
)
from windtunnel.oracle.profiles.kdb.spec import (
    KdbCountWindows,
    KdbGlobalWindows,
    KdbTimerWindows,
    KdbTimeWindows,
)
from windtunnel.oracle.profiles.kdb.time_windows import KdbTimeOperator
from windtunnel.oracle.profiles.stage_sources import STAGE_UNSUPPORTED, stage_sources
from windtunnel.oracle.scenario_windows import duration, window_kind

KDB_PAGE = "https://code.kx.com/insights/1.11/api/stream-processor/q/windows.html"

KDB = register(
    Profile(
        name="kdb",
        summary="kdb Insights Stream Processor windows: buffered windows triggered per published "
        "batch, one clock per stream, empty windows emitted, partial windows on teardown.",
        rules=Rules(
            close_at="reaches",
            clock_scope="stream",
            clock_moves="batch_inclusive",
            empty_windows="emit",
            end_of_input="flush",
        ),
        sources={
            "close_at": f'{KDB_PAGE}: "windows are emitted when the most recent timestamp is '
            "greater or equal to the current window's end time + allowed lateness\"",
            "clock_scope": f"{KDB_PAGE}: one operator, one current window (\"the current "
            'window\'s end time"); countTrigger counts are per key',
            "clock_moves": f'{KDB_PAGE}: "If the same pattern comes in as a single batch however, '
            'all records are included"',
            "empty_windows": f'{KDB_PAGE}: "skipEmptyWindows: Only emit non-empty windows" '
            "(default 0b)",
            "end_of_input": f'{KDB_PAGE}: "Any partial windows will be emitted on teardown."',
            "every_greater_than_size": f'{KDB_PAGE}: "Hopping windows are currently not '
            'supported."',
            "alignment": f'{KDB_PAGE}: "The first window starts at time + 60 seconds" (time is '
            "midnight: windows start on multiples of the period)",
            "late_test": f'{KDB_PAGE}: "After that, subsequent events with a timestamp within that '
            'window will be discarded." (a record is late when every window holding it was '
            "triggered)",
            "passthrough_close": f'{KDB_PAGE}: "With passthrough enabled, windows are emitted as '
            'soon as they end, and no data will be discarded due to lateness."',
            "clock_floor": f"{KDB_PAGE}: the first window holds the first batch's earliest record "
            "(no clock before it)",
            "close_order": f'{KDB_PAGE}: "the current window" (windows trigger one after the '
            "other, in time order)",
            "idle_closed_window": "not applicable to kdb: no idle_timeout option (its idle timer "
            "emits partial windows and closes nothing)",
            "idle_timer_reset": f'{KDB_PAGE}: "if the time since the last window was emitted '
            'exceeds the period" (the idle timer is per stream; the rule is for idle_timeout)',
            **{rule: "not applicable to kdb: it has no session windows (kept default)" for rule in
               ("session_gap", "session_close_at", "session_late", "closed_session",
                "session_ends")},
            "trailing_ends": "not applicable to kdb: it has no per-event windows (kept default)",
            "trailing_cadence": "not applicable to kdb: it has no per-event windows (kept default)",
            "trailing_late": "not applicable to kdb: it has no per-event windows (kept default)",
            "session_order": "not applicable to kdb: it has no session windows (kept default)",
            "timeout_closes": "not applicable to kdb (a Timeplus EMIT TIMEOUT rule; kept default)",
            "where_placement": "not applicable to kdb (an eKuiper WHERE rule; kept default)",
            "first_window": "not applicable to kdb (an eKuiper rule; kept default)",
            "hopping_first_windows": f'{KDB_PAGE}: "A window is triggered when a timestamp is '
            'encountered past the end of that window." (where windows start before the first '
            "record is not said; chosen: the earliest window holding it, K2)",
            "count_window_end": "not applicable to kdb (an eKuiper rule; kept default)",
            **{rule: "not applicable to kdb (an eKuiper rule; kept default)" for rule in
               ("hopping_layout", "session_tick_cut", "sliding_delay_end", "where_emptied")},
            "update_delay": "not applicable to kdb (a Timeplus EMIT rule; kept default)",
            "watermark_formula": f'{KDB_PAGE}: "A window is triggered when a timestamp is '
            'encountered past the end of that window." (no watermark lag; kept default)',
            "no_window_late": "not applicable to kdb: hops larger than the size are rejected "
            "(kept default)",
            "session_cap": "not applicable to kdb: it has no session windows (kept default)",
            "idle_timer_elapsed": f'{KDB_PAGE}: "if the time since the last window was emitted '
            'exceeds the period" (read as >=: the sliding example emits at three consecutive '
            "ticks, K9)",
            **stage_sources("kdb"),
        },
        kinds=("fixed", "count", "kdb_tumbling", "kdb_sliding", "kdb_count", "kdb_global",
               "kdb_timer"),
        unsupported=STAGE_UNSUPPORTED["kdb"],
    )
)

register_operator(KdbTimeWindows, profile="kdb")(KdbTimeOperator)
register_operator(FixedWindows, profile="kdb")(KdbTimeOperator)
register_operator(KdbCountWindows, profile="kdb")(KdbCountOperator)
register_operator(CountWindows, profile="kdb")(KdbCountOperator)
register_operator(KdbGlobalWindows, profile="kdb")(KdbGlobalOperator)
register_operator(KdbTimerWindows, profile="kdb")(KdbTimerOperator)


def _flag(block: Mapping[str, Any], key: str, default: bool = False) -> bool:
    value = block.get(key, default)
    if not isinstance(value, bool):
        raise InvalidScenario(f"window.{key}", value, "must be true or false", f"write {key}: true")
    return value


def _integer(block: Mapping[str, Any], key: str) -> int | None:
    value = block.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise InvalidScenario(f"window.{key}", value, "must be a whole number", f"write {key}: 10")
    return value


def _required(value: int | None, key: str, example: str) -> int:
    if value is None:
        raise InvalidScenario(f"window.{key}", None, "is required", f"add {key}: {example}")
    return value


_TIME_OPTIONS = ("period", "on", "lateness", "passthrough", "sort", "count_trigger",
                 "skip_empty_windows", "accept_dictionaries", "time_assigner")


def _time_windows(block: Mapping[str, Any], time_unit: str, sliding: bool) -> KdbTimeWindows:
    if "time_assigner" in block:  # a function: scenario files run no arbitrary code
        raise InvalidScenario("window.time_assigner", block["time_assigner"],
                              "is API-only (a function of the record)",
                              "write on: <time field>, or pass KdbTimeWindows(time_assigner=...)")
    return KdbTimeWindows(
        period_ms=_required(duration(block, "period", time_unit), "period", "10s"),
        duration_ms=_required(duration(block, "duration", time_unit), "duration", "10s")
        if sliding
        else None,
        on=block.get("on", "time"),
        lateness_ms=duration(block, "lateness", time_unit, 0) or 0,
        passthrough=_flag(block, "passthrough"),
        sort=_flag(block, "sort"),
        count_trigger=_integer(block, "count_trigger"),
        skip_empty_windows=_flag(block, "skip_empty_windows"),
        accept_dictionaries=_flag(block, "accept_dictionaries", True),
    )


@window_kind("kdb_tumbling", _TIME_OPTIONS)
def _kdb_tumbling(block: Mapping[str, Any], time_unit: str, rules: Rules) -> KdbTimeWindows:
    return _time_windows(block, time_unit, sliding=False)


@window_kind("kdb_sliding", (*_TIME_OPTIONS, "duration"))
def _kdb_sliding(block: Mapping[str, Any], time_unit: str, rules: Rules) -> KdbTimeWindows:
    return _time_windows(block, time_unit, sliding=True)


@window_kind("kdb_count", ("size", "frequency", "accept_dictionaries"))
def _kdb_count(block: Mapping[str, Any], time_unit: str, rules: Rules) -> KdbCountWindows:
    return KdbCountWindows(
        size=_required(_integer(block, "size"), "size", "10"),
        frequency=_integer(block, "frequency"),
        accept_dictionaries=_flag(block, "accept_dictionaries", True),
    )


TRIGGERS = ("split_on", "high_water_mark")
"""Built-in triggers of ``kdb_global`` in scenario files (the page's two examples)."""


@window_kind("kdb_global", ("trigger", "state", "accept_dictionaries"))
def _kdb_global(block: Mapping[str, Any], time_unit: str, rules: Rules) -> KdbGlobalWindows:
    trigger = block.get("trigger")
    fix = "write trigger: {split_on: {field: status, equals: new}} or {high_water_mark: val}"
    if not isinstance(trigger, Mapping) or len(trigger) != 1:
        raise InvalidScenario("window.trigger", trigger, "must name one built-in trigger", fix)
    (name, argument), = trigger.items()
    if name == "split_on":
        if not isinstance(argument, Mapping) or set(argument) != {"field", "equals"} or not (
            isinstance(argument["field"], str)
        ):
            raise InvalidScenario("window.trigger.split_on", argument, "needs field and equals",
                                  "write {field: status, equals: new}")
        return KdbGlobalWindows(
            split_on_value(argument["field"], argument["equals"]),
            state=block.get("state"),
            accept_dictionaries=_flag(block, "accept_dictionaries", True),
            name=f"split_on {argument['field']} = {argument['equals']!r}",
        )
    if name == "high_water_mark":
        new_high = "ends"
        if isinstance(argument, Mapping):  # {field: val, new_high: starts}
            if set(argument) - {"field", "new_high"}:
                raise InvalidScenario("window.trigger.high_water_mark", argument,
                                      "takes field and new_high", "write {field: val}")
            new_high = argument.get("new_high", "ends")
            argument = argument.get("field")
        if not isinstance(argument, str) or not argument:
            raise InvalidScenario("window.trigger.high_water_mark", argument,
                                  "must name a numeric field", "write high_water_mark: val")
        state = block.get("state", 0)
        if isinstance(state, bool) or not isinstance(state, int | float):
            raise InvalidScenario("window.state", state, "must be a number (the initial mark)",
                                  "write state: 15")
        return KdbGlobalWindows(
            high_water_mark(argument, new_high), state=state,
            accept_dictionaries=_flag(block, "accept_dictionaries", True),
            name=f"high_water_mark {argument} (new high {new_high})",
        )
    raise InvalidScenario("window.trigger", name, "unknown built-in trigger",
                          f"use one of {', '.join(TRIGGERS)}")


@window_kind("kdb_timer", ("period", "count_trigger", "skip_empty_windows",
                          "accept_dictionaries"))
def _kdb_timer(block: Mapping[str, Any], time_unit: str, rules: Rules) -> KdbTimerWindows:
    return KdbTimerWindows(
        period_ms=_required(duration(block, "period", time_unit), "period", "5s"),
        count_trigger=_integer(block, "count_trigger"),
        skip_empty_windows=_flag(block, "skip_empty_windows"),
        accept_dictionaries=_flag(block, "accept_dictionaries", True),
    )
