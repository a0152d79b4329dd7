package windtunnel.spark;

import java.io.IOException;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.HashPartitioner;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.execution.LogicalRDD;
import org.apache.spark.util.CollectionAccumulator;
import org.apache.spark.util.SerializableConfiguration;

/**
 * One query of the production operator on one checkpoint, driven from the micro-batch
 * function the Python side hands to {@code foreachBatch}.
 *
 * <p>{@link #open} checks that the checkpoint may be resumed ({@link StateStore#verifyResume}:
 * Spark's progress without windtunnel's state, a corrupt state or one written in another
 * format or for another query is a {@link StateError} with one line) and creates the state
 * root of a new checkpoint. Per micro-batch {@code N}: {@link #outputs} builds the output rows
 * (map side {@link Pack}, a shuffle by key slice, {@link Step} per slice, which writes the
 * slice's version {@code N}: a delta of what changed, or a snapshot once its chain holds
 * {@link #deltasPerSnapshot} deltas); once the sink has them, {@link #commit} records version
 * {@code N} with each slice's chain and deletes what neither it nor version {@code N-1} needs. A micro-batch Spark
 * runs again after a restart starts from the newest committed version below it, as its first
 * attempt did.
 */
public final class ProductionRun {
  /** The Spark setting for how many deltas a slice's chain holds before its task writes a
   * snapshot instead (default {@value #DEFAULT_DELTAS}, as Spark's own store's
   * {@code minDeltasForSnapshot}): more writes less per micro-batch and reads more on a
   * restart. */
  public static final String DELTAS_SETTING = "spark.windtunnel.state.deltasPerSnapshot";
  static final int DEFAULT_DELTAS = 10;
  private final int deltasPerSnapshot;
  private final SparkSession spark;
  private final Plan plan;
  /** The Hadoop settings, for the driver's own file operations. */
  private final Configuration conf;
  /** The same for the tasks, sent once per query as Spark sends its own (a Spark class: the
   * value a local-mode task reads is the driver's object, which a class of this jar, loaded
   * once on the driver and once for the executors, could not be cast to), rather than with
   * every task: a Configuration is hundreds of gzip-compressed strings. */
  private final Broadcast<SerializableConfiguration> taskConf;
  private final String root;
  private final String token;
  private final CollectionAccumulator<long[]> reports;
  private long[] versions;
  /** The COMMIT read or written last (each micro-batch reads its base's). */
  private StateStore.Commit lastCommit;

  private ProductionRun(SparkSession spark, Plan plan, Configuration conf, String root, String token,
      long[] versions) {
    this.spark = spark;
    this.plan = plan;
    this.conf = conf;
    this.taskConf = JavaSparkContext.fromSparkContext(spark.sparkContext())
        .broadcast(new SerializableConfiguration(conf));
    this.root = root;
    this.token = token;
    this.versions = versions;
    this.reports = spark.sparkContext().collectionAccumulator("windtunnel slices");
    this.deltasPerSnapshot = deltasPerSnapshot(spark);
  }

  private static int deltasPerSnapshot(SparkSession spark) {
    String text = spark.conf().get(DELTAS_SETTING, Integer.toString(DEFAULT_DELTAS));
    try {
      int value = Integer.parseInt(text.trim());
      if (value >= 0) {
        return value;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new StateError(DELTAS_SETTING + "=" + text + " must be a whole number >= 0 (0: a"
        + " snapshot every micro-batch)");
  }

  /** Opens the checkpoint for the plan; throws StateError when it cannot be resumed. */
  public static ProductionRun open(SparkSession spark, String planJson, String checkpoint)
      throws IOException {
    Plan plan = Plan.parse(planJson);
    Configuration conf = spark.sparkContext().hadoopConfiguration();
    String problem = StateStore.verifyResume(conf, checkpoint, plan.fingerprint, plan.slices);
    if (problem != null) {
      throw new StateError(problem);
    }
    String root = StateStore.root(conf, checkpoint);
    StateStore.Meta meta = StateStore.readMeta(conf, root);
    if (meta == null) {
      meta = StateStore.createMeta(conf, root, plan.fingerprint, plan.slices);
    }
    return new ProductionRun(spark, plan, conf, root, meta.token,
        StateStore.committedVersions(conf, root));
  }

  public String root() {
    return root;
  }

  /** The newest committed version below {@code version}, or -1. */
  long baseOf(long version) {
    long base = -1;
    for (long v : versions) {
      if (v < version) {
        base = Math.max(base, v);
      }
    }
    return base;
  }

  /** Micro-batch {@code version}'s output rows (OUTPUT_DDL); computing them writes the slices'
   * new state. {@code systemMs}: the system clock the driver read for it (the plan's system
   * wall clock), else ignored. */
  public Dataset<Row> outputs(Dataset<Row> batch, long version, long systemMs) {
    return spark.createDataFrame(rows(batch, version, systemMs, null, null), OutputRows.of(plan));
  }

  /** Micro-batch {@code version}'s outputs written as files ({@code json} or {@code parquet},
   * one per slice with outputs) into {@code directory} by the slices' tasks: one Spark job,
   * no writer of Spark's and so no commit protocol of its own. */
  public void writeFiles(Dataset<Row> batch, long version, long systemMs, String format,
      String directory) {
    rows(batch, version, systemMs, format, directory).count();
  }

  private JavaRDD<Row> rows(Dataset<Row> batch, long version, long systemMs, String format,
      String directory) {
    long base = baseOf(version);
    StateStore.Commit previous = base < 0 ? null : commitOf(base);
    long[][] chains = previous == null ? null : previous.chains;
    long lastSeq = previous == null ? -1 : previous.lastSeq;
    reports.reset();
    Step step = new Step(plan, taskConf, root, token, version, base, chains, deltasPerSnapshot,
        reports, systemMs, lastSeq, format, directory);
    JavaPairRDD<Integer, byte[]> packed = PackInternal.covers(plan)
        ? internalRows(batch).toJavaRDD().mapPartitionsToPair(new PackInternal(plan))
        : batch.javaRDD().mapPartitionsToPair(new Pack(plan));
    return packed.partitionBy(new HashPartitioner(plan.slices)).mapPartitionsWithIndex(step, false);
  }

  /** The micro-batch's rows as Spark's internal rows. {@code foreachBatch} hands the
   * micro-batch over as a {@code LogicalRDD} over the rows its query computed: those rows
   * are read directly. Any other plan is executed ({@code toRdd}), which for a
   * {@code LogicalRDD} would copy every row into a new buffer once more. */
  static RDD<InternalRow> internalRows(Dataset<Row> batch) {
    LogicalPlan logical = batch.queryExecution().analyzed();
    if (logical instanceof LogicalRDD) {
      return ((LogicalRDD) logical).rdd();
    }
    return batch.queryExecution().toRdd();
  }

  /** Records version {@code version} (every slice written) with the micro-batch's rows in and
   * out, and returns them as {rows in, rows out, windows open after it}; throws StateError
   * when a slice did not
   * report (its task never ran: the outputs were not computed). */
  public long[] commit(long version) throws IOException {
    long base = baseOf(version);
    long[][] chains = new long[plan.slices][];
    StateStore.Commit before = base < 0 ? null : commitOf(base);
    long[][] previous = before == null ? null : before.chains;
    if (previous != null && previous.length != chains.length) {
      throw new StateError("slice count changed between versions " + base + " and " + version);
    }
    boolean[] seen = new boolean[plan.slices];
    long rowsIn = 0;
    long rowsOut = 0;
    long open = 0;
    long lastSeq = before == null ? -1 : before.lastSeq;
    List<long[]> got = reports.value();
    for (long[] report : got) {
      int slice = (int) report[0];
      if (!seen[slice]) {
        seen[slice] = true;
        rowsIn += report[1];
        rowsOut += report[2];
        open += report[5];
        chains[slice] = chainAfter(previous, slice, version, report[6]);
        lastSeq = Math.max(lastSeq, report[4]);
      }
    }
    for (int slice = 0; slice < plan.slices; slice++) {
      if (!seen[slice]) {
        throw new StateError("micro-batch " + version + ": slice " + slice
            + " did not report; its outputs were not computed");
      }
    }
    lastCommit = StateStore.commit(conf, root, version, chains, rowsIn, rowsOut, lastSeq);
    long[] kept = new long[versions.length + 1];
    int n = 0;
    for (long v : versions) {
      if (v != version) {
        kept[n++] = v;
      }
    }
    kept[n++] = version;
    versions = java.util.Arrays.copyOf(kept, n);
    StateStore.cleanup(conf, root, new long[] {base, version});
    long keepFrom = Math.min(base < 0 ? version : base, version);
    versions = java.util.Arrays.stream(versions).filter(v -> v >= keepFrom).toArray();
    return new long[] {rowsIn, rowsOut, open};
  }

  /** Slice {@code slice}'s chain after {@code version}, whose task wrote a snapshot
   * ({@code written} 1), a delta (0) or nothing (-1). */
  private static long[] chainAfter(long[][] previous, int slice, long version, long written) {
    long[] before = previous == null ? new long[0] : previous[slice];
    if (written == 1) {
      return new long[] {version};
    }
    if (written == 0) {
      long[] chain = java.util.Arrays.copyOf(before, before.length + 1);
      chain[before.length] = version;
      return chain;
    }
    return before;
  }

  private StateStore.Commit commitOf(long version) {
    if (lastCommit == null || lastCommit.version != version) {
      lastCommit = StateStore.readCommit(conf, root, version);
    }
    return lastCommit;
  }

  /** Forgets this run's slices in the slice caches (the query stopped): the driver's, and the
   * tasks' copy through a small job (best effort: on a cluster its tasks need not reach every
   * executor; the entries are bounded and held softly). */
  public void close() {
    SliceCache.release(root);
    taskConf.destroy();
    org.apache.spark.SparkContext sc = spark.sparkContext();
    if (!sc.isStopped()) {
      try {
        SliceCache.perCore(sc).foreach(new SliceCache.Release(root));
      } catch (RuntimeException stopping) {
        // best effort: the entries are held softly and bounded in number
      }
    }
  }
}
