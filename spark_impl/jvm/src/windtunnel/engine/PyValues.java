package windtunnel.engine;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.List;
import java.util.Map;

/**
 * Python's semantics for the engine's JSON values: numbers ({@link Long} for ints in 64 bits,
 * {@link BigInteger} beyond, {@link Double} for floats; booleans are not numbers here, as
 * {@code aggregates._is_number} says), exact comparison of ints with floats, exact int sums,
 * correctly rounded conversion and true division, and string order by code point.
 */
public final class PyValues {
    private PyValues() {
    }

    /** {@code value} as a Long when it fits in 64 bits, else the BigInteger itself. */
    public static Object integer(BigInteger value) {
        if (value.bitLength() < 64) {
            return value.longValue();
        }
        return value;
    }

    /** True for an int or a float (not a bool): what sum, min, max and avg take. */
    public static boolean isNumber(Object value) {
        return value instanceof Long || value instanceof Double || value instanceof BigInteger;
    }

    /** {@code float(value)} for an int, correctly rounded; raises when it does not fit (Python's
     * OverflowError: int too large to convert to float). */
    public static double toDouble(BigInteger value) {
        double d = value.doubleValue();
        if (Double.isInfinite(d)) {
            throw new ArithmeticException("int too large to convert to float");
        }
        return d;
    }

    /** Python's {@code a < b} for two numbers (False whenever a NaN takes part). */
    public static boolean less(Object a, Object b) {
        return compare(a, b) < 0;
    }

    /**
     * Python's ordering of two numbers: negative, zero or positive, exact across int and float;
     * {@code 2} (no order) when a NaN takes part, which makes both {@code <} and {@code >} false.
     */
    public static int compare(Object a, Object b) {
        if (a instanceof Long && b instanceof Long) {
            return Long.compare((Long) a, (Long) b);
        }
        if (a instanceof Double && b instanceof Double) {
            double x = (Double) a;
            double y = (Double) b;
            if (Double.isNaN(x) || Double.isNaN(y)) {
                return 2;
            }
            return x < y ? -1 : (x > y ? 1 : 0);
        }
        if (a instanceof Double) {
            int c = compareFloatInt((Double) a, b);
            return c;
        }
        if (b instanceof Double) {
            int c = compareFloatInt((Double) b, a);
            return c == 2 ? 2 : -c;
        }
        return big(a).compareTo(big(b));
    }

    private static int compareFloatInt(double x, Object integer) {
        if (Double.isNaN(x)) {
            return 2;
        }
        if (Double.isInfinite(x)) {
            return x > 0 ? 1 : -1;
        }
        if (integer instanceof Long) {
            long v = (Long) integer;
            if (Math.abs(v) < (1L << 53)) {
                double d = v;
                return x < d ? -1 : (x > d ? 1 : 0);
            }
        }
        return new BigDecimal(x).compareTo(new BigDecimal(big(integer)));
    }

    /** An int value (Long or BigInteger) as a BigInteger. */
    public static BigInteger big(Object integer) {
        if (integer instanceof Long) {
            return BigInteger.valueOf((Long) integer);
        }
        return (BigInteger) integer;
    }

    /**
     * Python's true division {@code a / b} of two ints, correctly rounded (round half to even) as
     * Python's {@code int.__truediv__} gives it; b is positive.
     */
    public static double trueDivide(BigInteger a, long b) {
        if (a.bitLength() <= 53 && b <= (1L << 53)) {
            return a.doubleValue() / (double) b;
        }
        boolean negative = a.signum() < 0;
        BigInteger n = a.abs();
        BigInteger d = BigInteger.valueOf(b);
        if (n.signum() == 0) {
            return 0.0;
        }
        // scale so that the quotient has 55 significant bits, then round with a sticky bit
        int shift = 55 - (n.bitLength() - d.bitLength());
        BigInteger[] qr = shift >= 0 ? n.shiftLeft(shift).divideAndRemainder(d)
                : n.divideAndRemainder(d.shiftLeft(-shift));
        BigInteger q = qr[0];
        if (qr[1].signum() != 0) {
            q = q.shiftLeft(1).or(BigInteger.ONE); // sticky bit below the last place
            shift++;
        }
        // q * 2^-shift is the quotient; q has 55 or 56 (+1 sticky) bits: round to 53 bits
        int extra = q.bitLength() - 53;
        BigInteger kept = q.shiftRight(extra);
        BigInteger rest = q.subtract(kept.shiftLeft(extra));
        BigInteger half = BigInteger.ONE.shiftLeft(extra - 1);
        int c = rest.compareTo(half);
        if (c > 0 || (c == 0 && kept.testBit(0))) {
            kept = kept.add(BigInteger.ONE);
        }
        int exponent = extra - shift;
        double result = Math.scalb(kept.doubleValue(), exponent);
        if (Double.isInfinite(result)) {
            throw new ArithmeticException("integer division result too large for a float");
        }
        return negative ? -result : result;
    }

    /** Python's {@code str < str} order: by code point (not UTF-16 unit). */
    public static int compareStrings(String a, String b) {
        int n = Math.min(a.length(), b.length());
        for (int i = 0; i < n; i++) {
            char x = a.charAt(i);
            char y = b.charAt(i);
            if (x != y) {
                if (Character.isSurrogate(x) || Character.isSurrogate(y)) {
                    return Integer.compare(a.codePointAt(i), b.codePointAt(i));
                }
                return x - y;
            }
        }
        return a.length() - b.length();
    }

    /** The Python type name used in messages ({@code type(value).__name__}). */
    public static String typeName(Object value) {
        if (value == null) {
            return "NoneType";
        }
        if (value instanceof Boolean) {
            return "bool";
        }
        if (value instanceof Long || value instanceof BigInteger) {
            return "int";
        }
        if (value instanceof Double) {
            return "float";
        }
        if (value instanceof String) {
            return "str";
        }
        if (value instanceof List) {
            return "list";
        }
        if (value instanceof Map) {
            return "dict";
        }
        return value.getClass().getSimpleName();
    }
}
