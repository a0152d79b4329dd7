"""The ``timeplus`` profile: its rules, the ``timeplus`` scenario kind and its operator.

Scenario kind ``timeplus``: ``{kind: timeplus, type: tumble|hop|session, size: 5s, hop: 1s,
timeout: 30s, max_size: 1m, on: event_time, emit: "AFTER WINDOW CLOSE WITH DELAY 2s"}`` (for
sessions ``timeout`` is the session timeout). The generic ``fixed`` kind runs as tumble/hop,
``session`` as session (gap = timeout, max_duration = max_size).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from windtunnel.oracle.engine import register_operator
from windtunnel.oracle.model.errors import InvalidScenario
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import FixedWindows, SessionWindows
from windtunnel.oracle.profiles import PROTON_TESTS, Profile, register
from windtunnel.oracle.profiles.stage_sources import stage_sources
from windtunnel.oracle.profiles.timeplus.operator import TimeplusOperator
from windtunnel.oracle.profiles.timeplus.spec import (
    TIMEPLUS_WINDOWS,
    EmitPolicy,
    TimeplusWindows,
    parse_emit,
)
from windtunnel.oracle.scenario_windows import duration, window_kind

TIMEPLUS_PAGE = "https://docs.timeplus.com/tumble-aggregation"

TIMEPLUS = register(
    Profile(
        name="timeplus",
        summary="Timeplus (Proton) streaming SQL windows: a per-stream watermark advanced per "
        "inserted batch, EMIT policies, empty windows never emitted, nothing flushed at end.",
        rules=Rules(
            close_at="reaches",
            clock_scope="stream",
            clock_moves="batch_inclusive",
            empty_windows="skip",
            end_of_input="discard",
            session_gap="exclusive",
            session_order="merge",
            session_close_at="reaches",
            session_ends="gap",
            every_greater_than_size="reject",
            timeout_closes="latest",
            where_null_equals="unknown",
        ),
        sources={
            "close_at": f'{PROTON_TESTS}: "With delay D a window closes when max_ts - D >= end '
            '(equality included)."',
            "clock_scope": f'{TIMEPLUS_PAGE}: "A watermark is an internal timestamp that advances '
            'monotonically per stream"',
            "clock_moves": f'{PROTON_TESTS}: "The watermark advances per inserted batch: '
            'out-of-order records inside one batch are never late."',
            "empty_windows": f'{PROTON_TESTS}: "Empty windows are not emitted"',
            "end_of_input": f'{PROTON_TESTS}: "nothing is flushed at end of input" (the page '
            "is silent)",
            "session_gap": f'{PROTON_TESTS}: "a gap exactly equal to the timeout appears to '
            'split the session"',
            "every_greater_than_size": f'{PROTON_TESTS}: "a hop larger than the size is '
            'rejected"',
            "session_close_at": f'{PROTON_TESTS}: "With delay D a window closes when '
            'max_ts - D >= end (equality included)" (a session\'s end is last + timeout)',
            "session_ends": f'{PROTON_TESTS}: "a closed one last + timeout, or start + '
            'max_size when the size cap closed it"',
            "timeout_closes": f'{TIMEPLUS_PAGE}: "Timeplus will force-close the most recent window"'
            f' (the engine flushes all: {PROTON_TESTS})',
            "alignment": f'{PROTON_TESTS}: "Week windows start on Monday; ... sub-day sizes '
            'are epoch-aligned."',
            "late_test": f'{TIMEPLUS_PAGE}: "Any late events that belong to this now-closed window '
            'will be discarded." (late per window: a hop window still open takes the event)',
            "clock_floor": f'{TIMEPLUS_PAGE}: "A watermark is an internal timestamp that advances '
            'monotonically" (none before the first insert)',
            "idle_closed_window": f'{TIMEPLUS_PAGE}: EMIT TIMEOUT: "Any late events that belong '
            'to this now-closed window will be discarded."',
            "idle_timer_reset": f'{TIMEPLUS_PAGE}: "If no new events arrive for 3 seconds" (any '
            "event of the stream; the rule's values are per window or per key: kept default)",
            "close_order": f'{TIMEPLUS_PAGE}: "Each time a window closes (as determined by the '
            'internal watermark)" (windows closed together come out in time order)',
            "session_late": f"{PROTON_TESTS}: sessions close by the watermark like windows; an "
            "event whose own session would be closed is discarded",
            "closed_session": f'{TIMEPLUS_PAGE}: "Any late events that belong to this now-closed '
            'window will be discarded."',
            "trailing_ends": "not applicable to timeplus: no per-event windows (kept default)",
            "trailing_cadence": "not applicable to timeplus: no per-event windows (kept default)",
            "trailing_late": "not applicable to timeplus: no per-event windows (kept default)",
            "session_order": f'{PROTON_TESTS}: "Sessions: an open session reports window_end = '
            "max_ts + 1 ms; a closed one last + timeout\" (spans that grow with events and "
            "close by the watermark; how out-of-order events join is not measured: the merging "
            "model the other session rules of this profile describe, kept)",
            "passthrough_close": "not applicable to timeplus (a kdb+ rule; kept default)",
            "where_placement": "not applicable to timeplus (an eKuiper WHERE rule; kept default)",
            "first_window": "not applicable to timeplus (an eKuiper rule; kept default)",
            "hopping_first_windows": "not applicable to timeplus (an eKuiper rule; kept default)",
            "count_window_end": "not applicable to timeplus (an eKuiper rule; kept default)",
            **{rule: "not applicable to timeplus (an eKuiper rule; kept default)" for rule in
               ("hopping_layout", "session_tick_cut", "sliding_delay_end", "where_emptied")},
            "idle_timer_elapsed": "not applicable to timeplus (a kdb+ timer rule; kept default)",
            "watermark_formula": f'{PROTON_TESTS}: "With delay D a window closes when max_ts - D '
            '>= end" (no extra millisecond; kept default)',
            "no_window_late": "not applicable to timeplus: a hop larger than the size is rejected "
            "(kept default)",
            "session_cap": "not applicable to timeplus: its own operator applies max_size "
            "(kept default)",
            "update_delay": f'{TIMEPLUS_PAGE}: "Similar to EMIT ON UPDATE, but includes a delay '
            'to allow late events before emitting incremental updates." (whether the updates '
            "wait is not said; chosen: they do not, the delay moves the watermark, TP7)",
            **stage_sources("timeplus"),
        },
        kinds=("fixed", "session", "timeplus"),
    )
)

register_operator(TimeplusWindows, profile="timeplus")(TimeplusOperator)
register_operator(FixedWindows, profile="timeplus")(TimeplusOperator)
register_operator(SessionWindows, profile="timeplus")(TimeplusOperator)


@window_kind("timeplus", ("type", "size", "hop", "timeout", "max_size", "on", "emit"))
def _timeplus(block: Mapping[str, Any], time_unit: str, rules: Rules) -> TimeplusWindows:
    window = block.get("type", "tumble")
    if window not in TIMEPLUS_WINDOWS:
        raise InvalidScenario("window.type", window, "unknown Timeplus window",
                              f"use one of {', '.join(TIMEPLUS_WINDOWS)}")
    key = "timeout" if window == "session" else "size"
    size = duration(block, key, time_unit)
    if size is None:
        raise InvalidScenario(f"window.{key}", None, f"is required for {window} windows",
                              f"add {key}: 5s")
    emit = block.get("emit")
    return TimeplusWindows(
        window,
        size,
        on=block.get("on", "_tp_time"),
        hop_ms=duration(block, "hop", time_unit),
        max_size_ms=duration(block, "max_size", time_unit),
        emit=EmitPolicy() if emit is None else parse_emit(emit),
    )
