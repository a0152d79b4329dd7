package windtunnel.engine;

/**
 * A key of fixed windows: its event-time clock (the largest event time seen, none before the
 * first) and its windows sorted by start in a ring: the open ones and those idle_timeout
 * force-closed whose close point the clock has not reached yet (an event for them is late).
 */
final class FixedKey extends Key {
    boolean hasClock;
    long clockMs;
    private Window[] ring = new Window[4];
    private int head;
    int size;

    /** One window [start, start + size) of this key. */
    static final class Window extends Acc {
        final FixedKey key;
        final long startMs;
        final long opened;
        long lastWallMs;
        long idleDeadlineMs; // the deadline of its idle-heap entry (set when pushed)
        boolean idleClosed;

        Window(FixedKey key, long startMs, long opened, long lastWallMs) {
            this.key = key;
            this.startMs = startMs;
            this.opened = opened;
            this.lastWallMs = lastWallMs;
        }
    }

    FixedKey(Object groupValue, long firstSeq) {
        super(groupValue, firstSeq);
    }

    Window get(int i) {
        return ring[(head + i) & (ring.length - 1)];
    }

    /** The position of the first window whose start is at least {@code startMs}. */
    int lowerBound(long startMs) {
        int lo = 0;
        int hi = size;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (get(mid).startMs < startMs) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    void insert(int at, Window window) {
        if (size == ring.length) {
            Window[] grown = new Window[ring.length * 2];
            for (int i = 0; i < size; i++) {
                grown[i] = get(i);
            }
            ring = grown;
            head = 0;
        }
        int mask = ring.length - 1;
        if (at < size - at) { // shift the front part one place back
            head = (head - 1) & mask;
            for (int i = 0; i < at; i++) {
                ring[(head + i) & mask] = ring[(head + i + 1) & mask];
            }
        } else {
            for (int i = size; i > at; i--) {
                ring[(head + i) & mask] = ring[(head + i - 1) & mask];
            }
        }
        ring[(head + at) & mask] = window;
        size++;
    }

    Window removeFirst() {
        Window first = ring[head];
        ring[head] = null;
        head = (head + 1) & (ring.length - 1);
        size--;
        return first;
    }

    /** Appends a window known to start after every other (decoding). */
    void append(Window window) {
        insert(size, window);
    }

    void clear() {
        ring = new Window[4];
        head = 0;
        size = 0;
    }
}
