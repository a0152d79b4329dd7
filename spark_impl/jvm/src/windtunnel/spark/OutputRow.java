package windtunnel.spark;

import java.util.Arrays;

/**
 * One output row being built, reused row after row: per column of {@link OutputRows#SCHEMA}
 * (and the lane, last, when there is one) a text, a long, a boolean, or nothing (null). A
 * file sink writes it as it comes ({@link OutputFiles.Writer}), so a slice's rows never pile up
 * in memory as objects; {@link #toArray} gives the values for a Spark row.
 */
final class OutputRow {
  static final byte NULL = 0;
  static final byte TEXT = 1;
  static final byte LONG = 2;
  static final byte BOOL = 3;

  final byte[] kind;
  final long[] longs;
  final String[] texts;
  final boolean[] bools;

  OutputRow(int width) {
    kind = new byte[width];
    longs = new long[width];
    texts = new String[width];
    bools = new boolean[width];
  }

  int width() {
    return kind.length;
  }

  void clear() {
    Arrays.fill(kind, NULL);
  }

  void text(int column, String value) {
    if (value != null) {
      kind[column] = TEXT;
      texts[column] = value;
    }
  }

  void int64(int column, long value) {
    kind[column] = LONG;
    longs[column] = value;
  }

  /** {@code value} when {@code present}, else nothing (null). */
  void int64(int column, boolean present, long value) {
    if (present) {
      int64(column, value);
    }
  }

  void bool(int column, boolean value) {
    kind[column] = BOOL;
    bools[column] = value;
  }

  /** The values as objects (String, Long, Boolean or null), in column order. */
  Object[] toArray() {
    Object[] values = new Object[kind.length];
    for (int c = 0; c < values.length; c++) {
      switch (kind[c]) {
        case TEXT:
          values[c] = texts[c];
          break;
        case LONG:
          values[c] = longs[c];
          break;
        case BOOL:
          values[c] = bools[c];
          break;
        default:
          break;
      }
    }
    return values;
  }
}
