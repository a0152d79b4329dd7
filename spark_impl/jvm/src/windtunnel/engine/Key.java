package windtunnel.engine;

/**
 * One {@code group_by} key of a slice: its output value (as first seen) and that value's JSON
 * text, the seq of its first event (its identity, and its order among keys), and the window
 * kind's state in a subclass.
 */
abstract class Key extends HeapItem {
    final Object groupValue;
    final String groupJson;
    final long firstSeq;
    boolean dirty;
    Object mapKey; // its key in the slice's map (GroupKeys)

    Key(Object groupValue, long firstSeq) {
        this.groupValue = groupValue;
        this.groupJson = JsonWriter.write(groupValue);
        this.firstSeq = firstSeq;
    }
}
