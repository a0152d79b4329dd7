package windtunnel.engine;

import java.math.BigInteger;
import java.util.List;
import java.util.Map;

/**
 * Python's {@code repr()} of a JSON value, for messages that quote a value ({@code not_a_time}):
 * {@code None}, {@code True}, ints, floats ({@link FloatRepr}), strings in single quotes (double
 * quotes when the text has a single quote and no double quote) with Python's escapes
 * ({@code \\n}, {@code \\xhh}, {@code \\uhhhh}, {@code \\Uhhhhhhhh} for characters that are not
 * printable), lists and dicts as Python prints them. Printability follows the JDK's Unicode
 * tables, which may lag Python's for characters assigned in newer Unicode versions.
 */
public final class PyRepr {
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private PyRepr() {
    }

    /** {@code repr(value)}. */
    public static String repr(Object value) {
        StringBuilder out = new StringBuilder();
        append(out, value);
        return out.toString();
    }

    private static void append(StringBuilder out, Object value) {
        if (value == null) {
            out.append("None");
        } else if (value instanceof Boolean) {
            out.append((Boolean) value ? "True" : "False");
        } else if (value instanceof Long || value instanceof BigInteger) {
            out.append(value.toString());
        } else if (value instanceof Double) {
            FloatRepr.append(out, (Double) value, false);
        } else if (value instanceof String) {
            string(out, (String) value);
        } else if (value instanceof List) {
            List<?> list = (List<?>) value;
            out.append('[');
            for (int i = 0; i < list.size(); i++) {
                if (i > 0) {
                    out.append(", ");
                }
                append(out, list.get(i));
            }
            out.append(']');
        } else if (value instanceof Map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
                if (!first) {
                    out.append(", ");
                }
                first = false;
                append(out, entry.getKey());
                out.append(": ");
                append(out, entry.getValue());
            }
            out.append('}');
        } else {
            out.append(value);
        }
    }

    private static void string(StringBuilder out, String text) {
        char quote = text.indexOf('\'') >= 0 && text.indexOf('"') < 0 ? '"' : '\'';
        out.append(quote);
        int i = 0;
        int n = text.length();
        while (i < n) {
            int cp = text.codePointAt(i);
            i += Character.charCount(cp);
            if (cp == quote || cp == '\\') {
                out.append('\\').appendCodePoint(cp);
            } else if (cp == '\t') {
                out.append("\\t");
            } else if (cp == '\n') {
                out.append("\\n");
            } else if (cp == '\r') {
                out.append("\\r");
            } else if (cp < 0x20 || cp == 0x7f) {
                hex(out, "\\x", cp, 2);
            } else if (cp < 0x7f) {
                out.append((char) cp);
            } else if (printable(cp)) {
                out.appendCodePoint(cp);
            } else if (cp <= 0xff) {
                hex(out, "\\x", cp, 2);
            } else if (cp <= 0xffff) {
                hex(out, "\\u", cp, 4);
            } else {
                hex(out, "\\U", cp, 8);
            }
        }
        out.append(quote);
    }

    private static void hex(StringBuilder out, String prefix, int cp, int digits) {
        out.append(prefix);
        for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) {
            out.append(HEX[(cp >> shift) & 15]);
        }
    }

    /** Python's {@code str.isprintable} for one character: not Other (C*) nor Separator (Z*). */
    private static boolean printable(int cp) {
        switch (Character.getType(cp)) {
            case Character.CONTROL:
            case Character.FORMAT:
            case Character.SURROGATE:
            case Character.PRIVATE_USE:
            case Character.UNASSIGNED:
            case Character.SPACE_SEPARATOR:
            case Character.LINE_SEPARATOR:
            case Character.PARAGRAPH_SEPARATOR:
                return false;
            default:
                return true;
        }
    }
}
