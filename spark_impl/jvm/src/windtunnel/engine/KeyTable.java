package windtunnel.engine;

import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * A slice's keys by their map key ({@link GroupKeys}: {@code null} included), a hash table
 * chained through {@link Key#next}, so a key costs one table slot and no entry object. Keys
 * iterate in no particular order; the table must not change while it is iterated.
 */
final class KeyTable implements Iterable<Key> {
    private static final int FIRST_CAPACITY = 16;
    private Key[] table = new Key[FIRST_CAPACITY];
    private int size;

    int size() {
        return size;
    }

    /** The key whose map key equals {@code mapKey}, or null. */
    Key get(Object mapKey) {
        Key key = table[index(hash(mapKey), table.length)];
        while (key != null && !same(key.mapKey, mapKey)) {
            key = key.next;
        }
        return key;
    }

    /** Adds {@code key} under its {@link Key#mapKey}, in place of a key with an equal one. */
    void put(Key key) {
        remove(key.mapKey);
        if (size >= table.length - (table.length >>> 2)) {
            resize();
        }
        int at = index(hash(key.mapKey), table.length);
        key.next = table[at];
        table[at] = key;
        size++;
    }

    /** Removes the key whose map key equals {@code mapKey}, if any. */
    void remove(Object mapKey) {
        int at = index(hash(mapKey), table.length);
        Key before = null;
        for (Key key = table[at]; key != null; before = key, key = key.next) {
            if (same(key.mapKey, mapKey)) {
                if (before == null) {
                    table[at] = key.next;
                } else {
                    before.next = key.next;
                }
                key.next = null;
                size--;
                return;
            }
        }
    }

    /** Removes every key. */
    void clear() {
        table = new Key[FIRST_CAPACITY];
        size = 0;
    }

    /** The keys (this table). */
    Iterable<Key> values() {
        return this;
    }

    @Override
    public Iterator<Key> iterator() {
        return new Iterator<>() {
            private int at = -1;
            private Key next = advance(null);

            private Key advance(Key from) {
                Key key = from == null ? null : from.next;
                while (key == null && ++at < table.length) {
                    key = table[at];
                }
                return key;
            }

            @Override
            public boolean hasNext() {
                return next != null;
            }

            @Override
            public Key next() {
                if (next == null) {
                    throw new NoSuchElementException();
                }
                Key key = next;
                next = advance(key);
                return key;
            }
        };
    }

    private void resize() {
        Key[] bigger = new Key[table.length * 2];
        for (Key head : table) {
            Key key = head;
            while (key != null) {
                Key following = key.next;
                int at = index(hash(key.mapKey), bigger.length);
                key.next = bigger[at];
                bigger[at] = key;
                key = following;
            }
        }
        table = bigger;
    }

    private static int hash(Object mapKey) {
        int h = mapKey == null ? 0 : mapKey.hashCode();
        return h ^ (h >>> 16);
    }

    private static int index(int hash, int length) {
        return hash & (length - 1);
    }

    private static boolean same(Object a, Object b) {
        return a == b || (a != null && a.equals(b));
    }
}
