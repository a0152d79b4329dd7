package windtunnel.spark;

import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A Java agent for windtunnel's check sessions: Spark's closure cleaner checks each lambda
 * class once instead of once per instance.
 *
 * <p>Spark cleans every closure it is handed ({@code SparkClosureCleaner.clean}): it reads and
 * parses the class file of the class that declared the lambda (looking for a {@code return}
 * inside it) and serializes the closure to check that it can be. A micro-batch of a streaming
 * aggregation hands it the same few lambda sites every time (the aggregation's and state
 * store's {@code mapPartitions}, each action), so a check of thousands of small micro-batches
 * repeats that work thousands of times (docs/conformance.md, "Check settings"). The first part is a property of the lambda's
 * class; the second repeats what sending the task does anyway (a closure that cannot be
 * serialized still fails its job, "Task not serializable"). With this agent, {@code clean}
 * runs as Spark wrote it the first time a lambda class is met; once it has returned normally
 * for a lambda class, later closures of that class are let through unchanged. Closures
 * declared in a Scala REPL (which {@code clean} rewrites) are always cleaned.
 *
 * <p>The agent renames {@code clean(Object, boolean, boolean)} of
 * {@code org.apache.spark.util.SparkClosureCleaner$} and puts a method of that signature in
 * front of it ({@link CleanerRewrite}). A Spark without that method is left as it is.
 */
public final class ClosureChecks {
  static final String CLEANER = "org/apache/spark/util/SparkClosureCleaner$";

  private static final Set<Class<?>> CHECKED = ConcurrentHashMap.newKeySet();
  private static volatile boolean installed;

  private ClosureChecks() {}

  /** The agent's entry point ({@code -javaagent:jar}). */
  public static void premain(String args, Instrumentation instrumentation) {
    instrumentation.addTransformer(new Transformer());
  }

  /** True once Spark's closure cleaner carries this agent's check (for tests and explain). */
  public static boolean installed() {
    return installed;
  }

  /** True when a closure of this class has been cleaned and checked before. */
  public static boolean checked(Object closure) {
    return closure != null && CHECKED.contains(closure.getClass());
  }

  /** Called after Spark's own clean returned normally for {@code closure}. */
  public static void passed(Object closure) {
    if (closure == null) {
      return;
    }
    Class<?> type = closure.getClass();
    String name = type.getName();
    if (type.isHidden() && !name.startsWith("$line") && !name.startsWith("ammonite.")) {
      CHECKED.add(type);
    }
  }

  /**
   * {@code classFile} (Spark's {@code SparkClosureCleaner$}) with the check in front of
   * {@code clean}, or null when it has no {@code clean} this agent knows.
   */
  public static byte[] rewritten(byte[] classFile) {
    return CleanerRewrite.rewrite(classFile);
  }

  /** The number of lambda classes checked so far. */
  public static int checkedClasses() {
    return CHECKED.size();
  }

  /** Rewrites {@code SparkClosureCleaner$} when it loads; any other class is left alone. */
  static final class Transformer implements ClassFileTransformer {
    @Override
    public byte[] transform(
        ClassLoader loader, String name, Class<?> redefined, ProtectionDomain domain,
        byte[] bytes) {
      if (!CLEANER.equals(name)) {
        return null;
      }
      try {
        byte[] rewritten = CleanerRewrite.rewrite(bytes);
        installed = rewritten != null;
        return rewritten;
      } catch (RuntimeException | LinkageError e) {
        System.err.println("windtunnel: Spark's closure cleaner left as it is: " + e);
        return null;
      }
    }
  }
}
