package windtunnel.engine;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A query as the engine runs it, parsed from the JSON text {@code spark_impl/engine_spec.py}
 * writes. Times are integer milliseconds; windows are half-open {@code [start_ms, end_ms)}.
 *
 * <p>{@link #fields} is the slot layout of {@link EventFields}: the distinct dotted paths the
 * engine reads (the {@code on} field unless {@code now()}, the {@code group_by},
 * {@code aggregate_by} and aggregate argument fields), in the order the spec lists them.
 * Raises {@link IllegalArgumentException} naming the key for a spec it cannot run.
 */
public final class Spec {
    /** The spec format this engine reads ({@code engine_format}). */
    public static final int FORMAT = 1;

    /** Window kinds. */
    public enum Kind { FIXED, SESSION, COUNT }

    public final Kind kind;
    /** The {@code on} path as written (the name in drop messages), or {@code now()}. */
    public final String on;
    public final boolean byWall;
    public final List<String> fields;
    public final int onSlot;
    public final int[] groupSlots;
    public final Aggregates aggregates; // null: pass-through
    public final long timeUnitMs;
    public final long startWallMs;
    // fixed
    public final long sizeMs;
    public final long hopMs;
    public final long toleranceMs;
    public final long idleTimeoutMs; // -1: none
    // session
    public final long gapMs;
    public final long maxDurationMs; // -1: none
    public final long maxEvents; // -1: none
    public final boolean merging; // session_order merge (processing-time sessions)
    // count
    public final long count;
    public final long every;
    private final String text;
    private final long fingerprint;

    private Spec(Map<String, Object> spec, String text) {
        this.text = text;
        Object format = spec.get("engine_format");
        if (!(format instanceof Long) || (Long) format != FORMAT) {
            throw bad("engine_format", format, "this engine reads format " + FORMAT);
        }
        String kindName = string(spec, "kind");
        switch (kindName) {
            case "fixed" -> kind = Kind.FIXED;
            case "session" -> kind = Kind.SESSION;
            case "count" -> kind = Kind.COUNT;
            default -> throw bad("kind", kindName, "use fixed, session or count");
        }
        on = string(spec, "on");
        byWall = on.equals("now()");
        fields = strings(spec, "fields");
        onSlot = byWall ? -1 : slot(on, "on");
        List<String> groupBy = strings(spec, "group_by");
        groupSlots = new int[groupBy.size()];
        for (int i = 0; i < groupSlots.length; i++) {
            groupSlots[i] = slot(groupBy.get(i), "group_by");
        }
        Object aggregate = spec.get("aggregate");
        if (aggregate == null) {
            aggregates = null;
        } else {
            aggregates = Aggregates.parse(aggregate, strings(spec, "aggregate_by"), this::slot);
        }
        timeUnitMs = positive(spec, "time_unit_ms");
        startWallMs = number(spec, "start_wall_ms", false);
        sizeMs = kind == Kind.FIXED ? positive(spec, "size_ms") : 0;
        hopMs = kind == Kind.FIXED ? positive(spec, "hop_ms") : 0;
        toleranceMs = kind == Kind.COUNT ? 0 : number(spec, "tolerance_ms", false);
        idleTimeoutMs = kind == Kind.COUNT ? -1 : optional(spec, "idle_timeout_ms");
        gapMs = kind == Kind.SESSION ? positive(spec, "gap_ms") : 0;
        maxDurationMs = kind == Kind.SESSION ? optional(spec, "max_duration_ms") : -1;
        maxEvents = kind == Kind.SESSION ? optional(spec, "max_events") : -1;
        merging = kind == Kind.SESSION && (byWall || "merge".equals(spec.get("session_order")));
        count = kind == Kind.COUNT ? positive(spec, "count") : 0;
        every = kind == Kind.COUNT ? positive(spec, "every") : 0;
        if (kind == Kind.FIXED && hopMs > sizeMs) {
            throw bad("hop_ms", hopMs, "must not be greater than size_ms (gapped windows are not covered)");
        }
        if (kind == Kind.COUNT && every > count) {
            throw bad("every", every, "must not be greater than count (gapped windows are not covered)");
        }
        if (toleranceMs < 0) {
            throw bad("tolerance_ms", toleranceMs, "must not be negative");
        }
        fingerprint = digest(text);
    }

    /** Parses a spec text; raises IllegalArgumentException naming the key that is wrong. */
    @SuppressWarnings("unchecked")
    public static Spec parse(String text) {
        Object value = JsonReader.parse(text);
        if (!(value instanceof Map)) {
            throw bad("spec", "", "must be a JSON object");
        }
        return new Spec((Map<String, Object>) value, text);
    }

    /** The spec text as given. */
    public String text() {
        return text;
    }

    /** A fingerprint of the query (SHA-256 of the spec text's canonical JSON, first 8 bytes). */
    public long fingerprint() {
        return fingerprint;
    }

    private static long digest(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256")
                    .digest(JsonWriter.canonical(JsonReader.parse(text)).getBytes(StandardCharsets.UTF_8));
            long value = 0;
            for (int i = 0; i < 8; i++) {
                value = (value << 8) | (digest[i] & 0xff);
            }
            return value;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** True for a query without an aggregate block: delivered events are emitted as they are. */
    public boolean passThrough() {
        return aggregates == null;
    }

    int slot(String path, String where) {
        int index = fields.indexOf(path);
        if (index < 0) {
            throw bad("fields", fields, where + " path " + path + " is not among the fields");
        }
        return index;
    }

    private static IllegalArgumentException bad(String key, Object value, String fix) {
        return new IllegalArgumentException("engine spec: " + key + "=" + JsonWriter.write(
                value instanceof Integer ? ((Integer) value).longValue() : value) + ": " + fix);
    }

    private static String string(Map<String, Object> spec, String key) {
        Object value = spec.get(key);
        if (!(value instanceof String)) {
            throw bad(key, value, "give a string");
        }
        return (String) value;
    }

    private static List<String> strings(Map<String, Object> spec, String key) {
        Object value = spec.get(key);
        List<String> out = new ArrayList<>();
        if (value == null) {
            return out;
        }
        if (!(value instanceof List)) {
            throw bad(key, value, "give a list of field paths");
        }
        for (Object item : (List<?>) value) {
            if (!(item instanceof String) || ((String) item).isEmpty()) {
                throw bad(key, value, "give a list of field paths");
            }
            out.add((String) item);
        }
        return out;
    }

    private static long number(Map<String, Object> spec, String key, boolean positive) {
        Object value = spec.get(key);
        if (!(value instanceof Long) || Math.abs((Long) value) > Times.MAX_MS
                || (positive && (Long) value <= 0)) {
            throw bad(key, value, positive ? "give a positive integer up to 2**61" : "give an integer up to 2**61");
        }
        return (Long) value;
    }

    private static long positive(Map<String, Object> spec, String key) {
        return number(spec, key, true);
    }

    private static long optional(Map<String, Object> spec, String key) {
        return spec.get(key) == null ? -1 : positive(spec, key);
    }
}
