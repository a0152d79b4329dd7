package windtunnel.spark;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.function.Function2;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.util.CollectionAccumulator;
import org.apache.spark.util.SerializableConfiguration;
import scala.Tuple2;

/**
 * The reduce side of a micro-batch: one task per key slice runs the engine over the slice's
 * events in stream order, with the stream's wall clock moving where the oracle's does, and
 * writes the slice's new state version on the checkpoint's file system.
 *
 * <p>Per lane of the slice ({@link SliceInput}), the engine sees, in stream order: a
 * {@code clock} row at step {@code 2*(after_seq+1)}, then the wall clock moving to an
 * event's arrival right before it (also step {@code 2*seq}, after_seq = seq - 1), then the
 * event at {@code 2*seq+1}; an {@code end} row flushes the lane. The slice's state (one
 * engine state per lane) comes from this executor's cache when it holds the base version,
 * else from the files of its chain ({@link StateStore}); when anything changed it is written
 * as version {@code version}: a delta of the keys each lane changed, or a snapshot of every
 * lane when the slice has no file yet or its chain holds {@code deltasPerSnapshot} deltas
 * ({@link StateStore}). It is reported to the driver (slice, events, outputs, the version of
 * the slice's newest file, whether a snapshot or a delta was written), which commits the
 * version once every slice is written.
 * The outputs are the task's rows, or, for a file sink, the slice's output file
 * ({@link OutputFiles}).
 */
final class Step implements Function2<Integer, Iterator<Tuple2<Integer, byte[]>>, Iterator<Row>> {
  private static final long serialVersionUID = 1L;
  private final Plan plan;
  private final Broadcast<SerializableConfiguration> conf;
  private final String root;
  private final String token;
  private final long version;
  private final long baseVersion;
  /** Per slice, the base version's chain (null: no base). */
  private final long[][] baseChains;
  private final int deltasPerSnapshot;
  private final CollectionAccumulator<long[]> reports;
  private final long systemMs;
  private final long lastSeqBefore;
  /** Output files instead of rows: {@code json} or {@code parquet} into {@link #directory}. */
  private final String fileFormat;
  private final String directory;

  Step(Plan plan, Broadcast<SerializableConfiguration> conf, String root, String token, long version, long baseVersion,
      long[][] baseChains, int deltasPerSnapshot, CollectionAccumulator<long[]> reports,
      long systemMs, long lastSeqBefore, String fileFormat, String directory) {
    this.plan = plan;
    this.conf = conf;
    this.root = root;
    this.token = token;
    this.version = version;
    this.baseVersion = baseVersion;
    this.baseChains = baseChains;
    this.deltasPerSnapshot = deltasPerSnapshot;
    this.reports = reports;
    this.systemMs = systemMs;
    this.lastSeqBefore = lastSeqBefore;
    this.fileFormat = fileFormat;
    this.directory = directory;
  }

  @Override
  public Iterator<Row> call(Integer slice, Iterator<Tuple2<Integer, byte[]>> blobs) {
    boolean lanes = plan.lane >= 0;
    if (fileFormat == null) {
      List<Object[]> out = new ArrayList<>();
      run(slice, blobs, EngineAdapter.Rows.collecting(out, lanes));
      List<Row> rowsOut = new ArrayList<>(out.size());
      for (Object[] values : out) {
        rowsOut.add(RowFactory.create(values));
      }
      return rowsOut.iterator();
    }
    OutputFiles.Writer file = new OutputFiles.Writer(conf.value().value(), directory, version,
        slice, fileFormat, OutputRows.of(plan));
    try {
      run(slice, blobs, new EngineAdapter.Rows(file, lanes));
    } catch (RuntimeException | Error e) {
      file.abort();
      throw e;
    }
    file.finish();
    return java.util.Collections.emptyIterator();
  }

  /** Runs the slice's micro-batch, its outputs into {@code rows}; writes and reports the
   * slice's new state. */
  private void run(int slice, Iterator<Tuple2<Integer, byte[]>> blobs, EngineAdapter.Rows rows) {
    SliceInput input = SliceInput.decode(blobs, plan);
    if (plan.lane < 0) {
      continuesTheStream(input);
    }
    EngineAdapter engine = EngineAdapter.forSpec(plan.engineSpec);
    long[] chain = baseChains == null || slice >= baseChains.length ? new long[0]
        : baseChains[slice];
    long file = chain.length == 0 ? -1 : chain[chain.length - 1];
    int sizeHint = SliceCache.bytes(root, token, slice);
    @SuppressWarnings("unchecked")
    Map<Long, Object> lanes = (Map<Long, Object>) SliceCache.take(root, token, slice, baseVersion);
    if (lanes == null) {
      lanes = new TreeMap<>();
      List<byte[]> stored =
          StateStore.readChain(conf.value().value(), root, plan.fingerprint, chain, slice);
      for (byte[] payload : stored) {
        apply(engine, lanes, payload);
      }
      sizeHint = stored.isEmpty() ? 0 : stored.get(0).length + 128;
    }
    long maxSeq = -1;
    if (plan.systemWall) {
      // the micro-batch arrives when the driver read the system clock: every lane's wall
      // clock moves there first (idle windows close, also in lanes without input)
      input.lanes.computeIfAbsent(0L, k -> emptyLane());
      for (Map.Entry<Long, Object> lane : lanes.entrySet()) {
        input.lanes.computeIfAbsent(lane.getKey(), k -> emptyLane());
      }
    }
    java.util.Set<Long> changedLanes = new java.util.TreeSet<>();
    for (Map.Entry<Long, SliceInput.Lane> entry : input.lanes.entrySet()) {
      Object state = lanes.get(entry.getKey());
      boolean laneChanged = false;
      if (state == null) {
        state = engine.fresh();
        lanes.put(entry.getKey(), state);
        laneChanged = true;
      }
      long wallBefore = engine.wall(state);
      SliceInput.Lane lane = entry.getValue();
      rows.lane = entry.getKey();
      if (plan.systemWall) {
        engine.wall(state, systemMs, lastSeqBefore, rows);
      }
      drive(engine, state, lane, input.blobs, rows);
      for (int i = 0; i < lane.events; i++) {
        maxSeq = Math.max(maxSeq, lane.seq[i]);
      }
      laneChanged |= lane.events > 0 || lane.controls > 0 || engine.wall(state) != wallBefore;
      if (laneChanged) {
        changedLanes.add(entry.getKey());
      }
    }
    boolean changed = !changedLanes.isEmpty();
    long written = -1;
    if (file < 0 || (changed && chain.length > deltasPerSnapshot)) {
      SliceFile out = new SliceFile(plan.fingerprint, version, slice, sizeHint + sizeHint / 8);
      encode(engine, lanes, out);
      StateStore.writeSliceOrFail(conf.value().value(), root, out);
      sizeHint = out.position();
      file = version;
      written = 1;
    } else if (changed) {
      SliceFile out = new SliceFile(plan.fingerprint, version, slice, 1 << 16);
      encodeDelta(engine, lanes, changedLanes, out);
      StateStore.writeSliceOrFail(conf.value().value(), root, out);
      file = version;
      written = 0;
    }
    SliceCache.put(root, token, slice, version, lanes, sizeHint);
    if (TaskContext.get() != null) {
      // rows read: the slice's events, and the control rows (every slice gets each) once
      long rowsIn = input.events + (slice == 0 ? input.meaningfulControls : 0);
      long open = 0;
      for (Object state : lanes.values()) {
        open += engine.openWindows(state);
      }
      reports.add(new long[] {slice, rowsIn, rows.count, file, maxSeq, open, written});
    }
  }

  /** Every event comes after the stream's last seq of the micro-batches before (checked in
   * every slice against the stream's last seq, not the slice's own: another slice's keys may
   * already be ahead). Throws IllegalArgumentException otherwise. */
  private void continuesTheStream(SliceInput input) {
    for (SliceInput.Lane lane : input.lanes.values()) {
      for (int i = 0; i < lane.events; i++) {
        if (lane.seq[i] <= lastSeqBefore) {
          throw new IllegalArgumentException("event seq " + lane.seq[i] + " came after seq "
              + lastSeqBefore + " of an earlier micro-batch: every micro-batch must continue "
              + "the stream in seq order (a Kafka read capped per partition, "
              + "maxOffsetsPerTrigger, cuts it elsewhere; read without the cap)");
        }
      }
    }
  }

  private static SliceInput.Lane emptyLane() {
    SliceInput.Lane lane = new SliceInput.Lane();
    lane.finish();
    return lane;
  }

  /** Runs one lane's timeline through the engine. */
  static void drive(EngineAdapter engine, Object state, SliceInput.Lane in, List<byte[]> blobs,
      EngineAdapter.Rows rows) {
    Wire.In[] cursors = new Wire.In[blobs.size()];
    for (int i = 0; i < cursors.length; i++) {
      cursors[i] = new Wire.In(blobs.get(i));
    }
    int e = 0;
    int b = 0;
    int c = 0;
    while (e < in.events || b < in.breakpoints || c < in.controls) {
      long eventStep = e < in.events ? 2 * in.seq[in.order[e]] + 1 : Long.MAX_VALUE;
      long breakStep = b < in.breakpoints ? 2 * in.breakSeq[b] : Long.MAX_VALUE;
      long controlStep = c < in.controls ? 2 * (in.controlAfter[c] + 1) : Long.MAX_VALUE;
      if (controlStep <= breakStep && controlStep <= eventStep) {
        long after = in.controlAfter[c];
        if (in.controlKind[c] == RowEvents.END) {
          engine.end(state, after, rows);
        } else if (in.controlArrival[c] != Long.MIN_VALUE) {
          engine.wall(state, in.controlArrival[c], after, rows);
        }
        c++;
      } else if (breakStep < eventStep) {
        engine.wall(state, in.breakArrival[b], in.breakSeq[b] - 1, rows);
        b++;
      } else {
        int i = in.order[e];
        Wire.In cursor = cursors[in.blob[i]];
        cursor.pos = in.at[i];
        engine.event(state, in.seq[i], cursor, rows);
        e++;
      }
    }
  }

  /** A slice's state: per lane, the engine's own bytes, written into {@code file}'s payload
   * in place (each lane's length filled in after its bytes). */
  static void encode(EngineAdapter engine, Map<Long, Object> lanes, SliceFile file) {
    try {
      DataOutputStream out = file.data;
      out.writeInt(lanes.size());
      for (Map.Entry<Long, Object> lane : lanes.entrySet()) {
        out.writeLong(lane.getKey());
        int lengthAt = file.position();
        out.writeInt(0);
        engine.writeState(lane.getValue(), file);
        file.putInt(lengthAt, file.position() - lengthAt - 4);
      }
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A delta of a slice's state: per lane in {@code changed}, the engine's update (the keys
   * changed and removed since the lane's last write), in {@link #encode}'s layout. */
  static void encodeDelta(EngineAdapter engine, Map<Long, Object> lanes,
      java.util.Set<Long> changed, SliceFile file) {
    try {
      DataOutputStream out = file.data;
      out.writeInt(changed.size());
      for (long lane : changed) {
        out.writeLong(lane);
        int lengthAt = file.position();
        out.writeInt(0);
        engine.writeUpdate(lanes.get(lane), file);
        file.putInt(lengthAt, file.position() - lengthAt - 4);
      }
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Applies a slice file's payload (a snapshot's lanes, or a delta's) onto {@code lanes}. */
  static void apply(EngineAdapter engine, Map<Long, Object> lanes, byte[] payload) {
    try (DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(payload))) {
      int n = in.readInt();
      for (int i = 0; i < n; i++) {
        long lane = in.readLong();
        byte[] state = new byte[in.readInt()];
        in.readFully(state);
        lanes.put(lane, engine.apply(lanes.get(lane), state));
      }
    } catch (IOException e) {
      throw new StateError("a slice state is cut short: " + e.getMessage());
    }
  }
}
