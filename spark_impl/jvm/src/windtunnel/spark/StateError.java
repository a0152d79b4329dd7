package windtunnel.spark;

/** windtunnel's state on the checkpoint cannot be used: missing, cut short, corrupt, written
 * in another format or for another query. The message names the file and says why. */
public final class StateError extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public StateError(String message) {
    super(message);
  }
}
