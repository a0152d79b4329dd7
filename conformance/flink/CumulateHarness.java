package windtunnel.flink;

import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;

/**
 * Cumulating-window scenarios (kind {@code C}; {@code c}: the same, each on a query of its own)
 * on Flink SQL's own {@code CUMULATE} window aggregation: the DataStream API has no cumulating
 * assigner. The events and watermarks are the scenario's own, as in {@link WindowHarness}
 * (timestamps, {@link WindowHarness.Punctuated}), seen by SQL as a view with
 * {@code SOURCE_WATERMARK()}; the query groups by scenario and key index and collects each
 * window's seqs. Its rows come back as {@code O} lines with cause {@code timer}; Flink SQL drops
 * late rows without a side output.
 *
 * <p>Planning and code generation cost about 0.1 s per query, so scenarios with the same window
 * and bound share one query: they run one after another on one source, each moved in time to a
 * range of its own by a whole number of cycles (window starts stay aligned) and closed by a
 * watermark past all its windows, which emits what the final watermark would have. A watermark
 * below a scenario's first window fires nothing of it and makes none of its rows late, so each
 * scenario meets the operator as if alone; its rows come back moved back, and those the closing
 * watermark emitted are marked as emitted by the final watermark ({@code Long.MAX_VALUE}).
 * Scripted watermarks below a scenario's first cycle are left out (they fire nothing).
 */
final class CumulateHarness {
    /** How far a shared query moves scenarios in time, at most (about 95 years in ms). */
    static final long SPAN_LIMIT = 3_000_000_000_000L;

    private CumulateHarness() {}

    /** A scenario moved by {@code shift} ms so that its first cycle starts at {@code start},
     * closed by the watermark {@code close}. */
    static final class Placed {
        final WindowHarness.Spec spec;
        final long shift;
        final long start;
        final long close;

        Placed(WindowHarness.Spec spec, long shift, long start, long close) {
            this.spec = spec;
            this.shift = shift;
            this.start = start;
            this.close = close;
        }

        /** Unmoved, alone on its query, ended by the final watermark. */
        static Placed alone(WindowHarness.Spec spec) {
            return new Placed(spec, 0, Long.MIN_VALUE, Long.MAX_VALUE);
        }
    }

    /** Adds every cumulating scenario of {@code specs} to the job in {@code env}. */
    static void build(StreamExecutionEnvironment env, StreamTableEnvironment tEnv, List<WindowHarness.Spec> specs) {
        Map<String, List<WindowHarness.Spec>> shared = new LinkedHashMap<>();
        for (WindowHarness.Spec spec : specs) {
            if ("c".equals(spec.kind) || firstTime(spec) == null) {
                query(env, tEnv, List.of(Placed.alone(spec)), spec.items);
            } else {
                shared.computeIfAbsent(spec.size + "/" + spec.slide + "/" + spec.tolerance, k -> new ArrayList<>()).add(spec);
            }
        }
        for (List<WindowHarness.Spec> group : shared.values()) {
            List<Placed> placed = new ArrayList<>();
            List<WindowHarness.Ev> items = new ArrayList<>();
            long offset = 0;
            for (WindowHarness.Spec spec : group) {
                Placed next = place(spec, offset);
                if (next == null) {
                    if (!placed.isEmpty()) {  // this query is full: the rest start another
                        query(env, tEnv, placed, items);
                        placed = new ArrayList<>();
                        items = new ArrayList<>();
                    }
                    next = place(spec, 0);
                }
                if (next == null) {  // times too far apart to move: a query of its own, unmoved
                    query(env, tEnv, List.of(Placed.alone(spec)), spec.items);
                    continue;
                }
                placed.add(next);
                for (WindowHarness.Ev e : spec.items) {
                    if (!e.mark || e.t + next.shift >= next.start) {
                        items.add(new WindowHarness.Ev(e.sid, e.seq, e.key, e.t + next.shift, e.mark));
                    }
                }
                items.add(new WindowHarness.Ev(spec.sid, -1, 0, next.close, true));
                offset = next.close + spec.size + 1;
                offset += Math.floorMod(-offset, spec.size);
            }
            if (!placed.isEmpty()) {
                query(env, tEnv, placed, items);
            }
        }
    }

    /** The earliest event time of {@code spec}, or null without events. */
    static Long firstTime(WindowHarness.Spec spec) {
        Long first = null;
        for (WindowHarness.Ev e : spec.items) {
            if (!e.mark && (first == null || e.t < first)) {
                first = e.t;
            }
        }
        return first;
    }

    /**
     * {@code spec} moved so that its first cycle starts at {@code offset} (a multiple of its size),
     * closed one past the end of its last cycle; null when that leaves {@link #SPAN_LIMIT}.
     */
    static Placed place(WindowHarness.Spec spec, long offset) {
        long first = firstTime(spec);
        long base = Math.floorDiv(first, spec.size) * spec.size;
        long last = first;
        for (WindowHarness.Ev e : spec.items) {
            last = Math.max(last, e.t);
        }
        try {
            long shift = Math.subtractExact(offset, base);
            long lastCycleEnd = Math.addExact(Math.floorDiv(Math.subtractExact(last, base), spec.size) * spec.size, spec.size);
            long close = Math.addExact(offset, lastCycleEnd);
            return close > SPAN_LIMIT ? null : new Placed(spec, shift, offset, close);
        } catch (ArithmeticException tooFar) {
            return null;
        }
    }

    /**
     * One query over {@code items} (the scenarios {@code placed}, moved, each followed by its
     * closing watermark): Flink SQL's CUMULATE grouped by scenario and key index.
     */
    static void query(StreamExecutionEnvironment env, StreamTableEnvironment tEnv, List<Placed> placed, List<WindowHarness.Ev> items) {
        WindowHarness.Spec model = placed.get(0).spec;
        final long bound = model.tolerance;
        int id = model.sid;
        DataStream<WindowHarness.Ev> events = env.fromData(items, TypeInformation.of(WindowHarness.Ev.class))
            .name("cumulating-" + id)
            .assignTimestampsAndWatermarks(WatermarkStrategy.<WindowHarness.Ev>forGenerator(ctx -> new WindowHarness.Punctuated(bound))
                .withTimestampAssigner((e, previous) -> e.t))
            .filter(e -> !e.mark);
        Table table = tEnv.fromDataStream(events, Schema.newBuilder()
            .columnByMetadata("rt", DataTypes.TIMESTAMP_LTZ(3), "rowtime")
            .watermark("rt", "SOURCE_WATERMARK()")
            .build());
        String view = "cumulating_" + id;
        tEnv.createTemporaryView(view, table);
        Table fired = tEnv.sqlQuery("SELECT sid, `key`, window_start, window_end, "
            + "LISTAGG(CAST(seq AS STRING)) AS seqs FROM TABLE(CUMULATE(TABLE " + view
            + ", DESCRIPTOR(rt), " + interval(model.slide) + ", " + interval(model.size)
            + ")) GROUP BY sid, `key`, window_start, window_end");
        Map<Integer, long[]> moves = new HashMap<>();
        for (Placed p : placed) {
            moves.put(p.spec.sid, new long[] {p.shift, p.close});
        }
        tEnv.toDataStream(fired).transform("firings-" + id, Types.STRING, new Firings(moves))
            .sinkTo(new Harness.Collect());
    }

    /** A duration in milliseconds as a Flink SQL interval literal. */
    static String interval(long ms) {
        long days = ms / 86_400_000L;
        long rest = ms % 86_400_000L;
        return String.format("INTERVAL '%d %02d:%02d:%02d.%03d' DAY(6) TO SECOND(3)", days,
            rest / 3_600_000L, rest / 60_000L % 60, rest / 1000 % 60, rest % 1000);
    }

    /**
     * The query's rows as {@code O} lines, moved back, with the watermark that emitted them
     * ({@code Long.MAX_VALUE} for a scenario's closing watermark).
     */
    static final class Firings extends AbstractStreamOperator<String> implements OneInputStreamOperator<Row, String> {
        private static final long serialVersionUID = 1L;
        private final Map<Integer, long[]> moves;
        private final List<Row> pending = new ArrayList<>();

        Firings(Map<Integer, long[]> moves) {
            this.moves = moves;
        }

        @Override
        public void processElement(StreamRecord<Row> element) {
            pending.add(element.getValue());
        }

        private void flush(long watermark) {
            for (Row row : pending) {
                int sid = (Integer) row.getField("sid");
                long[] move = moves.get(sid);
                long shift = move[0];
                long mark = watermark >= move[1] ? Long.MAX_VALUE : watermark - shift;
                Harness.OUT.add("O\t" + sid + "\t" + row.getField("key") + "\t"
                    + (millis(row.getField("window_start")) - shift) + "\t"
                    + (millis(row.getField("window_end")) - shift) + "\t" + mark + "\ttimer\t"
                    + row.getField("seqs"));
            }
            pending.clear();
        }

        private static long millis(Object time) {
            return ((LocalDateTime) time).toInstant(ZoneOffset.UTC).toEpochMilli();
        }

        @Override
        public void processWatermark(Watermark mark) throws Exception {
            flush(mark.getTimestamp());
            super.processWatermark(mark);
        }

        @Override
        public void finish() throws Exception {
            flush(Long.MAX_VALUE);
            super.finish();
        }
    }
}
