"""The profiles that are data only: ``tenzir`` (the default), ``flink`` and ``spark``.

They run on the shared window kinds (``windtunnel.oracle.windows``) with other rule
values; engines with operators of their own live in the subpackages beside this module.
"""

from __future__ import annotations

from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.profiles.registry import (
    ARTICLE,
    FLINK_MEASURED,
    FLINK_SOURCE,
    FLINK_WATERMARKS,
    SPARK,
    TENZIR_PAGE,
    TENZIR_TESTS,
    Profile,
    register,
)
from windtunnel.oracle.profiles.stage_sources import stage_sources


def _other_engines(engine: str) -> dict[str, str]:
    """Sources for the rules of the engines with operators of their own (kdb+, Timeplus,
    eKuiper), which ``engine`` keeps at their defaults: no such behaviour there."""
    return {
        "passthrough_close": f"not applicable to {engine} (a kdb+ rule; kept default)",
        "timeout_closes": f"not applicable to {engine} (a Timeplus EMIT TIMEOUT rule; kept default)",
        "where_placement": f"not applicable to {engine} (an eKuiper WHERE rule; kept default)",
        "first_window": f"not applicable to {engine} (an eKuiper rule; kept default)",
        "hopping_first_windows": f"not applicable to {engine} (an eKuiper rule; kept default)",
        "count_window_end": f"not applicable to {engine} (an eKuiper rule; kept default)",
        **{rule: f"not applicable to {engine} (an eKuiper rule; kept default)"
           for rule in ("hopping_layout", "session_tick_cut", "sliding_delay_end",
                        "where_emptied")},
        "idle_timer_elapsed": f"not applicable to {engine} (a kdb+ timer rule; kept default)",
        "update_delay": f"not applicable to {engine} (a Timeplus EMIT rule; kept default)",
    }


TENZIR = Profile(
    name="tenzir",
    summary="Tenzir's window operator (the default): per-event clock per key, partial delivery.",
    rules=Rules(),
    sources={
        "close_at": f'{TENZIR_PAGE}: "A window closes once the clock reaches its end plus tolerance."',
        "late_test": f'{TENZIR_PAGE}: "it is only reported as dropped when *all* of its target windows '
        'have already closed."',
        "clock_scope": f'{TENZIR_PAGE}: "Each key advances its own event-time clock"',
        "clock_moves": f'{TENZIR_PAGE}: "Events are processed in stream order, independent of how '
        'they are grouped into batches"',
        "clock_floor": f'{TENZIR_PAGE}: "The current time is the largest timestamp observed so far" '
        "(no clock before the first event)",
        "idle_closed_window": f'{TENZIR_PAGE}: "Late events—those for a window that has already '
        'closed—are dropped with a warning." (ambiguous; see docs/semantics.md)',
        "idle_timer_reset": f'{TENZIR_PAGE}: "without receiving a new event" (ambiguous)',
        "close_order": f'{TENZIR_PAGE}: "Windows are usually closed in window-time order"',
        "empty_windows": f'{TENZIR_PAGE}: "The operator does not emit empty windows."',
        "end_of_input": f'{TENZIR_PAGE}: "When the input ends, all open windows are closed."',
        "alignment": f'{TENZIR_PAGE}: "Window boundaries are aligned to the Unix epoch."',
        "every_greater_than_size": f'{TENZIR_PAGE}: "`every` must not be greater than `size`."',
        "session_gap": f"{TENZIR_TESTS}: \"gap equality is inclusive, i.e. two events exactly "
        'gap apart are one session"',
        "session_close_at": f'{TENZIR_TESTS}: "a session is finalized when the clock is strictly '
        'past last + gap + tolerance"',
        "session_late": f"{TENZIR_PAGE}: \"an event is late when an earlier event already advanced "
        'the clock to the close point of its window" (its window: its own session; ambiguous)',
        "closed_session": f'{TENZIR_PAGE}: "Late events—those for a window that has already '
        'closed—are dropped with a warning."',
        "session_ends": f"{TENZIR_TESTS}: Tenzir sessions are bounded by their events (the bounds are "
        f"not stated; the article prints [first, last], {ARTICLE})",
        "trailing_ends": f'{TENZIR_TESTS}: "one window per event covering the inclusive '
        'interval [t - size, t]"',
        "trailing_cadence": f'{TENZIR_TESTS}: "optionally on an every cadence"; Tenzir 6.20.0, '
        "measured (docs/semantics.md T3): the first event starts the cadence without firing",
        "session_cap": f'{TENZIR_TESTS}: "an optional cap given as a duration" (its comparison '
        "is not described; chosen: [first, first + d) like a fixed window, S6)",
        "session_order": "Tenzir 6.20.0, measured (docs/semantics.md S1): gap 10s, size=2s, "
        "events 0, 3000, 4000 give the sessions [0, 0] and [3000, 4000]",
        "trailing_late": "Tenzir 6.20.0, measured (docs/semantics.md T3): size=10s, "
        "trailing=true, events 12241, 8934 drop 8934 as late",
        "watermark_formula": f'{TENZIR_PAGE}: "A window closes once the clock reaches its end '
        'plus tolerance." (the watermark is the clock minus tolerance)',
        "no_window_late": f'{TENZIR_PAGE}: "`every` must not be greater than `size`." (no '
        "gaps; kept default)",
        **_other_engines("Tenzir"),
        **stage_sources("tenzir"),
    },
    kinds=("fixed", "session", "count", "trailing"),
)

FLINK = Profile(
    name="flink",
    summary="Apache Flink event-time windows: forBoundedOutOfOrderness(tolerance) as a per-event "
    "watermark (max event time - tolerance - 1 ms) shared by the stream; windows fire at end - 1 "
    "ms; sessions merge; allowed_lateness gives late firings.",
    rules=Rules(
        close_at="max_timestamp",
        late_test="window",
        clock_scope="stream",
        clock_moves="event",
        session_gap="inclusive",
        session_order="merge",
        session_close_at="max_timestamp",
        session_late="merged",
        closed_session="new_session",
        session_ends="gap",
        every_greater_than_size="accept",
        watermark_formula="bounded_out_of_orderness",
        no_window_late="late",
        where_null_equals="unknown",
        filtered_clock="moves",
        duplicate_clock="moves",
    ),
    sources={
        "watermark_formula": f'{FLINK_WATERMARKS}: "output.emitWatermark(new Watermark('
        'maxTimestamp - outOfOrdernessMillis - 1));"',
        "no_window_late": f"{FLINK_SOURCE}: \"if (isSkippedElement && isElementLate(element))\" "
        "sends an element no window took to the late side output; an element in no window is "
        f"skipped too ({FLINK_MEASURED})",
        "close_at": f'{FLINK_SOURCE}: "A window fires when the watermark reaches end - 1 ms (its '
        'max timestamp)."',
        "late_test": f'{FLINK_SOURCE}: "late sliding elements go to their still-open windows"',
        "clock_scope": f"{ARTICLE}: \"the runtime cannot trigger 'all keys close their session at "
        "19:30'\" concerns timers; the watermark itself is per stream (Flink: per parallel "
        "instance, the minimum over inputs)",
        "clock_moves": "a punctuated watermark per event (Flink's periodic watermarks move every "
        "200 ms of processing time instead: use clock_moves: batch_inclusive with batches)",
        "clock_floor": "no watermark before the first event (Long.MIN_VALUE)",
        "idle_closed_window": "Flink has no idle_timeout on windows (kept default)",
        "idle_timer_reset": "Flink has no idle_timeout on windows (kept default)",
        "close_order": "window-time order (timers fire in timestamp order)",
        "empty_windows": f"{ARTICLE}: windows exist only for events (\"the window assigner is a "
        'pure function of event time")',
        "end_of_input": "a bounded source ends with the maximum watermark, which fires every "
        "window",
        "alignment": f'{ARTICLE}: "w_start = (e.ts // size) * size" (epoch-aligned; Flink does '
        "not clamp sliding windows at 0, unlike the article's code)",
        "every_greater_than_size": "Flink's SlidingEventTimeWindows.of only requires size > 0 and "
        "|offset| < slide (not in the pages)",
        "session_gap": f'{ARTICLE}: "if e.ts - sessions[idx][2] <= gap" and Flink\'s '
        "TimeWindow.intersects (start <= other.end && end >= other.start)",
        "session_close_at": f'{FLINK_SOURCE}: "A window fires when the watermark reaches end - 1 '
        'ms"; a session window is [first, last + gap)',
        "session_late": f'{FLINK_SOURCE}: "An element is late only if every window it belongs to '
        'after session merging satisfies maxTimestamp + allowedLateness <= watermark"',
        "closed_session": f'{FLINK_SOURCE}: "An element overlapping a session that already fired '
        'and was cleaned up starts a new session."',
        "session_ends": f"{ARTICLE}: \"(user_id, session_start) -> (session_end, aggregate)\"; "
        "Flink's TimeWindow(first, last + gap)",
        "trailing_ends": "not applicable (Flink has no trailing windows)",
        "trailing_cadence": "not applicable (Flink has no trailing windows)",
        "session_cap": "not applicable (Flink sessions have no caps)",
        "session_order": f'{FLINK_SOURCE}: "An element is late only if every window it belongs to '
        'after session merging satisfies maxTimestamp + allowedLateness <= watermark" (sessions '
        "merge: EventTimeSessionWindows is a MergingWindowAssigner)",
        "trailing_late": "not applicable (Flink has no trailing windows)",
        **_other_engines("Flink"),
        **stage_sources("flink"),
    },
    kinds=("fixed", "session", "cumulate"),
    unsupported={
        "idle_timeout": "Flink windows close only by the watermark",
        "max_duration": "Flink's session windows have no cap",
        "max_events": "Flink's session windows have no cap",
    },
    options=("allowed_lateness",),
)

SPARK_PROFILE = Profile(
    name="spark",
    summary="Stock Spark Structured Streaming (withWatermark + window/session_window, append "
    "mode): global per-micro-batch watermark from the previous batches, nothing at end of input.",
    rules=Rules(
        close_at="reaches",
        late_test="window",
        clock_scope="stream",
        clock_moves="batch",
        clock_floor="epoch",
        end_of_input="discard",
        session_gap="inclusive",
        session_order="merge",
        session_close_at="reaches",
        session_late="own",
        closed_session="new_session",
        session_ends="gap",
        where_null_equals="unknown",
        filtered_clock="pushdown",
        duplicate_clock="moves",
        dedup_expiry="watermark",
        dedup_late="drop",
    ),
    sources={
        "close_at": f'{SPARK}: "Append mode emits (and update mode evicts) a window in batch N iff '
        'window.end <= wm_N."',
        "late_test": f'{SPARK}: "a row is dropped for a window iff window.end <= lateWm_N ... for '
        'hopping windows the test is per window instance, so partial delivery happens."',
        "clock_scope": f'{SPARK}: "global across all keys and partitions"',
        "clock_moves": f'{SPARK}: "wm_N = max(wm_{{N-1}}, max_event_time(batches 0..N-1) - delay)'
        '" and "lateWm_N is the previous batch\'s watermark"',
        "clock_floor": f'{SPARK}: "starting at 0"',
        "idle_closed_window": f'{SPARK}: "There is no idle timeout" (kept default)',
        "idle_timer_reset": f'{SPARK}: "There is no idle timeout" (kept default)',
        "close_order": f'{SPARK}: "Order inside a micro-batch does not matter" (window-time order '
        "chosen for output)",
        "empty_windows": "Spark aggregates only rows that exist: no empty windows",
        "end_of_input": f'{SPARK}: "windows still open after that are never emitted (no flush at end '
        'of input)"',
        "alignment": "window() starts are multiples of the slide from the epoch",
        "every_greater_than_size": "window() requires slideDuration <= windowDuration",
        "session_gap": f'{SPARK}: "session gap equality is inclusive (events 35 and 40 with gap 5 '
        'merge)"',
        "session_close_at": f'{SPARK}: "Sessions use last_event + gap as their end."',
        "session_late": f'{SPARK}: "Late drop compares the window end": a row\'s own session '
        "window [t, t + gap) against the previous batch's watermark",
        "closed_session": f'{SPARK}: "a late row can merge backwards into an open session"; '
        "an evicted session is gone from the state store, so a row touching it starts a new one",
        "session_ends": f'{SPARK}: "Sessions use last_event + gap as their end."',
        "trailing_ends": "not applicable (Spark has no trailing windows)",
        "trailing_cadence": "not applicable (Spark has no trailing windows)",
        "session_cap": "not applicable (Spark sessions have no caps)",
        "session_order": f'{SPARK}: "a late row can merge backwards into an open session"',
        "trailing_late": "not applicable (Spark has no trailing windows)",
        "watermark_formula": f'{SPARK}: "wm_N = max(wm_{{N-1}}, max_event_time(batches '
        '0..N-1) - delay)"',
        "no_window_late": "window() requires slideDuration <= windowDuration (no gaps; kept "
        "default)",
        **_other_engines("Spark"),
        **stage_sources("spark"),
    },
    kinds=("fixed", "session"),
    unsupported={
        "idle_timeout": f'{SPARK}: "There is no idle timeout"',
        "max_duration": "session_window() has no cap",
        "max_events": "session_window() has no cap",
        "pass_through": "stock Spark windows only exist inside an aggregation",
        "ungrouped_session": f'{SPARK}: "Global session windows without another key are rejected."',
        "session_update": f"{SPARK}: \"Invalid streaming output mode: update. This output mode is "
        'not supported for session window streaming aggregations"',
    },
    output_modes=("append", "update", "complete"),
)

for _profile in (TENZIR, FLINK, SPARK_PROFILE):
    register(_profile)
