package windtunnel.engine;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A query's aggregate block, compiled: one column per aggregation ({@code count()},
 * {@code count(x)}, {@code sum}, {@code avg}, {@code min}, {@code max}, {@code distinct},
 * {@code count_distinct}, {@code collect}, {@code first}, {@code last}, {@code window_start()},
 * {@code window_end()}) with the oracle's null handling ({@code oracle/model/aggregates.py}):
 * {@code count()} counts events, {@code count(x)} non-null values; the others skip nulls, and
 * sum/avg/min/max skip values that are not numbers (booleans included). Ints add exactly (past
 * 64 bits as BigInteger), floats in delivery order; avg is Python's true division; min/max
 * compare ints and floats exactly and keep the value's type.
 */
public final class Aggregates {
    static final int COUNT_EVENTS = 0;
    static final int COUNT = 1;
    static final int SUM = 2;
    static final int AVG = 3;
    static final int MIN = 4;
    static final int MAX = 5;
    static final int DISTINCT = 6;
    static final int COUNT_DISTINCT = 7;
    static final int COLLECT = 8;
    static final int FIRST = 9;
    static final int LAST = 10;
    static final int WINDOW_START = 11;
    static final int WINDOW_END = 12;
    private static final String[] NAMES = {"count", "count", "sum", "avg", "min", "max", "distinct",
        "count_distinct", "collect", "first", "last", "window_start", "window_end"};
    static final int[][] SLOTS = { // long, double, object slots per function
        {1, 0, 0}, {1, 0, 0}, {2, 1, 1}, {3, 1, 1}, {2, 1, 1}, {2, 1, 1}, {0, 0, 1}, {0, 0, 1},
        {0, 0, 1}, {0, 0, 1}, {0, 0, 1}, {0, 0, 0}, {0, 0, 0}};
    private static final int MODE_NONE = 0;
    private static final int MODE_LONG = 1;
    private static final int MODE_BIG = 2;
    private static final int MODE_DOUBLE = 3;

    final int[] functions;
    final int[] slots;
    final int[] lAt; // per column: its first long slot (float slots are longs holding raw bits)
    final int[] dAt; // per column: its float slot, a long slot too
    final int[] oAt;
    /** Long slots per window (floats held as their raw bits). */
    final int stride;
    /** Object slots per window. */
    final int objects;
    final int[] bySlots;
    private final String[] prefixes; // '{"name": ' then ', "name": ' for each column of a row
    private final String[] byPrefixes;
    private final String[] columnPrefixes;

    /** Finds the slot of a field path (raising for an unknown one). */
    interface SlotOf {
        int slot(String path, String where);
    }

    private Aggregates(List<String> names, int[] functions, int[] slots, List<String> by, int[] bySlots) {
        this.functions = functions;
        this.slots = slots;
        this.bySlots = bySlots;
        int n = functions.length;
        lAt = new int[n];
        dAt = new int[n];
        oAt = new int[n];
        int l = 0;
        int d = 0;
        int o = 0;
        for (int i = 0; i < n; i++) {
            lAt[i] = l;
            dAt[i] = d;
            oAt[i] = o;
            l += SLOTS[functions[i]][0];
            d += SLOTS[functions[i]][1];
            o += SLOTS[functions[i]][2];
        }
        for (int i = 0; i < n; i++) {
            dAt[i] += l; // float slots follow the long slots
        }
        stride = l + d;
        objects = o;
        List<String> all = new ArrayList<>(by);
        all.addAll(names);
        prefixes = new String[all.size()];
        for (int i = 0; i < prefixes.length; i++) {
            StringBuilder text = new StringBuilder(i == 0 ? "{" : ", ");
            JsonWriter.string(text, all.get(i));
            prefixes[i] = text.append(": ").toString();
        }
        byPrefixes = java.util.Arrays.copyOfRange(prefixes, 0, by.size());
        columnPrefixes = java.util.Arrays.copyOfRange(prefixes, by.size(), prefixes.length);
    }

    static Aggregates parse(Object block, List<String> by, SlotOf slotOf) {
        if (!(block instanceof List) || ((List<?>) block).isEmpty()) {
            throw new IllegalArgumentException("engine spec: aggregate: give a non-empty list");
        }
        List<?> items = (List<?>) block;
        List<String> names = new ArrayList<>();
        int[] functions = new int[items.size()];
        int[] slots = new int[items.size()];
        for (int i = 0; i < items.size(); i++) {
            if (!(items.get(i) instanceof Map)) {
                throw new IllegalArgumentException("engine spec: aggregate[" + i + "]: give an object");
            }
            Map<?, ?> item = (Map<?, ?>) items.get(i);
            Object name = item.get("name");
            Object function = item.get("function");
            Object field = item.get("field");
            int code = java.util.Arrays.asList(NAMES).indexOf(function);
            if (!(name instanceof String) || code < 0 || (field != null && !(field instanceof String))) {
                throw new IllegalArgumentException("engine spec: aggregate[" + i + "]="
                        + JsonWriter.write(item) + ": give name, a known function and a field or null");
            }
            if (code == COUNT_EVENTS && field != null) {
                code = COUNT; // count(x) counts the non-null values of x
            }
            boolean takesField = code != COUNT_EVENTS && code != WINDOW_START && code != WINDOW_END;
            if (takesField != (field != null)) {
                throw new IllegalArgumentException("engine spec: aggregate[" + i + "]="
                        + JsonWriter.write(item) + ": " + function + (takesField ? " needs" : " takes no") + " field");
            }
            names.add((String) name);
            functions[i] = code;
            slots[i] = field == null ? -1 : slotOf.slot((String) field, "aggregate");
        }
        int[] bySlots = new int[by.size()];
        for (int i = 0; i < bySlots.length; i++) {
            bySlots[i] = slotOf.slot(by.get(i), "aggregate_by");
        }
        return new Aggregates(names, functions, slots, by, bySlots);
    }

    /** Empty accumulators. */
    void init(Acc acc) {
        if (bySlots.length > 0) {
            acc.rows = new LinkedHashMap<>(4);
            return;
        }
        allocate(acc);
    }

    void allocate(Acc acc) {
        acc.l = new long[stride];
        acc.o = objects == 0 ? null : new Object[objects];
    }

    /** Folds one event into {@code acc}. */
    void add(Acc acc, Values v) {
        if (bySlots.length > 0) {
            acc = row(acc, v);
        }
        add(acc.l, 0, acc.o, 0, v);
    }

    /** Empties the window at {@code l[lb..]}, {@code o[ob..]}. */
    void clear(long[] l, int lb, Object[] o, int ob) {
        java.util.Arrays.fill(l, lb, lb + stride, 0L);
        if (objects > 0) {
            java.util.Arrays.fill(o, ob, ob + objects, null);
        }
    }

    /** Folds one event into the window at {@code l[lb..]}, {@code o[ob..]}. */
    void add(long[] l, int lb, Object[] o, int ob, Values v) {
        for (int i = 0; i < functions.length; i++) {
            int slot = slots[i];
            switch (functions[i]) {
                case COUNT_EVENTS -> l[lb + lAt[i]]++;
                case COUNT -> {
                    if (v.tag(slot) != Values.NULL) {
                        l[lb + lAt[i]]++;
                    }
                }
                case SUM, AVG -> addNumber(l, lb, o, ob, i, v, slot);
                case MIN, MAX -> extreme(l, lb, o, ob, i, v, slot, functions[i] == MIN);
                case DISTINCT, COUNT_DISTINCT -> {
                    Object value = v.get(slot);
                    if (value != null) {
                        @SuppressWarnings("unchecked")
                        LinkedHashMap<Object, Object> seen = (LinkedHashMap<Object, Object>) o[ob + oAt[i]];
                        if (seen == null) {
                            seen = new LinkedHashMap<>();
                            o[ob + oAt[i]] = seen;
                        }
                        seen.putIfAbsent(GroupKeys.of(value), value);
                    }
                }
                case COLLECT -> {
                    Object value = v.get(slot);
                    if (value != null) {
                        @SuppressWarnings("unchecked")
                        List<Object> list = (List<Object>) o[ob + oAt[i]];
                        if (list == null) {
                            list = new ArrayList<>();
                            o[ob + oAt[i]] = list;
                        }
                        list.add(value);
                    }
                }
                case FIRST -> {
                    if (o[ob + oAt[i]] == null) {
                        o[ob + oAt[i]] = v.get(slot);
                    }
                }
                case LAST -> {
                    Object value = v.get(slot);
                    if (value != null) {
                        o[ob + oAt[i]] = value;
                    }
                }
                default -> {
                }
            }
        }
    }

    private Acc row(Acc acc, Values v) {
        Object[] values = new Object[bySlots.length];
        Object[] keys = new Object[bySlots.length];
        for (int i = 0; i < bySlots.length; i++) {
            values[i] = v.get(bySlots[i]);
            keys[i] = GroupKeys.of(values[i]);
        }
        Object key = GroupKeys.tuple(keys);
        Acc.ByRow row = acc.rows.get(key);
        if (row == null) {
            row = new Acc.ByRow(values);
            allocate(row);
            acc.rows.put(key, row);
        }
        return row;
    }

    private static double dbl(long[] l, int at) {
        return Double.longBitsToDouble(l[at]);
    }

    private static void dbl(long[] l, int at, double value) {
        l[at] = Double.doubleToRawLongBits(value);
    }

    private void addNumber(long[] l, int lb, Object[] o, int ob, int i, Values v, int slot) {
        int at = lb + lAt[i];
        int dat = lb + dAt[i];
        int oat = ob + oAt[i];
        switch (v.tag(slot)) {
            case Values.LONG -> {
                long x = v.longAt(slot);
                switch ((int) l[at]) {
                    case MODE_NONE -> {
                        l[at] = MODE_LONG;
                        l[at + 1] = x;
                    }
                    case MODE_LONG -> {
                        long sum = l[at + 1] + x;
                        if (((l[at + 1] ^ sum) & (x ^ sum)) < 0) {
                            l[at] = MODE_BIG;
                            o[oat] = BigInteger.valueOf(l[at + 1]).add(BigInteger.valueOf(x));
                        } else {
                            l[at + 1] = sum;
                        }
                    }
                    case MODE_BIG -> o[oat] = ((BigInteger) o[oat]).add(BigInteger.valueOf(x));
                    default -> dbl(l, dat, dbl(l, dat) + (double) x);
                }
            }
            case Values.DOUBLE -> {
                double x = v.doubleAt(slot);
                switch ((int) l[at]) {
                    case MODE_NONE -> dbl(l, dat, x);
                    case MODE_LONG -> dbl(l, dat, (double) l[at + 1] + x);
                    case MODE_BIG -> {
                        dbl(l, dat, PyValues.toDouble((BigInteger) o[oat]) + x);
                        o[oat] = null;
                    }
                    default -> dbl(l, dat, dbl(l, dat) + x);
                }
                l[at] = MODE_DOUBLE;
            }
            case Values.OBJECT -> {
                Object value = v.get(slot);
                if (!(value instanceof BigInteger)) {
                    return; // not a number (bool, string, list, object): skipped
                }
                BigInteger x = (BigInteger) value;
                switch ((int) l[at]) {
                    case MODE_NONE -> o[oat] = x;
                    case MODE_LONG -> o[oat] = BigInteger.valueOf(l[at + 1]).add(x);
                    case MODE_BIG -> o[oat] = ((BigInteger) o[oat]).add(x);
                    default -> dbl(l, dat, dbl(l, dat) + PyValues.toDouble(x));
                }
                if (l[at] != MODE_DOUBLE) {
                    l[at] = MODE_BIG;
                }
            }
            default -> {
                return;
            }
        }
        if (functions[i] == AVG) {
            l[at + 2]++;
        }
    }

    private void extreme(long[] l, int lb, Object[] o, int ob, int i, Values v, int slot, boolean min) {
        int at = lb + lAt[i];
        int dat = lb + dAt[i];
        int oat = ob + oAt[i];
        int mode = (int) l[at];
        switch (v.tag(slot)) {
            case Values.LONG -> {
                long x = v.longAt(slot);
                if (mode == MODE_NONE || (mode == MODE_LONG ? (min ? x < l[at + 1] : x > l[at + 1])
                        : beats(x, current(l, lb, o, ob, i), min))) {
                    l[at] = MODE_LONG;
                    l[at + 1] = x;
                    o[oat] = null;
                }
            }
            case Values.DOUBLE -> {
                double x = v.doubleAt(slot);
                if (mode == MODE_NONE || (mode == MODE_DOUBLE ? (min ? x < dbl(l, dat) : x > dbl(l, dat))
                        : beats(x, current(l, lb, o, ob, i), min))) {
                    l[at] = MODE_DOUBLE;
                    dbl(l, dat, x);
                    o[oat] = null;
                }
            }
            case Values.OBJECT -> {
                Object x = v.get(slot);
                if (x instanceof BigInteger && (mode == MODE_NONE || beats(x, current(l, lb, o, ob, i), min))) {
                    l[at] = MODE_BIG;
                    o[oat] = x;
                }
            }
            default -> {
            }
        }
    }

    private static boolean beats(Object x, Object current, boolean min) {
        int c = PyValues.compare(x, current);
        return c != 2 && (min ? c < 0 : c > 0);
    }

    private Object current(long[] l, int lb, Object[] o, int ob, int i) {
        return switch ((int) l[lb + lAt[i]]) {
            case MODE_LONG -> l[lb + lAt[i] + 1];
            case MODE_DOUBLE -> dbl(l, lb + dAt[i]);
            case MODE_BIG -> o[ob + oAt[i]];
            default -> null;
        };
    }

    /** Receives each output row's JSON text. */
    interface RowSink {
        void row(String json);
    }

    /**
     * The output rows of {@code acc} as JSON texts (one, or one per {@code aggregate_by} value in
     * first-seen order); {@code hasTimes} false gives null window bounds (count windows).
     */
    void rows(Acc acc, boolean hasTimes, long startMs, long endMs, StringBuilder buffer, RowSink sink) {
        if (bySlots.length == 0) {
            sink.row(row(acc.l, 0, acc.o, 0, null, hasTimes, startMs, endMs, buffer));
            return;
        }
        for (Acc.ByRow row : acc.rows.values()) {
            sink.row(row(row.l, 0, row.o, 0, row.byValues, hasTimes, startMs, endMs, buffer));
        }
    }

    /** True when a window gives one row per {@code aggregate_by} value ({@link #rows}). */
    boolean split() {
        return bySlots.length > 0;
    }

    /** The one output row of the window at {@code l[lb..]}, {@code o[ob..]} (not {@link #split}). */
    String row(long[] l, int lb, Object[] o, int ob, boolean hasTimes, long startMs, long endMs, StringBuilder buffer) {
        return row(l, lb, o, ob, null, hasTimes, startMs, endMs, buffer);
    }

    private String row(long[] l, int lb, Object[] o, int ob, Object[] byValues, boolean hasTimes, long startMs,
            long endMs, StringBuilder out) {
        out.setLength(0);
        if (byValues != null) {
            for (int i = 0; i < byValues.length; i++) {
                out.append(byPrefixes[i]);
                JsonWriter.append(out, byValues[i], false);
            }
        }
        for (int i = 0; i < functions.length; i++) {
            out.append(columnPrefixes[i]);
            result(out, l, lb, o, ob, i, hasTimes, startMs, endMs);
        }
        return out.append('}').toString();
    }

    private void result(StringBuilder out, long[] l, int lb, Object[] o, int ob, int i, boolean hasTimes,
            long startMs, long endMs) {
        int at = lb + lAt[i];
        int oat = ob + oAt[i];
        switch (functions[i]) {
            case COUNT_EVENTS, COUNT -> out.append(l[at]);
            case SUM, MIN, MAX -> {
                switch ((int) l[at]) {
                    case MODE_LONG -> out.append(l[at + 1]);
                    case MODE_BIG -> out.append(o[oat]);
                    case MODE_DOUBLE -> FloatRepr.append(out, dbl(l, lb + dAt[i]), true);
                    default -> out.append("null");
                }
            }
            case AVG -> {
                long n = l[at + 2];
                switch ((int) l[at]) {
                    case MODE_LONG -> FloatRepr.append(out, divide(l[at + 1], n), true);
                    case MODE_BIG -> FloatRepr.append(out, PyValues.trueDivide((BigInteger) o[oat], n), true);
                    case MODE_DOUBLE -> FloatRepr.append(out, dbl(l, lb + dAt[i]) / (double) n, true);
                    default -> out.append("null");
                }
            }
            case DISTINCT -> {
                Map<?, ?> seen = (Map<?, ?>) o[oat];
                JsonWriter.append(out, seen == null ? List.of() : new ArrayList<>(seen.values()), false);
            }
            case COUNT_DISTINCT -> {
                Map<?, ?> seen = (Map<?, ?>) o[oat];
                out.append(seen == null ? 0 : seen.size());
            }
            case COLLECT -> {
                Object list = o[oat];
                JsonWriter.append(out, list == null ? List.of() : list, false);
            }
            case FIRST, LAST -> JsonWriter.append(out, o[oat], false);
            case WINDOW_START -> out.append(hasTimes ? Long.toString(startMs) : "null");
            case WINDOW_END -> out.append(hasTimes ? Long.toString(endMs) : "null");
            default -> throw new IllegalStateException("function " + functions[i]);
        }
    }

    private static double divide(long sum, long n) {
        if (Math.abs(sum) <= (1L << 53)) {
            return (double) sum / (double) n;
        }
        return PyValues.trueDivide(BigInteger.valueOf(sum), n);
    }
}
