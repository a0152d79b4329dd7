package windtunnel.engine;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

/**
 * Session windows on the wall clock ({@code on: now()}), which the oracle runs with its merging
 * session operator ({@code oracle/windows/session.py}) under the default rules: events at most
 * {@code gap} apart join (inclusive); a session is final when the key's clock passes
 * {@code last + gap + tolerance} or reaches {@code first + max_duration + tolerance}; the event
 * reaching {@code max_events} joins and closes it; an event that would join a session already
 * emitted (or force-closed by idle_timeout) is late. Events are kept and aggregated in seq
 * order when the session is emitted, bounds {@code [first, last]}.
 */
final class MergeSessions extends Operator {
    private static final Comparator<MSession> WINDOW_ORDER = (a, b) -> a.closeMs != b.closeMs
            ? Long.compare(a.closeMs, b.closeMs) : a.firstMs != b.firstMs ? Long.compare(a.firstMs, b.firstMs)
            : a.key.firstSeq != b.key.firstSeq ? Long.compare(a.key.firstSeq, b.key.firstSeq)
            : Long.compare(a.opened, b.opened);
    private final long gapMs;
    private final long toleranceMs;
    private final long maxDurationMs;
    private final long maxEvents;
    private final long idleMs;
    private final int slots;
    private final PriorityQueue<Entry> idle = new PriorityQueue<>(
            (a, b) -> a.pointMs != b.pointMs ? Long.compare(a.pointMs, b.pointMs)
                    : Long.compare(a.session.opened, b.session.opened));

    /** A key: its clock, open sessions (opening order), emitted spans still reachable. */
    static final class MKey extends Key {
        boolean hasClock;
        long clockMs;
        final List<MSession> open = new ArrayList<>();
        final List<long[]> done = new ArrayList<>(); // first, last, 1 when idle_timeout closed it
        final PriorityQueue<Entry> pending = new PriorityQueue<>((a, b) -> a.pointMs != b.pointMs
                ? Long.compare(a.pointMs, b.pointMs) : a.firstMs != b.firstMs ? Long.compare(a.firstMs, b.firstMs)
                : Long.compare(a.session.opened, b.session.opened));

        MKey(Object groupValue, long firstSeq) {
            super(groupValue, firstSeq);
        }
    }

    /** One session and the events it holds, in seq order. */
    static final class MSession {
        final MKey key;
        final long opened;
        long firstMs;
        long lastMs;
        long lastWallMs;
        long closeMs;
        boolean closed;
        final List<Buffered> events = new ArrayList<>();

        MSession(MKey key, long tMs, long wallMs, long opened) {
            this.key = key;
            this.firstMs = tMs;
            this.lastMs = tMs;
            this.lastWallMs = wallMs;
            this.opened = opened;
        }
    }

    /** A heap entry: a close point (or idle deadline) and the first time it was computed with. */
    static final class Entry {
        final long pointMs;
        final long firstMs;
        final MSession session;

        Entry(long pointMs, long firstMs, MSession session) {
            this.pointMs = pointMs;
            this.firstMs = firstMs;
            this.session = session;
        }
    }

    MergeSessions(Slice slice) {
        super(slice);
        gapMs = spec.gapMs;
        toleranceMs = spec.toleranceMs;
        maxDurationMs = spec.maxDurationMs;
        maxEvents = spec.maxEvents;
        idleMs = spec.idleTimeoutMs;
        slots = spec.fields.size();
    }

    @Override
    Key newKey(Object groupValue, long firstSeq) {
        return new MKey(groupValue, firstSeq);
    }

    /** The smallest clock at which a session spanning first..last is final. */
    private long closePoint(long firstMs, long lastMs) {
        long point = lastMs + gapMs + toleranceMs + 1; // rule session_close_at: passes
        if (maxDurationMs >= 0) {
            point = Math.min(point, firstMs + maxDurationMs + toleranceMs); // session_cap: reaches
        }
        return point;
    }

    private boolean touches(long firstMs, long lastMs, long tMs) {
        return firstMs - gapMs <= tMs && tMs <= lastMs + gapMs;
    }

    @Override
    void onEvent(Key key, long seq, long tMs, EventFields event) {
        MKey k = (MKey) key;
        List<MSession> joined = new ArrayList<>();
        for (MSession s : k.open) {
            if (touches(s.firstMs, s.lastMs, tMs)) {
                joined.add(s);
            }
        }
        joined = capped(joined, tMs);
        if (!late(k, seq, tMs)) {
            deliver(k, joined, seq, tMs, event);
        }
        if (!k.hasClock || tMs > k.clockMs) {
            k.hasClock = true;
            k.clockMs = tMs;
            List<MSession> due = new ArrayList<>();
            while (!k.pending.isEmpty() && k.pending.peek().pointMs <= k.clockMs) {
                Entry e = k.pending.poll();
                if (!e.session.closed && e.session.closeMs == e.pointMs) {
                    due.add(e.session);
                }
            }
            for (MSession s : due) {
                if (!s.closed) {
                    close(s, "close", false, true);
                }
            }
        }
    }

    private List<MSession> capped(List<MSession> sessions, long tMs) {
        if (maxDurationMs < 0) {
            return sessions;
        }
        sessions.sort(Comparator.comparingLong((MSession s) -> s.firstMs).thenComparingLong(s -> s.opened));
        long lo = tMs;
        long hi = tMs;
        List<MSession> joined = new ArrayList<>();
        for (MSession s : sessions) {
            if (Math.max(hi, s.lastMs) - Math.min(lo, s.firstMs) < maxDurationMs) {
                joined.add(s);
                lo = Math.min(lo, s.firstMs);
                hi = Math.max(hi, s.lastMs);
            }
        }
        return joined;
    }

    private boolean late(MKey k, long seq, long tMs) {
        if (k.hasClock) {
            long point = closePoint(tMs, tMs); // rule session_late: own
            if (k.clockMs >= point) {
                slice.drop(seq, "late", slice.groupJson(k), tMs, tMs, "event time " + tMs
                        + " is late: its session would be final once the clock reached " + point
                        + "; the clock is at " + k.clockMs);
                return true;
            }
        }
        for (long[] d : k.done) {
            if (touches(d[0], d[1], tMs)) {
                String what = d[2] == 1 ? "idle_timeout force-closed it" : "it was emitted";
                slice.drop(seq, "late", slice.groupJson(k), d[0], d[1], "event time " + tMs
                        + " would join the session [" + d[0] + ", " + d[1] + "], but " + what);
                return true;
            }
        }
        return false;
    }

    private void deliver(MKey k, List<MSession> joined, long seq, long tMs, EventFields event) {
        MSession s;
        if (!joined.isEmpty()) {
            joined.sort(Comparator.comparingLong(x -> x.opened));
            s = joined.get(0);
            for (MSession other : joined.subList(1, joined.size())) {
                other.closed = true;
                k.open.remove(other);
                s.events.addAll(other.events);
                s.firstMs = Math.min(s.firstMs, other.firstMs);
                s.lastMs = Math.max(s.lastMs, other.lastMs);
            }
            if (joined.size() > 1) {
                s.events.sort(Comparator.comparingLong(b -> b.seq));
            }
            s.firstMs = Math.min(s.firstMs, tMs);
            s.lastMs = Math.max(s.lastMs, tMs);
        } else {
            s = new MSession(k, tMs, slice.wallMs, slice.nextOpened());
            k.open.add(s);
        }
        s.events.add(Buffered.of(tMs, seq, event, slots, aggregates == null));
        s.lastWallMs = slice.wallMs;
        if (maxEvents >= 0 && s.events.size() >= maxEvents) {
            close(s, "close", false, false);
            return;
        }
        s.closeMs = closePoint(s.firstMs, s.lastMs);
        k.pending.add(new Entry(s.closeMs, s.firstMs, s));
        if (idleMs >= 0) {
            idle.add(new Entry(slice.wallMs + idleMs, s.firstMs, s));
        }
    }

    private void close(MSession s, String reason, boolean partial, boolean remember) {
        s.closed = true;
        MKey k = s.key;
        k.open.remove(s);
        slice.touch(k);
        if (remember) {
            k.done.add(new long[] {s.firstMs, s.lastMs, reason.equals("idle_timeout") ? 1 : 0});
            forget(k);
        }
        if (aggregates == null) {
            for (Buffered event : s.events) {
                slice.emit(k, s.firstMs, s.lastMs, event.payloadJson, reason, partial);
            }
            return;
        }
        Acc acc = new Acc();
        aggregates.init(acc);
        for (Buffered event : s.events) {
            aggregates.add(acc, event);
        }
        aggregates.rows(acc, true, s.firstMs, s.lastMs, slice.text, row -> slice.emit(k, s.firstMs, s.lastMs, row, reason, partial));
    }

    /** Drops emitted spans no event can touch any more without being late on its own. */
    private void forget(MKey k) {
        if (!k.hasClock) {
            return;
        }
        long reach = k.clockMs - gapMs - (toleranceMs + 1);
        k.done.removeIf(d -> d[1] + gapMs < reach);
    }

    @Override
    void onWall() {
        if (idleMs < 0 || idle.isEmpty()) {
            return;
        }
        long wall = slice.wallMs;
        List<MSession> due = new ArrayList<>();
        while (!idle.isEmpty() && idle.peek().pointMs <= wall) {
            Entry e = idle.poll();
            MSession s = e.session;
            if (s.closed) {
                continue;
            }
            long deadline = s.lastWallMs + idleMs;
            if (deadline > wall) {
                idle.add(new Entry(deadline, e.firstMs, s));
                continue;
            }
            due.add(s);
        }
        due.sort(WINDOW_ORDER);
        for (MSession s : due) {
            if (!s.closed) {
                close(s, "idle_timeout", true, true);
            }
        }
    }

    @Override
    void onEnd() {
        List<MSession> remaining = new ArrayList<>();
        for (Key key : slice.keys.values()) {
            remaining.addAll(((MKey) key).open);
        }
        remaining.sort(WINDOW_ORDER);
        for (MSession s : remaining) {
            close(s, "end_of_input", true, false);
        }
    }

    @Override
    void attached(Key key) {
        MKey k = (MKey) key;
        for (MSession s : k.open) {
            k.pending.add(new Entry(s.closeMs, s.firstMs, s));
            if (idleMs >= 0) {
                idle.add(new Entry(s.lastWallMs + idleMs, s.firstMs, s));
            }
        }
    }

    @Override
    int openWindows(Key key) {
        return ((MKey) key).open.size();
    }

    @Override
    void cleared() {
        idle.clear();
    }

    @Override
    void detached(Key key) {
        idle.removeIf(e -> e.session.key == key);
    }

    @Override
    void writeKey(Key key, DataOutputStream out) throws IOException {
        MKey k = (MKey) key;
        out.writeBoolean(k.hasClock);
        out.writeLong(k.clockMs);
        out.writeInt(k.done.size());
        for (long[] d : k.done) {
            out.writeLong(d[0]);
            out.writeLong(d[1]);
            out.writeLong(d[2]);
        }
        out.writeInt(k.open.size());
        for (MSession s : k.open) {
            out.writeLong(s.opened);
            out.writeLong(s.firstMs);
            out.writeLong(s.lastMs);
            out.writeLong(s.lastWallMs);
            out.writeLong(s.closeMs);
            out.writeInt(s.events.size());
            for (Buffered event : s.events) {
                event.write(out);
            }
        }
    }

    @Override
    Key readKey(Object groupValue, long firstSeq, DataInputStream in) throws IOException {
        MKey k = new MKey(groupValue, firstSeq);
        k.hasClock = in.readBoolean();
        k.clockMs = in.readLong();
        int n = Binary.length(in);
        for (int i = 0; i < n; i++) {
            k.done.add(new long[] {in.readLong(), in.readLong(), in.readLong()});
        }
        int m = Binary.length(in);
        for (int i = 0; i < m; i++) {
            long opened = in.readLong();
            MSession s = new MSession(k, in.readLong(), 0, opened);
            s.lastMs = in.readLong();
            s.lastWallMs = in.readLong();
            s.closeMs = in.readLong();
            int events = Binary.length(in);
            for (int j = 0; j < events; j++) {
                s.events.add(Buffered.read(in));
            }
            k.open.add(s);
        }
        return k;
    }
}
