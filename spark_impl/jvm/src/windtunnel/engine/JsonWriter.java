package windtunnel.engine;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * JSON text exactly as Python writes it with
 * {@code json.dumps(value, separators=(", ", ": "), default=str)}: ASCII only (other characters
 * as lowercase {@code \\uXXXX}, astral ones as surrogate pairs), floats as {@link FloatRepr}
 * ({@code NaN}, {@code Infinity}, {@code -Infinity}), ints exact, {@code true}/{@code false}/
 * {@code null}, objects in their insertion order. {@link #canonical} adds {@code sort_keys=True}
 * (keys by code point), as {@code fields.hashable} does.
 *
 * <p>Values are the engine's JSON values: {@code null}, {@link Boolean}, {@link Long},
 * {@link BigInteger}, {@link Double}, {@link String}, {@link List}, {@link Map} with string keys.
 */
public final class JsonWriter {
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private JsonWriter() {
    }

    /** The JSON text of {@code value}. */
    public static String write(Object value) {
        StringBuilder out = new StringBuilder();
        append(out, value, false);
        return out.toString();
    }

    /** The JSON text with object keys sorted ({@code sort_keys=True}). */
    public static String canonical(Object value) {
        StringBuilder out = new StringBuilder();
        append(out, value, true);
        return out.toString();
    }

    /** Appends the JSON text of {@code value} (keys sorted when {@code sorted}). */
    public static void append(StringBuilder out, Object value, boolean sorted) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String) {
            string(out, (String) value);
        } else if (value instanceof Long || value instanceof BigInteger) {
            out.append(value.toString());
        } else if (value instanceof Double) {
            FloatRepr.append(out, (Double) value, true);
        } else if (value instanceof Boolean) {
            out.append((Boolean) value ? "true" : "false");
        } else if (value instanceof List) {
            List<?> list = (List<?>) value;
            out.append('[');
            for (int i = 0; i < list.size(); i++) {
                if (i > 0) {
                    out.append(", ");
                }
                append(out, list.get(i), sorted);
            }
            out.append(']');
        } else if (value instanceof Map) {
            object(out, (Map<?, ?>) value, sorted);
        } else if (value instanceof Integer) {
            out.append(value.toString());
        } else {
            throw new IllegalArgumentException("not a JSON value: " + value.getClass().getName());
        }
    }

    private static void object(StringBuilder out, Map<?, ?> map, boolean sorted) {
        out.append('{');
        boolean first = true;
        Iterable<? extends Map.Entry<?, ?>> entries = map.entrySet();
        if (sorted && map.size() > 1) {
            List<Map.Entry<?, ?>> list = new ArrayList<>(map.entrySet());
            Collections.sort(list, (a, b) -> PyValues.compareStrings((String) a.getKey(), (String) b.getKey()));
            entries = list;
        }
        for (Map.Entry<?, ?> entry : entries) {
            if (!first) {
                out.append(", ");
            }
            first = false;
            string(out, (String) entry.getKey());
            out.append(": ");
            append(out, entry.getValue(), sorted);
        }
        out.append('}');
    }

    /** Appends {@code text} as a JSON string ({@code ensure_ascii=True}). */
    public static void string(StringBuilder out, String text) {
        out.append('"');
        int n = text.length();
        int plain = 0;
        for (int i = 0; i < n; i++) {
            char c = text.charAt(i);
            if (c >= ' ' && c <= '~' && c != '"' && c != '\\') {
                continue;
            }
            out.append(text, plain, i);
            plain = i + 1;
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> out.append("\\u").append(HEX[c >> 12]).append(HEX[(c >> 8) & 15])
                        .append(HEX[(c >> 4) & 15]).append(HEX[c & 15]);
            }
        }
        out.append(text, plain, n);
        out.append('"');
    }
}
