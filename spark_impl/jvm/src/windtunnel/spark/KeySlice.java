package windtunnel.spark;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Which slice a group key belongs to: a hash of its values, stable across JVMs, runs and
 * Spark versions (only hash functions the Java language specification fixes), so a key
 * finds its state in the same slice after a restart.
 *
 * <p>Keys equal under Python's rules must land in the same slice, since the engine groups
 * them together (the oracle groups events in a dict): top-level numbers are hashed by
 * value ({@code 1}, {@code 1.0} and {@code true} are one key), lists and objects by their
 * canonical JSON text with sorted keys, as the oracle's {@code fields.hashable} makes them.
 */
final class KeySlice {
  private KeySlice() {}

  /** The slice of the key {@code values[from, from + count)} among {@code slices}. */
  static int slice(Object[] values, int from, int count, int slices) {
    if (slices == 1) {
      return 0;
    }
    long h = 0x9E3779B97F4A7C15L;
    for (int i = from; i < from + count; i++) {
      h = h * 31 + hash(values[i]);
    }
    h = mix(h);
    return (int) Long.remainderUnsigned(h, slices);
  }

  static long hash(Object v) {
    if (v == null) {
      return 0x5bd1e995L;
    }
    if (v instanceof Boolean) {
      return mix((Boolean) v ? 1L : 0L);
    }
    if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
      return mix(((Number) v).longValue());
    }
    if (v instanceof Double || v instanceof Float) {
      double d = ((Number) v).doubleValue();
      if (Double.isNaN(d)) {
        return 0x7ff8000000000000L;
      }
      if (!Double.isInfinite(d) && d == Math.rint(d)) {
        BigInteger exact = new BigDecimal(d).toBigIntegerExact();
        return exact.bitLength() < 64 ? mix(exact.longValue()) : mix(exact.hashCode());
      }
      return mix(Double.doubleToLongBits(d));
    }
    if (v instanceof BigInteger) {
      BigInteger b = (BigInteger) v;
      return b.bitLength() < 64 ? mix(b.longValue()) : mix(b.hashCode());
    }
    if (v instanceof String) {
      return mix(((String) v).hashCode()) ^ 0x27d4eb2fL;
    }
    StringBuilder canonical = new StringBuilder();
    canonical(v, canonical);
    return mix(canonical.toString().hashCode()) ^ 0x165667b1L;
  }

  /** Canonical text of a list or object: sorted keys, numbers as their Java text. Only its
   * hash matters; equal JSON values give equal texts. */
  private static void canonical(Object v, StringBuilder out) {
    if (v instanceof Map) {
      TreeMap<String, Object> sorted = new TreeMap<>();
      for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
        sorted.put(String.valueOf(e.getKey()), e.getValue());
      }
      out.append('{');
      for (Map.Entry<String, Object> e : sorted.entrySet()) {
        out.append(e.getKey()).append(':');
        canonical(e.getValue(), out);
        out.append(',');
      }
      out.append('}');
    } else if (v instanceof List) {
      out.append('[');
      for (Object item : (List<?>) v) {
        canonical(item, out);
        out.append(',');
      }
      out.append(']');
    } else if (v instanceof String) {
      out.append('"').append((String) v).append('"');
    } else {
      out.append(v);
    }
  }

  /** MurmurHash3's 64-bit finalizer. */
  static long mix(long h) {
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    h *= 0xc4ceb9fe1a85ec53L;
    h ^= h >>> 33;
    return h;
  }
}
