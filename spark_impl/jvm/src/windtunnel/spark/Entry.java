package windtunnel.spark;

import java.io.IOException;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.Iterator;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.HashPartitioner;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.function.Function2;
import org.apache.spark.api.java.function.PairFlatMapFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.SparkSession;

/**
 * The one static entry point Python calls (through a class loader of its own:
 * {@code windtunnel.spark_impl.jvm.binding}): {@code call(name, args)}.
 *
 * <ul>
 *   <li>{@code selfCheck(engineSpec, values)}: touches every Spark and Hadoop API the operator
 *       uses and runs the engine on one event of that query; throws a LinkageError or an exception when this jar does
 *       not fit the running Spark;
 *   <li>{@code open(SparkSession, planJson, checkpoint)}: a {@link ProductionRun};
 *   <li>{@code storedSlices(SparkSession, checkpoint)}: the slice count a checkpoint's state
 *       was started with, or -1;
 * </ul>
 */
public final class Entry {
  private Entry() {}

  public static Object call(String name, Object[] args) throws Exception {
    switch (name) {
      case "selfCheck":
        selfCheck((String) args[0], (Object[]) args[1]);
        return "ok";
      case "open":
        return ProductionRun.open((SparkSession) args[0], (String) args[1], (String) args[2]);
      case "storedSlices": {
        Configuration conf = ((SparkSession) args[0]).sparkContext().hadoopConfiguration();
        try {
          StateStore.Meta meta = StateStore.readMeta(conf, StateStore.root(conf, (String) args[1]));
          return meta == null ? -1 : meta.slices;
        } catch (StateError unusable) {
          return -1; // open() says what is wrong with it
        }
      }
      case "cachedSlices": // the slices of a state root the tasks keep in memory
        return SliceCache.countInTasks(((SparkSession) args[0]).sparkContext(),
            StateStore.root(((SparkSession) args[0]).sparkContext().hadoopConfiguration(),
                (String) args[1]));
      default:
        throw new IllegalArgumentException("no entry " + name);
    }
  }

  /** Fails when this jar does not link with the running Spark (see the class comment). */
  static void selfCheck(String engineSpec, Object[] values) throws Exception {
    // the Spark API surface the operator uses, resolved now rather than mid-query
    JavaRDD.class.getMethod("mapPartitionsToPair", PairFlatMapFunction.class);
    JavaPairRDD.class.getMethod("partitionBy", org.apache.spark.Partitioner.class);
    JavaPairRDD.class.getMethod("mapPartitionsWithIndex", Function2.class, boolean.class);
    Dataset.class.getMethod("javaRDD");
    Dataset.class.getMethod("queryExecution");
    org.apache.spark.sql.execution.QueryExecution.class.getMethod("toRdd");
    org.apache.spark.sql.execution.QueryExecution.class.getMethod("analyzed");
    org.apache.spark.sql.execution.LogicalRDD.class.getMethod("rdd");
    org.apache.spark.sql.catalyst.InternalRow.class.getMethod("getUTF8String", int.class);
    String text = "user-\u00e9\u4e2d";
    if (KeySlice.hashString(text) != KeySlice.hashUtf8(
        org.apache.spark.unsafe.types.UTF8String.fromString(text))) {
      throw new IllegalStateException("a string key hashes differently from its UTF-8 text");
    }
    SparkSession.class.getMethod("createDataFrame", JavaRDD.class,
        org.apache.spark.sql.types.StructType.class);
    new HashPartitioner(2).getPartition(7);
    OutputRows.SCHEMA.fieldNames();
    Iterator<?> none = java.util.Collections.emptyIterator();
    none.hasNext();
    // the state store on a local file system
    java.nio.file.Path tmp = Files.createTempDirectory("windtunnel-selfcheck-");
    try {
      Configuration conf = new Configuration(false);
      String root = StateStore.root(conf, tmp.toUri().toString());
      StateStore.writeSlice(conf, root, "check", 0, 0, new byte[] {1, 2, 3});
      if (!Arrays.equals(StateStore.readSlice(conf, root, "check", 0, 0), new byte[] {1, 2, 3})) {
        throw new IllegalStateException("the state store read back other bytes");
      }
    } finally {
      FileSystem.getLocal(new Configuration(false)).delete(new Path(tmp.toUri()), true);
    }
    EngineAdapter.selfCheck(engineSpec, values);
  }
}
