package windtunnel.engine;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

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
    private final IdleQueue<FixedKey.Idle> idle;
    private final FixedKey.Shape shape;
    private long[] missed = new long[16];

    FixedOperator(Slice slice) {
        super(slice);
        sizeMs = spec.sizeMs;
        hopMs = spec.hopMs;
        closeOffsetMs = spec.toleranceMs; // rule close_at: reaches
        idleMs = spec.idleTimeoutMs;
        // the oracle's heap tuple order: (deadline, start, group index, opened)
        idle = idleMs < 0 ? null : new IdleQueue<FixedKey.Idle>(idleMs, slice.wallMs,
                (a, b) -> a.key.firstSeq != b.key.firstSeq ? Long.compare(a.key.firstSeq, b.key.firstSeq)
                        : Long.compare(a.opened, b.opened));
        long held = (sizeMs + Math.max(0, closeOffsetMs) + hopMs - 1) / hopMs + 1; // open ones and the next
        shape = new FixedKey.Shape(aggregates, idle != null, (int) Math.min(held, 16));
    }

    @Override
    Key newKey(Object groupValue, long firstSeq) {
        return new FixedKey(groupValue, firstSeq, shape);
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
        int at = k.lowerBound(start, hopMs);
        for (; start <= last; start += hopMs, at++) {
            if (at < k.size && k.start(at) == start) {
                if (k.idleClosed(at)) { // rule idle_closed_window: late
                    if (nMissed == 0) {
                        firstMissedIdle = true;
                    }
                    nMissed = missed(nMissed, start);
                    continue;
                }
            } else {
                open(k, start, at);
            }
            k.delivered(at, slice.wallMs);
            if (aggregates == null) { // pass-through output is streamed, once per window
                slice.emit(k, start, start + sizeMs, event.payloadJson(), "event", false);
            } else if (aggregates.split()) {
                aggregates.add(k.split(at), event);
            } else {
                aggregates.add(k.longs, k.accBase(at), k.objs, k.objBase(at), event);
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
        slice.drop(seq, "late", slice.groupJson(k), missed, n,
                "event time " + tMs + " is late for " + span + " (first [" + first + ", " + (first + sizeMs)
                        + ")): " + how + "; the clock is at " + (k.hasClock ? Long.toString(k.clockMs) : "None"));
    }

    private void open(FixedKey k, long start, int at) {
        Acc rows = null;
        if (aggregates != null && aggregates.split()) {
            rows = new Acc();
            aggregates.init(rows);
        }
        FixedKey.Idle timer = null;
        if (idle != null) {
            timer = new FixedKey.Idle(k, start, slice.nextOpened());
            timer.deadlineMs = slice.wallMs + idleMs;
            idle.push(timer, timer.deadlineMs, timer.startMs);
        }
        k.insert(at, start, rows, timer, slice.wallMs, false);
    }

    /** Closes the windows whose close point the key's clock reached, in window order. */
    private void closeDue(FixedKey k) {
        long now = k.clockMs;
        while (k.size > 0 && k.start(0) + sizeMs + closeOffsetMs <= now) {
            if (!k.idleClosed(0)) {
                close(k, 0, "close", false);
            }
            k.removeFirst();
        }
    }

    /** Emits window {@code i} of {@code k} and stops its idle timer. */
    private void close(FixedKey k, int i, String reason, boolean partial) {
        FixedKey.Idle timer = k.idle(i);
        if (timer != null) {
            timer.gone = true; // its heap entry is skipped when it comes up
        }
        if (aggregates == null) {
            return;
        }
        long start = k.start(i);
        if (!aggregates.split()) {
            slice.emit(k, start, start + sizeMs, aggregates.row(k.longs, k.accBase(i), k.objs, k.objBase(i), true,
                    start, start + sizeMs, slice.text), reason, partial);
        } else {
            aggregates.rows(k.split(i), true, start, start + sizeMs, slice.text,
                    row -> slice.emit(k, start, start + sizeMs, row, reason, partial));
        }
    }

    @Override
    void onWall() {
        if (idle == null) {
            return;
        }
        long wall = slice.wallMs;
        List<FixedKey.Idle> due = null;
        for (FixedKey.Idle timer : idle.drainDue(wall)) {
            long deadline = timer.key.lastWall(timer.key.lowerBound(timer.startMs, hopMs)) + idleMs;
            if (deadline > wall) { // it saw an event since: queued again at its deadline
                timer.deadlineMs = deadline;
                idle.push(timer, deadline, timer.startMs);
                slice.touch(timer.key);
                continue;
            }
            if (due == null) {
                due = new ArrayList<>();
            }
            due.add(timer);
        }
        if (due == null) {
            return;
        }
        for (FixedKey.Idle timer : due) {
            FixedKey k = timer.key;
            int i = k.lowerBound(timer.startMs, hopMs);
            close(k, i, "idle_timeout", true);
            k.markIdleClosed(i);
            k.release(i);
            slice.touch(k);
        }
    }

    @Override
    void onEnd() {
        List<long[]> open = new ArrayList<>(); // start, first seq
        for (Key key : slice.keys.values()) {
            FixedKey k = (FixedKey) key;
            for (int i = 0; i < k.size; i++) {
                if (!k.idleClosed(i)) {
                    open.add(new long[] {k.start(i), k.firstSeq});
                }
            }
        }
        open.sort((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
        Map<Long, FixedKey> bySeq = new HashMap<>();
        for (Key key : slice.keys.values()) {
            bySeq.put(key.firstSeq, (FixedKey) key);
        }
        for (long[] window : open) {
            FixedKey k = bySeq.get(window[1]);
            close(k, k.lowerBound(window[0], hopMs), "end_of_input", true);
        }
    }

    @Override
    void attached(Key key) {
    }

    @Override
    void restored() {
        if (idle == null) {
            return;
        }
        idle.clear();
        idle.startAt(slice.wallMs);
        for (Key key : slice.keys.values()) {
            FixedKey k = (FixedKey) key;
            for (int i = 0; i < k.size; i++) {
                if (!k.idleClosed(i)) {
                    idle.push(k.idle(i), k.idle(i).deadlineMs, k.idle(i).startMs);
                }
            }
        }
    }

    @Override
    int openWindows(Key key) {
        FixedKey k = (FixedKey) key;
        int open = 0;
        for (int i = 0; i < k.size; i++) {
            if (!k.idleClosed(i)) {
                open++;
            }
        }
        return open;
    }

    @Override
    void cleared() {
        if (idle != null) {
            idle.clear();
        }
    }

    @Override
    void detached(Key key) {
        if (idle == null) {
            return;
        }
        FixedKey k = (FixedKey) key;
        for (int i = 0; i < k.size; i++) {
            k.idle(i).gone = true;
        }
    }

    @Override
    void writeKey(Key key, DataOutputStream out) throws IOException {
        FixedKey k = (FixedKey) key;
        out.writeBoolean(k.hasClock);
        out.writeLong(k.clockMs);
        out.writeInt(k.size);
        for (int i = 0; i < k.size; i++) {
            out.writeLong(k.start(i));
            FixedKey.Idle timer = k.idle(i);
            boolean closed = k.idleClosed(i);
            if (timer != null) {
                out.writeLong(timer.opened);
                out.writeLong(k.lastWall(i));
                out.writeLong(timer.deadlineMs);
                out.writeBoolean(closed);
            }
            if (!closed && aggregates != null) {
                if (aggregates.split()) {
                    AccState.write(aggregates, k.split(i), out);
                } else {
                    AccState.write(aggregates, k.longs, k.accBase(i), k.objs, k.objBase(i), out);
                }
            }
        }
    }

    @Override
    Key readKey(Object groupValue, long firstSeq, DataInputStream in) throws IOException {
        FixedKey k = new FixedKey(groupValue, firstSeq, shape);
        k.hasClock = in.readBoolean();
        k.clockMs = in.readLong();
        int n = Binary.length(in);
        for (int i = 0; i < n; i++) {
            long start = in.readLong();
            FixedKey.Idle timer = null;
            long lastWall = 0;
            boolean closed = false;
            if (idle != null) {
                timer = new FixedKey.Idle(k, start, in.readLong());
                lastWall = in.readLong();
                timer.deadlineMs = in.readLong();
                closed = in.readBoolean();
            }
            Acc rows = null;
            if (aggregates != null && aggregates.split() && !closed) {
                rows = new Acc();
                AccState.read(aggregates, rows, in);
            }
            k.insert(k.size, start, rows, timer, lastWall, closed);
            if (aggregates != null && !aggregates.split() && !closed) {
                AccState.read(aggregates, k.longs, k.accBase(k.size - 1), k.objs, k.objBase(k.size - 1), in);
            }
        }
        return k;
    }
}
