package windtunnel.jvm;

import java.io.IOException;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.execution.LogicalRDD;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * windtunnel's typed tumbling-count step in one Spark task: the JVM twin of
 * spark_impl/fast_tumbling.py (tumbling_counts), read by spark_impl/jvm_step.py.
 *
 * <p>Input rows: the columns seq, [arrival_ms], time, [key] as integers, in any order. The micro-batch runs
 * in one task ({@code coalesce(1)}, no shuffle) over Spark's internal rows; the result comes
 * back to the driver as one byte array. Rules, per event in seq order: the wall clock is the
 * largest arrival so far; the event's window is {@code [s, s + size)} with
 * {@code s = t - floorMod(t, size)}; it is late (a drop) when the key's clock before it has
 * reached {@code s + span} ({@code span = size + close offset}); otherwise it counts in its
 * window; the key's clock becomes the largest event time seen; a key's open windows close, in
 * start order, at the first event whose clock reaches their {@code start + span}.
 *
 * <p>Wire format (big-endian int64 throughout), input: NONE, unit_ms, size_ms, span_ms,
 * has_arrival, has_key, wall_ms, after_seq_present, after_seq, limit, n_keys, keys[],
 * key_is_null[], clocks[], n_windows, win_key[], win_start[], win_count[]. Output: status (0 rows, 1 a null,
 * 2 a time at or beyond limit, 3 no rows, 4 a row the guard refuses), then for status 0: wall_ms, after_seq, n_new,
 * new_key[], new_first_seq[], n_keys, clocks[], n_drops, seq[], time[], start[], clock[],
 * code[], n_emissions, code[], start[], count[], close_seq[], close_wall[], emit_index[],
 * n_windows, win_key[], win_start[], win_count[] (open windows by key code, then start), n_rows (the
 * micro-batch's rows: the driver sizes the next micro-batch's buffer by it).
 */
public final class TumblingCounts implements FlatMapFunction<Iterator<InternalRow>, byte[]>, Serializable {
    private static final long serialVersionUID = 1L;
    private static final int LONG = 0, INT = 1, SHORT = 2, BYTE = 3, TEXT = 4;
    private static final UTF8String EVENT = UTF8String.fromString("event");
    private final byte[] input;
    private final int[] ordinals;
    private final int[] types;
    private final int guard;
    private final String[] jsonKeys;
    private final int expectedRows = lastRows;
    /** Rows of the last micro-batch run from this driver: the next one's buffer size. */
    private static volatile int lastRows;

    TumblingCounts(byte[] input, int[] ordinals, int[] types, int guard, String[] jsonKeys) {
        this.input = input;
        this.ordinals = ordinals;
        this.types = types;
        this.guard = guard;
        this.jsonKeys = jsonKeys;
    }

    /**
     * The step over {@code batch}: {@code columns} name its columns holding seq, [arrival_ms],
     * the event time and [the key] (integer columns: bigint, int, smallint or tinyint), or, with
     * {@code jsonKeys}, seq, [arrival_ms] and the event as JSON text whose top-level
     * {@code jsonKeys} (the time field, [the key field]) are read by {@link JsonFields};
     * {@code guardColumn}, unless empty, a string column whose rows other than {@code event}
     * (null passes) the step cannot take (control rows: the task declines the micro-batch). The
     * state comes in {@code input}. Raises IllegalArgumentException for a missing column or
     * another column type.
     */
    public static byte[] run(Dataset<Row> batch, String[] columns, String guardColumn, String[] jsonKeys,
            byte[] input) {
        StructType schema = batch.schema();
        boolean json = jsonKeys.length > 0;
        int[] ordinals = new int[columns.length];
        int[] types = new int[columns.length];
        for (int i = 0; i < columns.length; i++) {
            ordinals[i] = schema.fieldIndex(columns[i]);
            DataType type = schema.fields()[ordinals[i]].dataType();
            types[i] = json && i == columns.length - 1 ? TEXT : integerType(columns[i], type);
        }
        int guard = guardColumn.isEmpty() ? -1 : schema.fieldIndex(guardColumn);
        if (guard >= 0 && !(schema.fields()[guard].dataType() instanceof StringType)) {
            throw new IllegalArgumentException("guard column " + guardColumn + " is not a string column");
        }
        List<byte[]> out = rowsOf(batch).toJavaRDD().coalesce(1)
            .mapPartitions(new TumblingCounts(input, ordinals, types, guard, jsonKeys)).collect();
        if (out.isEmpty()) {
            return status(3);
        }
        byte[] answer = out.get(0);
        if (ByteBuffer.wrap(answer).getLong(0) == 0) {
            lastRows = (int) Math.min(ByteBuffer.wrap(answer).getLong(answer.length - 8), 1 << 26);
        }
        return answer;
    }

    /**
     * The micro-batch's rows: the RDD a {@code foreachBatch} DataFrame wraps (Spark hands the
     * micro-batch over as a {@link LogicalRDD} over rows already planned), read as it is;
     * any other DataFrame planned here. Planning a projection over the micro-batch cost 10-20
     * ms per micro-batch, more than the window rules.
     */
    static RDD<InternalRow> rowsOf(Dataset<Row> batch) {
        return readsDirectly(batch) ? ((LogicalRDD) batch.queryExecution().logical()).rdd()
            : batch.queryExecution().toRdd();
    }

    /** True when {@link #rowsOf} reads {@code batch}'s rows as they are (no planning). */
    public static boolean readsDirectly(Dataset<Row> batch) {
        LogicalPlan plan = batch.queryExecution().logical();
        return plan instanceof LogicalRDD && ((LogicalRDD) plan).output().size() == batch.schema().size();
    }

    private static int integerType(String name, DataType type) {
        if (type instanceof LongType) {
            return LONG;
        }
        if (type instanceof IntegerType) {
            return INT;
        }
        if (type instanceof ShortType) {
            return SHORT;
        }
        if (type instanceof ByteType) {
            return BYTE;
        }
        throw new IllegalArgumentException("column " + name + " is " + type.simpleString() + ", not an integer");
    }

    private static long integer(InternalRow row, int ordinal, int type) {
        switch (type) {
            case LONG:
                return row.getLong(ordinal);
            case INT:
                return row.getInt(ordinal);
            case SHORT:
                return row.getShort(ordinal);
            default:
                return row.getByte(ordinal);
        }
    }

    /**
     * {@link #run(Dataset, String[], String, String[], byte[])} with the state read from the file
     * {@code request} and the answer written to the file {@code answer} (files on the driver:
     * Py4J moves large byte arrays slowly, about 15 MB/s).
     */
    public static void runFiles(Dataset<Row> batch, String[] columns, String guardColumn, String[] jsonKeys,
            String request, String answer) throws IOException {
        byte[] input = Files.readAllBytes(Paths.get(request));
        Files.write(Paths.get(answer), run(batch, columns, guardColumn, jsonKeys, input));
    }

    private static byte[] status(long code) {
        return ByteBuffer.allocate(8).putLong(code).array();
    }

    @Override
    public Iterator<byte[]> call(Iterator<InternalRow> rows) {
        return Collections.singletonList(step(rows)).iterator();
    }

    private byte[] step(Iterator<InternalRow> rows) {
        ByteBuffer in = ByteBuffer.wrap(input);
        final long none = in.getLong();
        final long unit = in.getLong();
        final long size = in.getLong();
        final long span = in.getLong();
        final boolean hasArrival = in.getLong() != 0;
        final boolean hasKey = in.getLong() != 0;
        long wall = in.getLong();
        final boolean afterPresent = in.getLong() != 0;
        long afterSeq = in.getLong();
        final long limit = in.getLong();
        int nKeys = (int) in.getLong();
        long[] keyValue = new long[Math.max(16, nKeys * 2)];
        long[] clock = new long[keyValue.length];
        LongIntMap codes = new LongIntMap(Math.max(16, nKeys * 2));
        for (int i = 0; i < nKeys; i++) {
            keyValue[i] = in.getLong();
        }
        for (int i = 0; i < nKeys; i++) {
            if (in.getLong() == 0) { // a null key keeps its code and matches no row
                codes.put(keyValue[i], i);
            }
        }
        for (int i = 0; i < nKeys; i++) {
            clock[i] = in.getLong();
        }
        int nWin = (int) in.getLong();
        long[] carriedKey = readLongs(in, nWin);
        long[] carriedStart = readLongs(in, nWin);
        long[] carriedCount = readLongs(in, nWin);

        // the rows: integer columns (or the time and key read from the JSON text at timeAt)
        boolean json = jsonKeys.length > 0;
        int timeAt = hasArrival ? 2 : 1;
        int width = ordinals.length;
        JsonFields fields = null;
        if (json) {
            byte[][] encoded = new byte[jsonKeys.length][];
            for (int i = 0; i < jsonKeys.length; i++) {
                encoded[i] = jsonKeys[i].getBytes(java.nio.charset.StandardCharsets.UTF_8);
            }
            fields = new JsonFields(encoded);
        }
        final int seqAt = ordinals[0];
        final int arrivalAt = hasArrival ? ordinals[1] : -1;
        // the rows' values in one array, row after row: seq, time, [arrival], [key]
        final int stride = 2 + (hasArrival ? 1 : 0) + (hasKey ? 1 : 0);
        final int arrivalOf = hasArrival ? 2 : -1;
        final int keyOf = stride - 1;
        long[] buf = new long[Math.max(1024, expectedRows + expectedRows / 8) * stride];
        int n = 0;
        while (rows.hasNext()) {
            InternalRow r = rows.next();
            if (!(r instanceof UnsafeRow) || ((UnsafeRow) r).anyNull()) { // else: no null anywhere
                for (int j = 0; j < width; j++) {
                    if (r.isNullAt(ordinals[j])) {
                        return status(1);
                    }
                }
            }
            if (guard >= 0 && !r.isNullAt(guard) && !EVENT.equals(r.getUTF8String(guard))) {
                return status(4);
            }
            long t;
            long key = 0;
            if (fields != null) {
                byte[] bytes = r.getUTF8String(ordinals[timeAt]).getBytes();
                if (!fields.read(bytes, 0, bytes.length)) {
                    return status(1); // not integers as json.loads reads them: the Python step
                }
                t = fields.get(0);
                key = hasKey ? fields.get(1) : 0;
            } else {
                t = integer(r, ordinals[timeAt], types[timeAt]);
                key = hasKey ? integer(r, ordinals[timeAt + 1], types[timeAt + 1]) : 0;
            }
            if (t >= limit || t <= -limit) {
                return status(2);
            }
            int at = n * stride;
            if (at + stride > buf.length) {
                buf = Arrays.copyOf(buf, buf.length * 2);
            }
            buf[at] = integer(r, seqAt, types[0]);
            buf[at + 1] = t;
            if (hasArrival) {
                buf[at + arrivalOf] = integer(r, arrivalAt, types[1]);
            }
            if (hasKey) {
                buf[at + keyOf] = key;
            }
            n++;
        }
        if (n == 0) {
            return status(3);
        }
        int[] order = seqOrder(buf, stride, n);

        // open windows per key code, each list sorted by start
        Windows open = new Windows(keyValue.length);
        for (int i = 0; i < nWin; i++) {
            open.append((int) carriedKey[i], carriedStart[i], carriedCount[i]);
        }
        LongList newKey = new LongList();
        LongList newFirst = new LongList();
        LongList dSeq = new LongList(), dTime = new LongList(), dStart = new LongList();
        LongList dClock = new LongList(), dCode = new LongList();
        LongList eCode = new LongList(), eStart = new LongList(), eCount = new LongList();
        LongList eSeq = new LongList(), eWall = new LongList(), eIndex = new LongList();
        long[] closed = new long[2];
        long lastStart = Long.MIN_VALUE;
        for (int o = 0; o < n; o++) {
            int at = (order == null ? o : order[o]) * stride;
            long seq = buf[at];
            if (hasArrival && buf[at + arrivalOf] > wall) {
                wall = buf[at + arrivalOf];
            }
            long t = buf[at + 1] * unit;
            long keyValueOf = hasKey ? buf[at + keyOf] : 0L;
            int code = codes.get(keyValueOf);
            if (code < 0) {
                code = nKeys++;
                if (code == keyValue.length) {
                    keyValue = Arrays.copyOf(keyValue, code * 2);
                    clock = Arrays.copyOf(clock, code * 2);
                    open.grow(code * 2);
                }
                keyValue[code] = keyValueOf;
                clock[code] = none;
                codes.put(keyValueOf, code);
                newKey.add(keyValueOf);
                newFirst.add(seq);
            }
            long prev = clock[code];
            long start;
            if (t - lastStart >= 0 && t - lastStart < size) { // the window of the last event: no division
                start = lastStart;
            } else {
                start = t - Math.floorMod(t, size);
                lastStart = start;
            }
            if (prev != none && start + span <= prev) {
                dSeq.add(seq);
                dTime.add(t);
                dStart.add(start);
                dClock.add(prev);
                dCode.add(code);
                continue;
            }
            open.deliver(code, start);
            if (prev == none || t > prev) {
                clock[code] = t;
                long index = 0;
                while (open.closeFirst(code, t - span, closed)) {
                    eCode.add(code);
                    eStart.add(closed[0]);
                    eCount.add(closed[1]);
                    eSeq.add(seq);
                    eWall.add(wall);
                    eIndex.add(index++);
                }
            }
        }
        afterSeq = buf[(order == null ? n - 1 : order[n - 1]) * stride];

        int remaining = open.total();
        long bytes = 8L * (9 + 2L * newKey.size + nKeys + 5L * dSeq.size + 6L * eSeq.size + 3L * remaining);
        ByteBuffer out = ByteBuffer.allocate((int) bytes);
        out.putLong(0).putLong(wall).putLong(afterSeq);
        out.putLong(newKey.size);
        newKey.writeTo(out);
        newFirst.writeTo(out);
        out.putLong(nKeys);
        for (int i = 0; i < nKeys; i++) {
            out.putLong(clock[i]);
        }
        out.putLong(dSeq.size);
        dSeq.writeTo(out);
        dTime.writeTo(out);
        dStart.writeTo(out);
        dClock.writeTo(out);
        dCode.writeTo(out);
        out.putLong(eSeq.size);
        eCode.writeTo(out);
        eStart.writeTo(out);
        eCount.writeTo(out);
        eSeq.writeTo(out);
        eWall.writeTo(out);
        eIndex.writeTo(out);
        out.putLong(remaining);
        open.writeTo(out, nKeys);
        out.putLong(n);
        return out.array();
    }

    private static long[] readLongs(ByteBuffer in, int n) {
        long[] values = new long[n];
        for (int i = 0; i < n; i++) {
            values[i] = in.getLong();
        }
        return values;
    }

    /**
     * Row indexes in ascending seq order (stable), or null when the rows already are; row
     * {@code i}'s seq is {@code buf[i * stride]}.
     */
    static int[] seqOrder(long[] buf, int stride, int n) {
        boolean sorted = true;
        for (int i = 1; i < n && sorted; i++) {
            sorted = buf[i * stride] > buf[(i - 1) * stride];
        }
        if (sorted) {
            return null;
        }
        long[] seq = new long[n];
        for (int i = 0; i < n; i++) {
            seq[i] = buf[i * stride];
        }
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        int[] buffer = new int[n];
        for (int width = 1; width < n; width *= 2) { // bottom-up merge sort: stable
            for (int low = 0; low < n; low += 2 * width) {
                int mid = Math.min(low + width, n);
                int high = Math.min(low + 2 * width, n);
                int a = low, b = mid, k = low;
                while (a < mid && b < high) {
                    buffer[k++] = seq[order[b]] < seq[order[a]] ? order[b++] : order[a++];
                }
                while (a < mid) {
                    buffer[k++] = order[a++];
                }
                while (b < high) {
                    buffer[k++] = order[b++];
                }
            }
            int[] swap = order;
            order = buffer;
            buffer = swap;
        }
        return order;
    }

    /** A growable int64 array. */
    static final class LongList {
        long[] values = new long[64];
        int size;

        void add(long value) {
            if (size == values.length) {
                values = Arrays.copyOf(values, size * 2);
            }
            values[size++] = value;
        }

        void writeTo(ByteBuffer out) {
            for (int i = 0; i < size; i++) {
                out.putLong(values[i]);
            }
        }
    }

    /** Open windows per key code: starts ascending with their counts. */
    static final class Windows {
        long[][] starts;
        long[][] counts;
        int[] sizes;

        Windows(int keys) {
            starts = new long[keys][];
            counts = new long[keys][];
            sizes = new int[keys];
        }

        void grow(int keys) {
            starts = Arrays.copyOf(starts, keys);
            counts = Arrays.copyOf(counts, keys);
            sizes = Arrays.copyOf(sizes, keys);
        }

        /** Adds a carried window (carried windows come sorted by key code, then start). */
        void append(int code, long start, long count) {
            insert(code, sizes[code], start, count);
        }

        /** One event counted in window {@code start} of key {@code code}. */
        void deliver(int code, long start) {
            int n = sizes[code];
            long[] s = starts[code];
            int at = n;
            for (int i = 0; i < n; i++) {
                if (s[i] == start) {
                    counts[code][i]++;
                    return;
                }
                if (s[i] > start) {
                    at = i;
                    break;
                }
            }
            insert(code, at, start, 1);
        }

        private void insert(int code, int at, long start, long count) {
            if (starts[code] == null) {
                starts[code] = new long[4];
                counts[code] = new long[4];
            }
            int n = sizes[code];
            if (n == starts[code].length) {
                starts[code] = Arrays.copyOf(starts[code], n * 2);
                counts[code] = Arrays.copyOf(counts[code], n * 2);
            }
            System.arraycopy(starts[code], at, starts[code], at + 1, n - at);
            System.arraycopy(counts[code], at, counts[code], at + 1, n - at);
            starts[code][at] = start;
            counts[code][at] = count;
            sizes[code] = n + 1;
        }

        /** Removes the key's first window when its start is at most {@code upTo}: (start, count) in {@code into}. */
        boolean closeFirst(int code, long upTo, long[] into) {
            int n = sizes[code];
            if (n == 0 || starts[code][0] > upTo) {
                return false;
            }
            into[0] = starts[code][0];
            into[1] = counts[code][0];
            System.arraycopy(starts[code], 1, starts[code], 0, n - 1);
            System.arraycopy(counts[code], 1, counts[code], 0, n - 1);
            sizes[code] = n - 1;
            return true;
        }

        int total() {
            int total = 0;
            for (int size : sizes) {
                total += size;
            }
            return total;
        }

        void writeTo(ByteBuffer out, int keys) {
            for (int c = 0; c < keys; c++) {
                for (int i = 0; i < sizes[c]; i++) {
                    out.putLong(c);
                }
            }
            for (int c = 0; c < keys; c++) {
                for (int i = 0; i < sizes[c]; i++) {
                    out.putLong(starts[c][i]);
                }
            }
            for (int c = 0; c < keys; c++) {
                for (int i = 0; i < sizes[c]; i++) {
                    out.putLong(counts[c][i]);
                }
            }
        }
    }

    /** An open-addressing map from int64 keys to codes (-1: absent). */
    static final class LongIntMap {
        private long[] keys;
        private int[] values;
        private boolean[] used;
        private int size;

        LongIntMap(int capacity) {
            int n = Integer.highestOneBit(Math.max(16, capacity) * 2);
            keys = new long[n];
            values = new int[n];
            used = new boolean[n];
        }

        private static int mix(long key) {
            long h = key * 0x9E3779B97F4A7C15L;
            return (int) (h ^ (h >>> 32));
        }

        int get(long key) {
            int mask = keys.length - 1;
            for (int i = mix(key) & mask; used[i]; i = (i + 1) & mask) {
                if (keys[i] == key) {
                    return values[i];
                }
            }
            return -1;
        }

        void put(long key, int value) {
            if (2 * (size + 1) > keys.length) {
                rehash();
            }
            int mask = keys.length - 1;
            int i = mix(key) & mask;
            while (used[i] && keys[i] != key) {
                i = (i + 1) & mask;
            }
            if (!used[i]) {
                size++;
            }
            used[i] = true;
            keys[i] = key;
            values[i] = value;
        }

        private void rehash() {
            long[] oldKeys = keys;
            int[] oldValues = values;
            boolean[] oldUsed = used;
            keys = new long[oldKeys.length * 2];
            values = new int[keys.length];
            used = new boolean[keys.length];
            size = 0;
            for (int i = 0; i < oldKeys.length; i++) {
                if (oldUsed[i]) {
                    put(oldKeys[i], oldValues[i]);
                }
            }
        }
    }
}
