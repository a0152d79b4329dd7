package windtunnel.flink;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * What the harnesses share: the lines every branch writes ({@link #OUT}, the MiniCluster runs in
 * this JVM), the sink that collects them, the environment every job is built in, and running a
 * job: on the MiniCluster {@link Server} keeps for many jobs, else on a MiniCluster of its own.
 */
final class Harness {
    /** What every branch writes; cleared before each job. */
    static final ConcurrentLinkedQueue<String> OUT = new ConcurrentLinkedQueue<>();

    /** The MiniCluster jobs run on when {@link Server} started one; null for one-shot runs. */
    static MiniCluster cluster;

    private Harness() {}

    /** Room for many branches in one slot: network buffers for the SQL exchanges, managed
     * memory for the SQL window buffers; no periodic watermarks; a free REST port. */
    static Configuration clusterConfiguration() {
        Configuration conf = new Configuration();
        conf.set(TaskManagerOptions.NETWORK_MEMORY_MIN, MemorySize.parse("256m"));
        conf.set(TaskManagerOptions.NETWORK_MEMORY_MAX, MemorySize.parse("256m"));
        conf.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, MemorySize.parse("256m"));
        conf.set(PipelineOptions.AUTO_WATERMARK_INTERVAL, Duration.ZERO);
        // any free port for the REST endpoint, as Flink's own local executor does: 8081 may
        // be another JVM's
        conf.set(RestOptions.BIND_PORT, "0");
        return conf;
    }

    /** Starts the MiniCluster {@link Server} keeps. */
    static MiniCluster startCluster() throws Exception {
        MiniClusterConfiguration config = new MiniClusterConfiguration.Builder()
            .setConfiguration(clusterConfiguration())
            .setNumTaskManagers(1)
            .setNumSlotsPerTaskManager(1)
            .build();
        MiniCluster started = new MiniCluster(config);
        started.start();
        return started;
    }

    /** A local environment at parallelism 1 without periodic watermarks. */
    static StreamExecutionEnvironment environment() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1, clusterConfiguration());
        env.getConfig().setAutoWatermarkInterval(0);
        return env;
    }

    /** Runs the job built in {@code env} to its end. */
    static void execute(StreamExecutionEnvironment env, String name) throws Exception {
        if (cluster == null) {
            env.execute(name);
        } else {
            cluster.executeJobBlocking(env.getStreamGraph().getJobGraph());
        }
    }

    /** Writes {@link #OUT} to {@code path}, one line each. */
    static void write(String path) throws IOException {
        try (BufferedWriter out = Files.newBufferedWriter(Paths.get(path), StandardCharsets.UTF_8)) {
            for (String line : OUT) {
                out.write(line);
                out.write('\n');
            }
        }
    }

    /** Appends every record to {@link #OUT}. */
    static final class Collect implements Sink<String> {
        private static final long serialVersionUID = 1L;

        @Override
        public SinkWriter<String> createWriter(WriterInitContext context) {
            return new SinkWriter<String>() {
                @Override
                public void write(String element, Context context) {
                    OUT.add(element);
                }

                @Override
                public void flush(boolean endOfInput) {}

                @Override
                public void close() {}
            };
        }
    }
}
