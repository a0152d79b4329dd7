package windtunnel.spark;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.zip.CRC32;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * The production operator's state on the checkpoint's own file system, through Hadoop's
 * FileSystem API (so {@code file://}, plain paths, {@code hdfs://} and {@code s3a://}
 * checkpoints work as Spark's own files do).
 *
 * <p>Layout under {@code <checkpoint>/windtunnel/}:
 *
 * <pre>
 *   FORMAT                     one line of key=value pairs: format version, spec fingerprint,
 *                              slice count, run token (new for every new checkpoint)
 *   state/&lt;N&gt;/slice-&lt;p&gt;       what slice p's task wrote at micro-batch N: a snapshot (every
 *                              lane's whole state) or a delta (per lane that changed, the keys
 *                              changed and removed since the slice's previous file)
 *   state/&lt;N&gt;/COMMIT          written by the driver once every slice of micro-batch N is
 *                              written: per slice, its chain (the versions of its files from
 *                              its last snapshot to its newest delta; a slice that did not
 *                              change keeps an older chain), and the micro-batch's rows in and
 *                              out
 * </pre>
 *
 * <p>A slice file is {@code WTSL}, the format version, the spec fingerprint, the version, the
 * slice, the payload's length, the payload and a CRC32 of the payload; the payload is, per
 * lane, the engine's own snapshot or update record ({@code StateCodec}), which says which it
 * is. A slice's state is its chain's snapshot with each delta applied in order; a missing,
 * cut short or corrupt file of a chain is a {@link StateError} naming it, never skipped. A
 * task writes a snapshot when its slice has none yet or its chain holds {@code K} deltas
 * ({@link ProductionRun}), else a delta of what changed, so a micro-batch writes in proportion
 * to the keys it changed. Once a newer commit's chain no longer needs a file it is deleted
 * ({@link #cleanup}).
 *
 * <p>Files are written under a temporary name and renamed, so a reader sees a whole file or
 * none; two attempts of one task write the same bytes (the step is deterministic). Micro-batch
 * N starts from the newest committed version below N, so a micro-batch Spark replays after a
 * restart reads what its first attempt read. Nothing here uses Java serialization.
 */
public final class StateStore {
  public static final int FORMAT_VERSION = 1;
  static final String ROOT = "windtunnel";
  static final int MAGIC = 0x5754534c; // "WTSL"

  private StateStore() {}

  /** The state root of a checkpoint: {@code <checkpoint>/windtunnel}, fully qualified. */
  public static String root(Configuration conf, String checkpoint) throws IOException {
    Path path = new Path(checkpoint);
    FileSystem fs = path.getFileSystem(conf);
    return new Path(fs.makeQualified(path), ROOT).toString();
  }

  static Path versionDir(String root, long version) {
    return new Path(new Path(root, "state"), Long.toString(version));
  }

  static Path sliceFile(String root, long version, int slice) {
    return new Path(versionDir(root, version), "slice-" + slice);
  }

  static Path commitFile(String root, long version) {
    return new Path(versionDir(root, version), "COMMIT");
  }

  // ------------------------------------------------------------------ slice files (tasks)

  /** Writes slice {@code slice}'s state of {@code version} (replacing an earlier attempt's). */
  public static void writeSlice(
      Configuration conf, String root, String fingerprint, long version, int slice, byte[] payload)
      throws IOException {
    SliceFile file = new SliceFile(fingerprint, version, slice, payload.length + 128);
    file.write(payload);
    writeSlice(conf, root, file);
  }

  /** Writes a slice file whose payload {@code file} holds. */
  static void writeSlice(Configuration conf, String root, SliceFile file) throws IOException {
    file.finish();
    writeAtomically(conf, sliceFile(root, file.version, file.slice), file::writeTo);
  }

  /** {@link #writeSlice}, an I/O failure as a StateError naming the file. */
  static void writeSliceOrFail(Configuration conf, String root, SliceFile file) {
    try {
      writeSlice(conf, root, file);
    } catch (IOException e) {
      throw new StateError(
          "cannot write " + sliceFile(root, file.version, file.slice) + ": " + e.getMessage());
    }
  }

  /** The payload of slice {@code slice} in the file written at {@code version}; throws
   * {@link StateError} naming the file when it is missing, cut short, corrupt, or written
   * by another format version or for another query. */
  public static byte[] readSlice(
      Configuration conf, String root, String fingerprint, long version, int slice) {
    Path path = sliceFile(root, version, slice);
    try {
      FileSystem fs = path.getFileSystem(conf);
      if (!fs.exists(path)) {
        throw new StateError(path + " is missing");
      }
      try (DataInputStream in = new DataInputStream(fs.open(path))) {
        if (in.readInt() != MAGIC) {
          throw new StateError(path + " is not a windtunnel state file");
        }
        int format = in.readInt();
        if (format != FORMAT_VERSION) {
          throw new StateError(
              path + " was written in state format " + format + ", this windtunnel reads format "
                  + FORMAT_VERSION);
        }
        String found = in.readUTF();
        if (!found.equals(fingerprint)) {
          throw new StateError(path + " was written for another query (spec fingerprint "
              + found + ", this query " + fingerprint + ")");
        }
        long foundVersion = in.readLong();
        int foundSlice = in.readInt();
        if (foundVersion != version || foundSlice != slice) {
          throw new StateError(path + " holds version " + foundVersion + " slice " + foundSlice);
        }
        byte[] payload = new byte[in.readInt()];
        in.readFully(payload);
        CRC32 crc = new CRC32();
        crc.update(payload);
        if (in.readLong() != crc.getValue()) {
          throw new StateError(path + " is corrupt (checksum mismatch)");
        }
        return payload;
      }
    } catch (EOFException e) {
      throw new StateError(path + " is cut short");
    } catch (org.apache.hadoop.fs.ChecksumException e) {
      throw new StateError(path + " is corrupt (the file system's checksum does not match)");
    } catch (IOException e) {
      throw new StateError(path + " cannot be read: " + e.getMessage());
    }
  }

  /** The payloads of slice {@code slice}'s chain, oldest (its snapshot) first; throws
   * {@link StateError} naming the first file that cannot be used. */
  static List<byte[]> readChain(
      Configuration conf, String root, String fingerprint, long[] chain, int slice) {
    List<byte[]> payloads = new ArrayList<>(chain.length);
    for (long version : chain) {
      payloads.add(readSlice(conf, root, fingerprint, version, slice));
    }
    return payloads;
  }

  // ------------------------------------------------------------------ metadata and commits (driver)

  /** The FORMAT file's fields, or null when the checkpoint has none. */
  public static Meta readMeta(Configuration conf, String root) {
    Path path = new Path(root, "FORMAT");
    String text = readText(conf, path);
    if (text == null) {
      return null;
    }
    try {
      return Meta.parse(text);
    } catch (RuntimeException e) {
      throw new StateError(path + " is not a windtunnel FORMAT file (" + e.getMessage() + ")");
    }
  }

  /** Creates the FORMAT file of a new state root (a new run token). */
  public static Meta createMeta(Configuration conf, String root, String fingerprint, int slices)
      throws IOException {
    Meta meta = new Meta(FORMAT_VERSION, fingerprint, slices, UUID.randomUUID().toString());
    writeAtomically(conf, new Path(root, "FORMAT"), meta.text().getBytes(StandardCharsets.UTF_8));
    return meta;
  }

  /** Records that every slice of {@code version} is written: {@code chains[p]} are the versions
   * whose files make up slice p (its snapshot first; empty: no state yet). */
  public static Commit commit(Configuration conf, String root, long version, long[][] chains,
      long rowsIn, long rowsOut, long lastSeq) throws IOException {
    Commit commit = new Commit(version, chains, rowsIn, rowsOut, lastSeq);
    writeAtomically(conf, commitFile(root, version), commit.text().getBytes(StandardCharsets.UTF_8));
    return commit;
  }

  /** The commit of {@code version}, or null when that version was never committed. */
  public static Commit readCommit(Configuration conf, String root, long version) {
    Path path = commitFile(root, version);
    String text = readText(conf, path);
    if (text == null) {
      return null;
    }
    try {
      return Commit.parse(text);
    } catch (RuntimeException e) {
      throw new StateError(path + " is corrupt (" + e.getMessage() + ")");
    }
  }

  /** Versions with a COMMIT file, ascending. */
  public static long[] committedVersions(Configuration conf, String root) throws IOException {
    Path dir = new Path(root, "state");
    FileSystem fs = dir.getFileSystem(conf);
    TreeSet<Long> found = new TreeSet<>();
    if (fs.exists(dir)) {
      for (FileStatus status : fs.listStatus(dir)) {
        Long version = parseLong(status.getPath().getName());
        if (version != null && fs.exists(commitFile(root, version))) {
          found.add(version);
        }
      }
    }
    return found.stream().mapToLong(Long::longValue).toArray();
  }

  /** Deletes what neither {@code keep} commit needs: a version directory none of their chains
   * reaches (its own folder included), and a slice file in a kept directory its slice's chains
   * do not hold. Versions above the newest kept one are left alone (a micro-batch in flight). */
  public static void cleanup(Configuration conf, String root, long[] keep) throws IOException {
    Set<Long> needed = new HashSet<>();
    Set<String> files = new HashSet<>();
    long newest = Long.MIN_VALUE;
    for (long version : keep) {
      Commit commit = readCommit(conf, root, version);
      if (commit == null) {
        continue;
      }
      needed.add(version);
      newest = Math.max(newest, version);
      for (int slice = 0; slice < commit.chains.length; slice++) {
        for (long file : commit.chains[slice]) {
          needed.add(file);
          files.add(file + "/slice-" + slice);
        }
      }
    }
    Path dir = new Path(root, "state");
    FileSystem fs = dir.getFileSystem(conf);
    if (!fs.exists(dir)) {
      return;
    }
    for (FileStatus status : fs.listStatus(dir)) {
      Long version = parseLong(status.getPath().getName());
      if (version == null || version >= newest) {
        continue;
      }
      if (!needed.contains(version)) {
        fs.delete(status.getPath(), true);
        continue;
      }
      for (FileStatus file : fs.listStatus(status.getPath())) {
        String name = file.getPath().getName();
        if (name.startsWith("slice-") && !files.contains(version + "/" + name)) {
          fs.delete(file.getPath(), false);
        }
      }
    }
  }

  /**
   * Whether a query may start on this checkpoint, as one line, or null when it may.
   *
   * <p>Spark's commit log ({@code <checkpoint>/commits/<id>}) says which micro-batch Spark
   * finished last; its state must be here, whole, in this format and for this query. A
   * checkpoint where Spark finished nothing starts from empty state.
   */
  public static String verifyResume(
      Configuration conf, String checkpoint, String fingerprint, int slices) throws IOException {
    Path ckpt = new Path(checkpoint);
    FileSystem fs = ckpt.getFileSystem(conf);
    String where = fs.makeQualified(ckpt).toString();
    long sparkCommitted = newestNumbered(fs, new Path(ckpt, "commits"));
    String root = root(conf, checkpoint);
    Meta meta;
    try {
      meta = readMeta(conf, root);
    } catch (StateError e) {
      return "windtunnel's state in checkpoint " + where + " cannot be used: " + e.getMessage();
    }
    if (meta == null) {
      if (sparkCommitted < 0) {
        return null;
      }
      return "checkpoint " + where + " has Spark's progress up to micro-batch " + sparkCommitted
          + " but no windtunnel state (" + root + " is missing): the keys' clocks and open"
          + " windows are lost; restore that folder with the checkpoint, or start again with a"
          + " new checkpoint";
    }
    if (meta.format != FORMAT_VERSION) {
      return "windtunnel's state in checkpoint " + where + " is in format " + meta.format
          + ", this windtunnel reads format " + FORMAT_VERSION
          + "; finish it with the windtunnel that wrote it, or start a new checkpoint";
    }
    if (!meta.fingerprint.equals(fingerprint) || meta.slices != slices) {
      return "checkpoint " + where + " was written for another query (spec fingerprint "
          + meta.fingerprint + ", " + meta.slices + " slices; this query " + fingerprint + ", "
          + slices + " slices); use a new checkpoint for a changed spec";
    }
    if (sparkCommitted < 0) {
      return null;
    }
    try {
      Commit commit = readCommit(conf, root, sparkCommitted);
      if (commit == null) {
        return "checkpoint " + where + " has Spark's progress up to micro-batch "
            + sparkCommitted + " but windtunnel's state of that micro-batch is missing ("
            + commitFile(root, sparkCommitted) + "); restore the checkpoint whole, or start"
            + " again with a new checkpoint";
      }
      for (int slice = 0; slice < commit.chains.length; slice++) {
        readChain(conf, root, fingerprint, commit.chains[slice], slice);
      }
    } catch (StateError e) {
      return "windtunnel's state in checkpoint " + where + " cannot be used: " + e.getMessage()
          + "; restore the checkpoint whole, or start again with a new checkpoint";
    }
    return null;
  }

  // ------------------------------------------------------------------ helpers

  static long newestNumbered(FileSystem fs, Path dir) throws IOException {
    long newest = -1;
    if (fs.exists(dir)) {
      for (FileStatus status : fs.listStatus(dir)) {
        Long value = parseLong(status.getPath().getName());
        if (value != null) {
          newest = Math.max(newest, value);
        }
      }
    }
    return newest;
  }

  private static Long parseLong(String text) {
    if (text.isEmpty() || text.length() > 18) {
      return null;
    }
    for (int i = 0; i < text.length(); i++) {
      if (!Character.isDigit(text.charAt(i))) {
        return null;
      }
    }
    return Long.parseLong(text);
  }

  private static String readText(Configuration conf, Path path) {
    try {
      FileSystem fs = path.getFileSystem(conf);
      if (!fs.exists(path)) {
        return null;
      }
      try (InputStream in = fs.open(path)) {
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
    } catch (org.apache.hadoop.fs.ChecksumException e) {
      throw new StateError(path + " is corrupt (the file system's checksum does not match)");
    } catch (IOException e) {
      throw new StateError(path + " cannot be read: " + e.getMessage());
    }
  }

  static void writeAtomically(Configuration conf, Path path, byte[] bytes) throws IOException {
    writeAtomically(conf, path, out -> out.write(bytes));
  }

  /** What a file's bytes are written by. */
  interface Contents {
    void writeTo(java.io.OutputStream out) throws IOException;
  }

  /** Writes a file under a temporary name and renames it to {@code path} (replacing it). */
  static void writeAtomically(Configuration conf, Path path, Contents contents) throws IOException {
    FileSystem fs = path.getFileSystem(conf);
    Path tmp = new Path(path.getParent(), "." + path.getName() + "." + UUID.randomUUID() + ".tmp");
    try (java.io.OutputStream out = FileWrites.create(fs, tmp)) {
      contents.writeTo(out);
    }
    FileWrites.publish(fs, tmp, path);
  }

  /** The FORMAT file. */
  public static final class Meta {
    public final int format;
    public final String fingerprint;
    public final int slices;
    public final String token;

    Meta(int format, String fingerprint, int slices, String token) {
      this.format = format;
      this.fingerprint = fingerprint;
      this.slices = slices;
      this.token = token;
    }

    String text() {
      return "windtunnel-state\nformat=" + format + "\nfingerprint=" + fingerprint + "\nslices="
          + slices + "\ntoken=" + token + "\n";
    }

    static Meta parse(String text) {
      String[] lines = text.split("\n");
      if (lines.length < 5 || !lines[0].equals("windtunnel-state")) {
        throw new IllegalArgumentException("no windtunnel-state header");
      }
      return new Meta(
          Integer.parseInt(value(lines[1], "format")),
          value(lines[2], "fingerprint"),
          Integer.parseInt(value(lines[3], "slices")),
          value(lines[4], "token"));
    }
  }

  /** A version's COMMIT file. */
  public static final class Commit {
    public final long version;
    /** Per slice, the version of its newest file (-1: none). */
    public final long[] files;
    /** Per slice, the versions of its files, its snapshot first (empty: none). */
    public final long[][] chains;
    public final long rowsIn;
    public final long rowsOut;
    /** The largest event seq of lane 0 up to this version (-1: none). */
    public final long lastSeq;

    Commit(long version, long[][] chains, long rowsIn, long rowsOut, long lastSeq) {
      this.version = version;
      this.chains = chains;
      this.files = new long[chains.length];
      for (int i = 0; i < chains.length; i++) {
        files[i] = chains[i].length == 0 ? -1 : chains[i][chains[i].length - 1];
      }
      this.rowsIn = rowsIn;
      this.rowsOut = rowsOut;
      this.lastSeq = lastSeq;
    }

    String text() {
      StringBuilder sb = new StringBuilder("windtunnel-commit\nversion=").append(version);
      sb.append("\nrows_in=").append(rowsIn).append("\nrows_out=").append(rowsOut);
      sb.append("\nfiles=");
      for (int i = 0; i < files.length; i++) {
        sb.append(i == 0 ? "" : ",").append(files[i]);
      }
      sb.append("\nlast_seq=").append(lastSeq).append("\nchains=");
      for (int i = 0; i < chains.length; i++) {
        sb.append(i == 0 ? "" : ",");
        for (int j = 0; j < chains[i].length; j++) {
          sb.append(j == 0 ? "" : ":").append(chains[i][j]);
        }
      }
      return sb.append('\n').toString();
    }

    /** Parses a COMMIT; one without chains (snapshots only) has each slice's file as its
     * chain. */
    static Commit parse(String text) {
      String[] lines = text.split("\n");
      if (lines.length < 5 || !lines[0].equals("windtunnel-commit")) {
        throw new IllegalArgumentException("no windtunnel-commit header");
      }
      long[] files = longs(value(lines[4], "files"), ",");
      long[][] chains = new long[files.length][];
      if (lines.length > 6) {
        String[] parts = value(lines[6], "chains").split(",", -1);
        if (parts.length != files.length) {
          throw new IllegalArgumentException("chains for " + parts.length + " slices, files for "
              + files.length);
        }
        for (int i = 0; i < parts.length; i++) {
          chains[i] = longs(parts[i], ":");
        }
      } else {
        for (int i = 0; i < files.length; i++) {
          chains[i] = files[i] < 0 ? new long[0] : new long[] {files[i]};
        }
      }
      return new Commit(
          Long.parseLong(value(lines[1], "version")),
          chains,
          Long.parseLong(value(lines[2], "rows_in")),
          Long.parseLong(value(lines[3], "rows_out")),
          lines.length > 5 ? Long.parseLong(value(lines[5], "last_seq")) : -1);
    }
  }

  private static long[] longs(String text, String separator) {
    if (text.isEmpty()) {
      return new long[0];
    }
    String[] parts = text.split(separator);
    long[] values = new long[parts.length];
    for (int i = 0; i < parts.length; i++) {
      values[i] = Long.parseLong(parts[i]);
    }
    return values;
  }

  private static String value(String line, String key) {
    if (!line.startsWith(key + "=")) {
      throw new IllegalArgumentException("expected " + key + "=, found " + line);
    }
    return line.substring(key.length() + 1);
  }
}
