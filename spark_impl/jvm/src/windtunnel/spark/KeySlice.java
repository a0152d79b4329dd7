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

  /** The slice of a one-field key as a Kafka partitioner places a record whose key is the
   * key's text ({@link #kafkaText}) in UTF-8: Kafka's Java client {@code
   * toPositive(murmur2(bytes)) % slices}, librdkafka's default ({@code crc32}) {@code
   * crc32(bytes) % slices}. With {@code slices} a divisor of the topic's partition count,
   * every Kafka partition's keys are in one slice. */
  static int kafkaSlice(Object value, int slices, boolean crc32) {
    return kafkaPartition(kafkaText(value).getBytes(java.nio.charset.StandardCharsets.UTF_8),
        slices, crc32);
  }

  /** The partition of a record key among {@code partitions}: murmur2's or CRC32's. */
  static int kafkaPartition(byte[] key, int partitions, boolean crc32) {
    if (crc32) {
      java.util.zip.CRC32 crc = new java.util.zip.CRC32();
      crc.update(key);
      return (int) (crc.getValue() % partitions);
    }
    return (murmur2(key) & 0x7fffffff) % partitions;
  }

  /** Which partitioner put every record key {@code keys[i]} in partition {@code parts[i]} of
   * {@code partitions}: {@code murmur2} (Kafka's Java client), else {@code crc32}
   * (librdkafka's default), else null. No keys: {@code murmur2}. */
  static String partitionerOf(byte[][] keys, int[] parts, int partitions) {
    boolean murmur = true;
    boolean crc = true;
    for (int i = 0; i < keys.length; i++) {
      murmur &= kafkaPartition(keys[i], partitions, false) == parts[i];
      crc &= kafkaPartition(keys[i], partitions, true) == parts[i];
    }
    return murmur ? "murmur2" : crc ? "crc32" : null;
  }

  /** A key's text as a producer would write it: a string as it is, an integral number
   * (booleans as 0 and 1, integral floats as the int they equal: one key under Python's
   * rules) in decimal, any other float as Java's text, null as the empty text, lists and
   * objects as their canonical text. */
  static String kafkaText(Object v) {
    if (v == null) {
      return "";
    }
    if (v instanceof String) {
      return (String) v;
    }
    if (v instanceof Boolean) {
      return (Boolean) v ? "1" : "0";
    }
    if (v instanceof Double || v instanceof Float) {
      double d = ((Number) v).doubleValue();
      if (!Double.isNaN(d) && !Double.isInfinite(d) && d == Math.rint(d)) {
        return new BigDecimal(d).toBigIntegerExact().toString();
      }
      return Double.toString(d);
    }
    if (v instanceof Number || v instanceof BigInteger) {
      return v.toString();
    }
    if (v instanceof RowEvents.TimeMs) {
      return Long.toString(((RowEvents.TimeMs) v).ms);
    }
    StringBuilder canonical = new StringBuilder();
    canonical(v, canonical);
    return canonical.toString();
  }

  /** Kafka's {@code Utils.murmur2}. */
  static int murmur2(byte[] data) {
    int length = data.length;
    int seed = 0x9747b28c;
    int m = 0x5bd1e995;
    int r = 24;
    int h = seed ^ length;
    int length4 = length / 4;
    for (int i = 0; i < length4; i++) {
      int i4 = i * 4;
      int k = (data[i4] & 0xff) + ((data[i4 + 1] & 0xff) << 8) + ((data[i4 + 2] & 0xff) << 16)
          + ((data[i4 + 3] & 0xff) << 24);
      k *= m;
      k ^= k >>> r;
      k *= m;
      h *= m;
      h ^= k;
    }
    switch (length % 4) {
      case 3:
        h ^= (data[(length & ~3) + 2] & 0xff) << 16;
        // fall through
      case 2:
        h ^= (data[(length & ~3) + 1] & 0xff) << 8;
        // fall through
      case 1:
        h ^= data[length & ~3] & 0xff;
        h *= m;
        break;
      default:
        break;
    }
    h ^= h >>> 13;
    h *= m;
    h ^= h >>> 15;
    return h;
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
