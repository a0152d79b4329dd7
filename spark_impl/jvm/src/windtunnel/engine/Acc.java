package windtunnel.engine;

import java.util.LinkedHashMap;

/**
 * The accumulators of one window or session held as an object (count windows, sessions, and
 * {@code aggregate_by} rows): {@link Aggregates#stride} longs (counts, int sums, and floats as
 * their raw bits) and {@link Aggregates#objects} object slots, laid out by {@link Aggregates}.
 * With {@code aggregate_by}, {@link #rows} holds one {@link ByRow} per value combination in
 * first-seen order instead. Fixed windows keep the same layout in their key's arrays.
 */
class Acc extends HeapItem {
    long[] l;
    Object[] o;
    LinkedHashMap<Object, ByRow> rows;

    /** One {@code aggregate_by} row: its values (first seen) and accumulators. */
    static final class ByRow extends Acc {
        final Object[] byValues;

        ByRow(Object[] byValues) {
            this.byValues = byValues;
        }
    }
}
