package windtunnel.engine;

import java.math.BigInteger;
import java.util.List;
import java.util.Map;

/**
 * Event times as {@code timeparse.timestamp_ms} reads them: an int counts {@code time_unit_ms}
 * milliseconds, a finite float is scaled and floored, a string is ISO-8601 with a zone
 * ({@link IsoTime}); booleans, non-finite floats, lists and objects are not times. The engine
 * keeps times in 64 bits: a time beyond +-2^61 ms (73 million years) is refused with its own
 * message, where the oracle would go on with a Python int.
 */
public final class Times {
    /** The largest magnitude of an event time the engine takes, in ms. */
    public static final long MAX_MS = 1L << 61;
    static final String OUT_OF_RANGE = "the time is beyond the engine's range of +-2**61 ms";

    private Times() {
    }

    /** Why a value is not a time (the oracle's {@code NotATime} message). */
    public static final class NotATime extends RuntimeException {
        private static final long serialVersionUID = 1L;

        NotATime(String message) {
            super(message, null, false, false);
        }
    }

    /** Epoch ms of a non-null event-time value; raises NotATime. */
    public static long ms(Object value, long unitMs) {
        if (value instanceof Long) {
            return ofLong((Long) value, unitMs);
        }
        if (value instanceof Double) {
            return ofDouble((Double) value, unitMs);
        }
        if (value instanceof String) {
            return checked(IsoTime.epochMs((String) value));
        }
        if (value instanceof Boolean) {
            throw new NotATime("a boolean is not a timestamp");
        }
        if (value instanceof BigInteger) {
            throw new NotATime(OUT_OF_RANGE);
        }
        if (value instanceof List) {
            throw new NotATime("a list is not a timestamp");
        }
        if (value instanceof Map) {
            throw new NotATime("a dict is not a timestamp");
        }
        throw new NotATime("a " + PyValues.typeName(value) + " is not a timestamp");
    }

    /** An int time: {@code value * unitMs}. */
    public static long ofLong(long value, long unitMs) {
        long ms;
        try {
            ms = Math.multiplyExact(value, unitMs);
        } catch (ArithmeticException overflow) {
            throw new NotATime(OUT_OF_RANGE);
        }
        return checked(ms);
    }

    /** A float time: {@code math.floor(value * unitMs)}. */
    public static long ofDouble(double value, long unitMs) {
        if (Double.isNaN(value) || Double.isInfinite(value)) {
            throw new NotATime("a non-finite number is not a timestamp");
        }
        double ms = Math.floor(value * (double) unitMs);
        if (!(Math.abs(ms) <= (double) MAX_MS)) {
            throw new NotATime(OUT_OF_RANGE);
        }
        return (long) ms;
    }

    private static long checked(long ms) {
        if (ms > MAX_MS || ms < -MAX_MS) {
            throw new NotATime(OUT_OF_RANGE);
        }
        return ms;
    }
}
