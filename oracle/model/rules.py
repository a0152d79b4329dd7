"""Semantic rules: the explicit, named choices an engine makes about windows.

A :class:`Rules` value fixes every choice; a profile (``oracle/profiles/``) is a named
``Rules`` with a source for each rule. Each rule's values, default reading and alternative
are documented in docs/semantics.md; :data:`RULE_DOCS` says in one line what each rule
decides. The rules are grouped by what they decide: closing and lateness, the event-time
clock, the window layout, idle timeouts, end of input, sessions, trailing windows, stages
before the window, then the rules of the engines with operators of their own (kdb+,
Timeplus, eKuiper).

Clock vocabulary used below: ``c`` is the event-time clock (the largest event time
seen, per key or per stream), ``tolerance`` the window's tolerance (a watermark
delay in Flink and Spark terms: watermark = c - tolerance).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Final

from windtunnel.oracle.model.errors import InvalidSpec

RULE_VALUES: Final[dict[str, tuple[str, ...]]] = {
    # closing and lateness
    "close_at": ("reaches", "passes", "max_timestamp"),
    "late_test": ("window", "record"),
    "close_order": ("window_time", "opened"),
    "no_window_late": ("no_window", "late"),
    # the event-time clock
    "clock_scope": ("key", "stream"),
    "clock_moves": ("event", "batch", "batch_inclusive"),
    "clock_floor": ("none", "epoch"),
    "watermark_formula": ("minus_tolerance", "bounded_out_of_orderness"),
    # window layout
    "alignment": ("epoch", "epoch_from_zero"),
    "every_greater_than_size": ("reject", "accept"),
    "empty_windows": ("skip", "emit"),
    # idle timeout
    "idle_closed_window": ("late", "reopen"),
    "idle_timer_reset": ("delivered", "any_event"),
    # end of input
    "end_of_input": ("flush", "discard"),
    # sessions
    "session_order": ("reorder", "merge"),
    "session_gap": ("inclusive", "exclusive"),
    "session_close_at": ("passes", "reaches", "max_timestamp"),
    "session_late": ("own", "merged"),
    "closed_session": ("late", "new_session"),
    "session_ends": ("events", "gap"),
    "session_cap": ("reaches", "passes"),
    # trailing windows
    "trailing_ends": ("closed", "left_open"),
    "trailing_cadence": ("from_first", "since_last", "grid"),
    "trailing_late": ("clock", "none"),
    # stages before the window
    "where_null_equals": ("compared", "unknown"),
    "filtered_clock": ("ignored", "moves", "pushdown"),
    "duplicate_clock": ("ignored", "moves"),
    "dedup_expiry": ("wall", "watermark"),
    "dedup_late": ("keep", "drop"),
    # kdb+
    "passthrough_close": ("end", "lateness"),
    "idle_timer_elapsed": ("reaches", "passes"),
    # Timeplus
    "timeout_closes": ("latest", "all"),
    "update_delay": ("immediate", "delayed"),
    # eKuiper
    "where_placement": ("after", "per_kind"),
    "first_window": ("aligned", "first_event"),
    "hopping_first_windows": ("all", "from_first_hop"),
    "count_window_end": ("none", "trigger_wall"),
    "hopping_layout": ("starts", "ends"),
    "session_tick_cut": ("lasted", "after_first_record"),
    "sliding_delay_end": ("closed", "open"),
    "where_emptied": ("emit", "nothing"),
    # Beam (its operator only: RULE_OWNERS)
    "beam_watermark": ("max_event_time", "injected"),
    "beam_expiry": ("passes", "reaches"),
    "beam_processing_time": ("engine", "guide"),
}

RULE_OWNERS: Final[dict[str, str]] = {
    "beam_watermark": "beam",
    "beam_expiry": "beam",
    "beam_processing_time": "beam",
}
"""Rules only one profile's operator reads: every other profile keeps their default (a
changed value there is an input error) and cites them as not applicable."""

RULE_DOCS: Final[dict[str, str]] = {
    # closing and lateness
    "close_at": "a fixed window [s, e) closes when c >= e + tolerance (reaches), c > e + tolerance "
    "(passes), or c >= e - 1 ms + tolerance (max_timestamp, Flink's window.maxTimestamp())",
    "late_test": "an event is late per target window, delivered to those still open (window), "
    "or per record when its time is behind the watermark c - tolerance (record)",
    "close_order": "windows closed by one step come out in window-time order (window_time) or in "
    "the order they were opened (opened)",
    "no_window_late": "an event in no window (between gapped windows, or before 0) is dropped as "
    "no_window (no_window), or as late when it is also behind the watermark (late: Flink sends "
    "it to the late side output, isElementLate)",
    # the event-time clock
    "clock_scope": "one event-time clock per group_by key (key) or one for the whole stream (stream)",
    "clock_moves": "the clock moves with each event (event); per batch, counting only the previous "
    "batches, with the late test one batch behind (batch, Spark micro-batches); or per batch "
    "including it, the late test against the clock before the batch (batch_inclusive)",
    "clock_floor": "the clock starts unset (none) or at the epoch: watermark 0 before any event "
    "(epoch, Spark)",
    "watermark_formula": "the watermark is c - tolerance (minus_tolerance: Tenzir's close point, "
    "Spark, Flink SQL's WATERMARK FOR ts AS ts - INTERVAL) or c - tolerance - 1 ms "
    "(bounded_out_of_orderness: Flink's WatermarkStrategy.forBoundedOutOfOrderness(tolerance))",
    # window layout
    "alignment": "fixed windows start at multiples of the hop from the Unix epoch (epoch), "
    "none before 0 (epoch_from_zero, the article's sliding code)",
    "every_greater_than_size": "a hop larger than the size is an error (reject) or gives gapped "
    "windows (accept)",
    "empty_windows": "windows without events are not emitted (skip) or emitted empty (emit)",
    # idle timeout
    "idle_closed_window": "an event for a window idle_timeout force-closed is late (late) or opens "
    "it again (reopen)",
    "idle_timer_reset": "a window's idle timer restarts when an event is delivered to it "
    "(delivered) or on any event of its key (any_event)",
    # end of input
    "end_of_input": "open windows are emitted at end of input (flush) or lost (discard)",
    # sessions
    "session_order": "sessions sit behind a per-key reorder buffer, one open session per key, late "
    "before clock - tolerance or the last released event (reorder, Tenzir 6.20), or out-of-order "
    "events join, extend and merge open sessions (merge; session_late, closed_session, "
    "session_cap, idle_closed_window and batch clocks apply only then)",
    "session_gap": "two events exactly gap apart are one session (inclusive) or two (exclusive)",
    "session_close_at": "a session is final when c > last + gap + tolerance (passes), "
    "c >= last + gap + tolerance (reaches), or c >= last + gap - 1 ms + tolerance (max_timestamp)",
    "session_late": "an event is late when its own one-event session would already be final (own), "
    "or only when the session it forms after merging with open sessions would be (merged)",
    "closed_session": "an event that would join a session already emitted is late (late) or "
    "starts a new session (new_session)",
    "session_ends": "a session reports [first, last] event times, both included (events), or "
    "[first, last + gap), end excluded (gap)",
    "session_cap": "a session's max_duration d: events join while its span stays < d and it is "
    "final when the clock reaches first + d + tolerance (reaches), or join while the span is <= d "
    "and final when the clock passes that point (passes)",
    # trailing windows
    "trailing_ends": "a trailing window covers [t - size, t] (closed) or (t - size, t] (left_open)",
    "trailing_cadence": "with every, the group's first event starts the cadence without firing and "
    "an event fires when it is at least every after the cadence start (from_first, Tenzir 6.20); "
    "the first event fires and the next at least every after the previous trigger (since_last); or "
    "an event in a later epoch-aligned every bucket than the previous trigger (grid)",
    "trailing_late": "trailing windows take events in time order per key, through a reorder "
    "buffer of the window's tolerance: an event behind its key's clock - tolerance is late (clock, "
    "Tenzir 6.20), or every event in any order is in its own window (none)",
    # stages before the window
    "where_null_equals": "the where stage's = and != with a null side compare the null as a value "
    "(compared, Tenzir's ==) or are unknown, which removes the event (unknown, SQL)",
    "filtered_clock": "an event the where stage removes does not move the event-time clock "
    "(ignored), moves it as if delivered (moves, a watermark made at the source), or moves it only "
    "when the condition reads the window's on field (pushdown, Spark pushes other filters below "
    "withWatermark)",
    "duplicate_clock": "an event the deduplicate stage removes does not move the event-time clock "
    "(ignored) or moves it (moves, the watermark comes before deduplication)",
    "dedup_expiry": "deduplicate's within runs on the wall clock from the event let through "
    "(wall) or until the watermark reaches its event time + within (watermark, Spark's "
    "dropDuplicatesWithinWatermark; checked against the previous micro-batch's watermark)",
    "dedup_late": "the deduplicate stage lets events behind the watermark through to the window "
    "(keep) or drops them as late first (drop, Spark: event time <= the previous micro-batch's "
    "watermark)",
    # kdb+
    "passthrough_close": "kdb with passthrough: windows trigger at their end, lateness ignored "
    "(end), or still at end + lateness (lateness)",
    "idle_timer_elapsed": "kdb's idle timer emits when the wall time since the last emission "
    "reaches the period (reaches) or exceeds it (passes)",
    # Timeplus
    "timeout_closes": "Timeplus EMIT TIMEOUT force-closes the most recent window (latest, the page) "
    "or every open window (all, the engine)",
    "update_delay": "Timeplus EMIT ON UPDATE WITH DELAY d: an update is emitted at its insert "
    "(immediate) or once the event-time clock is d past the largest time seen when the window "
    "changed (delayed)",
    # eKuiper
    "where_placement": "eKuiper WHERE filters after windowing for every window kind (after, the "
    "page) or before it for processing-time tumbling, hopping and session windows (per_kind, the "
    "engine)",
    "first_window": "eKuiper's first event-time window starts on the aligned grid (aligned, the "
    "page) or at the first event (tumbling) / first event - hop (hopping) (first_event, the engine)",
    "hopping_first_windows": "eKuiper's event-time hopping and kdb's sliding windows: every "
    "aligned window holding the first event opens (all) or none starting before the first "
    "event's hop (from_first_hop: eKuiper's incremental operator, kdb's other reading of K2); "
    "kdb drops earlier records (no_window); eKuiper's records come in time order, none is earlier",
    "count_window_end": "eKuiper's window_end() in a count window: none, count windows have no "
    "times (none, the page) or the wall time of the trigger (trigger_wall, the engine)",
    "hopping_layout": "eKuiper's hopping windows: starts on the natural-time grid every hop, "
    "[s, s + size) (starts), or ends on it, [e - size, e) (ends, the page and the engine)",
    "session_tick_cut": "eKuiper's SESSIONWINDOW max-duration tick T cuts a session that has "
    "lasted at least max since its start (lasted), or only when T - max is strictly after the "
    "session's first record still buffered and a record after T arrives (after_first_record, "
    "the engine)",
    "sliding_delay_end": "eKuiper's delayed SLIDINGWINDOW covers [t - size, t + delay] (closed, "
    "the engine's current operator) or [t - size, t + delay) (open, its older operator)",
    "where_emptied": "eKuiper: a window whose rows a post-window WHERE removes entirely (empty "
    "windows included) is emitted empty (emit) or produces nothing (nothing, the engine)",
    # Beam
    "beam_watermark": "beam: the input watermark is the largest event time seen minus tolerance, "
    "moved after each bundle, and by {watermark: T} items (max_event_time, Beam's "
    "MonotonicWatermarkEstimator), or moved only by {watermark: T} items (injected, TestStream)",
    "beam_expiry": "beam: an element's window is expired, and the element dropped, when the "
    "watermark is past end + allowed_lateness (passes, the Python SDK's trigger driver) or has "
    "reached it (reaches, the guide's default trigger 'emits exactly once', Beam Java)",
    "beam_processing_time": "beam: a processing-time timer's time is read as a watermark by "
    "the other trigger parts and the pane timing, and composite triggers never count a "
    "processing-time part as fired (engine, the Python SDK's trigger driver), or processing "
    "time only satisfies AfterProcessingTime parts, which fire, reset and finish as the "
    "guide says (guide)",
}


@dataclass(frozen=True, slots=True)
class Rules:
    """Every semantic choice, as strings from :data:`RULE_VALUES`; defaults are Tenzir's."""

    # closing and lateness
    close_at: str = "reaches"
    late_test: str = "window"
    close_order: str = "window_time"
    no_window_late: str = "no_window"
    # the event-time clock
    clock_scope: str = "key"
    clock_moves: str = "event"
    clock_floor: str = "none"
    watermark_formula: str = "minus_tolerance"
    # window layout
    alignment: str = "epoch"
    every_greater_than_size: str = "reject"
    empty_windows: str = "skip"
    # idle timeout
    idle_closed_window: str = "late"
    idle_timer_reset: str = "delivered"
    # end of input
    end_of_input: str = "flush"
    # sessions
    session_order: str = "reorder"
    session_gap: str = "inclusive"
    session_close_at: str = "passes"
    session_late: str = "own"
    closed_session: str = "late"
    session_ends: str = "events"
    session_cap: str = "reaches"
    # trailing windows
    trailing_ends: str = "closed"
    trailing_cadence: str = "from_first"
    trailing_late: str = "clock"
    # stages before the window
    where_null_equals: str = "compared"
    filtered_clock: str = "ignored"
    duplicate_clock: str = "ignored"
    dedup_expiry: str = "wall"
    dedup_late: str = "keep"
    # kdb+
    passthrough_close: str = "end"
    idle_timer_elapsed: str = "reaches"
    # Timeplus
    timeout_closes: str = "latest"
    update_delay: str = "immediate"
    # eKuiper
    where_placement: str = "after"
    first_window: str = "aligned"
    hopping_first_windows: str = "all"
    count_window_end: str = "none"
    hopping_layout: str = "starts"
    session_tick_cut: str = "lasted"
    sliding_delay_end: str = "closed"
    where_emptied: str = "emit"
    beam_watermark: str = "max_event_time"
    beam_expiry: str = "passes"
    beam_processing_time: str = "engine"

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            allowed = RULE_VALUES[f.name]
            if value not in allowed:
                raise InvalidSpec(
                    f"rules.{f.name}",
                    value,
                    "not a value of this rule",
                    f"use one of {', '.join(allowed)}",
                )

    def with_overrides(self, overrides: dict[str, Any], where: str = "rules") -> Rules:
        """A copy with single rules replaced; raises InvalidSpec for an unknown rule or value."""
        for name, value in overrides.items():
            if name not in RULE_VALUES:
                raise InvalidSpec(
                    f"{where}.{name}", value, "unknown rule", f"use one of {', '.join(RULE_VALUES)}"
                )
            if value not in RULE_VALUES[name]:
                raise InvalidSpec(
                    f"{where}.{name}",
                    value,
                    "not a value of this rule",
                    f"use one of {', '.join(RULE_VALUES[name])}",
                )
        return replace(self, **overrides)

    def as_dict(self) -> dict[str, str]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def differing(self, other: Rules) -> list[str]:
        """Names of the rules whose values differ between ``self`` and ``other``, in order."""
        return [f.name for f in fields(self) if getattr(self, f.name) != getattr(other, f.name)]


def watermark_lag_ms(rules: Rules, tolerance_ms: int) -> int:
    """How far the watermark trails the clock ``c`` (ms): ``tolerance_ms``, plus 1 ms under
    rule ``watermark_formula: bounded_out_of_orderness`` (Flink's ``maxTimestamp - d - 1``).
    Every close point and injected watermark of the shared kinds uses this lag."""
    return tolerance_ms + (1 if rules.watermark_formula == "bounded_out_of_orderness" else 0)


def close_point_offset_ms(comparison: str, tolerance_ms: int) -> int:
    """An end ``e`` is final when the clock >= ``e`` + this offset.

    ``comparison`` is a value of ``close_at`` or ``session_close_at``: ``reaches``
    (offset = tolerance), ``passes`` (tolerance + 1: strictly past, integer ms),
    ``max_timestamp`` (tolerance - 1: Flink fires at the window's ``end - 1 ms``).
    """
    return {"reaches": tolerance_ms, "passes": tolerance_ms + 1, "max_timestamp": tolerance_ms - 1}[
        comparison
    ]
