package windtunnel.engine;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A JSON parser that reads what Python's {@code json.loads} reads, the same way: integers exact
 * ({@link Long}, or {@link BigInteger} beyond 64 bits; at most 4300 digits, Python's limit),
 * numbers with a fraction or exponent as {@link Double} (correctly rounded; {@code 1e400} is
 * infinity), {@code NaN}, {@code Infinity}, {@code -Infinity}, strings with escapes (raw control
 * characters refused), objects as insertion-ordered maps where a repeated key keeps its first
 * position and its last value. Whitespace is space, tab, CR and LF. Raises
 * {@link JsonException} with the position for anything else (trailing data included).
 */
public final class JsonReader {
    private static final int MAX_DEPTH = 500;
    private static final int MAX_INT_DIGITS = 4300;

    private final String text;
    private int at;

    private JsonReader(String text) {
        this.text = text;
    }

    /** The value of one JSON text; raises JsonException when it is not one JSON value. */
    public static Object parse(String text) {
        JsonReader reader = new JsonReader(text);
        reader.space();
        Object value = reader.value(0);
        reader.space();
        if (reader.at != text.length()) {
            throw reader.error("extra data");
        }
        return value;
    }

    /** A parse error: what and where. */
    public static final class JsonException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        JsonException(String message) {
            super(message);
        }
    }

    private JsonException error(String what) {
        return new JsonException("invalid JSON: " + what + " at char " + at);
    }

    private void space() {
        int n = text.length();
        while (at < n) {
            char c = text.charAt(at);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            at++;
        }
    }

    private Object value(int depth) {
        if (at >= text.length()) {
            throw error("expecting value");
        }
        char c = text.charAt(at);
        switch (c) {
            case '{':
                return object(depth + 1);
            case '[':
                return array(depth + 1);
            case '"':
                return string();
            case 'n':
                return literal("null", null);
            case 't':
                return literal("true", Boolean.TRUE);
            case 'f':
                return literal("false", Boolean.FALSE);
            case 'N':
                return literal("NaN", Double.NaN);
            case 'I':
                return literal("Infinity", Double.POSITIVE_INFINITY);
            default:
                if (c == '-' && text.startsWith("-Infinity", at)) {
                    at += 9;
                    return Double.NEGATIVE_INFINITY;
                }
                return number();
        }
    }

    private Object literal(String word, Object value) {
        if (!text.startsWith(word, at)) {
            throw error("expecting value");
        }
        at += word.length();
        return value;
    }

    private Object number() {
        int n = text.length();
        int start = at;
        int i = at;
        if (i < n && text.charAt(i) == '-') {
            i++;
        }
        if (i >= n) {
            throw error("expecting value");
        }
        char c = text.charAt(i);
        if (c == '0') {
            i++;
        } else if (c >= '1' && c <= '9') {
            while (i < n && isDigit(text.charAt(i))) {
                i++;
            }
        } else {
            throw error("expecting value");
        }
        boolean real = false;
        if (i + 1 < n && text.charAt(i) == '.' && isDigit(text.charAt(i + 1))) {
            real = true;
            i += 2;
            while (i < n && isDigit(text.charAt(i))) {
                i++;
            }
        }
        if (i < n && (text.charAt(i) == 'e' || text.charAt(i) == 'E')) {
            int j = i + 1;
            if (j < n && (text.charAt(j) == '+' || text.charAt(j) == '-')) {
                j++;
            }
            if (j < n && isDigit(text.charAt(j))) {
                while (j < n && isDigit(text.charAt(j))) {
                    j++;
                }
                real = true;
                i = j;
            }
        }
        at = i;
        String digits = text.substring(start, i);
        if (real) {
            return Double.parseDouble(digits);
        }
        int length = digits.length() - (digits.charAt(0) == '-' ? 1 : 0);
        if (length <= 18) {
            return Long.parseLong(digits);
        }
        if (length > MAX_INT_DIGITS) {
            throw error("integer with more than " + MAX_INT_DIGITS + " digits");
        }
        return PyValues.integer(new BigInteger(digits));
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    private String string() {
        int n = text.length();
        int i = at + 1;
        StringBuilder out = null;
        int plain = i;
        while (true) {
            if (i >= n) {
                at = i;
                throw error("unterminated string");
            }
            char c = text.charAt(i);
            if (c == '"') {
                String result;
                if (out == null) {
                    result = text.substring(plain, i);
                } else {
                    result = out.append(text, plain, i).toString();
                }
                at = i + 1;
                return result;
            }
            if (c < 0x20) {
                at = i;
                throw error("invalid control character in string");
            }
            if (c != '\\') {
                i++;
                continue;
            }
            if (out == null) {
                out = new StringBuilder();
            }
            out.append(text, plain, i);
            if (i + 1 >= n) {
                at = i;
                throw error("unterminated string");
            }
            char e = text.charAt(i + 1);
            i += 2;
            switch (e) {
                case '"' -> out.append('"');
                case '\\' -> out.append('\\');
                case '/' -> out.append('/');
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'n' -> out.append('\n');
                case 'r' -> out.append('\r');
                case 't' -> out.append('\t');
                case 'u' -> {
                    if (i + 4 > n) {
                        at = i;
                        throw error("invalid \\uXXXX escape");
                    }
                    int code = 0;
                    for (int k = 0; k < 4; k++) {
                        int d = Character.digit(text.charAt(i + k), 16);
                        if (d < 0 || text.charAt(i + k) > 'f') {
                            at = i;
                            throw error("invalid \\uXXXX escape");
                        }
                        code = code * 16 + d;
                    }
                    i += 4;
                    out.append((char) code);
                }
                default -> {
                    at = i - 1;
                    throw error("invalid \\escape");
                }
            }
            plain = i;
        }
    }

    private List<Object> array(int depth) {
        if (depth > MAX_DEPTH) {
            throw error("nesting deeper than " + MAX_DEPTH);
        }
        at++;
        List<Object> list = new ArrayList<>();
        space();
        if (at < text.length() && text.charAt(at) == ']') {
            at++;
            return list;
        }
        while (true) {
            space();
            list.add(value(depth));
            space();
            if (at >= text.length()) {
                throw error("expecting ',' delimiter");
            }
            char c = text.charAt(at++);
            if (c == ']') {
                return list;
            }
            if (c != ',') {
                at--;
                throw error("expecting ',' delimiter");
            }
        }
    }

    private Map<String, Object> object(int depth) {
        if (depth > MAX_DEPTH) {
            throw error("nesting deeper than " + MAX_DEPTH);
        }
        at++;
        Map<String, Object> map = new LinkedHashMap<>();
        space();
        if (at < text.length() && text.charAt(at) == '}') {
            at++;
            return map;
        }
        while (true) {
            space();
            if (at >= text.length() || text.charAt(at) != '"') {
                throw error("expecting property name enclosed in double quotes");
            }
            String key = string();
            space();
            if (at >= text.length() || text.charAt(at) != ':') {
                throw error("expecting ':' delimiter");
            }
            at++;
            space();
            map.put(key, value(depth));
            space();
            if (at >= text.length()) {
                throw error("expecting ',' delimiter");
            }
            char c = text.charAt(at++);
            if (c == '}') {
                return map;
            }
            if (c != ',') {
                at--;
                throw error("expecting ',' delimiter");
            }
        }
    }
}
