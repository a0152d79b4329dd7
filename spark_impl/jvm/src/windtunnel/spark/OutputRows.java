package windtunnel.spark;

import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/** The operator's output rows: one per emission or drop, the contract's JSON lines fields
 * flattened (as {@code windtunnel.spark_impl.schema.OUTPUT_DDL} names them). */
final class OutputRows {
  private OutputRows() {}

  static final StructType SCHEMA = new StructType()
      .add("type", DataTypes.StringType)
      .add("start_ms", DataTypes.LongType)
      .add("end_ms", DataTypes.LongType)
      .add("start_offset", DataTypes.LongType)
      .add("end_offset", DataTypes.LongType)
      .add("group", DataTypes.StringType)
      .add("row", DataTypes.StringType)
      .add("reason", DataTypes.StringType)
      .add("after_seq", DataTypes.LongType)
      .add("wall_ms", DataTypes.LongType)
      .add("partial", DataTypes.BooleanType)
      .add("seq", DataTypes.LongType)
      .add("windows", DataTypes.StringType)
      .add("message", DataTypes.StringType)
      .add("step", DataTypes.LongType)
      .add("group_first_seq", DataTypes.LongType)
      .add("emit_index", DataTypes.LongType);

  /** With a lane column (several independent streams in one query): the lane last. */
  static final StructType WITH_LANE = SCHEMA.add("lane", DataTypes.LongType);

  static StructType of(Plan plan) {
    return plan.lane >= 0 ? WITH_LANE : SCHEMA;
  }
}
