"""The JVM tumbling-count step (spark_impl/jvm_step.py, spark_impl/jvm/TumblingCounts.java)
against the Python typed step (spark_impl/fast_tumbling.py).

Random tumbling count queries over integer-keyed streams with disorder are cut into random
micro-batches; each micro-batch becomes a DataFrame spread over three partitions in any
row order, and the JVM step (one Spark task) must write the same rows in the same order
and leave the same state as :func:`tumbling_counts` on the same rows.
"""

from __future__ import annotations

import json
import random
import zipfile
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import Aggregation, FixedWindows, Query
from windtunnel.spark_impl.fast import FastStep
from windtunnel.spark_impl.fast_state import FastState, dump_state, load_state
from windtunnel.spark_impl.jvm_step import Inputs

from .test_fast_tumbling import (
    Stream,
    int_streams,
    micro_batches,
    records,
    same_rows,
    state_of,
    tumbling_queries,
    typed_run,
)

COLUMNS = "seq long, arrival long, ts long, k long"
INPUTS = Inputs(("seq", "arrival", "ts", "k"), True)


def frame(spark: Any, rows: list[tuple[Any, ...]], schema: str = COLUMNS) -> Any:
    """The rows as a DataFrame over three partitions (Spark keeps no row order)."""
    return spark.createDataFrame(rows, schema).repartition(3)


def jvm_run(spark: Any, step: FastStep, state: FastState, rows: Stream) -> Any:
    from windtunnel.spark_impl import jvm_step

    jvm = jvm_step.load(spark)
    assert jvm is not None
    if step.query.group_by:
        return jvm_step.tumbling_counts_jvm(jvm, step, state, frame(spark, rows)._jdf, INPUTS)
    no_key = [r[:3] for r in rows]
    df = frame(spark, no_key, "seq long, arrival long, ts long")
    return jvm_step.tumbling_counts_jvm(jvm, step, state, df._jdf, Inputs(INPUTS.columns[:3], True))


@pytest.mark.spark
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    tumbling_queries(),
    int_streams(),
    st.lists(st.integers(0, 60), max_size=3),
    st.integers(0, 9),
    st.sampled_from([1, 1000]),
)
def test_jvm_step_writes_the_python_steps_rows_and_state(
    spark: Any, query_rules: tuple[Query, Rules], stream: Stream, cuts: list[int], seed: int, unit_ms: int
) -> None:
    query, rules = query_rules
    step = FastStep(query, rules, time_unit_ms=unit_ms)
    python, jvm = step.new_state(), step.new_state()
    for batch in micro_batches(stream, cuts, seed):
        want = typed_run(step, python, batch)
        jvm = load_state(dump_state(jvm))  # as the state store hands it over
        same_rows(want, jvm_run(spark, step, jvm, batch))
        assert state_of(jvm) == state_of(python)
    same_rows(step.finish(python), step.finish(jvm))


@pytest.mark.spark
def test_late_drop_and_close_on_the_jvm(spark: Any) -> None:
    # key 1, tumbling 10 s, tolerance 0:
    #   mb0: seq0 t=1s  -> [0,10s) open
    #   mb1: seq1 t=12s -> clock 12s: [0,10s) closes here (after_seq 1), [10s,20s) opens
    #        seq2 t=5s  -> late: [0,10s) closed at 10s, the clock is at 12s
    query = Query(FixedWindows(10_000, on="ts"), group_by=("k",), aggregate=(Aggregation("n", "count"),))
    step = FastStep(query, Rules())
    state = step.new_state()
    assert jvm_run(spark, step, state, [(0, 100, 1_000, 1)]) is None
    out = jvm_run(spark, step, state, [(2, 300, 5_000, 1), (1, 200, 12_000, 1)])
    rows = records(out)
    assert [(r["type"], r["seq"], r["after_seq"], r["wall_ms"]) for r in rows] == [
        ("drop", 2, None, None),
        ("emit", None, 1, 200),
    ]
    assert rows[1]["row"] == '{"n": 1}' and rows[1]["group"] == "1"
    assert state.win_start.tolist() == [10_000] and state.clock.tolist() == [12_000]


@pytest.mark.spark
@pytest.mark.parametrize(
    "rows",
    [
        [(0, 0, None, 1)],  # a null time: the Python step reports it as a drop
        [(0, 0, 5, None)],  # a null key: the group null
        [(0, 0, 2**61, 1)],  # beyond the range: the Python step raises InvalidStream
    ],
)
def test_nulls_and_out_of_range_times_go_back_to_the_python_step(spark: Any, rows: list[tuple[Any, ...]]) -> None:
    from windtunnel.spark_impl import jvm_step

    query = Query(FixedWindows(10, on="ts"), group_by=("k",), aggregate=(Aggregation("n", "count"),))
    step = FastStep(query, Rules())
    state = step.new_state()
    jvm = jvm_step.load(spark)
    assert jvm is not None
    with pytest.raises(jvm_step.Fallback):
        jvm_step.tumbling_counts_jvm(jvm, step, state, frame(spark, rows)._jdf, INPUTS)
    assert state_of(state) == state_of(step.new_state())  # untouched


@pytest.mark.spark
def test_an_empty_micro_batch_writes_nothing(spark: Any) -> None:
    from windtunnel.spark_impl import jvm_step

    query = Query(FixedWindows(10, on="ts"), group_by=("k",), aggregate=(Aggregation("n", "count"),))
    step = FastStep(query, Rules())
    state = step.new_state()
    jvm = jvm_step.load(spark)
    assert jvm is not None
    assert jvm_step.tumbling_counts_jvm(jvm, step, state, frame(spark, [])._jdf, INPUTS) is None
    assert state.after_seq is None


@pytest.mark.spark
def test_many_keys_and_windows_grow_the_tables(spark: Any) -> None:
    # 5000 keys (the task's tables start at 16 and double), about 7 windows a key open at
    # once (a key's window list starts at 4)
    rng = random.Random(3)
    rows: Stream = [(s, s, rng.randrange(300_000), rng.randrange(5_000)) for s in range(40_000)]
    query = Query(FixedWindows(10_000, on="ts", tolerance_ms=400_000), group_by=("k",), aggregate=(Aggregation("n", "count"),))
    step = FastStep(query, Rules())
    python, jvm = step.new_state(), step.new_state()
    for batch in (rows[:15_000], rows[15_000:]):
        same_rows(typed_run(step, python, batch), jvm_run(spark, step, jvm, batch))
        assert state_of(jvm) == state_of(python)
    assert len(python.keys) == 5_000 and len(python.win_key) > 6 * 5_000


def test_the_shipped_jar_is_built_from_the_sources_beside_it() -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
    try:
        import build_jar
    finally:
        sys.path.pop(0)
    from windtunnel.spark_impl.jvm_step import CLASS_NAME, JAR

    with zipfile.ZipFile(JAR) as jar:
        digest = jar.read(build_jar.DIGEST_ENTRY).decode().strip()
        names = set(jar.namelist())
    assert digest == build_jar.source_digest(), "a Java source changed: run python tools/build_jar.py"
    assert CLASS_NAME.replace(".", "/") + ".class" in names


def test_state_arrays_round_trip_through_the_wire_format() -> None:
    from windtunnel.spark_impl.jvm_step import _request

    query = Query(FixedWindows(10, on="ts"), group_by=("k",), aggregate=(Aggregation("n", "count"),))
    step = FastStep(query, Rules(close_at="passes"), time_unit_ms=1000)
    state = step.new_state()
    typed_run(step, state, [(0, 5, 1, 7), (1, 6, 2, -3)])
    longs = np.frombuffer(_request(step, state, True, True), ">i8").tolist()
    none, unit, size, span, arrival, key, wall, has_after, after, limit, n = longs[:11]
    assert (unit, size, span, arrival, key, wall, has_after, after, limit, n) == (
        1000, 10, 11, 1, 1, 6, 1, 1, 2**61 // 1000, 2,
    )
    assert none == np.iinfo(np.int64).min
    assert longs[11:13] == [7, -3]  # keys by code
    assert longs[13:15] == [0, 0]  # no null key
    assert longs[15:17] == state.clock.tolist()


@pytest.mark.spark
def test_int_and_short_columns_are_cast_to_long_in_the_task(spark: Any) -> None:
    from windtunnel.spark_impl import jvm_step

    rows: Stream = [(0, 0, 3, 1), (1, 4, 12, 2), (2, 5, 1, 1), (3, 9, 25, 1)]
    query = Query(FixedWindows(10, on="ts"), group_by=("k",), aggregate=(Aggregation("n", "count"),))
    step = FastStep(query, Rules())
    python, jvm_state = step.new_state(), step.new_state()
    jvm = jvm_step.load(spark)
    assert jvm is not None
    df = frame(spark, rows, "seq int, arrival int, ts int, k smallint")
    same_rows(typed_run(step, python, rows), jvm_step.tumbling_counts_jvm(jvm, step, jvm_state, df._jdf, INPUTS))
    assert state_of(jvm_state) == state_of(python)


def test_inputs_name_columns_or_parse_a_json_payload() -> None:
    from windtunnel.spark_impl.batch_exact import Columns
    from windtunnel.spark_impl.jvm_step import inputs_of

    query = Query(FixedWindows(10, on="ts"), group_by=("k",), aggregate=(Aggregation("n", "count"),))
    plain = {"seq": "bigint", "arrival_ms": "bigint", "ts": "int", "k": "bigint"}
    assert inputs_of(Columns(), query, plain) == Inputs(("seq", "arrival_ms", "ts", "k"), True)
    assert inputs_of(Columns(), query, {**plain, "ts": "double"}) is None  # the Python step
    job = Columns("seq", "arrival_ms", "kind", "after_seq", "payload")
    types = {"kind": "string", "seq": "bigint", "arrival_ms": "bigint", "after_seq": "bigint", "payload": "string"}
    assert inputs_of(job, query, types) == Inputs(
        ("seq", "arrival_ms", "payload"), True, "kind", ("ts", "k")
    )
    assert inputs_of(job, query, {**types, "kind": "int"}) is None  # the guard reads text
    dotted = Query(FixedWindows(10, on="e.ts"), aggregate=(Aggregation("n", "count"),))
    assert inputs_of(job, dotted, types) is None


JOB_ROWS = "kind string, seq long, arrival_ms long, after_seq long, payload string"
"""The job input rows of windtunnel run: kind, seq, arrival_ms, after_seq, payload (JSON)."""


def json_job(spark: Any, events: list[tuple[Any, ...]], partitions: int = 1) -> tuple[Any, FastStep, Any, Any]:
    """(the JVM step, a tumbling count per ``k`` of ``ts``, the ``events`` as job input rows,
    what the task reads from them)."""
    from windtunnel.spark_impl import jvm_step
    from windtunnel.spark_impl.batch_exact import Columns

    query = Query(FixedWindows(10, on="ts"), group_by=("k",), aggregate=(Aggregation("n", "count"),))
    jvm = jvm_step.load(spark)
    assert jvm is not None
    df = spark.createDataFrame(events, JOB_ROWS).repartition(partitions)
    inputs = jvm_step.inputs_of(Columns("seq", "arrival_ms", "kind", "after_seq", "payload"), query, dict(df.dtypes))
    assert inputs is not None
    return jvm, FastStep(query, Rules()), df, inputs


@pytest.mark.spark
def test_json_payloads_run_on_the_jvm_when_every_field_is_a_json_integer(spark: Any) -> None:
    from windtunnel.spark_impl import jvm_step

    rows: Stream = [(0, 0, 3, 1), (1, 4, 12, 2), (2, 5, 1, 1), (3, 9, 25, 1), (4, 9, 14, 2)]
    events = [("event", s, a, None, f'{{"k": {k}, "ts": {t}, "x": "y"}}') for s, a, t, k in rows]
    jvm, step, df, inputs = json_job(spark, events, partitions=2)
    python, jvm_state = step.new_state(), step.new_state()
    same_rows(typed_run(step, python, rows), jvm_step.tumbling_counts_jvm(jvm, step, jvm_state, df._jdf, inputs))
    assert state_of(jvm_state) == state_of(python)
    # anything but a JSON integer (the Python step reads "1.0", "12" and a missing key its
    # own way) or a control row: the task declines the micro-batch
    for odd in (
        ("event", 5, 9, None, '{"k": 1, "ts": 1.0}'),
        ("event", 5, 9, None, '{"k": 1, "ts": "12"}'),
        ("event", 5, 9, None, '{"ts": 12}'),
        ("event", 5, 9, None, '{"k": 1, "TS": 12}'),
        ("event", 5, 9, None, '{"k": 1, "ts": 12, "x": Infinity}'),  # json.loads takes it, JSON does not
        ("end", None, 9, 4, None),
    ):
        mixed = spark.createDataFrame([*events, odd], JOB_ROWS)
        with pytest.raises(jvm_step.Fallback):
            jvm_step.tumbling_counts_jvm(jvm, step, step.new_state(), mixed._jdf, inputs)


JSON_KEYS = ("ts", "k")
json_scalars = (
    st.integers(-(2**64), 2**64) | st.floats(allow_nan=False) | st.booleans() | st.none()
    | st.text(alphabet="ats\"\\\u00e9\n", max_size=4)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["ts", "k", "x", "TS"]), inner, max_size=3),
    max_leaves=6,
)


@st.composite
def json_texts(draw: st.DrawFn) -> str:
    """JSON object texts around the keys ts and k: values of every JSON type, random
    whitespace and separators, escaped keys, repeated keys, and a character inserted or
    removed now and then (not JSON any more); shrinks towards {"ts": 0, "k": 0}."""
    pairs = [(key, draw(st.integers(-(2**63), 2**63 - 1) | json_values)) for key in JSON_KEYS]
    pairs += draw(st.lists(st.tuples(st.sampled_from(["x", "ts", "k", "TS", "t\\u0073"]), json_values), max_size=3))
    order = draw(st.permutations(range(len(pairs))))
    space = draw(st.sampled_from(["", " ", "\n\t", "  "]))
    parts = []
    for index in order:
        key, value = pairs[index]
        written = json.dumps(value, ensure_ascii=draw(st.booleans()))
        key_text = f'"{key}"' if "\\" in key else json.dumps(key)
        parts.append(f"{key_text}{space}:{space}{written}")
    text = space + "{" + f",{space}".join(parts) + "}" + space
    edit = draw(st.sampled_from(["none", "none", "insert", "delete"]))
    if edit != "none" and text:
        at = draw(st.integers(0, len(text) - 1))
        text = text[:at] + draw(st.sampled_from(list("{}[],:\"0.e-x "))) + text[at:] if edit == "insert" else text[:at] + text[at + 1:]
    return text


def python_reads(text: str) -> list[int] | None:
    """The integer values of ts and k as json.loads reads them, or None."""
    try:
        found = json.loads(text)
    except ValueError:
        return None
    if not isinstance(found, dict):
        return None
    values = [found.get(key) for key in JSON_KEYS]
    if not all(type(v) is int and -(2**63) <= v < 2**63 for v in values):
        return None
    return values  # type: ignore[return-value]


@pytest.mark.spark
@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(json_texts())
def test_the_tasks_json_reader_takes_only_what_json_loads_reads_the_same(spark: Any, text: str) -> None:
    from windtunnel.spark_impl import jvm_step

    jvm = jvm_step.load(spark)
    assert jvm is not None
    got = jvm.json_ints(text, JSON_KEYS)
    want = python_reads(text)
    if got is not None:
        assert got == want, text  # never a value json.loads reads differently
    elif want is not None:
        # declining is safe (the Python step reads the micro-batch), but only for what the
        # reader leaves out on purpose: escaped keys, repeated keys, and the constants
        # json.loads takes beyond JSON (NaN, Infinity, -Infinity)
        beyond_json = "NaN" in text or "Infinity" in text
        assert "\\u0073" in text or text.count('"ts"') + text.count('"k"') > 2 or beyond_json, text


@pytest.mark.spark
@pytest.mark.parametrize("key", ["alice", 1.5, True, 2**63])
def test_a_state_with_keys_the_task_cannot_hold_stays_on_the_python_step(spark: Any, key: Any) -> None:
    # micro-batch 0 had JSON keys the task declined ("alice"), so the Python step made the
    # state; micro-batch 1 must not be handed to the task with that state
    from windtunnel.spark_impl import jvm_step
    from windtunnel.spark_impl.fast_frames import NONE

    query = Query(FixedWindows(10, on="ts"), group_by=("k",), aggregate=(Aggregation("n", "count"),))
    step = FastStep(query, Rules())
    state = step.new_state()
    state.keys, state.groups = [(key,)], ['"x"']
    state.first_seq, state.clock = np.zeros(1, np.int64), np.full(1, NONE, np.int64)
    jvm = jvm_step.load(spark)
    assert jvm is not None
    with pytest.raises(jvm_step.Fallback):
        jvm_step.tumbling_counts_jvm(jvm, step, state, frame(spark, [(1, 1, 5, 1)])._jdf, INPUTS)


@pytest.mark.spark
def test_a_foreach_batch_micro_batch_is_read_without_planning_and_gives_the_same_rows(
    spark: Any, tmp_path: Any
) -> None:
    # Spark hands a foreachBatch function its micro-batch as rows already planned: the task
    # reads them as they are (planning a projection again cost 10-20 ms per micro-batch);
    # any other DataFrame is planned first. Both give the Python step's rows.
    import pyarrow as pa
    import pyarrow.parquet as pq

    from windtunnel.spark_impl import jvm_step

    query = Query(FixedWindows(10, on="ts"), group_by=("k",), aggregate=(Aggregation("n", "count"),))
    step = FastStep(query, Rules())
    rows: Stream = [(0, 0, 3, 1), (1, 4, 12, 2), (2, 5, 1, 1), (3, 9, 25, 1), (4, 9, 14, 2)]
    (tmp_path / "in").mkdir()
    columns = list(zip(*rows, strict=True))
    pq.write_table(
        pa.table({"seq": columns[0], "arrival": columns[1], "ts": pa.array(columns[2], pa.int32()), "k": columns[3]}),
        tmp_path / "in" / "part-0.parquet",
    )
    jvm = jvm_step.load(spark)
    assert jvm is not None
    seen: list[tuple[bool, Any]] = []

    def function(df: Any, batch_id: int) -> None:
        state = step.new_state()
        seen.append((jvm.reads_directly(df._jdf), jvm_step.tumbling_counts_jvm(jvm, step, state, df._jdf, INPUTS)))

    stream = spark.readStream.schema("seq long, arrival long, ts int, k long").parquet(str(tmp_path / "in"))
    handle = (
        stream.writeStream.foreachBatch(function).option("checkpointLocation", str(tmp_path / "ckpt"))
        .trigger(availableNow=True).start()
    )
    handle.awaitTermination()
    assert len(seen) == 1 and seen[0][0] is True
    same_rows(typed_run(step, step.new_state(), rows), seen[0][1])
    assert not jvm.reads_directly(frame(spark, rows)._jdf)


@pytest.mark.spark
def test_a_null_kind_is_an_event_as_the_general_step_reads_it(spark: Any) -> None:
    from windtunnel.spark_impl import jvm_step

    rows: Stream = [(0, 0, 3, 1), (1, 4, 12, 2)]
    kinds = [None, "event"]
    events = [(kind, s, a, None, f'{{"k": {k}, "ts": {t}}}') for kind, (s, a, t, k) in zip(kinds, rows, strict=True)]
    jvm, step, df, inputs = json_job(spark, events)
    same_rows(typed_run(step, step.new_state(), rows), jvm_step.tumbling_counts_jvm(jvm, step, step.new_state(), df._jdf, inputs))
