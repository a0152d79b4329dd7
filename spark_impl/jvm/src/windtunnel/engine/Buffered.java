package windtunnel.engine;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;

/**
 * An event kept for later: its time, seq, slot values and (pass-through) payload JSON. Session
 * windows keep events in their reorder buffer or until a session is emitted.
 */
final class Buffered implements Values {
    final long tMs;
    final long seq;
    final Object[] values;
    final String payloadJson;

    Buffered(long tMs, long seq, Object[] values, String payloadJson) {
        this.tMs = tMs;
        this.seq = seq;
        this.values = values;
        this.payloadJson = payloadJson;
    }

    /** A copy of {@code event}'s slots (and payload JSON when {@code passThrough}). */
    static Buffered of(long tMs, long seq, EventFields event, int slots, boolean passThrough) {
        Object[] values = new Object[slots];
        for (int i = 0; i < slots; i++) {
            values[i] = event.get(i);
        }
        return new Buffered(tMs, seq, values, passThrough ? event.payloadJson() : null);
    }

    @Override
    public int tag(int slot) {
        Object value = values[slot];
        if (value == null) {
            return NULL;
        }
        if (value instanceof Long) {
            return LONG;
        }
        return value instanceof Double ? DOUBLE : OBJECT;
    }

    @Override
    public long longAt(int slot) {
        return (Long) values[slot];
    }

    @Override
    public double doubleAt(int slot) {
        return (Double) values[slot];
    }

    @Override
    public Object get(int slot) {
        return values[slot];
    }

    void write(DataOutputStream out) throws IOException {
        out.writeLong(tMs);
        out.writeLong(seq);
        out.writeInt(values.length);
        for (Object value : values) {
            Binary.writeValue(out, value);
        }
        out.writeBoolean(payloadJson != null);
        if (payloadJson != null) {
            Binary.writeString(out, payloadJson);
        }
    }

    static Buffered read(DataInputStream in) throws IOException {
        long tMs = in.readLong();
        long seq = in.readLong();
        Object[] values = new Object[Binary.length(in)];
        for (int i = 0; i < values.length; i++) {
            values[i] = Binary.readValue(in);
        }
        String payload = in.readBoolean() ? Binary.readString(in) : null;
        return new Buffered(tMs, seq, values, payload);
    }
}
