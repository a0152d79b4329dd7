package windtunnel.engine;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Accumulators in the state format, laid out by {@link Aggregates}: the long slots as they are
 * (floats as their raw bits), then each object slot as a value ({@link Binary}); a distinct
 * set as the list of its members in first-seen order; with {@code aggregate_by}, the number of
 * rows, then each row's values and accumulators.
 */
final class AccState {
    private AccState() {
    }

    /** Writes {@code acc} (as {@link Aggregates#init} and {@link Aggregates#add} left it). */
    static void write(Aggregates a, Acc acc, java.io.DataOutputStream out) throws java.io.IOException {
        if (a.bySlots.length == 0) {
            write(a, acc.l, 0, acc.o, 0, out);
            return;
        }
        out.writeInt(acc.rows.size());
        for (Acc.ByRow row : acc.rows.values()) {
            for (Object value : row.byValues) {
                Binary.writeValue(out, value);
            }
            write(a, row.l, 0, row.o, 0, out);
        }
    }

    /** Reads accumulators written by {@link #write} into {@code acc}. */
    static void read(Aggregates a, Acc acc, java.io.DataInputStream in) throws java.io.IOException {
        if (a.bySlots.length == 0) {
            a.allocate(acc);
            read(a, acc.l, 0, acc.o, 0, in);
            return;
        }
        int n = Binary.length(in);
        acc.rows = new LinkedHashMap<>(Math.max(4, n * 2));
        for (int r = 0; r < n; r++) {
            Object[] values = new Object[a.bySlots.length];
            Object[] keys = new Object[a.bySlots.length];
            for (int i = 0; i < values.length; i++) {
                values[i] = Binary.readValue(in);
                keys[i] = GroupKeys.of(values[i]);
            }
            Acc.ByRow row = new Acc.ByRow(values);
            a.allocate(row);
            read(a, row.l, 0, row.o, 0, in);
            acc.rows.put(GroupKeys.tuple(keys), row);
        }
    }

    /** Writes the window at {@code l[lb..]}, {@code o[ob..]}. */
    static void write(Aggregates a, long[] l, int lb, Object[] o, int ob, java.io.DataOutputStream out) throws java.io.IOException {
        for (int i = 0; i < a.stride; i++) {
            out.writeLong(l[lb + i]);
        }
        for (int i = 0; i < a.functions.length; i++) {
            if (Aggregates.SLOTS[a.functions[i]][2] == 0) {
                continue;
            }
            Object value = o[ob + a.oAt[i]];
            switch (a.functions[i]) {
                case Aggregates.DISTINCT, Aggregates.COUNT_DISTINCT -> Binary.writeValue(out,
                        value == null ? null : new ArrayList<>(((Map<?, ?>) value).values()));
                default -> Binary.writeValue(out, value);
            }
        }
    }

    /** Reads a window written by {@link #write(Aggregates, long[], int, Object[], int, java.io.DataOutputStream)}. */
    static void read(Aggregates a, long[] l, int lb, Object[] o, int ob, java.io.DataInputStream in) throws java.io.IOException {
        for (int i = 0; i < a.stride; i++) {
            l[lb + i] = in.readLong();
        }
        for (int i = 0; i < a.functions.length; i++) {
            if (Aggregates.SLOTS[a.functions[i]][2] == 0) {
                continue;
            }
            Object value = Binary.readValue(in);
            if (value != null && (a.functions[i] == Aggregates.DISTINCT || a.functions[i] == Aggregates.COUNT_DISTINCT)) {
                LinkedHashMap<Object, Object> seen = new LinkedHashMap<>();
                for (Object member : (List<?>) value) {
                    seen.putIfAbsent(GroupKeys.of(member), member);
                }
                value = seen;
            }
            o[ob + a.oAt[i]] = value;
        }
    }
}
