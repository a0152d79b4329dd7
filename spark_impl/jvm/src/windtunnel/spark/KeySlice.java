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
    long h = SEED;
    for (int i = from; i < from + count; i++) {
      h = combine(h, hash(values[i]));
    }
    return sliceOf(h, slices);
  }

  static final long NULL_HASH = 0x5bd1e995L;

  static long hash(Object v) {
    if (v == null) {
      return NULL_HASH;
    }
    if (v instanceof Boolean) {
      return hashLong((Boolean) v ? 1L : 0L);
    }
    if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
      return hashLong(((Number) v).longValue());
    }
    if (v instanceof Double || v instanceof Float) {
      return hashDouble(((Number) v).doubleValue());
    }
    if (v instanceof BigInteger) {
      BigInteger b = (BigInteger) v;
      return b.bitLength() < 64 ? hashLong(b.longValue()) : mix(b.hashCode());
    }
    if (v instanceof String) {
      return hashString((String) v);
    }
    StringBuilder canonical = new StringBuilder();
    canonical(v, canonical);
    return mix(canonical.toString().hashCode()) ^ 0x165667b1L;
  }

  /** An int key's hash (booleans as 0 and 1: Python's {@code True == 1}). */
  static long hashLong(long v) {
    return mix(v);
  }

  /** A float key's hash: an integral float hashes as the int it equals. */
  static long hashDouble(double d) {
    if (Double.isNaN(d)) {
      return 0x7ff8000000000000L;
    }
    if (!Double.isInfinite(d) && d == Math.rint(d)) {
      if (Math.abs(d) < 9.0e18) {
        return hashLong((long) d);
      }
      BigInteger exact = new BigDecimal(d).toBigIntegerExact();
      return exact.bitLength() < 64 ? hashLong(exact.longValue()) : mix(exact.hashCode());
    }
    return mix(Double.doubleToLongBits(d));
  }

  /** A string key's hash, over its UTF-8 bytes (the same for a Java string and for Spark's
   * UTF-8 text of it: {@link #hashUtf8}). */
  static long hashString(String s) {
    int n = s.length();
    long h = STRING_SEED;
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      if (c >= 0x80) {
        return hashBytes(s.getBytes(java.nio.charset.StandardCharsets.UTF_8));
      }
      h = (h ^ c) * FNV_PRIME;
    }
    return mix(h);
  }

  static long hashBytes(byte[] bytes) {
    long h = STRING_SEED;
    for (byte b : bytes) {
      h = (h ^ (b & 0xFF)) * FNV_PRIME;
    }
    return mix(h);
  }

  /** {@link #hashString} of Spark's UTF-8 text, without decoding it. */
  static long hashUtf8(org.apache.spark.unsafe.types.UTF8String s) {
    int n = s.numBytes();
    long h = STRING_SEED;
    for (int i = 0; i < n; i++) {
      h = (h ^ (s.getByte(i) & 0xFF)) * FNV_PRIME;
    }
    return mix(h);
  }

  private static final long STRING_SEED = 0xcbf29ce484222325L;
  private static final long FNV_PRIME = 0x100000001b3L;

  /** The slice of a key hash combined by {@link #combine} from {@link #SEED}. */
  static int sliceOf(long h, int slices) {
    return slices == 1 ? 0 : (int) Long.remainderUnsigned(mix(h), slices);
  }

  static final long SEED = 0x9E3779B97F4A7C15L;

  static long combine(long h, long valueHash) {
    return h * 31 + valueHash;
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
