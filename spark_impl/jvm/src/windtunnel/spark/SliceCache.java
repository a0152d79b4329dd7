package windtunnel.spark;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Slice states kept in this executor between micro-batches, so a task whose slice ran here
 * last time reads nothing from the file system.
 *
 * <p>An entry is the state after one version of one slice of one state root and run token
 * (a new checkpoint, or a copy elsewhere, never shares entries). {@link #take} removes the
 * entry: a task mutates the state in place, so a failed attempt leaves nothing behind and a
 * retry reads the base version's file; {@link #put} keeps the state after the new version.
 * Bounded (least recently used out); a missing entry only costs a read.
 */
final class SliceCache {
  private static final int CAPACITY = 512;
  private static final Map<String, Entry> ENTRIES = new LinkedHashMap<>(64, 0.75f, true) {
    private static final long serialVersionUID = 1L;

    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Entry> eldest) {
      return size() > CAPACITY;
    }
  };

  private static final class Entry {
    final long version;
    final Object state;

    Entry(long version, Object state) {
      this.version = version;
      this.state = state;
    }
  }

  private SliceCache() {}

  private static String key(String root, String token, int slice) {
    return root + "\n" + token + "\n" + slice;
  }

  /** The state of {@code slice} after {@code version}, removed from the cache, or null. */
  static Object take(String root, String token, int slice, long version) {
    if (version < 0) {
      return null;
    }
    synchronized (ENTRIES) {
      Entry entry = ENTRIES.remove(key(root, token, slice));
      return entry != null && entry.version == version ? entry.state : null;
    }
  }

  static void put(String root, String token, int slice, long version, Object state) {
    synchronized (ENTRIES) {
      ENTRIES.put(key(root, token, slice), new Entry(version, state));
    }
  }

  /** Forgets every slice of {@code root} (the query stopped). */
  static void release(String root) {
    synchronized (ENTRIES) {
      ENTRIES.keySet().removeIf(k -> k.startsWith(root + "\n"));
    }
  }
}
