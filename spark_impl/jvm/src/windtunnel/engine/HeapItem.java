package windtunnel.engine;

/** Something an {@link IdleHeap} holds: it knows its position there (-1: not in the heap). */
abstract class HeapItem {
    int heapIndex = -1;
}
