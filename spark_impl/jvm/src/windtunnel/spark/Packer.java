package windtunnel.spark;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import scala.Tuple2;

/**
 * One input partition's events packed into one compact blob per key slice (the map side of a
 * micro-batch; {@link Pack} and {@link PackInternal} read the rows and feed it).
 *
 * <p>A blob holds (1) the slice's events: lane, seq and the values of the plan's paths (and
 * the whole payload for pass-through windows), deltas as zigzag varints; (2) this partition's
 * wall-clock breakpoints per lane, sent to every slice: the events, in seq order, whose
 * arrival exceeds every earlier arrival of the partition in that lane (the lane's wall clock
 * at any seq is the largest arrival up to it, so the union of every partition's breakpoints
 * holds the lane's); (3) control rows ({@code clock}, {@code end}), also sent to every
 * slice. Slices that get none of these get no blob. A lane is an independent stream (its own
 * seq, wall clock and end of input); without a lane column every row is lane 0.
 */
final class Packer {
  private final int slices;
  private final Wire.Out[] events;
  private final int[] counts;
  private final long[] lastSeq;
  private final Map<Long, Arrivals> arrivalsByLane = new TreeMap<>();
  private Arrivals current;
  private long currentLane = Long.MIN_VALUE;
  private final Wire.Out controls = new Wire.Out(16);
  private int controlCount;

  Packer(int slices) {
    this.slices = slices;
    this.events = new Wire.Out[slices];
    this.counts = new int[slices];
    this.lastSeq = new long[slices];
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

  /** A control row of {@code kind} ({@link RowEvents#CLOCK} or {@link RowEvents#END}). */
  void control(byte kind, long lane, long afterSeq, long arrival) {
    controls.put(kind);
    controls.zigzag(lane);
    controls.zigzag(afterSeq);
    controls.put(arrival == Long.MIN_VALUE ? 0 : 1);
    if (arrival != Long.MIN_VALUE) {
      controls.zigzag(arrival);
    }
    controlCount++;
  }

  /** Starts an event of the key with hash {@code keyHash}: returns the buffer its values
   * go to (the caller writes exactly the plan's values, then the payload if needed). */
  Wire.Out event(long keyHash, long lane, long seq, long arrival) {
    int slice = KeySlice.sliceOf(keyHash, slices);
    Wire.Out out = events[slice];
    if (out == null) {
      out = events[slice] = new Wire.Out(1 << 16);
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
    counts[slice]++;
    return out;
  }

  /** The blobs, one per slice that gets something. */
  List<Tuple2<Integer, byte[]>> blobs() {
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
    shared.raw(controls);
    List<Tuple2<Integer, byte[]>> blobs = new ArrayList<>();
    for (int slice = 0; slice < slices; slice++) {
      if (counts[slice] == 0 && !tailMatters) {
        continue;
      }
      Wire.Out blob = new Wire.Out((events[slice] == null ? 0 : events[slice].len) + shared.len + 8);
      blob.varint(counts[slice]);
      if (events[slice] != null) {
        blob.raw(events[slice]);
      }
      blob.raw(shared);
      blobs.add(new Tuple2<>(slice, blob.toArray()));
    }
    return blobs;
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
