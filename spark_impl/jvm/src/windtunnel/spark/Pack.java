package windtunnel.spark;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.api.java.function.PairFlatMapFunction;
import org.apache.spark.sql.Row;
import scala.Tuple2;

/**
 * The map side of a micro-batch: each input partition's rows, read as events, packed into
 * one compact blob per key slice (so the shuffle moves a few large values instead of a row
 * per event).
 *
 * <p>A blob holds (1) the slice's events: lane, seq and the values of the plan's paths (and
 * the whole payload for pass-through windows), deltas as zigzag varints; (2) this partition's
 * wall-clock breakpoints per lane, sent to every slice: the events, in seq order, whose
 * arrival exceeds every earlier arrival of the partition in that lane (the lane's wall clock
 * at any seq is the largest arrival up to it, so the union of every partition's breakpoints
 * holds the lane's); (3) control rows ({@code clock}, {@code end}), also sent to every
 * slice. Slices that get none of these get no blob. A lane is an independent stream (its own
 * seq, wall clock and end of input); without a lane column every row is lane 0.
 *
 * <p>Typed columns named by a top-level path are read and written without boxing
 * ({@link Slots}); JSON payloads and nested paths go through the parsed payload.
 */
final class Pack implements PairFlatMapFunction<Iterator<Row>, Integer, byte[]> {
  private static final long serialVersionUID = 1L;
  private final Plan plan;

  Pack(Plan plan) {
    this.plan = plan;
  }

  /** Arrivals seen in one lane of this partition, for its breakpoints. */
  private static final class Arrivals {
    long[] seqs = new long[256];
    long[] arrivals = new long[256];
    int n;
    boolean ordered = true;

    void add(long seq, long arrival) {
      if (n == seqs.length) {
        seqs = Arrays.copyOf(seqs, n * 2);
        arrivals = Arrays.copyOf(arrivals, n * 2);
      }
      if (n > 0 && seq < seqs[n - 1]) {
        ordered = false;
      }
      seqs[n] = seq;
      arrivals[n] = arrival;
      n++;
    }
  }

  @Override
  public Iterator<Tuple2<Integer, byte[]>> call(Iterator<Row> rows) {
    int slices = plan.slices;
    RowEvents read = new RowEvents(plan);
    Slots slots = new Slots(plan);
    Wire.Out[] events = new Wire.Out[slices];
    int[] counts = new int[slices];
    long[] lastSeq = new long[slices];
    Map<Long, Arrivals> arrivalsByLane = new TreeMap<>();
    Arrivals current = null;
    long currentLane = Long.MIN_VALUE;
    Wire.Out controls = new Wire.Out(16);
    int controlCount = 0;
    Object[] values = slots.direct ? null : new Object[plan.paths.size()];
    Object[] key = new Object[plan.keySlots.length];
    while (rows.hasNext()) {
      Row row = rows.next();
      byte kind = read.kind(row);
      long lane = read.lane(row);
      long arrival = plan.systemWall ? Long.MIN_VALUE : read.arrival(row);
      if (kind != RowEvents.EVENT) {
        controls.put(kind);
        controls.zigzag(lane);
        controls.zigzag(read.afterSeq(row));
        controls.put(arrival == Long.MIN_VALUE ? 0 : 1);
        if (arrival != Long.MIN_VALUE) {
          controls.zigzag(arrival);
        }
        controlCount++;
        continue;
      }
      long seq = read.seq(row);
      long h = KeySlice.combine(KeySlice.SEED, KeySlice.hashLong(lane));
      Map<String, Object> payload = null;
      if (slots.direct) {
        h = slots.keyHash(row, h);
      } else {
        payload = read.payload(row);
        read.values(row, payload, values);
        for (int k = 0; k < plan.keySlots.length; k++) {
          key[k] = values[plan.keySlots[k]];
          h = KeySlice.combine(h, KeySlice.hash(key[k]));
        }
      }
      int slice = KeySlice.sliceOf(h, slices);
      Wire.Out out = events[slice];
      if (out == null) {
        out = events[slice] = new Wire.Out(4096);
      }
      out.zigzag(lane);
      out.zigzag(seq - lastSeq[slice]);
      lastSeq[slice] = seq;
      if (arrival != Long.MIN_VALUE) {
        if (lane != currentLane) {
          current = arrivalsByLane.computeIfAbsent(lane, l -> new Arrivals());
          currentLane = lane;
        }
        current.add(seq, arrival);
      }
      if (slots.direct) {
        slots.write(row, out);
      } else {
        for (Object value : values) {
          if (value instanceof RowEvents.TimeMs) {
            out.put(Wire.TIME_MS);
            out.zigzag(((RowEvents.TimeMs) value).ms);
          } else {
            out.value(value);
          }
        }
      }
      if (plan.wholePayload) {
        out.value(payload != null ? payload : read.payload(row));
      }
      counts[slice]++;
    }
    Wire.Out shared = new Wire.Out(64);
    shared.varint(arrivalsByLane.size());
    boolean tailMatters = controlCount > 0;
    for (Map.Entry<Long, Arrivals> lane : arrivalsByLane.entrySet()) {
      Arrivals a = lane.getValue();
      shared.zigzag(lane.getKey());
      breakpoints(a.seqs, a.arrivals, a.n, a.ordered, shared);
      tailMatters |= a.n > 0;
    }
    shared.varint(controlCount);
    shared.bytes(controls.toArray());
    byte[] tail = shared.toArray();
    List<Tuple2<Integer, byte[]>> blobs = new ArrayList<>();
    for (int slice = 0; slice < slices; slice++) {
      if (counts[slice] == 0 && !tailMatters) {
        continue;
      }
      Wire.Out blob = new Wire.Out((events[slice] == null ? 0 : events[slice].len) + tail.length + 8);
      blob.varint(counts[slice]);
      if (events[slice] != null) {
        blob.raw(events[slice]);
      }
      blob.bytes(tail);
      blobs.add(new Tuple2<>(slice, blob.toArray()));
    }
    return blobs.iterator();
  }

  /** One lane's breakpoints: in seq order, each event whose arrival exceeds every earlier
   * one, as (seq delta, arrival delta) zigzag varints after their count. */
  static void breakpoints(long[] seqs, long[] arrivals, int n, boolean ordered, Wire.Out out) {
    int[] order = ordered ? null : Order.byKey(seqs, n);
    long[] keptSeq = new long[n];
    long[] keptArrival = new long[n];
    int kept = 0;
    long max = Long.MIN_VALUE;
    for (int k = 0; k < n; k++) {
      int i = order == null ? k : order[k];
      if (arrivals[i] > max) {
        max = arrivals[i];
        keptSeq[kept] = seqs[i];
        keptArrival[kept] = arrivals[i];
        kept++;
      }
    }
    out.varint(kept);
    long lastSeq = 0;
    long lastArrival = 0;
    for (int k = 0; k < kept; k++) {
      out.zigzag(keptSeq[k] - lastSeq);
      out.zigzag(keptArrival[k] - lastArrival);
      lastSeq = keptSeq[k];
      lastArrival = keptArrival[k];
    }
  }
}
