package windtunnel.spark;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Compact bytes for the shuffle between the map side ({@link Pack}) and the slice step
 * ({@link Step}): zigzag varints and tagged JSON values (null, booleans, 64-bit and larger
 * integers, doubles, strings, lists, objects in insertion order, and a timestamp column's
 * epoch ms). An append-only buffer for
 * writing, a cursor for reading. Not a storage format: both ends run the same jar.
 */
final class Wire {
  static final byte NULL = 0;
  static final byte FALSE = 1;
  static final byte TRUE = 2;
  static final byte LONG = 3;
  static final byte DOUBLE = 4;
  static final byte STRING = 5;
  static final byte BIG = 6;
  static final byte LIST = 7;
  static final byte MAP = 8;
  /** A timestamp column's value, epoch ms (the time field only). */
  static final byte TIME_MS = 9;

  private Wire() {}

  /** An append-only byte buffer. */
  static final class Out {
    byte[] buf;
    int len;

    Out(int capacity) {
      buf = new byte[Math.max(16, capacity)];
    }

    private void room(int n) {
      if (len + n > buf.length) {
        buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + n));
      }
    }

    void put(int b) {
      room(1);
      buf[len++] = (byte) b;
    }

    void bytes(byte[] b) {
      room(b.length);
      System.arraycopy(b, 0, buf, len, b.length);
      len += b.length;
    }

    /** Appends another buffer's bytes. */
    void raw(Out other) {
      room(other.len);
      System.arraycopy(other.buf, 0, buf, len, other.len);
      len += other.len;
    }

    void varint(long v) {
      room(10);
      while ((v & ~0x7FL) != 0) {
        buf[len++] = (byte) ((v & 0x7F) | 0x80);
        v >>>= 7;
      }
      buf[len++] = (byte) v;
    }

    void zigzag(long v) {
      varint((v << 1) ^ (v >> 63));
    }

    /** Spark's UTF-8 text as a string value's length and bytes, without decoding it. */
    void utf8(org.apache.spark.unsafe.types.UTF8String s) {
      int n = s.numBytes();
      varint(n);
      room(n);
      for (int i = 0; i < n; i++) {
        buf[len++] = s.getByte(i);
      }
    }

    void double64(double d) {
      long bits = Double.doubleToRawLongBits(d);
      room(8);
      for (int i = 0; i < 8; i++) {
        buf[len++] = (byte) (bits >>> (8 * i));
      }
    }

    void string(String s) {
      int n = s.length();
      boolean ascii = true;
      for (int i = 0; i < n; i++) {
        if (s.charAt(i) >= 0x80) {
          ascii = false;
          break;
        }
      }
      if (!ascii) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        varint(b.length);
        bytes(b);
        return;
      }
      varint(n);
      room(n);
      for (int i = 0; i < n; i++) {
        buf[len++] = (byte) s.charAt(i);
      }
    }

    void value(Object v) {
      if (v == null) {
        put(NULL);
      } else if (v instanceof Boolean) {
        put((Boolean) v ? TRUE : FALSE);
      } else if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
        put(LONG);
        zigzag(((Number) v).longValue());
      } else if (v instanceof Double || v instanceof Float) {
        put(DOUBLE);
        double64(((Number) v).doubleValue());
      } else if (v instanceof String) {
        put(STRING);
        string((String) v);
      } else if (v instanceof BigInteger) {
        put(BIG);
        byte[] b = ((BigInteger) v).toByteArray();
        varint(b.length);
        bytes(b);
      } else if (v instanceof List) {
        List<?> list = (List<?>) v;
        put(LIST);
        varint(list.size());
        for (Object item : list) {
          value(item);
        }
      } else if (v instanceof Map) {
        Map<?, ?> map = (Map<?, ?>) v;
        put(MAP);
        varint(map.size());
        for (Map.Entry<?, ?> e : map.entrySet()) {
          string((String) e.getKey());
          value(e.getValue());
        }
      } else {
        throw new IllegalArgumentException("not a JSON value: " + v.getClass().getName());
      }
    }

    byte[] toArray() {
      return Arrays.copyOf(buf, len);
    }
  }

  /** A cursor over bytes written by {@link Out}. */
  static final class In {
    final byte[] buf;
    int pos;

    In(byte[] buf) {
      this.buf = buf;
    }

    boolean more() {
      return pos < buf.length;
    }

    int get() {
      return buf[pos++] & 0xFF;
    }

    long varint() {
      long v = 0;
      int shift = 0;
      while (true) {
        int b = buf[pos++];
        v |= (long) (b & 0x7F) << shift;
        if ((b & 0x80) == 0) {
          return v;
        }
        shift += 7;
      }
    }

    long zigzag() {
      long z = varint();
      return (z >>> 1) ^ -(z & 1);
    }

    double double64() {
      long bits = 0;
      for (int i = 0; i < 8; i++) {
        bits |= (long) (buf[pos++] & 0xFF) << (8 * i);
      }
      return Double.longBitsToDouble(bits);
    }

    String string() {
      int n = (int) varint();
      String s = new String(buf, pos, n, StandardCharsets.UTF_8);
      pos += n;
      return s;
    }

    /** Moves past one value without building it. */
    void skipValue() {
      int tag = get();
      switch (tag) {
        case NULL:
        case FALSE:
        case TRUE:
          return;
        case LONG:
        case TIME_MS:
          varint();
          return;
        case DOUBLE:
          pos += 8;
          return;
        case STRING:
        case BIG: {
          int n = (int) varint(); // read before pos: "pos += varint()" reads pos first
          pos += n;
          return;
        }
        case LIST: {
          int n = (int) varint();
          for (int i = 0; i < n; i++) {
            skipValue();
          }
          return;
        }
        case MAP: {
          int n = (int) varint();
          for (int i = 0; i < n; i++) {
            int key = (int) varint();
            pos += key;
            skipValue();
          }
          return;
        }
        default:
          throw new IllegalStateException("bad wire tag " + tag + " at " + (pos - 1));
      }
    }

    Object value() {
      int tag = get();
      switch (tag) {
        case NULL:
          return null;
        case FALSE:
          return Boolean.FALSE;
        case TRUE:
          return Boolean.TRUE;
        case LONG:
          return zigzag();
        case DOUBLE:
          return double64();
        case STRING:
          return string();
        case BIG: {
          int n = (int) varint();
          byte[] b = Arrays.copyOfRange(buf, pos, pos + n);
          pos += n;
          return new BigInteger(b);
        }
        case LIST: {
          int n = (int) varint();
          List<Object> list = new ArrayList<>(n);
          for (int i = 0; i < n; i++) {
            list.add(value());
          }
          return list;
        }
        case MAP: {
          int n = (int) varint();
          Map<String, Object> map = new LinkedHashMap<>();
          for (int i = 0; i < n; i++) {
            String key = string();
            map.put(key, value());
          }
          return map;
        }
        case TIME_MS:
          return new RowEvents.TimeMs(zigzag());
        default:
          throw new IllegalStateException("bad wire tag " + tag + " at " + (pos - 1));
      }
    }
  }
}
