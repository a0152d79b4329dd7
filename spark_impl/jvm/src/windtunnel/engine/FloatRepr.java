package windtunnel.engine;

import java.math.BigInteger;

/**
 * Python's {@code repr(float)}: the shortest decimal that reads back as the same double (the
 * closest such one, ties to even), in Python's layout: fixed notation for decimal exponents
 * -4 &lt;= e &lt; 16 ({@code 0.0001}, {@code 1000000000000000.0}), else scientific with a signed,
 * at least two-digit exponent ({@code 1e-05}, {@code 1e+16}, {@code 1.5e+300}); {@code nan},
 * {@code inf}, {@code -inf}. JSON writes the non-finite ones as {@code NaN}, {@code Infinity},
 * {@code -Infinity} (see {@link JsonWriter}).
 *
 * <p>The digits come from Ulf Adams' Ryū algorithm (PLDI 2018), written here from the paper's
 * description; its 128-bit multipliers are computed once with {@link BigInteger}. Java 17's
 * {@code Double.toString} is not always shortest, so it is not used.
 */
public final class FloatRepr {
    private static final int POW5_INV_BITCOUNT = 125;
    private static final int POW5_BITCOUNT = 125;
    private static final long[][] POW5_INV_SPLIT = new long[342][2];
    private static final long[][] POW5_SPLIT = new long[326][2];

    static {
        BigInteger mask64 = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);
        for (int i = 0; i < 342; i++) {
            BigInteger pow = BigInteger.valueOf(5).pow(i);
            int len = pow.bitLength();
            if (i < POW5_SPLIT.length) {
                BigInteger s = len <= POW5_BITCOUNT
                        ? pow.shiftLeft(POW5_BITCOUNT - len) : pow.shiftRight(len - POW5_BITCOUNT);
                POW5_SPLIT[i][0] = s.and(mask64).longValue();
                POW5_SPLIT[i][1] = s.shiftRight(64).longValue();
            }
            BigInteger inv = BigInteger.ONE.shiftLeft(len - 1 + POW5_INV_BITCOUNT).divide(pow).add(BigInteger.ONE);
            POW5_INV_SPLIT[i][0] = inv.and(mask64).longValue();
            POW5_INV_SPLIT[i][1] = inv.shiftRight(64).longValue();
        }
    }

    private FloatRepr() {
    }

    /** {@code repr(value)} as Python writes it. */
    public static String repr(double value) {
        StringBuilder out = new StringBuilder(24);
        append(out, value, false);
        return out.toString();
    }

    /**
     * Appends the repr of {@code value}; with {@code json} the non-finite values are written as
     * {@code json.dumps} writes them ({@code NaN}, {@code Infinity}, {@code -Infinity}).
     */
    public static void append(StringBuilder out, double value, boolean json) {
        if (Double.isNaN(value)) {
            out.append(json ? "NaN" : "nan");
            return;
        }
        if (Double.isInfinite(value)) {
            out.append(value > 0 ? (json ? "Infinity" : "inf") : (json ? "-Infinity" : "-inf"));
            return;
        }
        long bits = Double.doubleToRawLongBits(value);
        if (bits < 0) {
            out.append('-');
        }
        long mantissa = bits & ((1L << 52) - 1);
        int exponent = (int) ((bits >>> 52) & 0x7ff);
        if (mantissa == 0 && exponent == 0) {
            out.append("0.0");
            return;
        }
        shortest(out, mantissa, exponent);
    }

    /** "0." and the most zeros fixed notation puts after it (decpt > -4). */
    private static final char[] ZERO_POINT = "0.000".toCharArray();

    /** Writes digits * 10^exp10 in Python's repr layout: the digits are appended as a long
     * (no buffer of their own: this runs for every float of every output row), then the point
     * and zeros go around them. */
    private static void layout(StringBuilder out, long digits, int exp10) {
        int from = out.length();
        out.append(digits);
        int n = out.length() - from;
        int decpt = exp10 + n; // value = 0.<digits> * 10^decpt
        if (decpt > -4 && decpt <= 16) {
            if (decpt <= 0) {
                out.insert(from, ZERO_POINT, 0, 2 - decpt);
            } else if (decpt >= n) {
                for (int i = n; i < decpt; i++) {
                    out.append('0');
                }
                out.append(".0");
            } else {
                out.insert(from + decpt, '.');
            }
            return;
        }
        if (n > 1) {
            out.insert(from + 1, '.');
        }
        int e = decpt - 1;
        out.append('e').append(e < 0 ? '-' : '+');
        int abs = Math.abs(e);
        if (abs < 10) {
            out.append('0');
        }
        out.append(abs);
    }

    // --- Ryū: the shortest digits of a positive finite double, written in the repr layout.
    private static void shortest(StringBuilder out, long ieeeMantissa, int ieeeExponent) {
        int e2;
        long m2;
        if (ieeeExponent == 0) {
            e2 = 1 - 1023 - 52 - 2;
            m2 = ieeeMantissa;
        } else {
            e2 = ieeeExponent - 1023 - 52 - 2;
            m2 = (1L << 52) | ieeeMantissa;
        }
        boolean even = (m2 & 1) == 0;
        long mv = 4 * m2;
        int mmShift = (ieeeMantissa != 0 || ieeeExponent <= 1) ? 1 : 0;
        long mp = 4 * m2 + 2;
        long mm = 4 * m2 - 1 - mmShift;
        long vr;
        long vp;
        long vm;
        int e10;
        boolean vmTrailingZeros = false;
        boolean vrTrailingZeros = false;
        if (e2 >= 0) {
            int q = log10Pow2(e2) - (e2 > 3 ? 1 : 0);
            e10 = q;
            int k = POW5_INV_BITCOUNT + pow5bits(q) - 1;
            int i = -e2 + q + k;
            long[] mul = POW5_INV_SPLIT[q];
            vr = mulShift(mv, mul, i);
            vp = mulShift(mp, mul, i);
            vm = mulShift(mm, mul, i);
            if (q <= 21) {
                if (mv % 5 == 0) {
                    vrTrailingZeros = pow5Factor(mv) >= q;
                } else if (even) {
                    vmTrailingZeros = pow5Factor(mm) >= q;
                } else {
                    vp -= pow5Factor(mp) >= q ? 1 : 0;
                }
            }
        } else {
            int q = log10Pow5(-e2) - (-e2 > 1 ? 1 : 0);
            e10 = q + e2;
            int i = -e2 - q;
            int k = pow5bits(i) - POW5_BITCOUNT;
            int j = q - k;
            long[] mul = POW5_SPLIT[i];
            vr = mulShift(mv, mul, j);
            vp = mulShift(mp, mul, j);
            vm = mulShift(mm, mul, j);
            if (q <= 1) {
                vrTrailingZeros = true;
                if (even) {
                    vmTrailingZeros = mmShift == 1;
                } else {
                    --vp;
                }
            } else if (q < 63) {
                vrTrailingZeros = (mv & ((1L << q) - 1)) == 0;
            }
        }
        int removed = 0;
        int lastRemoved = 0;
        long output;
        if (vmTrailingZeros || vrTrailingZeros) {
            while (vp / 10 > vm / 10) {
                vmTrailingZeros &= vm % 10 == 0;
                vrTrailingZeros &= lastRemoved == 0;
                lastRemoved = (int) (vr % 10);
                vr /= 10;
                vp /= 10;
                vm /= 10;
                removed++;
            }
            if (vmTrailingZeros) {
                while (vm % 10 == 0) {
                    vrTrailingZeros &= lastRemoved == 0;
                    lastRemoved = (int) (vr % 10);
                    vr /= 10;
                    vp /= 10;
                    vm /= 10;
                    removed++;
                }
            }
            if (vrTrailingZeros && lastRemoved == 5 && vr % 2 == 0) {
                lastRemoved = 4; // the exact value ends in .5: round to even
            }
            output = vr + (((vr == vm && (!even || !vmTrailingZeros)) || lastRemoved >= 5) ? 1 : 0);
        } else {
            boolean roundUp = false;
            while (vp / 10 > vm / 10) {
                roundUp = vr % 10 >= 5;
                vr /= 10;
                vp /= 10;
                vm /= 10;
                removed++;
            }
            output = vr + ((vr == vm || roundUp) ? 1 : 0);
        }
        layout(out, output, e10 + removed);
    }

    private static int pow5bits(int e) {
        return (int) (((e * 1217359L) >>> 19) + 1);
    }

    private static int log10Pow2(int e) {
        return (int) ((e * 78913L) >>> 18);
    }

    private static int log10Pow5(int e) {
        return (int) ((e * 732923L) >>> 20);
    }

    private static int pow5Factor(long value) {
        int count = 0;
        while (value > 0 && value % 5 == 0) {
            value /= 5;
            count++;
        }
        return count;
    }

    /** (m * mul) >> j for a 128-bit mul (low, high), m below 2^62, j at least 64. */
    private static long mulShift(long m, long[] mul, int j) {
        long lowHigh = unsignedMultiplyHigh(m, mul[0]);
        long highLow = m * mul[1];
        long highHigh = unsignedMultiplyHigh(m, mul[1]);
        long sum = lowHigh + highLow;
        if (Long.compareUnsigned(sum, lowHigh) < 0) {
            highHigh++;
        }
        int shift = j - 64;
        if (shift == 0) {
            return sum; // not reached for doubles; kept exact
        }
        return (sum >>> shift) | (highHigh << (64 - shift));
    }

    private static long unsignedMultiplyHigh(long a, long b) {
        long high = Math.multiplyHigh(a, b);
        return high + ((a >> 63) & b) + ((b >> 63) & a);
    }
}
