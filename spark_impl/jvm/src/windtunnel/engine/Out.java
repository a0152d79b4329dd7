package windtunnel.engine;

/** Where a slice sends its outputs, one {@link OutRecord} at a time, in order. */
@FunctionalInterface
public interface Out {
    /** One output; {@code record} is reused by the slice: copy what you keep before returning. */
    void accept(OutRecord record);
}
