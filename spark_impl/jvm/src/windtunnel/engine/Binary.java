package windtunnel.engine;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * JSON values in the state format: a tag byte, then the value (ints as 8 bytes or a length and
 * two's-complement bytes, floats as their 8 raw bytes, strings as a length and UTF-16 units so
 * every Java string comes back exactly, lists and objects as a count and their members).
 */
final class Binary {
    private static final int NULL = 0;
    private static final int FALSE = 1;
    private static final int TRUE = 2;
    private static final int LONG = 3;
    private static final int DOUBLE = 4;
    private static final int BIG = 5;
    private static final int STRING = 6;
    private static final int LIST = 7;
    private static final int MAP = 8;

    private Binary() {
    }

    static void writeValue(DataOutputStream out, Object value) throws IOException {
        if (value == null) {
            out.writeByte(NULL);
        } else if (value instanceof Boolean) {
            out.writeByte((Boolean) value ? TRUE : FALSE);
        } else if (value instanceof Long) {
            out.writeByte(LONG);
            out.writeLong((Long) value);
        } else if (value instanceof Double) {
            out.writeByte(DOUBLE);
            out.writeLong(Double.doubleToRawLongBits((Double) value));
        } else if (value instanceof BigInteger) {
            out.writeByte(BIG);
            byte[] bytes = ((BigInteger) value).toByteArray();
            out.writeInt(bytes.length);
            out.write(bytes);
        } else if (value instanceof String) {
            out.writeByte(STRING);
            writeString(out, (String) value);
        } else if (value instanceof List) {
            List<?> list = (List<?>) value;
            out.writeByte(LIST);
            out.writeInt(list.size());
            for (Object item : list) {
                writeValue(out, item);
            }
        } else if (value instanceof Map) {
            Map<?, ?> map = (Map<?, ?>) value;
            out.writeByte(MAP);
            out.writeInt(map.size());
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                writeString(out, (String) entry.getKey());
                writeValue(out, entry.getValue());
            }
        } else {
            throw new IllegalArgumentException("not a JSON value: " + value.getClass().getName());
        }
    }

    static Object readValue(DataInputStream in) throws IOException {
        int tag = in.readUnsignedByte();
        switch (tag) {
            case NULL:
                return null;
            case FALSE:
                return Boolean.FALSE;
            case TRUE:
                return Boolean.TRUE;
            case LONG:
                return in.readLong();
            case DOUBLE:
                return Double.longBitsToDouble(in.readLong());
            case BIG: {
                byte[] bytes = new byte[length(in)];
                in.readFully(bytes);
                return new BigInteger(bytes);
            }
            case STRING:
                return readString(in);
            case LIST: {
                int n = length(in);
                List<Object> list = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    list.add(readValue(in));
                }
                return list;
            }
            case MAP: {
                int n = length(in);
                Map<String, Object> map = new LinkedHashMap<>();
                for (int i = 0; i < n; i++) {
                    String key = readString(in);
                    map.put(key, readValue(in));
                }
                return map;
            }
            default:
                throw new StateCodec.StateFormatException("corrupt state: unknown value tag " + tag);
        }
    }

    static void writeString(DataOutputStream out, String text) throws IOException {
        out.writeInt(text.length());
        out.writeChars(text);
    }

    static String readString(DataInputStream in) throws IOException {
        int n = length(in);
        char[] chars = new char[n];
        for (int i = 0; i < n; i++) {
            chars[i] = in.readChar();
        }
        return new String(chars);
    }

    static int length(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > (1 << 28)) {
            throw new StateCodec.StateFormatException("corrupt state: length " + n);
        }
        return n;
    }
}
