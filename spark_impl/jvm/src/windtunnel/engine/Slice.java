package windtunnel.engine;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * One task's share of a query's group keys, running the default profile's window semantics
 * exactly as the oracle's driver does on the sub-stream of those keys (keys are independent
 * under per-key clocks) plus the stream's wall clock.
 *
 * <p>Calls come in stream order. {@link #wall} moves the wall clock (idle timeouts fire) at
 * control step {@code 2*(afterSeq+1)}; {@link #event} feeds one event of this slice's keys at
 * step {@code 2*seq+1} (call {@code wall} first when its arrival moves the clock);
 * {@link #end} flushes every open window and ends the input. Outputs go to an {@link Out} as
 * {@link OutRecord}s; {@code emit_index} numbers the outputs of one step in this slice, across
 * the calls that share the step (several wall movements between two events). No I/O, threads or static mutable state: slices are independent.
 * Raises IllegalArgumentException for a call out of stream order and IllegalStateException for
 * an event after the end of input.
 */
public final class Slice {
    final Spec spec;
    final Operator operator;
    final KeyTable keys = new KeyTable();
    long wallMs;
    long afterSeq = -1;
    long lastSeq = -1;
    boolean ended;
    long opened;
    private final ArrayList<Key> dirtyKeys = new ArrayList<>();
    private final ArrayList<Long> deletedKeys = new ArrayList<>();
    private final OutRecord record = new OutRecord();
    private Out out;
    long step = -1;
    long emitIndex;
    private final long[] oneWindow = new long[2];
    private Key jsonKey;
    private String json;
    /** A reused buffer for output rows. */
    final StringBuilder text = new StringBuilder(128);

    /** An empty slice of {@code spec}'s query, its wall clock at the spec's start. */
    public Slice(Spec spec) {
        this.spec = spec;
        this.wallMs = spec.startWallMs;
        this.operator = Operator.of(this);
    }

    /** The query this slice runs. */
    public Spec spec() {
        return spec;
    }

    /** The wall clock, epoch ms. */
    public long wallMs() {
        return wallMs;
    }

    /** True once {@link #end} ran. */
    public boolean ended() {
        return ended;
    }

    /** How many keys the slice holds. */
    public int keyCount() {
        return keys.size();
    }

    /** How many windows are open over all keys (a session still in a reorder buffer: one). */
    public long openWindows() {
        long open = 0;
        for (Key key : keys.values()) {
            open += operator.openWindows(key);
        }
        return open;
    }

    /**
     * The stream's wall clock moves to {@code wallMs} (never back; equal is no movement) after
     * event {@code afterSeq} (-1: before any); open windows idle that long close.
     */
    public void wall(long wallMs, long afterSeq, Out out) {
        if (ended) {
            return;
        }
        if (wallMs < this.wallMs) {
            throw new IllegalArgumentException("wall clock cannot go back: " + wallMs + " < " + this.wallMs);
        }
        begin(2 * (afterSeq + 1), afterSeq, out);
        if (wallMs > this.wallMs) {
            this.wallMs = wallMs;
            operator.onWall();
        }
    }

    /** Event {@code seq} of one of this slice's keys arrives at the current wall clock. */
    public void event(long seq, EventFields event, Out out) {
        if (ended) {
            throw new IllegalStateException("event " + seq + " after the end of input");
        }
        if (seq <= lastSeq) {
            throw new IllegalArgumentException("event seq " + seq + " is not after " + lastSeq);
        }
        lastSeq = seq;
        begin(2 * seq + 1, seq, out);
        Key key = key(event, seq);
        touch(key);
        long tMs;
        if (spec.byWall) {
            tMs = wallMs;
        } else {
            int slot = spec.onSlot;
            try {
                switch (event.tag(slot)) {
                    case Values.LONG -> tMs = Times.ofLong(event.longAt(slot), spec.timeUnitMs);
                    case Values.DOUBLE -> tMs = Times.ofDouble(event.doubleAt(slot), spec.timeUnitMs);
                    case Values.OBJECT -> tMs = Times.ms(event.get(slot), spec.timeUnitMs);
                    default -> {
                        drop(seq, "null_time", groupJson(key), null, 0, spec.on + " is null or missing");
                        return;
                    }
                }
            } catch (Times.NotATime why) {
                drop(seq, "not_a_time", groupJson(key), null, 0,
                        spec.on + "=" + PyRepr.repr(event.get(slot)) + ": " + why.getMessage());
                return;
            }
        }
        operator.onEvent(key, seq, tMs, event);
    }

    /** End of input after event {@code afterSeq}: every open window flushes; nothing follows. */
    public void end(long afterSeq, Out out) {
        if (ended) {
            return;
        }
        begin(2 * (afterSeq + 1), afterSeq, out);
        operator.onEnd();
        ended = true;
        for (Key key : keys.values()) {
            deletedKeys.add(key.firstSeq);
        }
        keys.clear();
        operator.cleared();
        dirtyKeys.clear();
    }

    /** The hash a caller routes an event's key by: {@link GroupKeys#stableHash} of its key. */
    public static int keyHash(Spec spec, Values event) {
        return GroupKeys.stableHash(groupKey(spec, event));
    }

    /** Keys changed since {@link #clearDirty} (by first seq), for an incremental state write. */
    public List<Long> dirtyKeys() {
        List<Long> seqs = new ArrayList<>(dirtyKeys.size());
        for (Key key : dirtyKeys) {
            seqs.add(key.firstSeq);
        }
        return seqs;
    }

    /** Keys removed since {@link #clearDirty} (by first seq). */
    public List<Long> deletedKeys() {
        return new ArrayList<>(deletedKeys);
    }

    /** Starts a new change set (after its state was written). */
    public void clearDirty() {
        for (Key key : dirtyKeys) {
            key.dirty = false;
        }
        dirtyKeys.clear();
        deletedKeys.clear();
    }

    Collection<Key> dirtyKeyStates() {
        return dirtyKeys;
    }

    void touch(Key key) {
        if (!key.dirty) {
            key.dirty = true;
            dirtyKeys.add(key);
        }
    }

    private void begin(long step, long afterSeq, Out out) {
        if (step != this.step) { // wall movements (and the end) after one event share its step
            this.step = step;
            this.emitIndex = 0;
        }
        this.afterSeq = afterSeq;
        this.out = out;
    }

    static Object groupKey(Spec spec, Values event) {
        int[] slots = spec.groupSlots;
        if (slots.length == 0) {
            return GroupKeys.UNGROUPED;
        }
        if (slots.length == 1) {
            return keyOf(event, slots[0]);
        }
        Object[] parts = new Object[slots.length];
        for (int i = 0; i < slots.length; i++) {
            parts[i] = keyOf(event, slots[i]);
        }
        return GroupKeys.tuple(parts);
    }

    private static Object keyOf(Values event, int slot) {
        return switch (event.tag(slot)) {
            case Values.LONG -> event.longAt(slot);
            case Values.DOUBLE -> GroupKeys.ofDouble(event.doubleAt(slot));
            case Values.OBJECT -> GroupKeys.of(event.get(slot));
            default -> null;
        };
    }

    private Key key(EventFields event, long seq) {
        Object k = groupKey(spec, event);
        Key key = keys.get(k);
        if (key == null) {
            Object value = groupValue(event);
            key = operator.newKey(value, seq);
            key.mapKey = value instanceof Long && value.equals(k) ? value : k; // one Long for both
            keys.put(key);
            operator.attached(key);
        }
        return key;
    }

    private Object groupValue(Values event) {
        int[] slots = spec.groupSlots;
        if (slots.length == 0) {
            return null;
        }
        if (slots.length == 1) {
            return event.get(slots[0]);
        }
        List<Object> values = new ArrayList<>(slots.length);
        for (int slot : slots) {
            values.add(event.get(slot));
        }
        return values;
    }

    /** Adds a decoded key. */
    void restore(Key key) {
        key.mapKey = groupKey(key.groupValue);
        keys.put(key);
        operator.attached(key);
    }

    /** Takes a key out (a decoded update replaces or deletes it). */
    void unlink(Key key) {
        keys.remove(key.mapKey);
        operator.detached(key);
    }

    private Object groupKey(Object groupValue) {
        int n = spec.groupSlots.length;
        if (n == 0) {
            return GroupKeys.UNGROUPED;
        }
        if (n == 1) {
            return GroupKeys.of(groupValue);
        }
        List<?> values = (List<?>) groupValue;
        Object[] parts = new Object[n];
        for (int i = 0; i < n; i++) {
            parts[i] = GroupKeys.of(values.get(i));
        }
        return GroupKeys.tuple(parts);
    }

    /** The JSON text of {@code key}'s group value (an integer's is written here, the last one kept). */
    String groupJson(Key key) {
        if (key.groupJson != null) {
            return key.groupJson;
        }
        if (key != jsonKey) {
            jsonKey = key;
            json = JsonWriter.write(key.groupValue);
        }
        return json;
    }

    long nextOpened() {
        return opened++;
    }

    // --- outputs -----------------------------------------------------------------------------
    /** An emission of a window with times [startMs, endMs]. */
    void emit(Key key, long startMs, long endMs, String row, String reason, boolean partial) {
        OutRecord r = begin("emit", key, row, reason, partial);
        r.hasStartMs = r.hasEndMs = true;
        r.startMs = startMs;
        r.endMs = endMs;
        send(r);
    }

    /** An emission of a count window [startOffset, endOffset). */
    void emitOffsets(Key key, long startOffset, long endOffset, String row, String reason, boolean partial) {
        OutRecord r = begin("emit", key, row, reason, partial);
        r.hasStartOffset = r.hasEndOffset = true;
        r.startOffset = startOffset;
        r.endOffset = endOffset;
        send(r);
    }

    private OutRecord begin(String type, Key key, String row, String reason, boolean partial) {
        OutRecord r = record;
        r.clear();
        r.type = type;
        r.group = groupJson(key);
        r.row = row;
        r.reason = reason;
        r.hasAfterSeq = afterSeq >= 0;
        r.afterSeq = afterSeq;
        r.hasWallMs = true;
        r.wallMs = wallMs;
        r.partial = partial;
        r.hasGroupFirstSeq = true;
        r.groupFirstSeq = key.firstSeq;
        return r;
    }

    /** A drop of event {@code seq}; {@code bounds} holds n (start, end) pairs of missed windows. */
    void drop(long seq, String reason, String groupJson, long[] bounds, int n, String message) {
        OutRecord r = record;
        r.clear();
        r.type = "drop";
        r.hasSeq = true;
        r.seq = seq;
        r.reason = reason;
        r.group = groupJson;
        r.message = message;
        StringBuilder windows = new StringBuilder(n * 40 + 2).append('[');
        for (int i = 0; i < n; i++) {
            if (i > 0) {
                windows.append(", ");
            }
            windows.append("{\"start_ms\": ").append(bounds[2 * i]).append(", \"end_ms\": ")
                    .append(bounds[2 * i + 1]).append('}');
        }
        r.windows = windows.append(']').toString();
        if (n > 0) {
            r.hasStartMs = r.hasEndMs = true;
            r.startMs = bounds[0];
            r.endMs = bounds[1];
        }
        send(r);
    }

    /** A drop that names one window. */
    void drop(long seq, String reason, String groupJson, long startMs, long endMs, String message) {
        oneWindow[0] = startMs;
        oneWindow[1] = endMs;
        drop(seq, reason, groupJson, oneWindow, 1, message);
    }

    private void send(OutRecord r) {
        r.step = step;
        r.emitIndex = emitIndex++;
        out.accept(r);
    }
}
