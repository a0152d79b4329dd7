package windtunnel.engine;

/**
 * A key of fixed windows: its event-time clock (the largest event time seen, none before the
 * first) and its windows sorted by start, one slot each. A window's longs sit together in
 * one array ({@link #longs}: its start, the accumulators' {@link Aggregates#stride} longs, with
 * idle timers its last delivery's wall clock and whether idle_timeout force-closed it) and its
 * objects in another ({@link #objs}: the accumulators' {@link Aggregates#objects} objects, the
 * aggregate_by rows, the idle timer), so one event's windows sit together in memory and
 * opening a window allocates nothing. The slots hold the open windows and those idle_timeout
 * force-closed whose close point the clock has not reached (an event for them is late); a key
 * without windows holds no arrays.
 */
final class FixedKey extends Key {
    boolean hasClock;
    long clockMs;
    int size;
    private final Shape shape;
    /** Per slot {@link Shape#longWidth} longs, null while the key has no window. */
    long[] longs;
    /** Per slot {@link Shape#objWidth} objects, null while the key has no window or none are needed. */
    Object[] objs;

    /** What every key of one query holds per window, and how many slots its arrays start with. */
    static final class Shape {
        final int stride;
        final int objects;
        final boolean byRows;
        final boolean idleTimers;
        final int longWidth;
        final int objWidth;
        final int wallAt;
        final int closedAt;
        final int splitAt;
        final int idleAt;
        final int firstCapacity;

        /** {@code windows}: how many windows a key usually holds at once (its first slots). */
        Shape(Aggregates aggregates, boolean idleTimers, int windows) {
            byRows = aggregates != null && aggregates.split();
            stride = aggregates == null || byRows ? 0 : aggregates.stride;
            objects = aggregates == null || byRows ? 0 : aggregates.objects;
            this.idleTimers = idleTimers;
            wallAt = 1 + stride;
            closedAt = wallAt + 1;
            longWidth = idleTimers ? closedAt + 1 : 1 + stride;
            splitAt = objects;
            idleAt = objects + (byRows ? 1 : 0);
            objWidth = idleAt + (idleTimers ? 1 : 0);
            firstCapacity = Math.max(1, windows);
        }
    }

    /** The idle timer of one window in the slice's heap: its window and opening order. */
    static final class Idle extends HeapItem {
        final FixedKey key;
        final long startMs;
        final long opened;
        long deadlineMs; // of its heap entry (set when pushed)

        Idle(FixedKey key, long startMs, long opened) {
            this.key = key;
            this.startMs = startMs;
            this.opened = opened;
        }
    }

    FixedKey(Object groupValue, long firstSeq, Shape shape) {
        super(groupValue, firstSeq);
        this.shape = shape;
    }

    long start(int i) {
        return longs[i * shape.longWidth];
    }

    Idle idle(int i) {
        return shape.idleTimers ? (Idle) objs[i * shape.objWidth + shape.idleAt] : null;
    }

    /** True when idle_timeout force-closed window {@code i} (it stays until its close point). */
    boolean idleClosed(int i) {
        return shape.idleTimers && longs[i * shape.longWidth + shape.closedAt] != 0;
    }

    void markIdleClosed(int i) {
        longs[i * shape.longWidth + shape.closedAt] = 1;
    }

    long lastWall(int i) {
        return longs[i * shape.longWidth + shape.wallAt];
    }

    /** Window {@code i} saw an event at wall time {@code wallMs} (only with idle timers). */
    void delivered(int i, long wallMs) {
        if (shape.idleTimers) {
            longs[i * shape.longWidth + shape.wallAt] = wallMs;
        }
    }

    Acc split(int i) {
        return (Acc) objs[i * shape.objWidth + shape.splitAt];
    }

    /** Window {@code i}'s first accumulator long in {@link #longs}. */
    int accBase(int i) {
        return i * shape.longWidth + 1;
    }

    /** Window {@code i}'s first accumulator object in {@link #objs}. */
    int objBase(int i) {
        return i * shape.objWidth;
    }

    /**
     * The position of the first window whose start is at least {@code startMs}; windows are
     * usually contiguous, so the position a hop of {@code hopMs} gives is tried first.
     */
    int lowerBound(long startMs, long hopMs) {
        if (size == 0 || start(size - 1) < startMs) {
            return size;
        }
        long first = start(0);
        if (first >= startMs) {
            return 0;
        }
        long guess = (startMs - first) / hopMs;
        if (guess < size && start((int) guess) == startMs) {
            return (int) guess;
        }
        int lo = 0;
        int hi = size;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (start(mid) < startMs) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** Makes room for a window at position {@code at} (empty accumulators) and returns its slot. */
    int insert(int at, long startMs, Acc rows, Idle timer, long wallMs, boolean closedByIdle) {
        int lw = shape.longWidth;
        int ow = shape.objWidth;
        if (longs == null || (size + 1) * lw > longs.length) {
            int capacity = longs == null ? shape.firstCapacity : 2 * size;
            longs = longs == null ? new long[capacity * lw] : java.util.Arrays.copyOf(longs, capacity * lw);
            if (ow > 0) {
                objs = objs == null ? new Object[capacity * ow] : java.util.Arrays.copyOf(objs, capacity * ow);
            }
        }
        if (at < size) { // the windows after it move one place on
            System.arraycopy(longs, at * lw, longs, (at + 1) * lw, (size - at) * lw);
            if (objs != null) {
                System.arraycopy(objs, at * ow, objs, (at + 1) * ow, (size - at) * ow);
            }
        }
        int l = at * lw;
        longs[l] = startMs;
        java.util.Arrays.fill(longs, l + 1, l + lw, 0L);
        if (objs != null) {
            java.util.Arrays.fill(objs, at * ow, at * ow + ow, null);
            if (shape.byRows) {
                objs[at * ow + shape.splitAt] = rows;
            }
            if (shape.idleTimers) {
                objs[at * ow + shape.idleAt] = timer;
            }
        }
        if (shape.idleTimers) {
            longs[l + shape.wallAt] = wallMs;
            longs[l + shape.closedAt] = closedByIdle ? 1 : 0;
        }
        size++;
        return at;
    }

    /** Forgets the earliest window; the last one leaving releases the arrays. */
    void removeFirst() {
        size--;
        if (size == 0) {
            longs = null;
            objs = null;
            return;
        }
        int lw = shape.longWidth;
        System.arraycopy(longs, lw, longs, 0, size * lw);
        if (objs != null) {
            int ow = shape.objWidth;
            System.arraycopy(objs, ow, objs, 0, size * ow);
            java.util.Arrays.fill(objs, size * ow, size * ow + ow, null);
        }
    }

    /** Empties window {@code i}'s accumulators (idle_timeout closed it; it keeps its slot). */
    void release(int i) {
        if (objs != null) {
            int base = i * shape.objWidth;
            java.util.Arrays.fill(objs, base, base + shape.objects, null);
            if (shape.byRows) {
                objs[base + shape.splitAt] = null;
            }
        }
    }
}
