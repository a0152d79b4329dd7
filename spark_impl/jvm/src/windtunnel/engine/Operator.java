package windtunnel.engine;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;

/**
 * What a window kind implements for a {@link Slice}: per-key state, what an event, a wall
 * clock movement and the end of input do, and how a key's state is written and read.
 */
abstract class Operator {
    final Slice slice;
    final Spec spec;
    final Aggregates aggregates;

    Operator(Slice slice) {
        this.slice = slice;
        this.spec = slice.spec;
        this.aggregates = spec.aggregates;
    }

    /** A new key, before its first event. */
    abstract Key newKey(Object groupValue, long firstSeq);

    /** One event of {@code key} at event time {@code tMs}. */
    abstract void onEvent(Key key, long seq, long tMs, EventFields event);

    /** The wall clock moved to {@code slice.wallMs}. */
    abstract void onWall();

    /** End of input: flush what is open. */
    abstract void onEnd();

    /** Writes the kind's state of {@code key}. */
    abstract void writeKey(Key key, DataOutputStream out) throws IOException;

    /** Reads a key written by {@link #writeKey}. */
    abstract Key readKey(Object groupValue, long firstSeq, DataInputStream in) throws IOException;

    /** A key was added back (decoded) or left the slice: slice-wide indexes follow. */
    abstract void attached(Key key);

    abstract void detached(Key key);

    /** State was decoded into the slice: slice-wide indexes are built again from the keys. */
    void restored() {
    }

    /** Every key left at once (end of input): slice-wide indexes empty. */
    abstract void cleared();

    static Operator of(Slice slice) {
        Spec spec = slice.spec;
        return switch (spec.kind) {
            case FIXED -> new FixedOperator(slice);
            case COUNT -> new CountOperator(slice);
            case SESSION -> spec.merging ? new MergeSessions(slice) : new ReorderSessions(slice);
        };
    }
}
