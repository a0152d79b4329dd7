"""Semantic mutants of the oracle, of spark_impl and of its Java engine: the registry
``benchmarks/mutation.py`` runs.

Each mutant replaces one exact snippet of one file (it must occur exactly once there:
tests/test_mutants.py checks) with a plausible wrong reading of the semantics, and names
the tests that should kill it (a fast selection; ``pytest -x`` stops at the first
failure). The runner applies a mutant to a temporary copy of the repository, never to
the working tree.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Mutant:
    """One textual mutation: ``original`` (exactly once in ``path``) becomes ``replacement``."""

    id: str
    path: str
    original: str
    replacement: str
    description: str
    tests: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.id or self.original == self.replacement or not self.tests:
            raise ValueError(f"mutant {self.id!r}: needs an id, a change and tests")


STAGES = ("tests/oracle/test_stages.py",)
FIXED_REF = ("tests/oracle/test_metamorphic_examples.py", "tests/oracle/test_fixed_rules.py",
             "tests/oracle/test_metamorphic.py")
FIXED_FAST = ("tests/oracle/test_metamorphic_examples.py", "tests/oracle/test_fixed_properties.py",
              "tests/oracle/test_metamorphic.py")
SESSION = ("tests/oracle/test_metamorphic_examples.py", "tests/oracle/test_session_rules.py", "tests/oracle/test_flink_profile.py",
           "tests/oracle/test_spark_profile.py", "tests/oracle/test_metamorphic.py")
COUNT = ("tests/oracle/test_count_rules.py", "tests/oracle/test_count_fast.py",
         "tests/oracle/test_metamorphic.py")
TRAILING = ("tests/oracle/test_trailing_rules.py", "tests/oracle/test_metamorphic.py")
BUCKET_STEP = ("tests/spark_impl/test_bucket_step.py",)

MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        "sanity-import-breaks",
        "oracle/windows/fixed.py",
        "from windtunnel.oracle.model.aggregates import Aggregator\n",
        'raise ImportError("mutant: this copy of the oracle is the one imported")\n',
        "sanity: the copy's module is the one the tests import",
        ("tests/oracle/test_fixed_rules.py",),
    ),
    Mutant(
        "fixed-close-strict",
        "oracle/windows/fixed.py",
        "while pending and pending[0][0] <= now:",
        "while pending and pending[0][0] < now:",
        "> for >= at close: a window closes only once the clock passes end + tolerance",
        FIXED_REF,
    ),
    Mutant(
        "fast-close-strict",
        "oracle/windows/fixed_fast.py",
        "if earliest is not None and earliest <= t:\n                    due = sorted(s for s in windows if s + span <= t)",
        "if earliest is not None and earliest < t:\n                    due = sorted(s for s in windows if s + span < t)",
        "> for >= at close in the fast path (hopping and aggregated windows)",
        FIXED_FAST,
    ),
    Mutant(
        "tolerance-ignored",
        "oracle/windows/fixed.py",
        'return {"reaches": tolerance_ms, "passes": tolerance_ms + 1,',
        'return {"reaches": 0, "passes": tolerance_ms + 1,',
        "tolerance ignored: fixed windows close at their end",
        FIXED_FAST,
    ),
    Mutant(
        "late-per-event",
        "oracle/windows/fixed.py",
        "if now is not None and end + reach <= now:",
        "if now is not None and t_ms + reach < now:",
        "lateness judged on the event (behind clock - tolerance) instead of its windows",
        FIXED_REF,
    ),
    Mutant(
        "overlap-late-dropped",
        "oracle/windows/fixed.py",
        "            if now is not None and end + reach <= now:\n"
        "                missed.append((start, end))\n                continue",
        "            if now is not None and end + reach <= now:\n"
        "                missed.append((start, end))\n                break",
        "an overlapping event late for its first window is dropped entirely",
        FIXED_REF,
    ),
    Mutant(
        "fast-overlap-late-dropped",
        "oracle/windows/fixed_fast.py",
        "if open_from > last:",
        "if open_from > first:",
        "the fast path drops an overlapping event late for any of its windows",
        FIXED_FAST,
    ),
    Mutant(
        "idle-from-open",
        "oracle/windows/fixed.py",
        "    def _deliver(self, window: Window, event: Event, ctx: Context, out: list[Output]) -> None:\n"
        "        window.last_wall_ms = ctx.wall_ms\n",
        "    def _deliver(self, window: Window, event: Event, ctx: Context, out: list[Output]) -> None:\n",
        "idle timer measured from the window's opening, not from its last delivery",
        FIXED_REF,
    ),
    Mutant(
        "one-clock-fixed",
        "oracle/windows/fixed.py",
        'self._stream_clock = Clock(self._clock_start) if ctx.rules.clock_scope == "stream" else None',
        "self._stream_clock = Clock(self._clock_start)",
        "one event-time clock for all keys (fixed windows)",
        FIXED_REF,
    ),
    Mutant(
        "one-clock-session",
        "oracle/windows/watermark.py",
        'self._stream = Clock(self._floor_ms) if rules.clock_scope == "stream" else None',
        "self._stream = Clock(self._floor_ms)",
        "one event-time clock for all keys (sessions)",
        SESSION,
    ),
    Mutant(
        "clock-moves-back",
        "oracle/windows/watermark.py",
        "if clock.seen_ms is not None and t_ms <= clock.seen_ms:",
        "if clock.seen_ms is not None and t_ms == clock.seen_ms:",
        "a session clock follows the latest event even backwards",
        SESSION,
    ),
    Mutant(
        "session-gap-exclusive",
        "oracle/windows/session.py",
        "return first_ms - gap <= t_ms <= last_ms + gap",
        "return first_ms - gap < t_ms < last_ms + gap",
        "session gap exclusive: events exactly gap apart start a new session",
        SESSION,
    ),
    Mutant(
        "session-late-inclusive",
        "oracle/windows/session.py",
        "if late_ms >= point:",
        "if late_ms > point:",
        "an event whose own session would be final exactly now is not late",
        SESSION,
    ),
    Mutant(
        "session-no-merge",
        "oracle/windows/session.py",
        "for other in joined[1:]:",
        "for other in joined[1:1]:",
        "an event bridging two open sessions does not merge them",
        SESSION,
    ),
    Mutant(
        "session-idle-from-open",
        "oracle/windows/session.py",
        "        session.last_wall_ms = ctx.wall_ms\n        if self.max_events",
        "        if self.max_events",
        "a session's idle timer measured from its opening",
        SESSION,
    ),
    Mutant(
        "session-no-flush",
        "oracle/windows/session.py",
        '        if self.rules.end_of_input == "discard":\n            if ctx.trace is not None:',
        "        if True:\n            if ctx.trace is not None:",
        "no flush at end of input (sessions)",
        SESSION,
    ),
    Mutant(
        "fast-no-flush",
        "oracle/windows/fixed_fast.py",
        'flush = rules.end_of_input == "flush"',
        "flush = False",
        "no flush at end of input (fixed windows, fast path)",
        FIXED_FAST,
    ),
    Mutant(
        "count-every-off-by-one",
        "oracle/windows/count.py",
        "last = offset - offset % hop\n",
        "last = offset - offset % hop - (hop > 1)\n",
        "count windows: an offset is not in the window starting at it when every > 1",
        COUNT,
    ),
    Mutant(
        "count-fast-first-window",
        "oracle/windows/count_fast.py",
        "if start >= 0 and start % hop == 0:",
        "if start > 0 and start % hop == 0:",
        "count windows (fast path): the first window is never emitted by count",
        COUNT,
    ),
    Mutant(
        "count-no-flush",
        "oracle/windows/count.py",
        '        if self.rules.end_of_input == "discard":\n            return\n        for group',
        "        if True:\n            return\n        for group",
        "no flush at end of input (count windows)",
        COUNT,
    ),
    Mutant(
        "null-time-moves-clock",
        "oracle/windows/driver.py",
        "        if self._by_wall:\n            t_ms: int | None = ctx.wall_ms",
        "        if self._by_wall or self._time_of(payload) is None:\n            t_ms: int | None = ctx.wall_ms",
        "a null timestamp takes the wall clock as its time (and moves the event-time clock)",
        FIXED_REF,
    ),
    Mutant(
        "window-end-included",
        "oracle/model/spec.py",
        "first = t_ms - self.size_ms + 1\n",
        "first = t_ms - self.size_ms\n",
        "fixed windows include their end: [start, end] instead of [start, end)",
        FIXED_REF,
    ),
    Mutant(
        "trailing-left-open",
        "oracle/windows/trailing_ordered.py",
        "members = [e for e in retained if self.closed or e[0] > start_ms]",
        "members = [e for e in retained if e[0] > start_ms]",
        "trailing windows leave out an event exactly size before the trigger",
        TRAILING,
    ),
    Mutant(
        "trailing-every-strict",
        "oracle/windows/trailing_ordered.py",
        "fires = t_ms >= key.origin_ms + every",
        "fires = t_ms > key.origin_ms + every",
        "trailing every: an event exactly every after the last trigger does not trigger",
        TRAILING,
    ),
    Mutant(
        "trailing-tie-late",
        "oracle/windows/trailing_ordered.py",
        "if behind is not None and t_ms < behind:",
        "if behind is not None and t_ms <= behind:",
        "trailing windows drop an event at its key's clock (a duplicate timestamp) as late",
        TRAILING,
    ),
    Mutant(
        "spark-profile-flushes",
        "oracle/profiles/builtin.py",
        '        end_of_input="discard",\n        session_gap="inclusive",\n        session_order="merge",',
        '        end_of_input="flush",\n        session_gap="inclusive",\n        session_order="merge",',
        "the spark profile flushes open windows at end of input",
        ("tests/oracle/test_spark_profile.py", "tests/oracle/test_profiles_properties.py"),
    ),
    Mutant(
        "dedup-late-strict",
        "oracle/windows/stages.py",
        "t_ms <= watermark",
        "t_ms < watermark",
        "Spark's deduplication keeps a row exactly at the previous micro-batch's watermark",
        STAGES,
    ),
    Mutant(
        "duplicate-leaves-the-clock",
        "oracle/windows/stages.py",
        'return Removal(drop, t_ms if rules.duplicate_clock == "moves" else None)',
        "return Removal(drop, None)",
        "a duplicate never moves the watermark (Spark's and Flink's do)",
        STAGES,
    ),
    Mutant(
        "dedup-expires-inside-a-batch",
        "oracle/windows/stages.py",
        'watermark if self._clocks.moves == "event" else None)',
        "watermark)",
        "a key whose expiry the watermark reached is forgotten inside the micro-batch, not at its end",
        STAGES,
    ),
    Mutant(
        "spark-rows-in-arrival-order",
        "spark_impl/processor.py",
        "            key=lambda i: (steps[i], _KIND_RANK[kinds[i]], _int(arrivals[i])),",
        "            key=lambda i: 0,",
        "the bucket step feeds a micro-batch's rows in the order Spark hands them over",
        BUCKET_STEP,
    ),
    Mutant(
        "spark-stock-tolerance-ignored",
        "spark_impl/stock.py",
        "timed = df.withColumn(TIME, time).withWatermark(TIME, _ms(window.tolerance_ms))",
        "timed = df.withColumn(TIME, time).withWatermark(TIME, _ms(0))",
        "the stock mapping ignores tolerance (watermark delay 0)",
        ("tests/spark_impl/test_stock.py::test_a_generated_disordered_stream",),
    ),
)
"""Every mutant, in the order the runner tries them."""


def mutant_named(mutant_id: str) -> Mutant:
    """The mutant with this id; raises KeyError naming the known ids."""
    for mutant in MUTANTS:
        if mutant.id == mutant_id:
            return mutant
    raise KeyError(f"no mutant {mutant_id!r}; known: {', '.join(m.id for m in MUTANTS)}")
