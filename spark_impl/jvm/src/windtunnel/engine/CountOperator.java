package windtunnel.engine;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Count windows of the default profile ({@code oracle/windows/count.py}): each key numbers its
 * events 0, 1, 2, ... (offsets); window {@code [s, s + count)} with {@code s} a multiple of
 * {@code every} collects the events at those offsets and is emitted (reason {@code count}) when
 * its last offset arrives; end of input flushes the partial windows by their nominal range,
 * key by key in first-seen order.
 */
final class CountOperator extends Operator {
    private final long count;
    private final long hop;
    private final int held;

    /** A key's next offset and its open windows in start order. */
    static final class CountKey extends Key {
        long nextOffset;
        final ArrayDeque<Window> windows;

        /** {@code held}: how many windows the key holds at once (the deque's first size). */
        CountKey(Object groupValue, long firstSeq, int held) {
            super(groupValue, firstSeq);
            windows = new ArrayDeque<>(held);
        }
    }

    /** One open window (its accumulators, none for pass-through). */
    static final class Window extends Acc {
        final long start;

        Window(long start) {
            this.start = start;
        }
    }

    CountOperator(Slice slice) {
        super(slice);
        count = spec.count;
        hop = spec.every;
        held = (int) Math.min((count + hop - 1) / hop, 16);
    }

    @Override
    Key newKey(Object groupValue, long firstSeq) {
        return new CountKey(groupValue, firstSeq, held);
    }

    @Override
    void onEvent(Key key, long seq, long tMs, EventFields event) {
        CountKey k = (CountKey) key;
        long offset = k.nextOffset++;
        long last = offset - offset % hop;
        long first = Math.max(0, offset - count + 1);
        first += Math.floorMod(-first, hop);
        for (long start = first; start <= last; start += hop) {
            Window window = find(k, start);
            if (aggregates == null) {
                slice.emitOffsets(k, start, start + count, event.payloadJson(), "event", false);
            } else {
                aggregates.add(window, event);
            }
            if (offset == start + count - 1) {
                k.windows.remove(window);
                emit(k, window, offset + 1, "count", false);
            }
        }
    }

    private Window find(CountKey k, long start) {
        for (Window window : k.windows) {
            if (window.start == start) {
                return window;
            }
        }
        Window window = new Window(start);
        if (aggregates != null) {
            aggregates.init(window);
        }
        k.windows.addLast(window); // starts only grow: the new window is the last
        return window;
    }

    private void emit(CountKey k, Window window, long end, String reason, boolean partial) {
        if (aggregates != null) {
            aggregates.rows(window, false, 0, 0,
                    slice.text, row -> slice.emitOffsets(k, window.start, end, row, reason, partial));
        }
    }

    @Override
    void onWall() {
        // count windows never read the wall clock
    }

    @Override
    void onEnd() {
        List<Key> keys = new ArrayList<>(slice.keys.size());
        slice.keys.forEach(keys::add);
        keys.sort(Comparator.comparingLong(key -> key.firstSeq));
        for (Key key : keys) {
            CountKey k = (CountKey) key;
            for (Window window : k.windows) {
                emit(k, window, window.start + count, "end_of_input", true);
            }
            k.windows.clear();
        }
    }

    @Override
    void attached(Key key) {
    }

    @Override
    int openWindows(Key key) {
        return ((CountKey) key).windows.size();
    }

    @Override
    void cleared() {
    }

    @Override
    void detached(Key key) {
    }

    @Override
    void writeKey(Key key, DataOutputStream out) throws IOException {
        CountKey k = (CountKey) key;
        out.writeLong(k.nextOffset);
        out.writeInt(k.windows.size());
        for (Window window : k.windows) {
            out.writeLong(window.start);
            if (aggregates != null) {
                AccState.write(aggregates, window, out);
            }
        }
    }

    @Override
    Key readKey(Object groupValue, long firstSeq, DataInputStream in) throws IOException {
        CountKey k = new CountKey(groupValue, firstSeq, held);
        k.nextOffset = in.readLong();
        int n = Binary.length(in);
        for (int i = 0; i < n; i++) {
            Window window = new Window(in.readLong());
            if (aggregates != null) {
                AccState.read(aggregates, window, in);
            }
            k.windows.addLast(window);
        }
        return k;
    }
}
