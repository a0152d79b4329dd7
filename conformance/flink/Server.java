package windtunnel.flink;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import org.apache.flink.runtime.minicluster.MiniCluster;

/**
 * One JVM for many harness runs: reads requests on stdin, runs each as a job on one MiniCluster
 * kept for the JVM's life, answers on stdout. The JVM start, the cluster start and class loading
 * are paid once, and later jobs run warm.
 *
 * <p>Request (one line, tab-separated): {@code WindowHarness INPUT OUTPUT} or
 * {@code SqlHarness INPUT OUTPUT DDL_FILE QUERY_FILE TABLE}, as the harnesses' own arguments.
 * Answer: {@code windtunnel-flink ok} once OUTPUT is written, or {@code windtunnel-flink error
 * MESSAGE} (the deepest cause). Anything else the JVM prints goes to stderr. The JVM exits at the
 * end of stdin (the caller closed it, or died), and after an {@link Error} (a fresh JVM is the
 * caller's to start).
 */
public final class Server {
    static final String TAG = "windtunnel-flink";

    private Server() {}

    /** The deepest cause's class and message, on one line. */
    static String deepest(Throwable error) {
        Throwable cause = error;
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        String text = cause.getClass().getName() + (cause.getMessage() == null ? "" : ": " + cause.getMessage());
        return text.replace('\t', ' ').replace('\n', ' ').replace('\r', ' ');
    }

    static void run(String[] request) throws Exception {
        Harness.OUT.clear();
        String[] args = Arrays.copyOfRange(request, 1, request.length);
        switch (request[0]) {
            case "WindowHarness":
                WindowHarness.run(args);
                break;
            case "SqlHarness":
                SqlHarness.run(args);
                break;
            default:
                throw new IllegalArgumentException("unknown harness " + request[0]);
        }
    }

    public static void main(String[] args) throws Exception {
        PrintStream answers = System.out;
        System.setOut(System.err);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Harness.cluster = Harness.startCluster();
        // SIGTERM (the caller's stop for a JVM that hangs) closes the cluster too, which
        // removes its temporary files
        final MiniCluster cluster = Harness.cluster;
        Thread closing = new Thread(() -> {
            try {
                cluster.close();
            } catch (Exception e) {
                // exiting anyway
            }
        });
        Runtime.getRuntime().addShutdownHook(closing);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) {
                continue;
            }
            boolean fatal = false;
            try {
                run(line.split("\t"));
                answers.println(TAG + "\tok");
            } catch (Exception e) {
                answers.println(TAG + "\terror\t" + deepest(e));
            } catch (Error e) {
                answers.println(TAG + "\terror\t" + deepest(e));
                fatal = true;
            }
            answers.flush();
            Harness.OUT.clear();
            if (fatal) {
                break;
            }
        }
        try {
            Runtime.getRuntime().removeShutdownHook(closing);
        } catch (IllegalStateException exiting) {
            return; // a signal is shutting the JVM down: the hook closes the cluster
        }
        cluster.close();
        System.exit(0);
    }
}
