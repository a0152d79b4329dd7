package windtunnel.engine;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Fixed (tumbling and hopping) windows under the default rules, as the oracle's
 * {@code oracle/windows/fixed.py} runs them: windows {@code [s, s + size)} with {@code s} a
 * multiple of the hop from the epoch; per-key clocks (the largest event time seen); a window
 * closes once its key's clock reaches {@code end + tolerance}; an event goes to whichever of its
 * target windows are still open and is dropped {@code late} only when none is; idle_timeout
 * force-closes a window that saw no event for that long on the wall clock (its events then come
 * late); end of input flushes what is open, in window-time order.
 */
final class FixedOperator extends Operator {
    private final long sizeMs;
    private final long hopMs;
    private final long closeOffsetMs;
    private final long idleMs;
    private final IdleHeap<FixedKey.Window> idle;
    private long[] missed = new long[16];

    FixedOperator(Slice slice) {
        super(slice);
        sizeMs = spec.sizeMs;
        hopMs = spec.hopMs;
        closeOffsetMs = spec.toleranceMs; // rule close_at: reaches
        idleMs = spec.idleTimeoutMs;
        idle = idleMs < 0 ? null : new IdleHeap<>(Comparator
                .comparingLong((FixedKey.Window w) -> w.idleDeadlineMs)
                .thenComparingLong(w -> w.startMs)
                .thenComparingLong(w -> w.key.firstSeq)
                .thenComparingLong(w -> w.opened));
    }

    @Override
    Key newKey(Object groupValue, long firstSeq) {
        return new FixedKey(groupValue, firstSeq);
    }

    @Override
    void onEvent(Key key, long seq, long tMs, EventFields event) {
        FixedKey k = (FixedKey) key;
        boolean hasClock = k.hasClock;
        long now = k.clockMs;
        long last = tMs - Math.floorMod(tMs, hopMs);
        long first = tMs - sizeMs + 1;
        first += Math.floorMod(-first, hopMs);
        int nMissed = 0;
        boolean firstMissedIdle = false;
        long start = first;
        if (hasClock) {
            while (start <= last && start + sizeMs + closeOffsetMs <= now) {
                nMissed = missed(nMissed, start);
                start += hopMs;
            }
        }
        int delivered = 0;
        int at = k.lowerBound(start);
        for (; start <= last; start += hopMs, at++) {
            FixedKey.Window window = at < k.size ? k.get(at) : null;
            if (window == null || window.startMs != start) {
                window = open(k, start, at);
            } else if (window.idleClosed) { // rule idle_closed_window: late
                if (nMissed == 0) {
                    firstMissedIdle = true;
                }
                nMissed = missed(nMissed, start);
                continue;
            }
            window.lastWallMs = slice.wallMs;
            if (aggregates == null) { // pass-through output is streamed, once per window
                slice.emit(k, start, start + sizeMs, event.payloadJson(), "event", false);
            } else {
                aggregates.add(window, event);
            }
            delivered++;
        }
        if (delivered == 0) {
            lateDrop(k, seq, tMs, nMissed, firstMissedIdle);
        }
        if (!hasClock || tMs > now) {
            k.hasClock = true;
            k.clockMs = tMs;
            closeDue(k);
        }
    }

    private int missed(int n, long start) {
        if (2 * n + 2 > missed.length) {
            missed = java.util.Arrays.copyOf(missed, missed.length * 2);
        }
        missed[2 * n] = start;
        missed[2 * n + 1] = start + sizeMs;
        return n + 1;
    }

    private void lateDrop(FixedKey k, long seq, long tMs, int n, boolean idleClosed) {
        long first = missed[0];
        String how = idleClosed ? "idle_timeout force-closed it"
                : "it closed when the clock reached " + (first + sizeMs + closeOffsetMs);
        String span = n == 1 ? "window" : "all " + n + " target windows";
        slice.drop(seq, "late", k.groupJson, missed, n,
                "event time " + tMs + " is late for " + span + " (first [" + first + ", " + (first + sizeMs)
                        + ")): " + how + "; the clock is at " + (k.hasClock ? Long.toString(k.clockMs) : "None"));
    }

    private FixedKey.Window open(FixedKey k, long start, int at) {
        FixedKey.Window window = new FixedKey.Window(k, start, slice.nextOpened(), slice.wallMs);
        if (aggregates != null) {
            aggregates.init(window);
        }
        k.insert(at, window);
        if (idle != null) {
            window.idleDeadlineMs = slice.wallMs + idleMs;
            idle.push(window);
        }
        return window;
    }

    /** Closes the windows whose close point the key's clock reached, in window order. */
    private void closeDue(FixedKey k) {
        long now = k.clockMs;
        while (k.size > 0 && k.get(0).startMs + sizeMs + closeOffsetMs <= now) {
            FixedKey.Window window = k.removeFirst();
            if (!window.idleClosed) {
                close(window, "close", false);
            }
        }
    }

    private void close(FixedKey.Window window, String reason, boolean partial) {
        if (idle != null) {
            idle.remove(window);
        }
        if (aggregates != null) {
            FixedKey k = window.key;
            long start = window.startMs;
            aggregates.rows(window, true, start, start + sizeMs,
                    row -> slice.emit(k, start, start + sizeMs, row, reason, partial));
        }
        window.l = null;
        window.d = null;
        window.o = null;
        window.rows = null;
    }

    @Override
    void onWall() {
        if (idle == null) {
            return;
        }
        long wall = slice.wallMs;
        List<FixedKey.Window> due = null;
        while (!idle.isEmpty() && idle.peek().idleDeadlineMs <= wall) {
            FixedKey.Window window = idle.pop();
            long deadline = window.lastWallMs + idleMs;
            if (deadline > wall) {
                window.idleDeadlineMs = deadline;
                idle.push(window);
                continue;
            }
            if (due == null) {
                due = new ArrayList<>();
            }
            due.add(window);
        }
        if (due == null) {
            return;
        }
        for (FixedKey.Window window : due) {
            window.idleClosed = true;
            slice.touch(window.key);
            close(window, "idle_timeout", true);
        }
    }

    @Override
    void onEnd() {
        List<FixedKey.Window> open = new ArrayList<>();
        for (Key key : slice.keys.values()) {
            FixedKey k = (FixedKey) key;
            for (int i = 0; i < k.size; i++) {
                if (!k.get(i).idleClosed) {
                    open.add(k.get(i));
                }
            }
        }
        open.sort(Comparator.comparingLong((FixedKey.Window w) -> w.startMs)
                .thenComparingLong(w -> w.key.firstSeq));
        for (FixedKey.Window window : open) {
            close(window, "end_of_input", true);
        }
    }

    @Override
    void attached(Key key) {
        if (idle == null) {
            return;
        }
        FixedKey k = (FixedKey) key;
        for (int i = 0; i < k.size; i++) {
            if (!k.get(i).idleClosed) {
                idle.push(k.get(i));
            }
        }
    }

    @Override
    void cleared() {
        if (idle != null) {
            while (!idle.isEmpty()) {
                idle.pop();
            }
        }
    }

    @Override
    void detached(Key key) {
        if (idle == null) {
            return;
        }
        FixedKey k = (FixedKey) key;
        for (int i = 0; i < k.size; i++) {
            idle.remove(k.get(i));
        }
    }

    @Override
    void writeKey(Key key, DataOutputStream out) throws IOException {
        FixedKey k = (FixedKey) key;
        out.writeBoolean(k.hasClock);
        out.writeLong(k.clockMs);
        out.writeInt(k.size);
        for (int i = 0; i < k.size; i++) {
            FixedKey.Window w = k.get(i);
            out.writeLong(w.startMs);
            out.writeLong(w.opened);
            out.writeLong(w.lastWallMs);
            out.writeLong(w.idleDeadlineMs);
            out.writeBoolean(w.idleClosed);
            if (!w.idleClosed && aggregates != null) {
                aggregates.write(w, out);
            }
        }
    }

    @Override
    Key readKey(Object groupValue, long firstSeq, DataInputStream in) throws IOException {
        FixedKey k = new FixedKey(groupValue, firstSeq);
        k.hasClock = in.readBoolean();
        k.clockMs = in.readLong();
        int n = Binary.length(in);
        for (int i = 0; i < n; i++) {
            FixedKey.Window w = new FixedKey.Window(k, in.readLong(), in.readLong(), in.readLong());
            w.idleDeadlineMs = in.readLong();
            w.idleClosed = in.readBoolean();
            if (!w.idleClosed && aggregates != null) {
                aggregates.read(w, in);
            }
            k.append(w);
        }
        return k;
    }
}
