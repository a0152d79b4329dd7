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
  int events;
  int controls;

  /** One lane's timeline. */
  static final class Lane {
    int events;
    long[] seq = new long[16];
    Object[][] values = new Object[16][];
    Object[] payloads;
    int[] order;
    int breakpoints;
    long[] breakSeq = new long[16];
    long[] breakArrival = new long[16];
    final List<long[]> controlRows = new ArrayList<>();
    int controls;
    byte[] controlKind;
    long[] controlAfter;
    long[] controlArrival;

    void addEvent(long s, Object[] v, Object payload, boolean whole) {
      if (events == seq.length) {
        seq = Arrays.copyOf(seq, events * 2);
        values = Arrays.copyOf(values, events * 2);
        if (payloads != null) {
          payloads = Arrays.copyOf(payloads, events * 2);
        }
      }
      if (whole && payloads == null) {
        payloads = new Object[seq.length];
      }
      seq[events] = s;
      values[events] = v;
      if (whole) {
        payloads[events] = payload;
      }
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
    int width = plan.paths.size();
    while (blobs.hasNext()) {
      Wire.In blob = new Wire.In(blobs.next()._2());
      int n = (int) blob.varint();
      long lastSeq = 0;
      for (int i = 0; i < n; i++) {
        long laneId = blob.zigzag();
        lastSeq += blob.zigzag();
        Object[] row = new Object[width];
        for (int k = 0; k < width; k++) {
          row[k] = blob.value();
        }
        Object payload = plan.wholePayload ? blob.value() : null;
        in.lane(laneId).addEvent(lastSeq, row, payload, plan.wholePayload);
        in.events++;
      }
      int lanes = (int) blob.varint();
      for (int l = 0; l < lanes; l++) {
        Lane lane = in.lane(blob.zigzag());
        int kept = (int) blob.varint();
        long s = 0;
        long a = 0;
        for (int i = 0; i < kept; i++) {
          s += blob.zigzag();
          a += blob.zigzag();
          lane.addBreakpoint(s, a);
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
      }
    }
    for (Lane lane : in.lanes.values()) {
      lane.finish();
    }
    return in;
  }

  /** The payload of a lane's event {@code i} as a map (pass-through windows). */
  @SuppressWarnings("unchecked")
  static Map<String, Object> payload(Lane lane, int i) {
    return lane.payloads == null ? null : (Map<String, Object>) lane.payloads[i];
  }
}
