package windtunnel.engine;

import java.util.Arrays;
import java.util.Comparator;

/**
 * A binary min-heap of {@link HeapItem}s that knows each item's position, so an item leaves in
 * O(log n) when it closes for another reason; an item is in the heap at most once.
 */
final class IdleHeap<T extends HeapItem> {
    private final Comparator<? super T> order;
    private HeapItem[] items = new HeapItem[16];
    private int size;

    IdleHeap(Comparator<? super T> order) {
        this.order = order;
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    @SuppressWarnings("unchecked")
    T peek() {
        return (T) items[0];
    }

    void push(T item) {
        if (item.heapIndex >= 0) {
            throw new IllegalStateException("already in the heap");
        }
        if (size == items.length) {
            items = Arrays.copyOf(items, size * 2);
        }
        items[size] = item;
        item.heapIndex = size;
        size++;
        up(size - 1);
    }

    T pop() {
        T top = peek();
        remove(top);
        return top;
    }

    void remove(HeapItem item) {
        int i = item.heapIndex;
        if (i < 0) {
            return;
        }
        size--;
        HeapItem last = items[size];
        items[size] = null;
        item.heapIndex = -1;
        if (i < size) {
            items[i] = last;
            last.heapIndex = i;
            down(i);
            up(last.heapIndex);
        }
    }

    @SuppressWarnings("unchecked")
    private boolean less(int a, int b) {
        return order.compare((T) items[a], (T) items[b]) < 0;
    }

    private void up(int i) {
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            if (!less(i, parent)) {
                return;
            }
            swap(i, parent);
            i = parent;
        }
    }

    private void down(int i) {
        while (true) {
            int left = 2 * i + 1;
            if (left >= size) {
                return;
            }
            int child = left + 1 < size && less(left + 1, left) ? left + 1 : left;
            if (!less(child, i)) {
                return;
            }
            swap(i, child);
            i = child;
        }
    }

    private void swap(int a, int b) {
        HeapItem x = items[a];
        items[a] = items[b];
        items[b] = x;
        items[a].heapIndex = a;
        items[b].heapIndex = b;
    }
}
