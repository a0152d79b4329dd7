package windtunnel.engine;

/**
 * Something an {@link IdleQueue} holds: whether it is queued there, and whether it left for
 * another reason (it is then dropped when drained, as the oracle skips closed windows).
 */
abstract class HeapItem {
    boolean queued;
    boolean gone;
}
