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
    private static final int[][] SLOTS = { // long, double, object slots per function
        {1, 0, 0}, {1, 0, 0}, {2, 1, 1}, {3, 1, 1}, {2, 1, 1}, {2, 1, 1}, {0, 0, 1}, {0, 0, 1},
        {0, 0, 1}, {0, 0, 1}, {0, 0, 1}, {0, 0, 0}, {0, 0, 0}};
    private static final int MODE_NONE = 0;
    private static final int MODE_LONG = 1;
    private static final int MODE_BIG = 2;
    private static final int MODE_DOUBLE = 3;

    final int[] functions;
    final int[] slots;
    final int[] lAt;
    final int[] dAt;
    final int[] oAt;
    final int nl;
    final int nd;
    final int no;
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
        nl = l;
        nd = d;
        no = o;
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

    private void allocate(Acc acc) {
        acc.l = nl == 0 ? null : new long[nl];
        acc.d = nd == 0 ? null : new double[nd];
        acc.o = no == 0 ? null : new Object[no];
    }

    /** Folds one event into {@code acc}. */
    void add(Acc acc, Values v) {
        if (bySlots.length > 0) {
            acc = row(acc, v);
        }
        for (int i = 0; i < functions.length; i++) {
            int slot = slots[i];
            switch (functions[i]) {
                case COUNT_EVENTS -> acc.l[lAt[i]]++;
                case COUNT -> {
                    if (v.tag(slot) != Values.NULL) {
                        acc.l[lAt[i]]++;
                    }
                }
                case SUM, AVG -> addNumber(acc, i, v, slot);
                case MIN, MAX -> extreme(acc, i, v, slot, functions[i] == MIN);
                case DISTINCT, COUNT_DISTINCT -> {
                    Object value = v.get(slot);
                    if (value != null) {
                        @SuppressWarnings("unchecked")
                        LinkedHashMap<Object, Object> seen = (LinkedHashMap<Object, Object>) acc.o[oAt[i]];
                        if (seen == null) {
                            seen = new LinkedHashMap<>();
                            acc.o[oAt[i]] = seen;
                        }
                        seen.putIfAbsent(GroupKeys.of(value), value);
                    }
                }
                case COLLECT -> {
                    Object value = v.get(slot);
                    if (value != null) {
                        @SuppressWarnings("unchecked")
                        List<Object> list = (List<Object>) acc.o[oAt[i]];
                        if (list == null) {
                            list = new ArrayList<>();
                            acc.o[oAt[i]] = list;
                        }
                        list.add(value);
                    }
                }
                case FIRST -> {
                    if (acc.o[oAt[i]] == null) {
                        acc.o[oAt[i]] = v.get(slot);
                    }
                }
                case LAST -> {
                    Object value = v.get(slot);
                    if (value != null) {
                        acc.o[oAt[i]] = value;
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

    private void addNumber(Acc acc, int i, Values v, int slot) {
        int tag = v.tag(slot);
        int at = lAt[i];
        long[] l = acc.l;
        switch (tag) {
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
                            acc.o[oAt[i]] = BigInteger.valueOf(l[at + 1]).add(BigInteger.valueOf(x));
                        } else {
                            l[at + 1] = sum;
                        }
                    }
                    case MODE_BIG -> acc.o[oAt[i]] = ((BigInteger) acc.o[oAt[i]]).add(BigInteger.valueOf(x));
                    default -> acc.d[dAt[i]] += (double) x;
                }
            }
            case Values.DOUBLE -> addDouble(acc, i, v.doubleAt(slot));
            case Values.OBJECT -> {
                Object value = v.get(slot);
                if (!(value instanceof BigInteger)) {
                    return; // not a number (bool, string, list, object): skipped
                }
                BigInteger x = (BigInteger) value;
                switch ((int) l[at]) {
                    case MODE_NONE -> acc.o[oAt[i]] = x;
                    case MODE_LONG -> acc.o[oAt[i]] = BigInteger.valueOf(l[at + 1]).add(x);
                    case MODE_BIG -> acc.o[oAt[i]] = ((BigInteger) acc.o[oAt[i]]).add(x);
                    default -> acc.d[dAt[i]] += PyValues.toDouble(x);
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

    private void addDouble(Acc acc, int i, double x) {
        long[] l = acc.l;
        int at = lAt[i];
        switch ((int) l[at]) {
            case MODE_NONE -> acc.d[dAt[i]] = x;
            case MODE_LONG -> acc.d[dAt[i]] = (double) l[at + 1] + x;
            case MODE_BIG -> {
                acc.d[dAt[i]] = PyValues.toDouble((BigInteger) acc.o[oAt[i]]) + x;
                acc.o[oAt[i]] = null;
            }
            default -> acc.d[dAt[i]] += x;
        }
        l[at] = MODE_DOUBLE;
    }

    private void extreme(Acc acc, int i, Values v, int slot, boolean min) {
        int tag = v.tag(slot);
        int at = lAt[i];
        long[] l = acc.l;
        int mode = (int) l[at];
        switch (tag) {
            case Values.LONG -> {
                long x = v.longAt(slot);
                if (mode == MODE_NONE || (mode == MODE_LONG ? (min ? x < l[at + 1] : x > l[at + 1])
                        : beats(x, current(acc, i), min))) {
                    l[at] = MODE_LONG;
                    l[at + 1] = x;
                    acc.o[oAt[i]] = null;
                }
            }
            case Values.DOUBLE -> {
                double x = v.doubleAt(slot);
                if (mode == MODE_NONE || (mode == MODE_DOUBLE ? (min ? x < acc.d[dAt[i]] : x > acc.d[dAt[i]])
                        : beats(x, current(acc, i), min))) {
                    l[at] = MODE_DOUBLE;
                    acc.d[dAt[i]] = x;
                    acc.o[oAt[i]] = null;
                }
            }
            case Values.OBJECT -> {
                Object x = v.get(slot);
                if (x instanceof BigInteger && (mode == MODE_NONE || beats(x, current(acc, i), min))) {
                    l[at] = MODE_BIG;
                    acc.o[oAt[i]] = x;
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

    private Object current(Acc acc, int i) {
        return switch ((int) acc.l[lAt[i]]) {
            case MODE_LONG -> acc.l[lAt[i] + 1];
            case MODE_DOUBLE -> acc.d[dAt[i]];
            case MODE_BIG -> acc.o[oAt[i]];
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
    void rows(Acc acc, boolean hasTimes, long startMs, long endMs, RowSink sink) {
        if (bySlots.length == 0) {
            sink.row(row(acc, null, hasTimes, startMs, endMs));
            return;
        }
        for (Acc.ByRow row : acc.rows.values()) {
            sink.row(row(row, row.byValues, hasTimes, startMs, endMs));
        }
    }

    private String row(Acc acc, Object[] byValues, boolean hasTimes, long startMs, long endMs) {
        StringBuilder out = new StringBuilder(16 * prefixes.length + 8);
        if (byValues != null) {
            for (int i = 0; i < byValues.length; i++) {
                out.append(byPrefixes[i]);
                JsonWriter.append(out, byValues[i], false);
            }
        }
        for (int i = 0; i < functions.length; i++) {
            out.append(columnPrefixes[i]);
            result(out, acc, i, hasTimes, startMs, endMs);
        }
        return out.append('}').toString();
    }

    private void result(StringBuilder out, Acc acc, int i, boolean hasTimes, long startMs, long endMs) {
        int at = lAt[i];
        switch (functions[i]) {
            case COUNT_EVENTS, COUNT -> out.append(acc.l[at]);
            case SUM, MIN, MAX -> {
                switch ((int) acc.l[at]) {
                    case MODE_LONG -> out.append(acc.l[at + 1]);
                    case MODE_BIG -> out.append(acc.o[oAt[i]]);
                    case MODE_DOUBLE -> FloatRepr.append(out, acc.d[dAt[i]], true);
                    default -> out.append("null");
                }
            }
            case AVG -> {
                long n = acc.l[at + 2];
                switch ((int) acc.l[at]) {
                    case MODE_LONG -> FloatRepr.append(out, divide(acc.l[at + 1], n), true);
                    case MODE_BIG -> FloatRepr.append(out, PyValues.trueDivide((BigInteger) acc.o[oAt[i]], n), true);
                    case MODE_DOUBLE -> FloatRepr.append(out, acc.d[dAt[i]] / (double) n, true);
                    default -> out.append("null");
                }
            }
            case DISTINCT -> {
                Map<?, ?> seen = (Map<?, ?>) acc.o[oAt[i]];
                JsonWriter.append(out, seen == null ? List.of() : new ArrayList<>(seen.values()), false);
            }
            case COUNT_DISTINCT -> {
                Map<?, ?> seen = (Map<?, ?>) acc.o[oAt[i]];
                out.append(seen == null ? 0 : seen.size());
            }
            case COLLECT -> {
                Object list = acc.o[oAt[i]];
                JsonWriter.append(out, list == null ? List.of() : list, false);
            }
            case FIRST, LAST -> JsonWriter.append(out, acc.o[oAt[i]], false);
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

    // --- state format ---------------------------------------------------------------------
    /** Writes {@code acc} (as {@link #init} and {@link #add} left it). */
    void write(Acc acc, java.io.DataOutputStream out) throws java.io.IOException {
        if (bySlots.length == 0) {
            writeArrays(acc, out);
            return;
        }
        out.writeInt(acc.rows.size());
        for (Acc.ByRow row : acc.rows.values()) {
            for (Object value : row.byValues) {
                Binary.writeValue(out, value);
            }
            writeArrays(row, out);
        }
    }

    /** Reads accumulators written by {@link #write} into {@code acc}. */
    void read(Acc acc, java.io.DataInputStream in) throws java.io.IOException {
        if (bySlots.length == 0) {
            allocate(acc);
            readArrays(acc, in);
            return;
        }
        int n = Binary.length(in);
        acc.rows = new LinkedHashMap<>(Math.max(4, n * 2));
        for (int r = 0; r < n; r++) {
            Object[] values = new Object[bySlots.length];
            Object[] keys = new Object[bySlots.length];
            for (int i = 0; i < values.length; i++) {
                values[i] = Binary.readValue(in);
                keys[i] = GroupKeys.of(values[i]);
            }
            Acc.ByRow row = new Acc.ByRow(values);
            allocate(row);
            readArrays(row, in);
            acc.rows.put(GroupKeys.tuple(keys), row);
        }
    }

    private void writeArrays(Acc acc, java.io.DataOutputStream out) throws java.io.IOException {
        for (int i = 0; i < nl; i++) {
            out.writeLong(acc.l[i]);
        }
        for (int i = 0; i < nd; i++) {
            out.writeLong(Double.doubleToRawLongBits(acc.d[i]));
        }
        for (int i = 0; i < functions.length; i++) {
            if (SLOTS[functions[i]][2] == 0) {
                continue;
            }
            Object value = acc.o[oAt[i]];
            switch (functions[i]) {
                case DISTINCT, COUNT_DISTINCT -> Binary.writeValue(out,
                        value == null ? null : new ArrayList<>(((Map<?, ?>) value).values()));
                default -> Binary.writeValue(out, value);
            }
        }
    }

    private void readArrays(Acc acc, java.io.DataInputStream in) throws java.io.IOException {
        for (int i = 0; i < nl; i++) {
            acc.l[i] = in.readLong();
        }
        for (int i = 0; i < nd; i++) {
            acc.d[i] = Double.longBitsToDouble(in.readLong());
        }
        for (int i = 0; i < functions.length; i++) {
            if (SLOTS[functions[i]][2] == 0) {
                continue;
            }
            Object value = Binary.readValue(in);
            if (value != null && (functions[i] == DISTINCT || functions[i] == COUNT_DISTINCT)) {
                LinkedHashMap<Object, Object> seen = new LinkedHashMap<>();
                for (Object member : (List<?>) value) {
                    seen.putIfAbsent(GroupKeys.of(member), member);
                }
                value = seen;
            }
            acc.o[oAt[i]] = value;
        }
    }
}
