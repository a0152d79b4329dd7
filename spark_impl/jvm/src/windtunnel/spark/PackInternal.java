package windtunnel.spark;

import java.util.Iterator;
import org.apache.spark.api.java.function.PairFlatMapFunction;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.unsafe.types.UTF8String;
import scala.Tuple2;

/**
 * The map side of a micro-batch over Spark's internal rows, for plans whose every path is a
 * typed top-level column and that need no whole payload ({@link Slots#direct}): no
 * {@code Row} objects, no boxing, strings hashed and copied as their UTF-8 bytes. The rows
 * come from the micro-batch's own plan ({@link ProductionRun#internalRows}, part of the
 * jar's self-check); values are read before the next row (Spark reuses row buffers).
 */
final class PackInternal implements PairFlatMapFunction<Iterator<InternalRow>, Integer, byte[]> {
  private static final long serialVersionUID = 1L;
  private static final UTF8String EVENT = UTF8String.fromString("event");
  private static final UTF8String CLOCK = UTF8String.fromString("clock");
  private static final UTF8String END = UTF8String.fromString("end");
  private final Plan plan;

  PackInternal(Plan plan) {
    this.plan = plan;
  }

  /** Whether {@code plan}'s events can be read this way. */
  static boolean covers(Plan plan) {
    return new Slots(plan).direct && !plan.wholePayload;
  }

  @Override
  public Iterator<Tuple2<Integer, byte[]>> call(Iterator<InternalRow> rows) {
    Slots slots = new Slots(plan);
    Packer packer = new Packer(plan.slices);
    int kindColumn = plan.kind;
    int laneColumn = plan.lane;
    int arrivalColumn = plan.systemWall ? -1 : plan.arrival;
    while (rows.hasNext()) {
      InternalRow row = rows.next();
      byte kind = kind(row, kindColumn);
      long lane = laneColumn < 0 || row.isNullAt(laneColumn) ? 0 : row.getLong(laneColumn);
      long arrival = arrivalColumn < 0 || row.isNullAt(arrivalColumn)
          ? Long.MIN_VALUE : row.getLong(arrivalColumn);
      if (kind != RowEvents.EVENT) {
        long after = plan.afterSeq < 0 || row.isNullAt(plan.afterSeq) ? -1 : row.getLong(plan.afterSeq);
        packer.control(kind, lane, after, arrival);
        continue;
      }
      if (row.isNullAt(plan.seq)) {
        throw new IllegalArgumentException("seq is null: every event needs its stream position");
      }
      long seq = row.getLong(plan.seq);
      long h = slots.keyHash(row, KeySlice.combine(KeySlice.SEED, KeySlice.hashLong(lane)));
      slots.write(row, packer.event(h, lane, seq, arrival));
    }
    return packer.blobs().iterator();
  }

  private static byte kind(InternalRow row, int column) {
    if (column < 0 || row.isNullAt(column)) {
      return RowEvents.EVENT;
    }
    UTF8String kind = row.getUTF8String(column);
    if (kind.equals(EVENT)) {
      return RowEvents.EVENT;
    }
    if (kind.equals(CLOCK)) {
      return RowEvents.CLOCK;
    }
    if (kind.equals(END)) {
      return RowEvents.END;
    }
    throw new IllegalArgumentException("kind=" + kind + ": not a row kind; use event, clock or end");
  }
}
