package windtunnel.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Reading the plan's paths straight from typed columns, without boxing: each path that names
 * a top-level column is read by its type and written to the blob, and the group key's hash
 * is computed from the primitives with {@link KeySlice}'s functions (so it equals the hash of
 * the same values read any other way), from Spark's internal rows as the micro-batch's plan
 * produces them (strings stay UTF-8 bytes, timestamps microseconds). {@link #direct} is false
 * when an event needs its parsed payload (a JSON payload column, or a dotted path into a
 * struct): {@link Pack} reads those.
 */
final class Slots {
  private static final byte MISSING = 0;
  private static final byte LONG = 1;
  private static final byte INT = 2;
  private static final byte SHORT = 3;
  private static final byte BYTE = 4;
  private static final byte DOUBLE = 5;
  private static final byte FLOAT = 6;
  private static final byte STRING = 7;
  private static final byte BOOLEAN = 8;
  private static final byte TIMESTAMP = 9;

  final boolean direct;
  private final int[] column;
  private final byte[] kind;
  private final int[] keySlots;

  Slots(Plan plan) {
    int n = plan.paths.size();
    column = new int[n];
    kind = new byte[n];
    keySlots = plan.keySlots;
    boolean ok = plan.payload == Plan.Payload.COLUMNS;
    for (int i = 0; i < n && ok; i++) {
      String path = plan.paths.get(i);
      if (path.contains(".")) {
        ok = false;
        break;
      }
      column[i] = -1;
      kind[i] = MISSING;
      for (Plan.Column c : plan.columns) {
        if (c.name.equals(path)) {
          column[i] = c.index;
          kind[i] = kindOf(c.type);
          ok &= kind[i] != MISSING;
        }
      }
    }
    direct = ok;
  }

  private static byte kindOf(String type) {
    switch (type) {
      case "bigint":
        return LONG;
      case "int":
        return INT;
      case "smallint":
        return SHORT;
      case "tinyint":
        return BYTE;
      case "double":
        return DOUBLE;
      case "float":
        return FLOAT;
      case "string":
        return STRING;
      case "boolean":
        return BOOLEAN;
      case "timestamp":
        return TIMESTAMP;
      default:
        return MISSING;
    }
  }

  /** {@code h} combined with the hashes of the row's group key values. */
  long keyHash(InternalRow row, long h) {
    for (int slot : keySlots) {
      h = KeySlice.combine(h, hash(row, slot));
    }
    return h;
  }

  private long hash(InternalRow row, int slot) {
    int c = column[slot];
    if (c < 0 || row.isNullAt(c)) {
      return KeySlice.NULL_HASH;
    }
    switch (kind[slot]) {
      case LONG:
        return KeySlice.hashLong(row.getLong(c));
      case INT:
        return KeySlice.hashLong(row.getInt(c));
      case SHORT:
        return KeySlice.hashLong(row.getShort(c));
      case BYTE:
        return KeySlice.hashLong(row.getByte(c));
      case DOUBLE:
        return KeySlice.hashDouble(row.getDouble(c));
      case FLOAT:
        return KeySlice.hashDouble(Double.parseDouble(Float.toString(row.getFloat(c))));
      case STRING:
        return KeySlice.hashUtf8(row.getUTF8String(c));
      case BOOLEAN:
        return KeySlice.hashLong(row.getBoolean(c) ? 1 : 0);
      default:
        return KeySlice.hashLong(Math.floorDiv(row.getLong(c), 1000L));
    }
  }

  /** Writes every slot's value as {@link Wire} values. */
  void write(InternalRow row, Wire.Out out) {
    for (int slot = 0; slot < column.length; slot++) {
      int c = column[slot];
      if (c < 0 || row.isNullAt(c)) {
        out.put(Wire.NULL);
        continue;
      }
      switch (kind[slot]) {
        case LONG:
          out.put(Wire.LONG);
          out.zigzag(row.getLong(c));
          break;
        case INT:
          out.put(Wire.LONG);
          out.zigzag(row.getInt(c));
          break;
        case SHORT:
          out.put(Wire.LONG);
          out.zigzag(row.getShort(c));
          break;
        case BYTE:
          out.put(Wire.LONG);
          out.zigzag(row.getByte(c));
          break;
        case DOUBLE:
          out.put(Wire.DOUBLE);
          out.double64(row.getDouble(c));
          break;
        case FLOAT:
          out.put(Wire.DOUBLE);
          out.double64(Double.parseDouble(Float.toString(row.getFloat(c))));
          break;
        case STRING:
          out.put(Wire.STRING);
          out.utf8(row.getUTF8String(c));
          break;
        case BOOLEAN:
          out.put(row.getBoolean(c) ? Wire.TRUE : Wire.FALSE);
          break;
        default:
          out.put(Wire.TIME_MS);
          out.zigzag(Math.floorDiv(row.getLong(c), 1000L));
      }
    }
  }
}
