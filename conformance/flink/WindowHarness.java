package windtunnel.flink;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamUtils;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.datastream.WindowedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.triggers.EventTimeTrigger;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.triggers.TriggerResult;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Runs many window scenarios on Flink's own DataStream window operator in one MiniCluster job,
 * one independent branch per scenario (its items from the shared source, its own watermark
 * generator, its own window operator).
 *
 * <p>Input (tab-separated lines, a scenario's lines in stream order):
 * {@code S sid kind size slide gap lateness tolerance} (kind T tumbling, H hopping, S session,
 * C cumulating: size the max size, slide the step; c the same on a query of its own),
 * {@code E sid seq key t} (an event),
 * {@code W sid t} (a scripted watermark).
 *
 * <p>Output: {@code O sid key start end watermark cause seq,seq,...} per window firing (the
 * window's contents in state order; the watermark is the operator's at the firing; the
 * cause {@code element} or {@code timer}, from Flink's own trigger, see {@link Tagged}),
 * {@code L sid seq} per element in the late side output.
 *
 * <p>The DataStream API has no cumulating window assigner: cumulating scenarios (kinds C and c)
 * run on Flink SQL's own {@code CUMULATE} window aggregation over the same events and
 * watermarks, see {@link CumulateHarness}.
 *
 * <p>Usage: {@code WindowHarness INPUT OUTPUT}. Watermarks are punctuated and deterministic:
 * after every event Flink's own bounded-out-of-orderness formula ({@code max - d - 1}, as in
 * {@code BoundedOutOfOrdernessWatermarks}), at every scripted item its value. Scenarios are
 * split into chunks of {@link #CHUNK}, one source and one task each: a task chains its branches'
 * operators, and finishing a very long chain overflows the stack.
 */
public final class WindowHarness {
    /** Scenarios per source (per task). */
    static final int CHUNK = 50;

    private WindowHarness() {}

    /** One input item: an event ({@code mark} false) or a scripted watermark. */
    public static final class Ev implements Serializable {
        private static final long serialVersionUID = 1L;
        public int sid;
        public int seq;
        public int key;
        public long t;
        public boolean mark;

        public Ev() {}

        Ev(int sid, int seq, int key, long t, boolean mark) {
            this.sid = sid;
            this.seq = seq;
            this.key = key;
            this.t = t;
            this.mark = mark;
        }
    }

    /** A scenario: its window and items. */
    static final class Spec {
        final int sid;
        final String kind;
        final long size;
        final long slide;
        final long gap;
        final long lateness;
        final long tolerance;
        final List<Ev> items = new ArrayList<>();

        Spec(String[] f) {
            sid = Integer.parseInt(f[1]);
            kind = f[2];
            size = Long.parseLong(f[3]);
            slide = Long.parseLong(f[4]);
            gap = Long.parseLong(f[5]);
            lateness = Long.parseLong(f[6]);
            tolerance = Long.parseLong(f[7]);
        }
    }

    /**
     * Flink's bounded-out-of-orderness watermark, emitted after every event instead of on a
     * timer; a scripted item emits its own value. Only rising watermarks are emitted.
     */
    static final class Punctuated implements WatermarkGenerator<Ev> {
        private final long bound;
        private long maxTimestamp;
        private long emitted = Long.MIN_VALUE;

        Punctuated(long bound) {
            this.bound = bound;
            this.maxTimestamp = Long.MIN_VALUE + bound + 1;
        }

        @Override
        public void onEvent(Ev event, long timestamp, WatermarkOutput output) {
            if (event.mark) {
                emit(event.t, output);
            } else {
                maxTimestamp = Math.max(maxTimestamp, timestamp);
                emit(maxTimestamp - bound - 1, output);
            }
        }

        private void emit(long watermark, WatermarkOutput output) {
            if (watermark > emitted) {
                emitted = watermark;
                output.emitWatermark(new Watermark(watermark));
            }
        }

        @Override
        public void onPeriodicEmit(WatermarkOutput output) {}
    }

    /** What made the window operator fire, set by {@link Tagged} on the operator's thread. */
    static final ThreadLocal<String> CAUSE = ThreadLocal.withInitial(() -> "?");

    /**
     * Flink's own {@link EventTimeTrigger}, every call delegated to it; a FIRE is tagged
     * with its cause (an element, or the event-time timer) for {@link Firing} to report.
     */
    static final class Tagged extends Trigger<Object, TimeWindow> {
        private static final long serialVersionUID = 1L;
        private final EventTimeTrigger inner = EventTimeTrigger.create();

        @Override
        public TriggerResult onElement(Object element, long timestamp, TimeWindow window, TriggerContext ctx)
                throws Exception {
            TriggerResult result = inner.onElement(element, timestamp, window, ctx);
            CAUSE.set("element");
            return result;
        }

        @Override
        public TriggerResult onEventTime(long time, TimeWindow window, TriggerContext ctx) {
            TriggerResult result = inner.onEventTime(time, window, ctx);
            CAUSE.set("timer");
            return result;
        }

        @Override
        public TriggerResult onProcessingTime(long time, TimeWindow window, TriggerContext ctx)
                throws Exception {
            return inner.onProcessingTime(time, window, ctx);
        }

        @Override
        public boolean canMerge() {
            return inner.canMerge();
        }

        @Override
        public void onMerge(TimeWindow window, OnMergeContext ctx) {
            inner.onMerge(window, ctx);
        }

        @Override
        public void clear(TimeWindow window, TriggerContext ctx) throws Exception {
            inner.clear(window, ctx);
        }
    }

    /** Reports each firing: key, window, the operator's watermark, its cause, the contents. */
    static final class Firing extends ProcessWindowFunction<Ev, String, Integer, TimeWindow> {
        private static final long serialVersionUID = 1L;
        private final int sid;

        Firing(int sid) {
            this.sid = sid;
        }

        @Override
        public void process(Integer key, Context context, Iterable<Ev> elements, Collector<String> out) {
            StringBuilder line = new StringBuilder("O\t");
            line.append(sid).append('\t').append(key).append('\t')
                .append(context.window().getStart()).append('\t').append(context.window().getEnd())
                .append('\t').append(context.currentWatermark()).append('\t')
                .append(CAUSE.get()).append('\t');
            boolean first = true;
            for (Ev e : elements) {
                if (!first) {
                    line.append(',');
                }
                line.append(e.seq);
                first = false;
            }
            out.collect(line.toString());
        }
    }

    static WindowAssigner<Object, TimeWindow> assigner(Spec spec) {
        switch (spec.kind) {
            case "T":
                return TumblingEventTimeWindows.of(Duration.ofMillis(spec.size));
            case "H":
                return SlidingEventTimeWindows.of(Duration.ofMillis(spec.size), Duration.ofMillis(spec.slide));
            case "S":
                return EventTimeSessionWindows.withGap(Duration.ofMillis(spec.gap));
            default:
                throw new IllegalArgumentException("unknown window kind " + spec.kind);
        }
    }

    /**
     * One scenario's branch: its items (filtered from the one source by scenario id, in
     * order), its own watermark generator, then Flink's window operator keyed by the group
     * index. The stream is reinterpreted as keyed instead of shuffled by keyBy: at
     * parallelism 1 every key is in the one subtask, so the whole job chains into one task.
     */
    static void branch(DataStream<Ev> all, Spec spec) {
        final int sid = spec.sid;
        DataStream<Ev> events = watermarked(all, spec);
        OutputTag<Ev> late = new OutputTag<Ev>("late-" + sid, TypeInformation.of(Ev.class));
        WindowedStream<Ev, Integer, TimeWindow> windowed = DataStreamUtils
            .reinterpretAsKeyedStream(events, e -> e.key, Types.INT)
            .window(assigner(spec))
            .trigger(new Tagged())
            .allowedLateness(Duration.ofMillis(spec.lateness))
            .sideOutputLateData(late);
        SingleOutputStreamOperator<String> fired = windowed.process(new Firing(sid), Types.STRING);
        fired.sinkTo(new Harness.Collect());
        fired.getSideOutput(late).map(e -> "L\t" + sid + "\t" + e.seq).returns(Types.STRING)
            .sinkTo(new Harness.Collect());
    }

    /** One scenario's events with its watermarks (see {@link Punctuated}), scripted items removed. */
    static DataStream<Ev> watermarked(DataStream<Ev> all, Spec spec) {
        final int sid = spec.sid;
        final long bound = spec.tolerance;
        WatermarkStrategy<Ev> strategy = WatermarkStrategy.<Ev>forGenerator(ctx -> new Punctuated(bound))
            .withTimestampAssigner((e, previous) -> e.t);
        return all
            .filter(e -> e.sid == sid)
            .name("scenario-" + sid)
            .assignTimestampsAndWatermarks(strategy)
            .filter(e -> !e.mark);
    }

    static Map<Integer, Spec> read(String path) throws IOException {
        Map<Integer, Spec> specs = new LinkedHashMap<>();
        try (BufferedReader in = Files.newBufferedReader(Paths.get(path), StandardCharsets.UTF_8)) {
            String text;
            while ((text = in.readLine()) != null) {
                if (text.isEmpty()) {
                    continue;
                }
                String[] f = text.split("\t");
                switch (f[0]) {
                    case "S":
                        Spec spec = new Spec(f);
                        specs.put(spec.sid, spec);
                        break;
                    case "E":
                        specs.get(Integer.parseInt(f[1])).items.add(new Ev(Integer.parseInt(f[1]),
                            Integer.parseInt(f[2]), Integer.parseInt(f[3]), Long.parseLong(f[4]), false));
                        break;
                    case "W":
                        specs.get(Integer.parseInt(f[1])).items.add(
                            new Ev(Integer.parseInt(f[1]), -1, 0, Long.parseLong(f[2]), true));
                        break;
                    default:
                        throw new IllegalArgumentException("unknown input line: " + text);
                }
            }
        }
        return specs;
    }

    /** Runs {@code INPUT OUTPUT}: every scenario of INPUT in one job, its lines to OUTPUT. */
    static void run(String[] args) throws Exception {
        Map<Integer, Spec> specs = read(args[0]);
        List<Spec> busy = new ArrayList<>();
        for (Spec spec : specs.values()) {
            if (!spec.items.isEmpty()) {
                busy.add(spec);
            }
        }
        if (!busy.isEmpty()) {
            StreamExecutionEnvironment env = Harness.environment();
            List<Spec> cumulating = new ArrayList<>();
            List<Spec> windowed = new ArrayList<>();
            for (Spec spec : busy) {
                ("C".equalsIgnoreCase(spec.kind) ? cumulating : windowed).add(spec);
            }
            for (int from = 0; from < windowed.size(); from += CHUNK) {
                List<Spec> chunk = windowed.subList(from, Math.min(windowed.size(), from + CHUNK));
                List<Ev> items = new ArrayList<>();
                for (Spec spec : chunk) {
                    items.addAll(spec.items);
                }
                DataStream<Ev> all = env.fromData(items, TypeInformation.of(Ev.class)).name("scenarios-" + from);
                for (Spec spec : chunk) {
                    branch(all, spec);
                }
            }
            if (!cumulating.isEmpty()) {
                StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
                tEnv.getConfig().setLocalTimeZone(ZoneOffset.UTC);
                tEnv.getConfig().set("table.optimizer.agg-phase-strategy", "ONE_PHASE");
                CumulateHarness.build(env, tEnv, cumulating);
            }
            Harness.execute(env, "windtunnel-flink-windows");
        }
        Harness.write(args[1]);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: WindowHarness INPUT OUTPUT");
            System.exit(2);
        }
        run(args);
    }
}
