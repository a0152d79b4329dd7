package windtunnel.engine;

import java.math.BigInteger;
import java.util.List;
import java.util.Map;

/**
 * One event as the engine reads it: a value per field slot ({@link Spec#fields}, dotted paths)
 * and, for pass-through queries only, the whole payload (what an emission's {@code row} shows).
 *
 * <p>A caller reuses one instance: {@link #clear} it, then fill slots from typed columns
 * ({@link #setLong}, {@link #setDouble}, {@link #set} for strings and other JSON values,
 * {@link #setNull} for null or missing) or read them all from a parsed payload with
 * {@link #readPayload}. JSON values are the engine's: null, {@link Boolean}, {@link Long},
 * {@link BigInteger}, {@link Double}, {@link String}, {@link List}, {@link Map}.
 */
public final class EventFields implements Values {
    private final List<String[]> paths;
    private final int[] tags;
    private final long[] longs;
    private final double[] doubles;
    private final Object[] objects;
    private Map<String, Object> payload;
    private String payloadJson;

    /** Empty fields for {@code spec}'s slots. */
    public EventFields(Spec spec) {
        int n = spec.fields.size();
        this.paths = new java.util.ArrayList<>(n);
        for (String path : spec.fields) {
            paths.add(path.split("\\.", -1));
        }
        tags = new int[n];
        longs = new long[n];
        doubles = new double[n];
        objects = new Object[n];
    }

    /** Every slot null, no payload. */
    public void clear() {
        java.util.Arrays.fill(tags, NULL);
        java.util.Arrays.fill(objects, null);
        payload = null;
        payloadJson = null;
    }

    /** Slot {@code slot} holds null (or the field is missing). */
    public void setNull(int slot) {
        tags[slot] = NULL;
        objects[slot] = null;
    }

    /** Slot {@code slot} holds an int. */
    public void setLong(int slot, long value) {
        tags[slot] = LONG;
        longs[slot] = value;
        objects[slot] = null;
    }

    /** Slot {@code slot} holds a float. */
    public void setDouble(int slot, double value) {
        tags[slot] = DOUBLE;
        doubles[slot] = value;
        objects[slot] = null;
    }

    /** Slot {@code slot} holds a JSON value (an Integer is taken as a Long). */
    public void set(int slot, Object value) {
        if (value == null) {
            setNull(slot);
        } else if (value instanceof Long) {
            setLong(slot, (Long) value);
        } else if (value instanceof Double) {
            setDouble(slot, (Double) value);
        } else if (value instanceof Integer) {
            setLong(slot, (Integer) value);
        } else if (value instanceof BigInteger) {
            Object normal = PyValues.integer((BigInteger) value);
            if (normal instanceof Long) {
                setLong(slot, (Long) normal);
            } else {
                tags[slot] = OBJECT;
                objects[slot] = normal;
            }
        } else {
            tags[slot] = OBJECT;
            objects[slot] = value;
        }
    }

    /**
     * Fills every slot from a parsed payload object, as the oracle's {@code fields.getter} reads
     * a dotted path (a missing field, or a step through a value that is not an object, reads as
     * null), and keeps the payload for pass-through emissions.
     */
    public void readPayload(Map<String, Object> payload) {
        for (int i = 0; i < paths.size(); i++) {
            set(i, read(payload, paths.get(i)));
        }
        this.payload = payload;
        this.payloadJson = null;
    }

    private static Object read(Map<String, Object> payload, String[] parts) {
        Object value = payload;
        for (String part : parts) {
            if (!(value instanceof Map)) {
                return null;
            }
            value = ((Map<?, ?>) value).get(part);
        }
        return value;
    }

    /** The payload a pass-through emission shows (slots are filled separately). */
    public void setPayload(Map<String, Object> payload) {
        this.payload = payload;
        this.payloadJson = null;
    }

    /**
     * The payload as its JSON text, already written as {@code json.dumps(payload, separators=(", ",
     * ": "))} writes it (for example by {@link JsonWriter#write}); instead of {@link #setPayload}.
     */
    public void setPayloadJson(String json) {
        this.payload = null;
        this.payloadJson = json;
    }

    /** The payload's JSON text ({@code {}} when none was given). */
    String payloadJson() {
        if (payloadJson == null) {
            payloadJson = payload == null ? "{}" : JsonWriter.write(payload);
        }
        return payloadJson;
    }

    @Override
    public int tag(int slot) {
        return tags[slot];
    }

    @Override
    public long longAt(int slot) {
        return longs[slot];
    }

    @Override
    public double doubleAt(int slot) {
        return doubles[slot];
    }

    @Override
    public Object get(int slot) {
        switch (tags[slot]) {
            case LONG:
                return longs[slot];
            case DOUBLE:
                return doubles[slot];
            case OBJECT:
                return objects[slot];
            default:
                return null;
        }
    }
}
