package windtunnel.spark;

import java.lang.ref.SoftReference;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Slice states kept in this executor between micro-batches, so a task whose slice ran here
 * last time reads nothing from the file system.
 *
 * <p>An entry is the state after one version of one slice of one state root and run token
 * (a new checkpoint, or a copy elsewhere, never shares entries). {@link #take} removes the
 * entry: a task mutates the state in place, so a failed attempt leaves nothing behind and a
 * retry reads the base version's file; {@link #put} keeps the state after the new version.
 * Bounded (least recently used out) and held softly (the garbage collector may drop entries
 * rather than run out of memory); a missing entry only costs a read.
 *
 * <p>In local mode the driver and the tasks load this jar through different class loaders,
 * so the driver's {@link #release} reaches another copy of this class: {@link ProductionRun#close}
 * also runs it in a task ({@link Release}).
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
    final SoftReference<Object> state;
    /** The size of the slice's last state file (-1: none written yet). */
    final int bytes;

    Entry(long version, Object state, int bytes) {
      this.version = version;
      this.state = new SoftReference<>(state);
      this.bytes = bytes;
    }
  }

  /** {@link #release} of one state root, as a task runs it. */
  static final class Release implements org.apache.spark.api.java.function.VoidFunction<Integer> {
    private static final long serialVersionUID = 1L;
    private final String root;

    Release(String root) {
      this.root = root;
    }

    @Override
    public void call(Integer ignored) {
      release(root);
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
      return entry != null && entry.version == version ? entry.state.get() : null;
    }
  }

  /** Keeps {@code state} as {@code slice}'s state after {@code version}, whose state file
   * has {@code bytes} bytes (-1 when unknown). */
  static void put(String root, String token, int slice, long version, Object state, int bytes) {
    synchronized (ENTRIES) {
      ENTRIES.put(key(root, token, slice), new Entry(version, state, bytes));
    }
  }

  /** The size of {@code slice}'s last state file as this cache knows it, else 0: how large a
   * buffer to start its next file in. */
  static int bytes(String root, String token, int slice) {
    synchronized (ENTRIES) {
      Entry entry = ENTRIES.get(key(root, token, slice));
      return entry == null ? 0 : Math.max(0, entry.bytes);
    }
  }

  /** How many slices of {@code root} this copy of the cache holds. */
  static int count(String root) {
    synchronized (ENTRIES) {
      return (int) ENTRIES.keySet().stream().filter(k -> k.startsWith(root + "\n")).count();
    }
  }

  /** {@link #count} in the tasks' copy: one task per core. */
  static int countInTasks(org.apache.spark.SparkContext sc, String root) {
    return perCore(sc).map(i -> count(root)).reduce(Math::max);
  }

  /** A small RDD of one element per core: a job over it runs a task in every slot. */
  static org.apache.spark.api.java.JavaRDD<Integer> perCore(org.apache.spark.SparkContext sc) {
    int tasks = Math.max(1, sc.defaultParallelism());
    List<Integer> each = new java.util.ArrayList<>();
    for (int i = 0; i < tasks; i++) {
      each.add(i);
    }
    return org.apache.spark.api.java.JavaSparkContext.fromSparkContext(sc).parallelize(each, tasks);
  }

  /** Forgets every slice of {@code root} (the query stopped). */
  static void release(String root) {
    synchronized (ENTRIES) {
      ENTRIES.keySet().removeIf(k -> k.startsWith(root + "\n"));
    }
  }
}
