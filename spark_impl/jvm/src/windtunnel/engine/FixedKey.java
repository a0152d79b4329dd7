package windtunnel.engine;

/**
 * A key of fixed windows: its event-time clock (the largest event time seen, none before the
 * first) and its windows sorted by start in a ring of parallel arrays (starts, the
 * accumulators of {@link Aggregates#stride} longs and {@link Aggregates#objects} objects per
 * window, the idle-timer entries), so one event's windows sit together in memory and opening
 * a window allocates nothing. The ring holds the open windows and those idle_timeout
 * force-closed whose close point the clock has not reached (an event for them is late).
 */
final class FixedKey extends Key {
    boolean hasClock;
    long clockMs;
    int size;
    private int head;
    private int capacity;
    private final int stride;
    private final int objects;
    private long[] starts;
    long[] acc;
    Object[] objs;
    private Acc[] split; // aggregate_by: one rows map per window
    private Idle[] idle; // with idle_timeout: one timer per window
    private long[] lastWall; // with idle_timeout: the wall clock of each window's last delivery
    private boolean[] idleClosed; // with idle_timeout: idle_timeout force-closed the window

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

    FixedKey(Object groupValue, long firstSeq, Aggregates aggregates, boolean idleTimers) {
        super(groupValue, firstSeq);
        stride = aggregates == null ? 0 : aggregates.stride;
        objects = aggregates == null ? 0 : aggregates.objects;
        boolean byRows = aggregates != null && aggregates.split();
        capacity = 4;
        starts = new long[capacity];
        acc = byRows || stride == 0 ? null : new long[capacity * stride];
        objs = byRows || objects == 0 ? null : new Object[capacity * objects];
        split = byRows ? new Acc[capacity] : null;
        idle = idleTimers ? new Idle[capacity] : null;
        lastWall = idleTimers ? new long[capacity] : null;
        idleClosed = idleTimers ? new boolean[capacity] : null;
    }

    /** The ring slot of window {@code i} (0: the earliest). */
    int slot(int i) {
        return (head + i) & (capacity - 1);
    }

    long start(int i) {
        return starts[slot(i)];
    }

    Idle idle(int i) {
        return idle == null ? null : idle[slot(i)];
    }

    /** True when idle_timeout force-closed window {@code i} (it stays until its close point). */
    boolean idleClosed(int i) {
        return idleClosed != null && idleClosed[slot(i)];
    }

    void markIdleClosed(int i) {
        idleClosed[slot(i)] = true;
    }

    long lastWall(int i) {
        return lastWall[slot(i)];
    }

    /** Window {@code i} saw an event at wall time {@code wallMs} (only with idle timers). */
    void delivered(int i, long wallMs) {
        if (lastWall != null) {
            lastWall[slot(i)] = wallMs;
        }
    }

    Acc split(int i) {
        return split[slot(i)];
    }

    /** Window {@code i}'s first long and object slot in {@link #acc} and {@link #objs}. */
    int accBase(int i) {
        return slot(i) * stride;
    }

    int objBase(int i) {
        return slot(i) * objects;
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
        if (size == capacity) {
            grow();
        }
        int mask = capacity - 1;
        int to;
        if (at < size - at) { // move the windows before it one place towards the front
            head = (head - 1) & mask;
            for (int i = 0; i < at; i++) {
                move((head + i + 1) & mask, (head + i) & mask);
            }
        } else {
            for (int i = size; i > at; i--) {
                move((head + i - 1) & mask, (head + i) & mask);
            }
        }
        to = (head + at) & mask;
        starts[to] = startMs;
        if (acc != null) {
            java.util.Arrays.fill(acc, to * stride, to * stride + stride, 0L);
        }
        if (objs != null) {
            java.util.Arrays.fill(objs, to * objects, to * objects + objects, null);
        }
        if (split != null) {
            split[to] = rows;
        }
        if (idle != null) {
            idle[to] = timer;
            lastWall[to] = wallMs;
            idleClosed[to] = closedByIdle;
        }
        size++;
        return to;
    }

    private void move(int from, int to) {
        starts[to] = starts[from];
        if (acc != null) {
            System.arraycopy(acc, from * stride, acc, to * stride, stride);
        }
        if (objs != null) {
            System.arraycopy(objs, from * objects, objs, to * objects, objects);
        }
        if (split != null) {
            split[to] = split[from];
        }
        if (idle != null) {
            idle[to] = idle[from];
            lastWall[to] = lastWall[from];
            idleClosed[to] = idleClosed[from];
        }
    }

    private void grow() {
        int bigger = capacity * 2;
        long[] newStarts = new long[bigger];
        long[] newAcc = acc == null ? null : new long[bigger * stride];
        Object[] newObjs = objs == null ? null : new Object[bigger * objects];
        Acc[] newSplit = split == null ? null : new Acc[bigger];
        Idle[] newIdle = idle == null ? null : new Idle[bigger];
        long[] newLastWall = idle == null ? null : new long[bigger];
        boolean[] newIdleClosed = idle == null ? null : new boolean[bigger];
        for (int i = 0; i < size; i++) {
            int from = slot(i);
            newStarts[i] = starts[from];
            if (acc != null) {
                System.arraycopy(acc, from * stride, newAcc, i * stride, stride);
            }
            if (objs != null) {
                System.arraycopy(objs, from * objects, newObjs, i * objects, objects);
            }
            if (split != null) {
                newSplit[i] = split[from];
            }
            if (idle != null) {
                newIdle[i] = idle[from];
                newLastWall[i] = lastWall[from];
                newIdleClosed[i] = idleClosed[from];
            }
        }
        starts = newStarts;
        acc = newAcc;
        objs = newObjs;
        split = newSplit;
        idle = newIdle;
        lastWall = newLastWall;
        idleClosed = newIdleClosed;
        head = 0;
        capacity = bigger;
    }

    /** Forgets the earliest window. */
    void removeFirst() {
        int first = head;
        if (objs != null) {
            java.util.Arrays.fill(objs, first * objects, first * objects + objects, null);
        }
        if (split != null) {
            split[first] = null;
        }
        if (idle != null) {
            idle[first] = null;
            idleClosed[first] = false;
        }
        head = (head + 1) & (capacity - 1);
        size--;
    }

    /** Empties window {@code i}'s accumulators (idle_timeout closed it; it stays in the ring). */
    void release(int i) {
        int s = slot(i);
        if (objs != null) {
            java.util.Arrays.fill(objs, s * objects, s * objects + objects, null);
        }
        if (split != null) {
            split[s] = null;
        }
    }
}
