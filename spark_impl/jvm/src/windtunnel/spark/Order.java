package windtunnel.spark;

/** Stable orderings of primitive keys without boxing. */
final class Order {
  private Order() {}

  /** Indexes {@code 0..n-1} ordered by {@code keys} (stable); linear when already ordered. */
  static int[] byKey(long[] keys, int n) {
    int[] idx = new int[n];
    boolean ordered = true;
    for (int i = 0; i < n; i++) {
      idx[i] = i;
      if (i > 0 && keys[i] < keys[i - 1]) {
        ordered = false;
      }
    }
    if (!ordered) {
      int[] tmp = new int[n];
      mergeSort(keys, idx, tmp, 0, n);
    }
    return idx;
  }

  private static void mergeSort(long[] keys, int[] idx, int[] tmp, int from, int to) {
    if (to - from <= 24) {
      for (int i = from + 1; i < to; i++) {
        int v = idx[i];
        int j = i - 1;
        while (j >= from && keys[idx[j]] > keys[v]) {
          idx[j + 1] = idx[j];
          j--;
        }
        idx[j + 1] = v;
      }
      return;
    }
    int mid = (from + to) >>> 1;
    mergeSort(keys, idx, tmp, from, mid);
    mergeSort(keys, idx, tmp, mid, to);
    if (keys[idx[mid - 1]] <= keys[idx[mid]]) {
      return;
    }
    System.arraycopy(idx, from, tmp, from, to - from);
    int a = from;
    int b = mid;
    for (int k = from; k < to; k++) {
      if (b >= to || (a < mid && keys[tmp[a]] <= keys[tmp[b]])) {
        idx[k] = tmp[a++];
      } else {
        idx[k] = tmp[b++];
      }
    }
  }
}
