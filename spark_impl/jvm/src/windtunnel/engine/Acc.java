package windtunnel.engine;

import java.util.LinkedHashMap;

/**
 * The accumulators of one window (or session): primitive slots for counts, sums, averages,
 * minima and maxima, object slots for big ints, distinct sets, collected lists and first/last
 * values, laid out by {@link Aggregates}. With {@code aggregate_by}, {@link #rows} holds one
 * {@link ByRow} per value combination in first-seen order instead.
 */
class Acc extends HeapItem {
    long[] l;
    double[] d;
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
