package windtunnel.engine;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Emissions of several keys closed by one step, held back and sent in window-time order: by
 * window end, start, key (first seen first), then the order each key produced them (the
 * oracle's {@code session_reorder._window_time_order}).
 */
final class Pending {
    private static final Comparator<Item> ORDER = (a, b) -> a.endMs != b.endMs ? Long.compare(a.endMs, b.endMs)
            : a.startMs != b.startMs ? Long.compare(a.startMs, b.startMs)
            : a.key.firstSeq != b.key.firstSeq ? Long.compare(a.key.firstSeq, b.key.firstSeq)
            : Long.compare(a.position, b.position);
    private final List<Item> items = new ArrayList<>();

    /** One held emission. */
    private static final class Item {
        final Key key;
        final long startMs;
        final long endMs;
        final String row;
        final String reason;
        final boolean partial;
        final long position;

        Item(Key key, long startMs, long endMs, String row, String reason, boolean partial, long position) {
            this.key = key;
            this.startMs = startMs;
            this.endMs = endMs;
            this.row = row;
            this.reason = reason;
            this.partial = partial;
            this.position = position;
        }
    }

    void add(Key key, long startMs, long endMs, String row, String reason, boolean partial) {
        items.add(new Item(key, startMs, endMs, row, reason, partial, items.size()));
    }

    /** Sends the held emissions in order and forgets them. */
    void flush(Slice slice) {
        items.sort(ORDER);
        for (Item item : items) {
            slice.emit(item.key, item.startMs, item.endMs, item.row, item.reason, item.partial);
        }
        items.clear();
    }
}
