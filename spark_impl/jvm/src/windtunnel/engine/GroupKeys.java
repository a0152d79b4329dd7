package windtunnel.engine;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Group keys and {@code distinct} members that are equal exactly when Python finds them equal.
 *
 * <p>{@link #of} maps a JSON value to a key object whose {@code equals}/{@code hashCode} follow
 * Python's {@code ==}/{@code hash} as the oracle uses them: {@code true == 1 == 1.0} (one key,
 * a {@link Long}), {@code -0.0 == 0}, an integral float equal to a big int; a list or object
 * stands for {@code fields.hashable}'s canonical JSON string ({@code "\u0000json:" + sorted
 * JSON}); every NaN is one key ({@code json.loads} gives the same NaN object for every
 * {@code NaN} it reads, and Python's containers match an object with itself before comparing).
 * Several {@code group_by} fields form a {@link Tuple}.
 */
public final class GroupKeys {
    /** The key of every NaN. */
    static final Object NAN = new NaN();

    /** The one key of an ungrouped query. */
    public static final Object UNGROUPED = new Tuple(new Object[0]);

    private static final BigDecimal LONG_MIN = BigDecimal.valueOf(Long.MIN_VALUE);
    private static final BigDecimal LONG_MAX = BigDecimal.valueOf(Long.MAX_VALUE);

    private GroupKeys() {
    }

    /** The key of one JSON value. */
    public static Object of(Object value) {
        if (value == null || value instanceof String || value instanceof Long
                || value instanceof BigInteger) {
            return value;
        }
        if (value instanceof Double) {
            return ofDouble((Double) value);
        }
        if (value instanceof Boolean) {
            return ((Boolean) value) ? 1L : 0L;
        }
        if (value instanceof List || value instanceof Map) {
            return "\u0000json:" + JsonWriter.canonical(value);
        }
        if (value instanceof Integer) {
            return ((Integer) value).longValue();
        }
        throw new IllegalArgumentException("not a JSON value: " + value.getClass().getName());
    }

    /** The key of a float. */
    public static Object ofDouble(double d) {
        if (Double.isNaN(d)) {
            return NAN;
        }
        if (Double.isInfinite(d) || d != Math.rint(d)) {
            return d;
        }
        if (Math.abs(d) < 9.0e18) {
            return (long) d;
        }
        BigDecimal exact = new BigDecimal(d);
        if (exact.compareTo(LONG_MIN) >= 0 && exact.compareTo(LONG_MAX) <= 0) {
            return exact.longValueExact();
        }
        return exact.toBigIntegerExact();
    }

    /** The key of several values (a tuple). */
    public static Object tuple(Object[] keys) {
        return new Tuple(keys);
    }

    /**
     * A hash of a key that is the same in every JVM and consistent with equality: what a caller
     * partitions keys by ({@code Math.floorMod(stableHash(key), slices)}).
     */
    public static int stableHash(Object key) {
        int h;
        if (key == null) {
            h = 0x1234567;
        } else if (key instanceof NaN) {
            h = 0x7ff80000;
        } else if (key instanceof Tuple) {
            h = 1;
            for (Object part : ((Tuple) key).parts) {
                h = 31 * h + stableHash(part);
            }
        } else {
            h = key.hashCode(); // Long, Double, BigInteger and String hash deterministically
        }
        h ^= h >>> 16;
        h *= 0x85ebca6b;
        h ^= h >>> 13;
        h *= 0xc2b2ae35;
        h ^= h >>> 16;
        return h;
    }

    /** The NaN key (one instance: equal only to itself). */
    static final class NaN {
        @Override
        public String toString() {
            return "nan";
        }
    }

    /** Several keys compared elementwise. */
    static final class Tuple {
        final Object[] parts;
        private final int hash;

        Tuple(Object[] parts) {
            this.parts = parts;
            this.hash = Arrays.hashCode(parts);
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Tuple && ((Tuple) other).hash == hash
                    && Arrays.equals(parts, ((Tuple) other).parts);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }
}
