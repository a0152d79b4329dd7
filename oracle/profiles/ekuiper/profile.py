"""The ``ekuiper`` profile: its rules, the ``ekuiper`` scenario kind and its operators.

Scenario kind ``ekuiper``: ``{kind: ekuiper, type: tumbling|hopping|sliding|session|count,
unit: ss, size: 10, hop: 5, delay: 2, timeout: 2, max_duration: 10, count: 5, interval: 2,
on: ts, lateness: 1s, timezone: UTC, filter: "x > 1", where: "...", having: "...",
when: "..."}``. Plain numbers for size, hop, delay, timeout and max_duration are in ``unit``
(as in ``TUMBLINGWINDOW(ss, 10)``); ``on`` absent means processing time (``now()``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from windtunnel.oracle.engine import register_operator
from windtunnel.oracle.model.conditions import Condition, parse_condition
from windtunnel.oracle.model.errors import InvalidScenario
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import (
    NOW,
    CountWindows,
    FixedWindows,
    Query,
    SessionWindows,
    TrailingCountWindows,
    TrailingWindows,
)
from windtunnel.oracle.model.timeparse import parse_duration_ms
from windtunnel.oracle.profiles import EKUIPER_SOURCE, Profile, register
from windtunnel.oracle.profiles.ekuiper.operator import EkuiperOperator, GridOperator, as_ekuiper
from windtunnel.oracle.profiles.ekuiper.spec import EKUIPER_UNITS_MS, EkuiperWindows, unit_of
from windtunnel.oracle.profiles.ekuiper.windows import (
    CountOperator,
    SessionOperator,
    SlidingOperator,
)
from windtunnel.oracle.profiles.stage_sources import STAGE_UNSUPPORTED, stage_sources
from windtunnel.oracle.scenario_windows import duration, window_kind
from windtunnel.oracle.windows.driver import Context, Operator

EKUIPER_PAGE = "https://ekuiper.org/docs/en/latest/sqls/windows.html"
EKUIPER_GITHUB = "https://github.com/lf-edge/ekuiper/blob/master"
EKUIPER_NODE = f"{EKUIPER_GITHUB}/internal/topo/node"

EKUIPER = register(
    Profile(
        name="ekuiper",
        summary="LF Edge eKuiper SQL windows: processing time by default, natural-time alignment "
        "in a time zone, per-record late test, empty windows emitted, nothing flushed at end.",
        rules=Rules(
            close_at="reaches",
            late_test="record",
            clock_scope="stream",
            empty_windows="emit",
            end_of_input="discard",
            every_greater_than_size="accept",
            session_gap="inclusive",
            session_ends="gap",
            where_placement="after",
            first_window="aligned",
            hopping_first_windows="all",
            count_window_end="none",
            hopping_layout="ends",
            session_tick_cut="after_first_record",
            sliding_delay_end="closed",
            where_emptied="nothing",
            trailing_late="none",
            trailing_cadence="since_last",
        ),
        sources={
            "close_at": f'{EKUIPER_SOURCE}: "A window fires when the watermark reaches its end."',
            "late_test": f'{EKUIPER_SOURCE}: "a record with ts < watermark is dropped on arrival '
            'even when its window is still open (ts == watermark is kept)"',
            "clock_scope": f'{EKUIPER_PAGE}: "You use the window functions in the GROUP BY clause" '
            "(one window over the stream; GROUP BY keys split its rows)",
            "empty_windows": f'{EKUIPER_SOURCE}: "Empty time windows are emitted as empty '
            'results."',
            "end_of_input": f'{EKUIPER_SOURCE}: "No flush at end of input: open windows are lost '
            'when the source ends."',
            "every_greater_than_size": f'{EKUIPER_SOURCE}: "A hop larger than the size is '
            'accepted (gapped windows)"',
            "session_gap": f'{EKUIPER_SOURCE}: "split when next - previous > timeout (equal gap '
            'stays in the session)"',
            "session_ends": f'{EKUIPER_SOURCE}: "window_end is last + timeout or the tick"',
            "where_placement": f'{EKUIPER_PAGE}: "Unlike where clause, the filter clause runs '
            f'before the window partitioning." (per kind in the engine: {EKUIPER_SOURCE})',
            "first_window": f'{EKUIPER_PAGE}: "The time intervals will align to the nature time." '
            f"(the engine's first event-time window differs: {EKUIPER_SOURCE})",
            "hopping_first_windows": f'{EKUIPER_PAGE}: "It may be easy to think of them as '
            'Tumbling windows that can overlap, so events can belong to more than one Hopping '
            f"window result set.\" (the engine's incremental operator differs: {EKUIPER_SOURCE})",
            "count_window_end": f'{EKUIPER_PAGE}: "Please notice that the count window does not '
            f"concern time, it only concern about events count.\" (the engine reports the "
            f"trigger's wall time: {EKUIPER_SOURCE})",
            "alignment": f'{EKUIPER_PAGE}: "a 10 second time window will always end at each 10s '
            'second ... A day window will always end in 24:00 local time."',
            "clock_moves": f'{EKUIPER_SOURCE}: "Late handling is per record: the watermark is '
            "... each stream's max timestamp minus the lateness tolerance\"",
            "clock_floor": f'{EKUIPER_PAGE}: "In event time mode, the watermark algorithm is used" '
            "(no watermark before the first record)",
            "session_close_at": f'{EKUIPER_PAGE}: "if no events occur within the timeout, then the '
            'window is closed at the timeout" (an event exactly at the timeout still joins)',
            "session_late": f"{EKUIPER_SOURCE}: the late test is per record (rule late_test), "
            "so session lateness is never asked (kept default)",
            "closed_session": f"{EKUIPER_SOURCE}: the late test is per record (kept default)",
            "close_order": f'{EKUIPER_PAGE}: "All the windowing operations output results at the '
            'end of the window." (in time order)',
            "idle_closed_window": "not applicable to ekuiper: no idle_timeout (kept default)",
            "idle_timer_reset": "not applicable to ekuiper: no idle_timeout (kept default)",
            "trailing_ends": f'{EKUIPER_SOURCE}: "Sliding windows cover [t - size, t], closed '
            'at both ends"',
            "trailing_cadence": "not applicable to ekuiper: SLIDINGWINDOW has no every (kept "
            "default)",
            "passthrough_close": "not applicable to ekuiper (a kdb+ rule; kept default)",
            "idle_timer_elapsed": "not applicable to ekuiper (a kdb+ timer rule; kept default)",
            "update_delay": "not applicable to ekuiper (a Timeplus EMIT rule; kept default)",
            "hopping_layout": f'{EKUIPER_PAGE}: "a 10 second time window will always end at '
            'each 10s second such as 10, 20 or 30" (windows are placed by their ends; so does '
            f'the engine: {EKUIPER_NODE}/event_window_trigger.go, getAlignedWindowEndTime)',
            "session_tick_cut": f'{EKUIPER_PAGE}: "A session window begins when the first event '
            'occurs." "the checks on if the window exceed maximum duration will happen at t = 0, '
            f'10, 20, 30" (exceed: strictly; the engine: {EKUIPER_NODE}/event_window_trigger.go, '
            "getNextSessionWindow: tick.Add(-duration).After(et))",
            "sliding_delay_end": f"{EKUIPER_NODE}/window_v2_event_op.go: the current delayed "
            "sliding window includes t + delay (the page is silent; the older window_op.go "
            "handleInputs keeps ts < t + delay)",
            "where_emptied": f"{EKUIPER_GITHUB}/internal/topo/operator/filter_operator.go: "
            '"Only return if any row meets the condition, otherwise filter all" (the page is '
            "silent)",
            "watermark_formula": f'{EKUIPER_SOURCE}: "the watermark is the minimum over input '
            "streams of each stream's max timestamp minus the lateness tolerance\"",
            "no_window_late": "not applicable to ekuiper: its own operator has no gapped-window "
            "drop (kept default)",
            "session_cap": "not applicable to ekuiper: its own operator cuts sessions at grid "
            "ticks (kept default)",
            "session_order": "not applicable to ekuiper: its own session operator applies "
            "(kept default)",
            "trailing_late": f'{EKUIPER_SOURCE}: "a record with ts < watermark is dropped on '
            "arrival even when its window is still open\" (lateness is the per-record test, "
            "rule late_test; a sliding window itself drops nothing)",
            "timeout_closes": "not applicable to ekuiper (a Timeplus EMIT TIMEOUT rule; kept "
            "default)",
            **stage_sources("ekuiper"),
        },
        kinds=("fixed", "session", "count", "trailing", "ekuiper"),
        unsupported=STAGE_UNSUPPORTED["ekuiper"],
    )
)

_OPERATORS: dict[str, type[EkuiperOperator]] = {
    "tumbling": GridOperator,
    "hopping": GridOperator,
    "sliding": SlidingOperator,
    "session": SessionOperator,
    "count": CountOperator,
}


def ekuiper_operator(query: Query, ctx: Context) -> Operator:
    """The operator for an eKuiper window spec (or a generic fixed spec)."""
    return _OPERATORS[as_ekuiper(query.window).window](query, ctx)


register_operator(EkuiperWindows, profile="ekuiper")(ekuiper_operator)
register_operator(FixedWindows, profile="ekuiper")(ekuiper_operator)
register_operator(SessionWindows, profile="ekuiper")(ekuiper_operator)
register_operator(CountWindows, profile="ekuiper")(ekuiper_operator)
register_operator(TrailingWindows, profile="ekuiper")(ekuiper_operator)
register_operator(TrailingCountWindows, profile="ekuiper")(ekuiper_operator)  # rejected

_KEYS = ("type", "unit", "size", "hop", "delay", "timeout", "max_duration", "count", "interval",
         "on", "lateness", "timezone", "filter", "where", "having", "when")


def _length(block: Mapping[str, Any], key: str, unit: str) -> int | None:
    value = block.get(key)
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value * EKUIPER_UNITS_MS[unit]
    return parse_duration_ms(value, f"window.{key}")


def _condition(block: Mapping[str, Any], key: str) -> Condition | None:
    text = block.get(key)
    return None if text is None else parse_condition(text, f"window.{key}")


@window_kind("ekuiper", _KEYS)
def _ekuiper(block: Mapping[str, Any], time_unit: str, rules: Rules) -> EkuiperWindows:
    window = block.get("type")
    if window is None:
        raise InvalidScenario("window.type", None, "is required",
                              "add type: tumbling (or hopping, sliding, session, count)")
    unit = unit_of(block.get("unit", "ss"), "window.unit")
    count = block.get("count")
    interval = block.get("interval")
    for key, value in (("count", count), ("interval", interval)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise InvalidScenario(f"window.{key}", value, "must be a whole number",
                                  f"write {key}: 5")
    timezone = block.get("timezone", "UTC")
    if not isinstance(timezone, str):
        raise InvalidScenario("window.timezone", timezone, "must be a zone name", "write UTC")
    return EkuiperWindows(
        window,
        unit=unit,
        size_ms=_length(block, "size", unit),
        hop_ms=_length(block, "hop", unit),
        delay_ms=_length(block, "delay", unit) or 0,
        timeout_ms=_length(block, "timeout", unit),
        max_duration_ms=_length(block, "max_duration", unit),
        count=count,
        interval=interval,
        on=block.get("on", NOW),
        lateness_ms=duration(block, "lateness", time_unit, 0) or 0,
        timezone=timezone,
        filter=_condition(block, "filter"),
        where=_condition(block, "where"),
        having=_condition(block, "having"),
        when=_condition(block, "when"),
    )
