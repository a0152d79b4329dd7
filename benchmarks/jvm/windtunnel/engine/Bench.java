package windtunnel.engine;

import java.util.HashMap;
import java.util.Random;

/**
 * A benchmark of one slice on one core (main class): events per second of the thread's CPU time
 * (so a busy machine does not skew it), window deliveries per second, outputs, the state size, and the ratio against a baseline run in the same JVM (a
 * plain {@code HashMap} of per-window counters doing the least the shape needs: no clocks,
 * late test, idle timers or output rows).
 *
 * <p>Shapes: {@code realistic} (string user ids over 20,000 users, 10-minute windows every
 * minute, tolerance 2 minutes, count + sum + avg of a double, 5% of events up to 2 minutes out
 * of order, one event every 7 ms on average) and {@code tumbling} (1000 long keys, 1-minute
 * tumbling {@code count()}); also {@code idle} (the realistic shape with a 5-minute idle timeout)
 * and {@code sessions} (its stream in 5-minute-gap sessions, tolerance 2 minutes, Tenzir's
 * reorder buffer; no baseline). The engine's time counts the events and the end of input, not the
 * state snapshot taken before the end (its time is printed apart). Arguments: shape (or {@code all}), events (default 2,000,000),
 * rounds (default 5; the first is warm-up, the median of the rest is printed).
 *
 * <p>Before it prints a time, each shape's state must decode to as many keys as the slice holds,
 * and on {@code tumbling} (in order, tolerance 0: no drops) the engine must emit one output per
 * (key, window) the baseline counted; else it throws {@link IllegalStateException}.
 */
public final class Bench {
    private Bench() {
    }

    private static final String REALISTIC = "{\"engine_format\":1,\"kind\":\"fixed\",\"on\":\"ts\","
            + "\"fields\":[\"ts\",\"user\",\"amount\"],\"group_by\":[\"user\"],\"aggregate\":["
            + "{\"name\":\"n\",\"function\":\"count\",\"field\":null},"
            + "{\"name\":\"total\",\"function\":\"sum\",\"field\":\"amount\"},"
            + "{\"name\":\"mean\",\"function\":\"avg\",\"field\":\"amount\"}],\"aggregate_by\":[],"
            + "\"time_unit_ms\":1,\"start_wall_ms\":0,\"size_ms\":600000,\"hop_ms\":60000,"
            + "\"tolerance_ms\":120000,\"idle_timeout_ms\":null}";
    private static final String IDLE = REALISTIC.replace("\"idle_timeout_ms\":null", "\"idle_timeout_ms\":300000");
    private static final String SESSIONS = "{\"engine_format\":1,\"kind\":\"session\",\"on\":\"ts\","
            + "\"fields\":[\"ts\",\"user\",\"amount\"],\"group_by\":[\"user\"],\"aggregate\":["
            + "{\"name\":\"n\",\"function\":\"count\",\"field\":null},"
            + "{\"name\":\"total\",\"function\":\"sum\",\"field\":\"amount\"},"
            + "{\"name\":\"mean\",\"function\":\"avg\",\"field\":\"amount\"}],\"aggregate_by\":[],"
            + "\"time_unit_ms\":1,\"start_wall_ms\":0,\"gap_ms\":300000,\"tolerance_ms\":120000,"
            + "\"max_duration_ms\":null,\"max_events\":null,\"idle_timeout_ms\":null,\"session_order\":\"reorder\"}";
    private static final String TUMBLING = "{\"engine_format\":1,\"kind\":\"fixed\",\"on\":\"ts\","
            + "\"fields\":[\"ts\",\"key\"],\"group_by\":[\"key\"],\"aggregate\":["
            + "{\"name\":\"n\",\"function\":\"count\",\"field\":null}],\"aggregate_by\":[],"
            + "\"time_unit_ms\":1,\"start_wall_ms\":0,\"size_ms\":60000,\"hop_ms\":60000,"
            + "\"tolerance_ms\":0,\"idle_timeout_ms\":null}";

    /** A generated stream: per event its time, arrival, key and value. */
    private static final class Stream {
        final long[] times;
        final long[] arrivals;
        final String[] userKeys;
        final long[] longKeys;
        final double[] values;

        Stream(int n) {
            times = new long[n];
            arrivals = new long[n];
            userKeys = new String[n];
            longKeys = new long[n];
            values = new double[n];
        }
    }

    private static Stream realistic(int n) {
        Random rng = new Random(21);
        String[] users = new String[20_000];
        for (int i = 0; i < users.length; i++) {
            users[i] = "user-" + i;
        }
        Stream s = new Stream(n);
        long clock = 1_700_000_000_000L;
        for (int i = 0; i < n; i++) {
            clock += rng.nextInt(15); // 7 ms on average
            long t = clock;
            if (rng.nextInt(20) == 0) {
                t -= rng.nextInt(120_001); // 5%: up to 2 minutes out of order
            }
            s.times[i] = t;
            s.arrivals[i] = clock;
            s.userKeys[i] = users[rng.nextInt(users.length)];
            s.values[i] = Math.round(rng.nextDouble() * 10_000) / 100.0;
        }
        return s;
    }

    private static Stream tumbling(int n) {
        Random rng = new Random(7);
        Stream s = new Stream(n);
        long clock = 1_700_000_000_000L;
        for (int i = 0; i < n; i++) {
            clock += rng.nextInt(3);
            s.times[i] = clock;
            s.arrivals[i] = clock;
            s.longKeys[i] = rng.nextInt(1000);
        }
        return s;
    }

    /** Counts outputs and touches each one (so no work is optimised away). */
    private static final class Sink implements Out {
        long outputs;
        long chars;

        @Override
        public void accept(OutRecord record) {
            outputs++;
            chars += record.row == null ? record.message.length() : record.row.length();
        }
    }

    private static long[] engine(Spec spec, Stream s, boolean strings) {
        Slice slice = new Slice(spec);
        EventFields fields = new EventFields(spec);
        Sink sink = new Sink();
        int n = s.times.length;
        long wall = Long.MIN_VALUE;
        for (int i = 0; i < n; i++) {
            if (s.arrivals[i] > wall) {
                wall = s.arrivals[i];
                slice.wall(wall, i - 1, sink);
            }
            fields.setLong(0, s.times[i]);
            if (strings) {
                fields.set(1, s.userKeys[i]);
                fields.setDouble(2, s.values[i]);
            } else {
                fields.setLong(1, s.longKeys[i]);
            }
            slice.event(i, fields, sink);
        }
        java.lang.management.ThreadMXBean cpu = java.lang.management.ManagementFactory.getThreadMXBean();
        long t0 = cpu.getCurrentThreadCpuTime();
        byte[] state = StateCodec.snapshot(slice);
        long t1 = cpu.getCurrentThreadCpuTime();
        Slice copy = StateCodec.fromSnapshot(spec, state);
        long t2 = cpu.getCurrentThreadCpuTime();
        int keys = slice.keyCount();
        slice.end(n - 1, sink);
        long t3 = cpu.getCurrentThreadCpuTime();
        return new long[] {sink.outputs, sink.chars, state.length, keys, t1 - t0, t2 - t1, t3 - t2,
            copy.keyCount()};
    }

    /** The baseline: per-(key, window) counters in a HashMap, closed by a per-key max time;
     * returns the (key, window) pairs it counted. */
    private static long baseline(Stream s, boolean strings, long size, long hop) {
        HashMap<Object, long[]> keys = new HashMap<>();
        HashMap<String, double[]> windows = new HashMap<>();
        long emitted = 0;
        for (int i = 0; i < s.times.length; i++) {
            Object key = strings ? s.userKeys[i] : (Object) s.longKeys[i];
            long t = s.times[i];
            long[] clock = keys.computeIfAbsent(key, k -> new long[] {Long.MIN_VALUE});
            long last = t - Math.floorMod(t, hop);
            for (long start = last - size + hop; start <= last; start += hop) {
                double[] acc = windows.computeIfAbsent(key + "/" + start, k -> new double[2]);
                acc[0]++;
                acc[1] += s.values[i];
            }
            if (t > clock[0]) {
                long old = clock[0];
                clock[0] = t;
                for (long start = (old == Long.MIN_VALUE ? last : old - Math.floorMod(old, hop)) - size; start
                        <= t - size; start += hop) {
                    if (windows.remove(key + "/" + start) != null) {
                        emitted++;
                    }
                }
            }
        }
        return emitted + windows.size();
    }

    private static void run(String name, Spec spec, Stream s, boolean strings, int rounds) {
        boolean sessions = spec.kind == Spec.Kind.SESSION;
        long size = sessions ? 1 : spec.sizeMs;
        long hop = sessions ? 1 : spec.hopMs;
        double[] engineSeconds = new double[rounds];
        double[] baseSeconds = new double[rounds];
        long[] result = null;
        long windows = -1;
        java.lang.management.ThreadMXBean cpu = java.lang.management.ManagementFactory.getThreadMXBean();
        for (int r = 0; r < rounds; r++) {
            long t0 = cpu.getCurrentThreadCpuTime();
            result = engine(spec, s, strings);
            long t1 = cpu.getCurrentThreadCpuTime() - result[4] - result[5];
            if (!sessions) {
                windows = baseline(s, strings, size, hop);
            }
            long t2 = cpu.getCurrentThreadCpuTime();
            if (r == 0) {
                check(name, result, windows);
            }
            engineSeconds[r] = (t1 - t0) / 1e9;
            baseSeconds[r] = (t2 - t1) / 1e9;
        }
        double engineTime = median(engineSeconds, rounds);
        double baseTime = median(baseSeconds, rounds);
        int n = s.times.length;
        long deliveries = (long) n * (size / hop);
        System.out.printf("%s: %,d events, %,d keys, %,d outputs, state %,d bytes before the end (%.0f bytes/key)%n",
                name, n, result[3], result[0], result[2], result[2] / (double) result[3]);
        System.out.printf("  state: snapshot %.3f s, decode %.3f s; end of input %.3f s cpu%n",
                result[4] / 1e9, result[5] / 1e9, result[6] / 1e9);
        System.out.printf("  engine   %.3f s cpu  %,.0f events/s  %,.0f window deliveries/s%n",
                engineTime, n / engineTime, deliveries / engineTime);
        if (!sessions) {
            System.out.printf("  baseline %.3f s cpu  %,.0f events/s (HashMap counters, no semantics)%n",
                    baseTime, n / baseTime);
            System.out.printf("  ratio engine/baseline throughput: %.2fx%n", baseTime / engineTime);
        }
    }

    /** Throws unless the decoded state holds the slice's keys and, on {@code tumbling}, the
     * engine's outputs are the baseline's (key, window) pairs. */
    private static void check(String name, long[] result, long windows) {
        if (result[7] != result[3]) {
            throw new IllegalStateException(name + ": the decoded state holds " + result[7] + " keys, the slice "
                    + result[3]);
        }
        if (name.equals("tumbling")) {
            if (result[0] != windows) {
                throw new IllegalStateException("tumbling: the engine emitted " + result[0]
                        + " outputs, the baseline counted " + windows + " (key, window) pairs");
            }
            System.out.printf("check: tumbling: the engine's %,d outputs are the baseline's (key, window) pairs%n",
                    windows);
        }
        System.out.printf("check: %s: the state decodes to the slice's %,d keys%n", name, result[3]);
    }

    private static double median(double[] seconds, int rounds) {
        double[] measured = java.util.Arrays.copyOfRange(seconds, rounds > 1 ? 1 : 0, rounds);
        java.util.Arrays.sort(measured);
        return measured[measured.length / 2];
    }

    public static void main(String[] args) {
        String shape = args.length > 0 ? args[0] : "all";
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 2_000_000;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        if (shape.equals("all") || shape.equals("realistic")) {
            run("realistic", Spec.parse(REALISTIC), realistic(n), true, rounds);
        }
        if (shape.equals("all") || shape.equals("idle")) {
            run("realistic with idle_timeout 5min", Spec.parse(IDLE), realistic(n), true, rounds);
        }
        if (shape.equals("all") || shape.equals("sessions")) {
            run("sessions", Spec.parse(SESSIONS), realistic(n), true, rounds);
        }
        if (shape.equals("all") || shape.equals("tumbling")) {
            run("tumbling", Spec.parse(TUMBLING), tumbling(n), false, rounds);
        }
    }
}
