package windtunnel.engine;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * Idle timers by deadline, drained in the order the oracle's {@code heapq} of tuples pops them:
 * by deadline, then a second long key, then a comparator.
 *
 * <p>A timer's deadline is never more than the idle timeout past the wall clock of the last
 * drain (a timer is queued at the current wall clock plus at most the timeout), so the timers
 * sit in a ring of buckets, each a small heap of the deadlines in one span of the timeout:
 * queueing touches one small heap, and {@link #drainDue} takes out every timer due at a wall
 * time in order (timers from several buckets, after a wide jump of the wall clock, sorted). Popping one heap until its top is later than the
 * wall time gives the same timers in the same order (a timer queued again while draining is
 * later than the wall time). A timer that leaves for another reason is marked
 * {@link HeapItem#gone} and dropped when drained, as the oracle skips closed windows.
 */
final class IdleQueue<T extends HeapItem> {
    private static final int BUCKETS = 64;
    private final Comparator<? super T> ties;
    private final long width;
    private final List<Bucket> ring;
    private long drainedMs;

    /** One span's timers: a binary min-heap by (deadline, second, ties). */
    private final class Bucket {
        HeapItem[] items = new HeapItem[4];
        long[] deadlines = new long[4];
        long[] seconds = new long[4];
        int size;

        void push(HeapItem item, long deadline, long second) {
            if (size == items.length) {
                items = Arrays.copyOf(items, size * 2);
                deadlines = Arrays.copyOf(deadlines, size * 2);
                seconds = Arrays.copyOf(seconds, size * 2);
            }
            items[size] = item;
            deadlines[size] = deadline;
            seconds[size] = second;
            int i = size++;
            while (i > 0) {
                int parent = (i - 1) >>> 1;
                if (!less(i, parent)) {
                    break;
                }
                swap(i, parent);
                i = parent;
            }
        }

        HeapItem pop() {
            HeapItem top = items[0];
            size--;
            items[0] = items[size];
            deadlines[0] = deadlines[size];
            seconds[0] = seconds[size];
            items[size] = null;
            int i = 0;
            while (true) {
                int left = 2 * i + 1;
                if (left >= size) {
                    break;
                }
                int child = left + 1 < size && less(left + 1, left) ? left + 1 : left;
                if (!less(child, i)) {
                    break;
                }
                swap(i, child);
                i = child;
            }
            return top;
        }

        @SuppressWarnings("unchecked")
        private boolean less(int a, int b) {
            if (deadlines[a] != deadlines[b]) {
                return deadlines[a] < deadlines[b];
            }
            if (seconds[a] != seconds[b]) {
                return seconds[a] < seconds[b];
            }
            return ties.compare((T) items[a], (T) items[b]) < 0;
        }

        private void swap(int a, int b) {
            HeapItem x = items[a];
            items[a] = items[b];
            items[b] = x;
            long d = deadlines[a];
            deadlines[a] = deadlines[b];
            deadlines[b] = d;
            d = seconds[a];
            seconds[a] = seconds[b];
            seconds[b] = d;
        }
    }

    IdleQueue(long timeoutMs, long wallMs, Comparator<? super T> ties) {
        this.ties = ties;
        this.width = Math.max(1, timeoutMs / BUCKETS);
        int n = (int) (timeoutMs / width) + 3;
        this.ring = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            ring.add(new Bucket());
        }
        this.drainedMs = wallMs;
    }

    private Bucket bucket(long id) {
        return ring.get((int) Math.floorMod(id, (long) ring.size()));
    }

    /** Queues {@code item} (not queued) at {@code deadline}, at most one timeout past the last drain. */
    void push(T item, long deadline, long second) {
        if (item.queued) {
            throw new IllegalStateException("already queued");
        }
        item.queued = true;
        item.gone = false;
        bucket(Math.floorDiv(Math.max(deadline, drainedMs), width)).push(item, deadline, second);
    }

    /** Sets the wall clock of the last drain (after decoding, before timers are queued). */
    void startAt(long wallMs) {
        drainedMs = wallMs;
    }

    /**
     * Takes out every live timer whose deadline is at most {@code wallMs}, in order; the caller
     * queues again those that turn out not due (their deadline is then later than {@code wallMs}).
     */
    @SuppressWarnings("unchecked")
    List<T> drainDue(long wallMs) {
        List<T> due = new ArrayList<>(0);
        List<long[]> keys = new ArrayList<>(0); // deadline, second, position
        int buckets = 0;
        long first = Math.floorDiv(drainedMs, width);
        long last = Math.floorDiv(wallMs, width);
        long steps = Math.min(last - first, ring.size() - 1);
        for (long id = last - steps; id <= last; id++) {
            Bucket b = bucket(id);
            boolean gave = false;
            while (b.size > 0 && b.deadlines[0] <= wallMs) {
                long deadline = b.deadlines[0];
                long second = b.seconds[0];
                HeapItem item = b.pop();
                item.queued = false;
                if (item.gone) {
                    continue;
                }
                if (!gave) {
                    buckets++;
                    gave = true;
                }
                due.add((T) item);
                keys.add(new long[] {deadline, second, due.size() - 1});
            }
        }
        drainedMs = Math.max(drainedMs, wallMs);
        if (buckets < 2) { // one bucket's heap gave them in order
            return due;
        }
        keys.sort((x, y) -> x[0] != y[0] ? Long.compare(x[0], y[0]) : x[1] != y[1] ? Long.compare(x[1], y[1])
                : ties.compare(due.get((int) x[2]), due.get((int) y[2])));
        List<T> sorted = new ArrayList<>(due.size());
        for (long[] key : keys) {
            sorted.add(due.get((int) key[2]));
        }
        return sorted;
    }

    /** Every timer out. */
    void clear() {
        for (Bucket b : ring) {
            for (int i = 0; i < b.size; i++) {
                b.items[i].queued = false;
                b.items[i] = null;
            }
            b.size = 0;
        }
    }
}
