package windtunnel.engine;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

/**
 * Session windows as Tenzir 6.20 runs them (rule {@code session_order: reorder}, the oracle's
 * {@code oracle/windows/session_reorder.py}): per key, events pass a reorder buffer; an event
 * before the watermark ({@code clock - tolerance}) or before the last released event is late;
 * buffered events at or before the watermark are released in time order (ties by seq) to the
 * key's one open session, which an event more than {@code gap} after its last event (or more
 * than {@code max_duration} after its first) closes; the event at {@code max_duration} or the
 * one reaching {@code max_events} joins and closes it; the open session closes once the
 * watermark is past {@code last + gap}. idle_timeout and end of input release the whole buffer
 * and close the session. Sessions report {@code [first, last]}.
 */
final class ReorderSessions extends Operator {
    private static final Comparator<Buffered> TIME_ORDER =
            (a, b) -> a.tMs != b.tMs ? Long.compare(a.tMs, b.tMs) : Long.compare(a.seq, b.seq);
    private final long gapMs;
    private final long toleranceMs;
    private final long maxDurationMs;
    private final long maxEvents;
    private final long idleMs;
    private final int slots;
    private final IdleQueue<RKey> idle;
    private Pending held; // non-null while a flush of several keys collects its emissions

    /** A key: clock, reorder buffer, last released time, open session, last accepted wall. */
    static final class RKey extends Key {
        boolean hasClock;
        long clockMs;
        final PriorityQueue<Buffered> buffer = new PriorityQueue<>(TIME_ORDER);
        boolean hasReleased;
        long lastReleasedMs;
        Session session;
        long lastWallMs;
        long idleDeadlineMs;

        RKey(Object groupValue, long firstSeq) {
            super(groupValue, firstSeq);
        }

        boolean active() {
            return session != null || !buffer.isEmpty();
        }
    }

    /** The open session of a key: first and last admitted times, event count, rows. */
    static final class Session extends Acc {
        final long firstMs;
        long lastMs;
        long events;
        List<String> payloads; // pass-through

        Session(long firstMs) {
            this.firstMs = firstMs;
            this.lastMs = firstMs;
        }
    }

    ReorderSessions(Slice slice) {
        super(slice);
        gapMs = spec.gapMs;
        toleranceMs = spec.toleranceMs;
        maxDurationMs = spec.maxDurationMs;
        maxEvents = spec.maxEvents;
        idleMs = spec.idleTimeoutMs;
        slots = spec.fields.size();
        idle = idleMs < 0 ? null : new IdleQueue<RKey>(idleMs, slice.wallMs, (a, b) -> 0); // deadline, then first seq
    }

    @Override
    Key newKey(Object groupValue, long firstSeq) {
        return new RKey(groupValue, firstSeq);
    }

    @Override
    void onEvent(Key key, long seq, long tMs, EventFields event) {
        RKey k = (RKey) key;
        if (k.hasClock && tMs < k.clockMs - toleranceMs) {
            late(k, seq, tMs, "the watermark (clock - tolerance) is " + (k.clockMs - toleranceMs));
            return;
        }
        if (k.hasReleased && tMs < k.lastReleasedMs) {
            late(k, seq, tMs, "an event at " + k.lastReleasedMs + " already left the reorder buffer");
            return;
        }
        k.clockMs = k.hasClock ? Math.max(k.clockMs, tMs) : tMs;
        k.hasClock = true;
        k.lastWallMs = slice.wallMs;
        long cutoff = k.clockMs - toleranceMs;
        if (k.buffer.isEmpty() && tMs <= cutoff) { // released at once: no copy needed
            k.hasReleased = true;
            k.lastReleasedMs = tMs;
            admit(k, tMs, event, aggregates == null ? event.payloadJson() : null);
        } else {
            k.buffer.add(Buffered.of(tMs, seq, event, slots, aggregates == null));
            release(k, cutoff, false);
        }
        closeIfDue(k);
        if (idle != null && !k.queued && k.active()) {
            k.idleDeadlineMs = k.lastWallMs + idleMs;
            idle.push(k, k.idleDeadlineMs, k.firstSeq);
        }
    }

    private void late(RKey k, long seq, long tMs, String why) {
        slice.drop(seq, "late", slice.groupJson(k), tMs, tMs,
                "event time " + tMs + " is late for sessions: " + why + "; raise tolerance to keep it");
    }

    private void release(RKey k, long cutoff, boolean all) {
        while (!k.buffer.isEmpty() && (all || k.buffer.peek().tMs <= cutoff)) {
            Buffered event = k.buffer.poll();
            k.hasReleased = true;
            k.lastReleasedMs = event.tMs;
            admit(k, event.tMs, event, event.payloadJson);
        }
    }

    private void admit(RKey k, long tMs, Values event, String payloadJson) {
        Session s = k.session;
        if (s != null && (tMs > s.lastMs + gapMs // rule session_gap: inclusive
                || (maxDurationMs >= 0 && tMs > s.firstMs + maxDurationMs))) {
            close(k, "close");
            s = null;
        }
        if (s == null) {
            s = new Session(tMs);
            if (aggregates == null) {
                s.payloads = new ArrayList<>();
            } else {
                aggregates.init(s);
            }
            k.session = s;
        }
        s.events++;
        if (aggregates == null) {
            s.payloads.add(payloadJson);
        } else {
            aggregates.add(s, event);
        }
        s.lastMs = tMs;
        if ((maxEvents >= 0 && s.events >= maxEvents)
                || (maxDurationMs >= 0 && tMs >= s.firstMs + maxDurationMs)) {
            close(k, "close");
        }
    }

    private void closeIfDue(RKey k) {
        Session s = k.session;
        // rule session_close_at: passes (the watermark strictly past last + gap)
        if (s != null && k.clockMs - toleranceMs >= s.lastMs + gapMs + 1) {
            close(k, "close");
        }
    }

    private void close(RKey k, String reason) {
        Session s = k.session;
        if (s == null) {
            return;
        }
        k.session = null;
        boolean partial = !reason.equals("close");
        if (aggregates == null) {
            for (String payload : s.payloads) {
                send(k, s, payload, reason, partial);
            }
        } else {
            aggregates.rows(s, true, s.firstMs, s.lastMs, slice.text, row -> send(k, s, row, reason, partial));
        }
    }

    private void send(RKey k, Session s, String row, String reason, boolean partial) {
        if (held != null) {
            held.add(k, s.firstMs, s.lastMs, row, reason, partial);
        } else {
            slice.emit(k, s.firstMs, s.lastMs, row, reason, partial);
        }
    }

    private void flush(RKey k, String reason) {
        release(k, 0, true);
        close(k, reason);
        slice.touch(k);
    }

    @Override
    void onWall() {
        if (idle == null) {
            return;
        }
        long wall = slice.wallMs;
        held = new Pending();
        for (RKey k : idle.drainDue(wall)) {
            if (!k.active()) {
                continue;
            }
            long deadline = k.lastWallMs + idleMs;
            if (deadline > wall) {
                k.idleDeadlineMs = deadline;
                idle.push(k, deadline, k.firstSeq);
                slice.touch(k);
                continue;
            }
            flush(k, "idle_timeout");
        }
        Pending out = held;
        held = null;
        out.flush(slice);
    }

    @Override
    void onEnd() {
        held = new Pending();
        for (Key key : slice.keys.values()) {
            flush((RKey) key, "end_of_input");
        }
        Pending out = held;
        held = null;
        out.flush(slice);
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
            RKey k = (RKey) key;
            if (k.active()) {
                idle.push(k, k.idleDeadlineMs, k.firstSeq);
            }
        }
    }

    /** The key's session, or events still held in its reorder buffer, count as one window. */
    @Override
    int openWindows(Key key) {
        return ((RKey) key).active() ? 1 : 0;
    }

    @Override
    void cleared() {
        if (idle != null) {
            idle.clear();
        }
    }

    @Override
    void detached(Key key) {
        if (idle != null) {
            key.gone = true;
        }
    }

    @Override
    void writeKey(Key key, DataOutputStream out) throws IOException {
        RKey k = (RKey) key;
        out.writeBoolean(k.hasClock);
        out.writeLong(k.clockMs);
        out.writeBoolean(k.hasReleased);
        out.writeLong(k.lastReleasedMs);
        out.writeLong(k.lastWallMs);
        out.writeLong(k.idleDeadlineMs);
        out.writeInt(k.buffer.size());
        for (Buffered event : k.buffer) {
            event.write(out);
        }
        Session s = k.session;
        out.writeBoolean(s != null);
        if (s != null) {
            out.writeLong(s.firstMs);
            out.writeLong(s.lastMs);
            out.writeLong(s.events);
            if (aggregates == null) {
                out.writeInt(s.payloads.size());
                for (String payload : s.payloads) {
                    Binary.writeString(out, payload);
                }
            } else {
                AccState.write(aggregates, s, out);
            }
        }
    }

    @Override
    Key readKey(Object groupValue, long firstSeq, DataInputStream in) throws IOException {
        RKey k = new RKey(groupValue, firstSeq);
        k.hasClock = in.readBoolean();
        k.clockMs = in.readLong();
        k.hasReleased = in.readBoolean();
        k.lastReleasedMs = in.readLong();
        k.lastWallMs = in.readLong();
        k.idleDeadlineMs = in.readLong();
        int n = Binary.length(in);
        for (int i = 0; i < n; i++) {
            k.buffer.add(Buffered.read(in));
        }
        if (in.readBoolean()) {
            Session s = new Session(in.readLong());
            s.lastMs = in.readLong();
            s.events = in.readLong();
            if (aggregates == null) {
                int m = Binary.length(in);
                s.payloads = new ArrayList<>(m);
                for (int i = 0; i < m; i++) {
                    s.payloads.add(Binary.readString(in));
                }
            } else {
                AccState.read(aggregates, s, in);
            }
            k.session = s;
        }
        return k;
    }
}
