package windtunnel.spark;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import scala.Tuple2;

/**
 * One slice's share of a micro-batch, decoded from the blobs every map partition sent it
 * ({@link Pack}), per lane: the lane's events in seq order, its wall-clock breakpoints
 * (merged from every partition's: the running maximum's rises in seq order), and its control
 * rows in stream order.
 */
final class SliceInput {
  /** Every lane with something in this micro-batch, ascending. */
  final Map<Long, Lane> lanes = new TreeMap<>();
  /** The blobs, whose bytes the lanes' events point into. */
  final List<byte[]> blobs = new ArrayList<>();
  int events;
  int controls;
  /** Control rows that carry something (an end, or a clock row with its arrival); a clock
   * row without one only makes a micro-batch run (the system clock's ticks). */
  int meaningfulControls;

  /** One lane's timeline. */
  static final class Lane {
    int events;
    long[] seq = new long[16];
    /** Where event i's values start: blob {@code blob[i]} at offset {@code at[i]}. */
    int[] blob = new int[16];
    int[] at = new int[16];
    int[] order;
    int breakpoints;
    long[] breakSeq = new long[16];
    long[] breakArrival = new long[16];
    final List<long[]> controlRows = new ArrayList<>();
    int controls;
    byte[] controlKind;
    long[] controlAfter;
    long[] controlArrival;

    void addEvent(long s, int blobIndex, int offset) {
      if (events == seq.length) {
        seq = Arrays.copyOf(seq, events * 2);
        blob = Arrays.copyOf(blob, events * 2);
        at = Arrays.copyOf(at, events * 2);
      }
      seq[events] = s;
      blob[events] = blobIndex;
      at[events] = offset;
      events++;
    }

    void addBreakpoint(long s, long a) {
      if (breakpoints == breakSeq.length) {
        breakSeq = Arrays.copyOf(breakSeq, breakpoints * 2);
        breakArrival = Arrays.copyOf(breakArrival, breakpoints * 2);
      }
      breakSeq[breakpoints] = s;
      breakArrival[breakpoints] = a;
      breakpoints++;
    }

    /** Orders the events and breakpoints by seq, keeps the breakpoints' running maximum's
     * rises, and orders the control rows (clock rows, by arrival, before an end row). */
    void finish() {
      order = Order.byKey(seq, events);
      int[] byseq = Order.byKey(breakSeq, breakpoints);
      long[] s = new long[breakpoints];
      long[] a = new long[breakpoints];
      int kept = 0;
      long max = Long.MIN_VALUE;
      for (int k = 0; k < breakpoints; k++) {
        int i = byseq[k];
        if (breakArrival[i] > max) {
          max = breakArrival[i];
          s[kept] = breakSeq[i];
          a[kept] = breakArrival[i];
          kept++;
        }
      }
      breakSeq = s;
      breakArrival = a;
      breakpoints = kept;
      controlRows.sort((x, y) -> x[1] != y[1] ? Long.compare(x[1], y[1])
          : x[0] != y[0] ? Long.compare(x[0], y[0]) : Long.compare(x[2], y[2]));
      controls = controlRows.size();
      controlKind = new byte[controls];
      controlAfter = new long[controls];
      controlArrival = new long[controls];
      for (int i = 0; i < controls; i++) {
        long[] row = controlRows.get(i);
        controlKind[i] = (byte) row[0];
        controlAfter[i] = row[1];
        controlArrival[i] = row[2];
      }
    }
  }

  private Lane lane(long id) {
    return lanes.computeIfAbsent(id, k -> new Lane());
  }

  static SliceInput decode(Iterator<Tuple2<Integer, byte[]>> blobs, Plan plan) {
    SliceInput in = new SliceInput();
    int width = plan.paths.size() + (plan.wholePayload ? 1 : 0);
    while (blobs.hasNext()) {
      byte[] bytes = blobs.next()._2();
      int blobIndex = in.blobs.size();
      in.blobs.add(bytes);
      Wire.In blob = new Wire.In(bytes);
      int n = (int) blob.varint();
      long lastSeq = 0;
      Lane lane = null;
      long laneOf = Long.MIN_VALUE;
      for (int i = 0; i < n; i++) {
        long laneId = blob.zigzag();
        lastSeq += blob.zigzag();
        if (laneId != laneOf || lane == null) {
          lane = in.lane(laneId);
          laneOf = laneId;
        }
        lane.addEvent(lastSeq, blobIndex, blob.pos);
        for (int k = 0; k < width; k++) {
          blob.skipValue();
        }
        in.events++;
      }
      int lanes = (int) blob.varint();
      for (int l = 0; l < lanes; l++) {
        Lane timed = in.lane(blob.zigzag());
        int kept = (int) blob.varint();
        long s = 0;
        long a = 0;
        for (int i = 0; i < kept; i++) {
          s += blob.zigzag();
          a += blob.zigzag();
          timed.addBreakpoint(s, a);
        }
      }
      int controlCount = (int) blob.varint();
      for (int i = 0; i < controlCount; i++) {
        long kind = blob.get();
        long laneId = blob.zigzag();
        long after = blob.zigzag();
        long arrival = blob.get() == 1 ? blob.zigzag() : Long.MIN_VALUE;
        in.lane(laneId).controlRows.add(new long[] {kind, after, arrival});
        in.controls++;
        if (kind == RowEvents.END || arrival != Long.MIN_VALUE) {
          in.meaningfulControls++;
        }
      }
    }
    for (Lane lane : in.lanes.values()) {
      lane.finish();
    }
    return in;
  }

}
