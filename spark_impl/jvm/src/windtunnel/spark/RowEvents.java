package windtunnel.spark;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;

/**
 * Reading one input row as an event: its kind, seq, arrival, the values of the plan's paths
 * and, for pass-through windows, the whole payload, with the JSON values the oracle would
 * read from the same event.
 *
 * <p>A JSON payload column is parsed as Python's {@code json.loads} parses it (the engine's
 * parser). Typed columns are read as {@code to_json} of the row would give them to the
 * oracle (the general path's payload): integers as integers, doubles as doubles, floats by
 * their shortest decimal text (as {@code to_json} writes them), strings, booleans; a null
 * column is a missing field. Columns of other types never reach here: the Python side
 * turns such rows into a JSON payload with {@code to_json} first.
 */
final class RowEvents {
  static final byte EVENT = 0;
  static final byte CLOCK = 1;
  static final byte END = 2;

  private final Plan plan;
  private final int[] topColumn;
  private final String[][] rest;

  RowEvents(Plan plan) {
    this.plan = plan;
    int n = plan.paths.size();
    topColumn = new int[n];
    rest = new String[n][];
    for (int i = 0; i < n; i++) {
      String[] parts = plan.paths.get(i).split("\\.");
      topColumn[i] = -1;
      if (plan.payload == Plan.Payload.COLUMNS) {
        for (Plan.Column c : plan.columns) {
          if (c.name.equals(parts[0])) {
            topColumn[i] = c.index;
          }
        }
      }
      rest[i] = parts;
    }
  }

  /** The row's kind: {@link #EVENT} (also for a null kind), {@link #CLOCK} or {@link #END}. */
  byte kind(Row row) {
    if (plan.kind < 0 || row.isNullAt(plan.kind)) {
      return EVENT;
    }
    String kind = row.getString(plan.kind);
    switch (kind) {
      case "event":
        return EVENT;
      case "clock":
        return CLOCK;
      case "end":
        return END;
      default:
        throw new IllegalArgumentException(
            "kind=" + kind + ": not a row kind; use event, clock or end");
    }
  }

  long seq(Row row) {
    if (row.isNullAt(plan.seq)) {
      throw new IllegalArgumentException("seq is null: every event needs its stream position");
    }
    return ((Number) row.get(plan.seq)).longValue();
  }

  /** The arrival wall clock in ms, or Long.MIN_VALUE when the row has none. */
  long arrival(Row row) {
    if (plan.arrival < 0 || row.isNullAt(plan.arrival)) {
      return Long.MIN_VALUE;
    }
    return ((Number) row.get(plan.arrival)).longValue();
  }

  /** The row's lane (0 without a lane column). */
  long lane(Row row) {
    if (plan.lane < 0 || row.isNullAt(plan.lane)) {
      return 0;
    }
    return ((Number) row.get(plan.lane)).longValue();
  }

  /** A control row's after_seq (-1: before any event). */
  long afterSeq(Row row) {
    if (plan.afterSeq < 0 || row.isNullAt(plan.afterSeq)) {
      return -1;
    }
    return ((Number) row.get(plan.afterSeq)).longValue();
  }

  /** The payload as a map (JSON text parsed, or the typed columns), null for a JSON payload
   * column that is null. */
  @SuppressWarnings("unchecked")
  Map<String, Object> payload(Row row) {
    if (plan.payload == Plan.Payload.JSON) {
      if (row.isNullAt(plan.payloadColumn)) {
        return null;
      }
      Object parsed = EngineAdapter.parseJson(row.getString(plan.payloadColumn));
      return parsed instanceof Map ? (Map<String, Object>) parsed : null;
    }
    Map<String, Object> map = new LinkedHashMap<>();
    for (Plan.Column c : plan.columns) {
      Object value = column(row, c.index, c.type);
      if (value != null) {
        map.put(c.name, value);
      }
    }
    return map;
  }

  /** The plan's path values; {@code payload} is the parsed payload when the caller has it
   * (JSON rows, pass-through), else null and typed columns are read directly. */
  void values(Row row, Map<String, Object> payload, Object[] out) {
    for (int i = 0; i < out.length; i++) {
      if (payload == null && plan.payload == Plan.Payload.COLUMNS) {
        int index = topColumn[i];
        Object top = index < 0 ? null : column(row, index, plan.columns.get(columnOf(index)).type);
        out[i] = descend(top, rest[i], 1);
      } else {
        out[i] = payload == null ? null : descend(payload, rest[i], 0);
      }
    }
  }

  private int columnOf(int index) {
    List<Plan.Column> columns = plan.columns;
    for (int c = 0; c < columns.size(); c++) {
      if (columns.get(c).index == index) {
        return c;
      }
    }
    return -1;
  }

  private static Object descend(Object value, String[] parts, int from) {
    for (int i = from; i < parts.length; i++) {
      if (!(value instanceof Map)) {
        return null;
      }
      value = ((Map<?, ?>) value).get(parts[i]);
    }
    return value;
  }

  /** A typed column's value as the oracle reads it from {@code to_json}. */
  private static Object column(Row row, int index, String type) {
    if (row.isNullAt(index)) {
      return null;
    }
    switch (type) {
      case "bigint":
        return row.getLong(index);
      case "int":
        return (long) row.getInt(index);
      case "smallint":
        return (long) row.getShort(index);
      case "tinyint":
        return (long) row.getByte(index);
      case "double":
        return row.getDouble(index);
      case "float":
        return Double.parseDouble(Float.toString(row.getFloat(index)));
      case "string":
        return row.getString(index);
      case "boolean":
        return row.getBoolean(index);
      case "timestamp": {
        Object t = row.get(index);
        if (t instanceof java.time.Instant) {
          return new TimeMs(((java.time.Instant) t).toEpochMilli());
        }
        return new TimeMs(((java.sql.Timestamp) t).getTime());
      }
      default:
        throw new IllegalArgumentException("column type " + type + " is read as JSON text");
    }
  }

  /** A timestamp column's value: epoch ms (the time field only). */
  static final class TimeMs {
    final long ms;

    TimeMs(long ms) {
      this.ms = ms;
    }
  }
}
