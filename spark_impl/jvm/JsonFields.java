package windtunnel.jvm;

/**
 * Integer fields of a JSON object text, read the way Python's {@code json.loads} reads them,
 * or nothing.
 *
 * <p>{@link #read} scans one JSON object (UTF-8 bytes) and returns the values of the named
 * top-level keys when each is a JSON integer in the int64 range: {@code -?(0|[1-9][0-9]*)}.
 * A repeated key keeps its last value (as {@code json.loads} does). It answers {@code false}
 * (the caller then leaves the micro-batch to the Python step, which reads the text itself)
 * for anything it does not take exactly: a missing key, a value that is not such an integer
 * (a float, a string, {@code true}, {@code null}), a key written with an escape, a text that
 * is not one JSON object (trailing data, a control character in a string, {@code NaN}), or
 * nesting deeper than 64.
 */
public final class JsonFields {
    private static final int MAX_DEPTH = 64;

    private final byte[][] keys;
    private final long[] values;
    private final boolean[] found;
    private byte[] text;
    private int at;
    private int end;

    /** A reader of the top-level {@code keys}, each given as its UTF-8 bytes. */
    public JsonFields(byte[][] keys) {
        this.keys = keys;
        this.values = new long[keys.length];
        this.found = new boolean[keys.length];
    }

    /** The value of key {@code index} after a {@link #read} that answered true. */
    public long get(int index) {
        return values[index];
    }

    /** Reads {@code length} bytes of {@code bytes} from {@code offset}; true when every key holds an integer. */
    public boolean read(byte[] bytes, int offset, int length) {
        text = bytes;
        at = offset;
        end = offset + length;
        java.util.Arrays.fill(found, false);
        skipSpace();
        if (!object(0, true)) {
            return false;
        }
        skipSpace();
        if (at != end) {
            return false;
        }
        for (boolean f : found) {
            if (!f) {
                return false;
            }
        }
        return true;
    }

    private void skipSpace() {
        while (at < end) {
            byte b = text[at];
            if (b == ' ' || b == '\t' || b == '\n' || b == '\r') {
                at++;
            } else {
                return;
            }
        }
    }

    private boolean object(int depth, boolean top) {
        if (depth > MAX_DEPTH || at >= end || text[at] != '{') {
            return false;
        }
        at++;
        skipSpace();
        if (at < end && text[at] == '}') {
            at++;
            return true;
        }
        while (true) {
            skipSpace();
            int keyStart = at + 1;
            if (!string()) {
                return false;
            }
            int keyEnd = at - 1;
            skipSpace();
            if (at >= end || text[at] != ':') {
                return false;
            }
            at++;
            skipSpace();
            int wanted = top ? keyIndex(keyStart, keyEnd) : -1;
            if (wanted == -2) {
                return false; // an escaped key: json.loads would unescape it
            }
            if (wanted >= 0) {
                // a repeated key: the last value counts, so a non-integer there is refused
                if (!integer(wanted)) {
                    return false;
                }
            } else if (!value(depth + 1)) {
                return false;
            }
            int next = separator('}');
            if (next != MORE) {
                return next == CLOSED;
            }
        }
    }

    private static final int MORE = 0;
    private static final int CLOSED = 1;
    private static final int BROKEN = 2;

    /** After a member: {@link #MORE} past a comma, {@link #CLOSED} past {@code close}, else {@link #BROKEN}. */
    private int separator(char close) {
        skipSpace();
        if (at < end && text[at] == ',') {
            at++;
            return MORE;
        }
        if (at < end && text[at] == close) {
            at++;
            return CLOSED;
        }
        return BROKEN;
    }

    /** The index of the key in {@code text[start, end)}, -1 for another key, -2 for an escaped one. */
    private int keyIndex(int start, int stop) {
        for (int i = start; i < stop; i++) {
            if (text[i] == '\\') {
                return -2;
            }
        }
        int length = stop - start;
        for (int k = 0; k < keys.length; k++) {
            byte[] key = keys[k];
            if (key.length != length) {
                continue;
            }
            boolean same = true;
            for (int i = 0; i < length && same; i++) {
                same = key[i] == text[start + i];
            }
            if (same) {
                return k;
            }
        }
        return -1;
    }

    private boolean integer(int index) {
        int start = at;
        boolean negative = false;
        if (at < end && text[at] == '-') {
            negative = true;
            at++;
        }
        if (at >= end || text[at] < '0' || text[at] > '9') {
            return false;
        }
        if (text[at] == '0' && at + 1 < end && text[at + 1] >= '0' && text[at + 1] <= '9') {
            return false; // a leading zero: not JSON
        }
        long magnitude = 0; // accumulated as a negative number: -2^63 fits
        while (at < end && text[at] >= '0' && text[at] <= '9') {
            int digit = text[at] - '0';
            if (magnitude < (Long.MIN_VALUE + digit) / 10) {
                return false; // beyond int64
            }
            magnitude = magnitude * 10 - digit;
            at++;
        }
        if (at < end && (text[at] == '.' || text[at] == 'e' || text[at] == 'E')) {
            return false; // a float
        }
        if (!negative && magnitude == Long.MIN_VALUE) {
            return false;
        }
        values[index] = negative ? magnitude : -magnitude;
        found[index] = true;
        return at > start;
    }

    private boolean value(int depth) {
        if (at >= end) {
            return false;
        }
        byte b = text[at];
        if (b == '{') {
            return object(depth, false);
        }
        if (b == '[') {
            return array(depth);
        }
        if (b == '"') {
            return string();
        }
        if (b == '-' || (b >= '0' && b <= '9')) {
            return number();
        }
        return literal("true") || literal("false") || literal("null");
    }

    private boolean array(int depth) {
        if (depth > MAX_DEPTH) {
            return false;
        }
        at++;
        skipSpace();
        if (at < end && text[at] == ']') {
            at++;
            return true;
        }
        while (true) {
            skipSpace();
            if (!value(depth + 1)) {
                return false;
            }
            int next = separator(']');
            if (next != MORE) {
                return next == CLOSED;
            }
        }
    }

    /** A JSON string at {@code at}; {@code at} ends after its closing quote. */
    private boolean string() {
        if (at >= end || text[at] != '"') {
            return false;
        }
        at++;
        while (at < end) {
            byte b = text[at];
            if (b == '"') {
                at++;
                return true;
            }
            if ((b & 0xff) < 0x20) {
                return false; // a control character: json.loads refuses it
            }
            if (b == '\\') {
                if (at + 1 >= end) {
                    return false;
                }
                byte e = text[at + 1];
                if (e == 'u') {
                    for (int i = 2; i < 6; i++) {
                        if (at + i >= end || Character.digit(text[at + i], 16) < 0) {
                            return false;
                        }
                    }
                    at += 6;
                    continue;
                }
                if ("\"\\/bfnrt".indexOf(e) < 0) {
                    return false;
                }
                at += 2;
                continue;
            }
            at++;
        }
        return false;
    }

    private boolean number() {
        int start = at;
        if (text[at] == '-') {
            at++;
        }
        if (at >= end || text[at] < '0' || text[at] > '9') {
            return false;
        }
        if (text[at] == '0') {
            at++;
        } else {
            while (at < end && text[at] >= '0' && text[at] <= '9') {
                at++;
            }
        }
        if (at < end && text[at] == '.') {
            at++;
            if (!digits()) {
                return false;
            }
        }
        if (at < end && (text[at] == 'e' || text[at] == 'E')) {
            at++;
            if (at < end && (text[at] == '+' || text[at] == '-')) {
                at++;
            }
            if (!digits()) {
                return false;
            }
        }
        return at > start;
    }

    private boolean digits() {
        int start = at;
        while (at < end && text[at] >= '0' && text[at] <= '9') {
            at++;
        }
        return at > start;
    }

    private boolean literal(String word) {
        int n = word.length();
        if (at + n > end) {
            return false;
        }
        for (int i = 0; i < n; i++) {
            if (text[at + i] != word.charAt(i)) {
                return false;
            }
        }
        at += n;
        return true;
    }

    /** Test hook (and a command-line check): the values of {@code keys} in {@code json}, or null. */
    public static long[] parse(String json, String[] keys) {
        byte[][] encoded = new byte[keys.length][];
        for (int i = 0; i < keys.length; i++) {
            encoded[i] = keys[i].getBytes(java.nio.charset.StandardCharsets.UTF_8);
        }
        JsonFields fields = new JsonFields(encoded);
        byte[] bytes = json.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        if (!fields.read(bytes, 0, bytes.length)) {
            return null;
        }
        return fields.values.clone();
    }
}
