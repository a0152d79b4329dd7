package windtunnel.spark;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.Partition;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.function.Function2;
import org.apache.spark.rdd.PartitionCoalescer;
import org.apache.spark.rdd.PartitionGroup;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Row;
import scala.Option;
import scala.Tuple2;

/**
 * A micro-batch without the shuffle, for an input partitioned by key: a plan with {@link
 * Plan#kafkaSlices}, whose input partitions each read one Kafka partition of a topic keyed by
 * the group key.
 *
 * <p>The packed map side is kept (persisted) and a first small job {@link Summarize}s every
 * input partition: the one slice its events belong to, and the blob it sends every other
 * slice (its wall-clock breakpoints and control rows, no events). When every partition's
 * events are in one slice, each slice's task reads its own partitions' blobs where they were
 * packed ({@link Groups}: a narrow dependency, no shuffle) and gets the other partitions'
 * shared blobs with the task; the slice sees exactly the blobs the shuffle would have
 * brought it. Otherwise (a partition holds keys of several slices: the topic is keyed by
 * something else, or its partition count changed) the kept blobs go through the shuffle.
 */
final class DirectSlices {
  private DirectSlices() {}

  /** One input partition's packing: the slice of its events (-1: none, -2: several), and the
   * blob it sends each slice without events of its own (null: nothing). */
  static final class Summary implements Serializable {
    private static final long serialVersionUID = 1L;
    final int partition;
    final int slice;
    final byte[] shared;

    Summary(int partition, int slice, byte[] shared) {
      this.partition = partition;
      this.slice = slice;
      this.shared = shared;
    }
  }

  /** The {@link Summary} of each packed partition, as {partition, slice, shared} (JDK types:
   * the driver reads collected values with another class loader than the tasks' jar). */
  static final class Summarize
      implements Function2<Integer, Iterator<Tuple2<Integer, byte[]>>, Iterator<Object[]>> {
    private static final long serialVersionUID = 1L;

    @Override
    public Iterator<Object[]> call(Integer partition, Iterator<Tuple2<Integer, byte[]>> blobs) {
      int slice = -1;
      byte[] shared = null;
      while (blobs.hasNext()) {
        Tuple2<Integer, byte[]> blob = blobs.next();
        long events = new Wire.In(blob._2()).varint();
        if (events == 0) {
          shared = blob._2();
        } else if (slice == -1) {
          slice = blob._1();
        } else if (slice != blob._1()) {
          slice = -2;
        }
      }
      return Collections.singletonList(new Object[] {partition, slice, shared}).iterator();
    }
  }

  /** Every packed partition's {@link Summary}: a small job over the kept blobs. */
  static List<Summary> summarize(JavaPairRDD<Integer, byte[]> packed) {
    List<Summary> summaries = new ArrayList<>();
    for (Object[] s : packed.mapPartitionsWithIndex(new Summarize(), false).collect()) {
      summaries.add(new Summary((Integer) s[0], (Integer) s[1], (byte[]) s[2]));
    }
    return summaries;
  }

  /** Per slice, the input partitions holding its events; null when a partition holds events
   * of several slices (the micro-batch needs the shuffle). */
  static int[][] groups(List<Summary> summaries, int slices) {
    List<List<Integer>> bySlice = new ArrayList<>();
    for (int s = 0; s < slices; s++) {
      bySlice.add(new ArrayList<>());
    }
    for (Summary summary : summaries) {
      if (summary.slice == -2) {
        return null;
      }
      if (summary.slice >= 0) {
        bySlice.get(summary.slice).add(summary.partition);
      }
    }
    int[][] groups = new int[slices][];
    for (int s = 0; s < slices; s++) {
      groups[s] = bySlice.get(s).stream().mapToInt(Integer::intValue).toArray();
    }
    return groups;
  }

  /** Task {@code s} of the coalesced input reads the partitions of {@code groups[s]}. */
  static final class Groups implements PartitionCoalescer, Serializable {
    private static final long serialVersionUID = 1L;
    private final int[][] groups;

    Groups(int[][] groups) {
      this.groups = groups;
    }

    @Override
    public PartitionGroup[] coalesce(int maxPartitions, RDD<?> parent) {
      Partition[] parts = parent.partitions();
      PartitionGroup[] out = new PartitionGroup[groups.length];
      for (int s = 0; s < groups.length; s++) {
        out[s] = new PartitionGroup(Option.empty());
        for (int p : groups[s]) {
          out[s].partitions().addOne(parts[p]);
        }
      }
      return out;
    }
  }

  /** Runs {@code step} per slice over its own partitions' blobs and every other partition's
   * shared blob. */
  static final class Direct
      implements Function2<Integer, Iterator<Tuple2<Integer, byte[]>>, Iterator<Row>> {
    private static final long serialVersionUID = 1L;
    private final Step step;
    private final List<Summary> summaries;

    Direct(Step step, List<Summary> summaries) {
      this.step = step;
      this.summaries = summaries;
    }

    @Override
    public Iterator<Row> call(Integer slice, Iterator<Tuple2<Integer, byte[]>> own) {
      List<Tuple2<Integer, byte[]>> blobs = new ArrayList<>();
      while (own.hasNext()) {
        Tuple2<Integer, byte[]> blob = own.next();
        if (blob._1().intValue() == slice) {
          blobs.add(blob);
        }
      }
      for (Summary summary : summaries) {
        if (summary.slice != slice && summary.shared != null) {
          blobs.add(new Tuple2<>(slice, summary.shared));
        }
      }
      return step.call(slice, blobs.iterator());
    }
  }

  /** The micro-batch's rows without a shuffle: one task per slice over its groups. */
  static JavaRDD<Row> run(JavaPairRDD<Integer, byte[]> packed, int[][] groups,
      List<Summary> summaries, Step step) {
    RDD<Tuple2<Integer, byte[]>> coalesced =
        packed.rdd().coalesce(groups.length, false, Option.apply(new Groups(groups)), null);
    return coalesced.toJavaRDD().mapPartitionsWithIndex(new Direct(step, summaries), false);
  }
}
