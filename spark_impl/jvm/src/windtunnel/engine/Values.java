package windtunnel.engine;

/**
 * The values of one event the engine reads, by slot ({@link Spec#fields}): a JSON value per
 * slot, with unboxed fast paths for ints and floats. {@link EventFields} is what callers fill;
 * buffered events keep their own copy.
 */
public interface Values {
    /** Slot tags: missing or null, an int in 64 bits, a float, any other JSON value. */
    int NULL = 0;
    int LONG = 1;
    int DOUBLE = 2;
    int OBJECT = 3;

    /** The tag of {@code slot}. */
    int tag(int slot);

    /** The int of a {@link #LONG} slot. */
    long longAt(int slot);

    /** The float of a {@link #DOUBLE} slot. */
    double doubleAt(int slot);

    /** The JSON value of {@code slot} (boxed; null for {@link #NULL}). */
    Object get(int slot);
}
