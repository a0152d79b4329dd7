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


STAGES = ("tests/oracle/windows/test_stages.py",)
JAVA_ENGINE = ("tests/spark_impl/engine/test_engine_examples.py",
               "tests/spark_impl/engine/test_engine_oracle.py")
FIXED_REF = ("tests/oracle/test_metamorphic_examples.py", "tests/oracle/windows/test_fixed_rules.py",
             "tests/oracle/test_metamorphic.py")
FIXED_FAST = ("tests/oracle/test_metamorphic_examples.py", "tests/oracle/fast/test_fixed.py",
              "tests/oracle/windows/test_fixed_properties.py", "tests/oracle/test_metamorphic.py")
SESSION = ("tests/oracle/test_metamorphic_examples.py", "tests/oracle/windows/test_session_rules.py",
           "tests/oracle/profiles/test_flink.py", "tests/oracle/profiles/test_spark.py",
           "tests/oracle/test_metamorphic.py")
COUNT = ("tests/oracle/windows/test_count_rules.py", "tests/oracle/fast/test_count.py",
         "tests/oracle/test_metamorphic.py")
TRAILING = ("tests/oracle/windows/test_trailing_rules.py", "tests/oracle/test_metamorphic.py")
BUCKET_STEP = ("tests/spark_impl/general/test_bucket_step.py",)

MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        "sanity-import-breaks",
        "oracle/windows/fixed.py",
        "from windtunnel.oracle.model.aggregates import Aggregator\n",
        'raise ImportError("mutant: this copy of the oracle is the one imported")\n',
        "sanity: the copy's module is the one the tests import",
        ("tests/oracle/windows/test_fixed_rules.py",),
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
        "oracle/fast/fixed.py",
        "                if earliest is not None and earliest <= t:\n                    for s in sorted(s for s in windows if s + span <= t):",
        "                if earliest is not None and earliest < t:\n                    for s in sorted(s for s in windows if s + span < t):",
        "> for >= at close in the fast path (hopping and aggregated windows)",
        FIXED_FAST,
    ),
    Mutant(
        "tolerance-ignored",
        "oracle/model/rules.py",
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
        "oracle/fast/fixed.py",
        "                if not opened:\n",
        "                if opened != targets:\n",
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
        "fast-hands-over-no-windows",
        "oracle/fast/fixed.py",
        "opened = [(s, state_of(key, s)) for s in sorted(key.windows)]",
        "opened = []",
        "the fast path hands the reference no open windows: they are lost at end of input",
        FIXED_FAST,
    ),
    Mutant(
        "grid-last-start-off-by-one",
        "oracle/model/assignment.py",
        "    last = last_start(point, hop, offset=offset)\n",
        "    last = last_start(point, hop, offset=offset) - (hop > 1)\n",
        "a point is not in the window starting at the grid start below it when every > 1",
        (*COUNT, *FIXED_REF),
    ),
    Mutant(
        "count-fast-first-window",
        "oracle/model/assignment.py",
        "floor = np.maximum(first_points, lowest + size - 1)",
        "floor = np.maximum(first_points, lowest + size)",
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
        "oracle/model/assignment.py",
        "    first = point - size + 1\n",
        "    first = point - size\n",
        "windows include their end: [start, end] instead of [start, end)",
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
        "reorder-tie-late",
        "oracle/windows/reorder.py",
        "if watermark is not None and t_ms < watermark:",
        "if watermark is not None and t_ms <= watermark:",
        "the reorder buffer drops an event at its key's watermark (a duplicate timestamp under tolerance 0) as late",
        (*TRAILING, *SESSION),
    ),
    Mutant(
        "spark-profile-flushes",
        "oracle/profiles/builtin.py",
        '        end_of_input="discard",\n        session_gap="inclusive",\n        session_order="merge",',
        '        end_of_input="flush",\n        session_gap="inclusive",\n        session_order="merge",',
        "the spark profile flushes open windows at end of input",
        ("tests/oracle/profiles/test_spark.py", "tests/oracle/profiles/test_properties.py"),
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
        "spark_impl/general/processor.py",
        "            key=lambda i: (steps[i], _KIND_RANK[kinds[i]], _int(arrivals[i])),",
        "            key=lambda i: 0,",
        "the bucket step feeds a micro-batch's rows in the order Spark hands them over",
        BUCKET_STEP,
    ),
    Mutant(
        "spark-stock-tolerance-ignored",
        "spark_impl/stock/mapping.py",
        "timed = df.withColumn(TIME, time).withWatermark(TIME, _ms(window.tolerance_ms))",
        "timed = df.withColumn(TIME, time).withWatermark(TIME, _ms(0))",
        "the stock mapping ignores tolerance (watermark delay 0)",
        ("tests/spark_impl/stock/test_mapping.py::test_a_generated_disordered_stream",),
    ),
    Mutant(
        "java-late-strict",
        "spark_impl/jvm/src/windtunnel/engine/FixedOperator.java",
        "while (start <= last && start + sizeMs + closeOffsetMs <= now) {",
        "while (start <= last && start + sizeMs + closeOffsetMs < now) {",
        "the Java engine delivers an event to a window whose close point the clock reached",
        JAVA_ENGINE,
    ),
    Mutant(
        "java-close-strict",
        "spark_impl/jvm/src/windtunnel/engine/FixedOperator.java",
        "while (k.size > 0 && k.start(0) + sizeMs + closeOffsetMs <= now) {",
        "while (k.size > 0 && k.start(0) + sizeMs + closeOffsetMs < now) {",
        "the Java engine closes a window only once the clock passes end + tolerance",
        JAVA_ENGINE,
    ),
    Mutant(
        "java-session-gap-exclusive",
        "spark_impl/jvm/src/windtunnel/engine/ReorderSessions.java",
        "tMs > s.lastMs + gapMs // rule session_gap: inclusive",
        "tMs >= s.lastMs + gapMs // rule session_gap: inclusive",
        "the Java engine starts a new session for an event exactly gap after the last one",
        JAVA_ENGINE,
    ),
)
"""Every mutant, in the order the runner tries them."""


def mutant_named(mutant_id: str) -> Mutant:
    """The mutant with this id; raises KeyError naming the known ids."""
    for mutant in MUTANTS:
        if mutant.id == mutant_id:
            return mutant
    raise KeyError(f"no mutant {mutant_id!r}; known: {', '.join(m.id for m in MUTANTS)}")
