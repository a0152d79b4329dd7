package windtunnel.bench;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.HashPartitioner;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.function.FlatMapGroupsWithStateFunction;
import org.apache.spark.api.java.function.MapFunction;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.streaming.GroupState;
import org.apache.spark.sql.streaming.GroupStateTimeout;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.StatefulProcessor;
import org.apache.spark.sql.streaming.TTLConfig;
import org.apache.spark.sql.streaming.TimeMode;
import org.apache.spark.sql.streaming.TimerValues;
import org.apache.spark.sql.streaming.ValueState;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import scala.Tuple2;

/**
 * Floors of the designs tried for the production operator (benchmarks/spark_operators.py --floors):
 * each moves a micro-batch of (seq, arrival_ms, ts, k) rows through one design's machinery and
 * does no window logic, so no operator built on that design can be faster. Not shipped.
 */
public final class Floors {
  private Floors() {}

  static final StructType COUNT = new StructType().add("n", DataTypes.LongType);

  /** foreachBatch: the micro-batch read into the noop sink. */
  public static void noop(Dataset<Row> df, int slices) {
    df.write().format("noop").mode("append").save();
  }

  /** A Java task per input partition, no shuffle (a source partitioned by key). */
  public static long direct(Dataset<Row> df, int slices) {
    return sum(df.mapPartitions(countRows(), Encoders.row(COUNT)).collectAsList());
  }

  /** A row shuffle by key into ``slices`` partitions, then a Java task per partition. */
  public static long rows(Dataset<Row> df, int slices) {
    return sum(df.repartition(slices, df.col("k")).mapPartitions(countRows(), Encoders.row(COUNT))
        .collectAsList());
  }

  /** The production operator's machinery: rows packed into one blob per key slice and map
   * partition (zigzag varints), one shuffle of the blobs, a task per slice reading them. */
  public static long packed(Dataset<Row> df, int slices) {
    JavaPairRDD<Integer, byte[]> blobs = df.javaRDD().mapPartitionsToPair(rows -> {
      Packed[] out = new Packed[slices];
      for (int i = 0; i < slices; i++) {
        out[i] = new Packed();
      }
      while (rows.hasNext()) {
        Row r = rows.next();
        long k = r.getLong(3);
        Packed p = out[(int) Long.remainderUnsigned(mix(k), slices)];
        p.put(r.getLong(0));
        p.put(r.getLong(1));
        p.put(r.getLong(2));
        p.put(k);
      }
      List<Tuple2<Integer, byte[]>> found = new ArrayList<>();
      for (int i = 0; i < slices; i++) {
        found.add(new Tuple2<>(i, out[i].bytes.toByteArray()));
      }
      return found.iterator();
    }).partitionBy(new HashPartitioner(slices));
    long n = 0;
    for (Long count : blobs.mapPartitionsWithIndex((index, it) -> {
      long total = 0;
      while (it.hasNext()) {
        byte[] b = it.next()._2();
        for (byte x : b) {
          total += x & 1;
        }
      }
      return Collections.singletonList(total).iterator();
    }, false).collect()) {
      n += count;
    }
    return n;
  }

  /** flatMapGroupsWithState keyed by a hash bucket, a state blob per bucket. */
  public static Dataset<Row> fmgws(Dataset<Row> df, int buckets) {
    return df.groupByKey((MapFunction<Row, Integer>) r -> (int) Long.remainderUnsigned(mix(r.getLong(3)), buckets),
            Encoders.INT())
        .flatMapGroupsWithState(new ByBucket(), OutputMode.Append(), Encoders.BINARY(),
            Encoders.row(COUNT), GroupStateTimeout.NoTimeout());
  }

  /** transformWithState keyed by the key, a value per key. */
  public static Dataset<Row> twsKey(Dataset<Row> df, int slices) {
    return df.groupByKey((MapFunction<Row, Long>) r -> r.getLong(3), Encoders.LONG())
        .transformWithState(new PerKey(), TimeMode.None(), OutputMode.Append(), Encoders.row(COUNT));
  }

  static final class ByBucket implements FlatMapGroupsWithStateFunction<Integer, Row, byte[], Row> {
    @Override
    public Iterator<Row> call(Integer bucket, Iterator<Row> rows, GroupState<byte[]> state) {
      long n = 0;
      HashSet<Long> keys = new HashSet<>();
      while (rows.hasNext()) {
        keys.add(rows.next().getLong(3));
        n++;
      }
      byte[] old = state.exists() ? state.get() : new byte[0];
      state.update(java.util.Arrays.copyOf(old, Math.max(old.length, keys.size() * 24)));
      return Collections.singletonList(RowFactory.create(n)).iterator();
    }
  }

  static final class PerKey extends StatefulProcessor<Long, Row, Row> {
    private transient ValueState<byte[]> value;

    @Override
    public void init(OutputMode mode, TimeMode time) {
      value = getHandle().getValueState("s", Encoders.BINARY(), TTLConfig.NONE());
    }

    @Override
    public scala.collection.Iterator<Row> handleInputRows(Long key, scala.collection.Iterator<Row> rows,
        TimerValues timers) {
      while (rows.hasNext()) {
        rows.next();
      }
      value.update(value.exists() ? value.get() : new byte[24]);
      return scala.jdk.javaapi.CollectionConverters.asScala(Collections.<Row>emptyIterator());
    }
  }

  static final class Packed {
    final ByteArrayOutputStream bytes = new ByteArrayOutputStream(1 << 16);
    private final long[] last = new long[4];
    private int column;

    void put(long v) {
      long d = v - last[column];
      last[column] = v;
      column = (column + 1) & 3;
      long z = (d << 1) ^ (d >> 63);
      while ((z & ~0x7FL) != 0) {
        bytes.write((int) ((z & 0x7F) | 0x80));
        z >>>= 7;
      }
      bytes.write((int) z);
    }
  }

  static MapPartitionsFunction<Row, Row> countRows() {
    return rows -> {
      long n = 0;
      while (rows.hasNext()) {
        rows.next();
        n++;
      }
      return Collections.singletonList(RowFactory.create(n)).iterator();
    };
  }

  static long sum(List<Row> rows) {
    long n = 0;
    for (Row r : rows) {
      n += r.getLong(0);
    }
    return n;
  }

  static long mix(long h) {
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    h *= 0xc4ceb9fe1a85ec53L;
    h ^= h >>> 33;
    return h;
  }
}
