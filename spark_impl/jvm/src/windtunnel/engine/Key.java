package windtunnel.engine;

/**
 * One {@code group_by} key of a slice: its output value (as first seen) and, unless it is an
 * integer (whose text is cheap to write again), that value's JSON text; the seq of its first
 * event (its identity, and its order among keys), its key in the slice's {@link KeyTable}, and
 * the window kind's state in a subclass.
 */
abstract class Key extends HeapItem {
    final Object groupValue;
    final String groupJson; // null for a Long: Slice#groupJson writes it
    final long firstSeq;
    boolean dirty;
    Object mapKey; // its key in the slice's table (GroupKeys)
    Key next; // the next key in its KeyTable chain

    Key(Object groupValue, long firstSeq) {
        this.groupValue = groupValue;
        this.groupJson = groupValue instanceof Long ? null : JsonWriter.write(groupValue);
        this.firstSeq = firstSeq;
    }
}
