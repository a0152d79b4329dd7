package windtunnel.spark;

import java.util.Iterator;
import java.util.Map;
import org.apache.spark.api.java.function.PairFlatMapFunction;
import org.apache.spark.sql.Row;
import scala.Tuple2;

/**
 * The map side of a micro-batch over Spark's public {@link Row}s: every plan, JSON payloads
 * and dotted paths included (typed top-level columns take {@link PackInternal}, which reads
 * Spark's internal rows without building objects). Rows become events and control rows of a
 * {@link Packer}.
 */
final class Pack implements PairFlatMapFunction<Iterator<Row>, Integer, byte[]> {
  private static final long serialVersionUID = 1L;
  private final Plan plan;

  Pack(Plan plan) {
    this.plan = plan;
  }

  @Override
  public Iterator<Tuple2<Integer, byte[]>> call(Iterator<Row> rows) {
    RowEvents read = new RowEvents(plan);
    Packer packer = new Packer(plan.slices);
    Object[] values = new Object[plan.paths.size()];
    while (rows.hasNext()) {
      Row row = rows.next();
      byte kind = read.kind(row);
      long lane = read.lane(row);
      long arrival = plan.systemWall ? Long.MIN_VALUE : read.arrival(row);
      if (kind != RowEvents.EVENT) {
        packer.control(kind, lane, read.afterSeq(row), arrival);
        continue;
      }
      long seq = read.seq(row);
      Map<String, Object> payload = read.payload(row);
      read.values(row, payload, values);
      long h = KeySlice.combine(KeySlice.SEED, KeySlice.hashLong(lane));
      for (int slot : plan.keySlots) {
        h = KeySlice.combine(h, KeySlice.hash(values[slot]));
      }
      Wire.Out out = packer.event(h, lane, seq, arrival);
      for (Object value : values) {
        if (value instanceof RowEvents.TimeMs) {
          out.put(Wire.TIME_MS);
          out.zigzag(((RowEvents.TimeMs) value).ms);
        } else {
          out.value(value);
        }
      }
      if (plan.wholePayload) {
        out.value(payload);
      }
    }
    return packer.blobs().iterator();
  }
}
