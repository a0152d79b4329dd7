package windtunnel.flink;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.TableDescriptor;
import org.apache.flink.table.api.bridge.java.StreamStatementSet;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;

/**
 * Times Flink SQL jobs on one MiniCluster (benchmarks/nexmark.py's Flink side; not part of
 * the product's jar).
 *
 * <p>Arguments: {@code PARALLELISM NAME=FILE...}. Each FILE holds SQL statements separated by
 * {@code ;}: {@code CREATE TABLE}s, then one query, whose rows go to a {@code blackhole} sink. The jobs run one after
 * another, in argument order, at PARALLELISM on a MiniCluster with that many slots, kept for
 * the JVM's life (warm runs are the caller's: name them and ignore their times). Periodic
 * watermarks every 200 ms (Flink's default). Each job is timed from planning the query to
 * the job's end (its bounded sources read to the end); prints {@code NAME<TAB>SECONDS}.
 */
public final class NexmarkBench {
    private NexmarkBench() {}

    static List<String> statements(String path) throws Exception {
        List<String> out = new ArrayList<>();
        for (String part : new String(Files.readAllBytes(Paths.get(path)), StandardCharsets.UTF_8).split(";")) {
            if (!part.trim().isEmpty()) {
                out.add(part.trim());
            }
        }
        return out;
    }

    static double run(MiniCluster cluster, int parallelism, List<String> sql) throws Exception {
        Configuration conf = Harness.clusterConfiguration();
        conf.set(PipelineOptions.AUTO_WATERMARK_INTERVAL, Duration.ofMillis(200));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(parallelism, conf);
        StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
        for (String statement : sql.subList(0, sql.size() - 1)) {
            tEnv.executeSql(statement);
        }
        long started = System.nanoTime();
        StreamStatementSet set = tEnv.createStatementSet();
        set.addInsert(TableDescriptor.forConnector("blackhole").build(), tEnv.sqlQuery(sql.get(sql.size() - 1)));
        set.attachAsDataStream();
        cluster.executeJobBlocking(env.getStreamGraph().getJobGraph());
        return (System.nanoTime() - started) / 1e9;
    }

    public static void main(String[] args) throws Exception {
        int parallelism = Integer.parseInt(args[0]);
        MiniClusterConfiguration config = new MiniClusterConfiguration.Builder()
            .setConfiguration(Harness.clusterConfiguration())
            .setNumTaskManagers(1)
            .setNumSlotsPerTaskManager(parallelism)
            .build();
        try (MiniCluster cluster = new MiniCluster(config)) {
            cluster.start();
            for (int i = 1; i < args.length; i++) {
                String[] job = args[i].split("=", 2);
                double seconds = run(cluster, parallelism, statements(job[1]));
                System.out.println(job[0] + "\t" + seconds);
                System.out.flush();
            }
        }
        System.exit(0);
    }
}
