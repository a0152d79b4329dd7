package windtunnel.spark;

import java.io.DataOutputStream;
import java.io.IOException;
import java.util.zip.CRC32;

/**
 * A slice state file ({@link StateStore}'s layout) built in one buffer: the header is written
 * when it is made, the payload is written in place after it ({@link #data}), {@link #finish}
 * fills in its length and appends its CRC, and {@link #writeTo} writes the buffer itself. A
 * slice's state is megabytes: building the payload apart and copying it into the file's bytes
 * cost several copies of it per slice and micro-batch, each a large allocation the garbage
 * collector pays for. Not thread-safe (one task writes it).
 */
final class SliceFile extends java.io.OutputStream {
  final long version;
  final int slice;
  /** Writes into this buffer. */
  final DataOutputStream data = new DataOutputStream(this);
  private final int lengthAt;
  private byte[] buf;
  private int count;

  /** {@code sizeHint}: the bytes expected (the slice's last file), so the buffer does not
   * grow by copying. */
  SliceFile(String fingerprint, long version, int slice, int sizeHint) {
    this.buf = new byte[Math.max(256, sizeHint)];
    this.version = version;
    this.slice = slice;
    try {
      data.writeInt(StateStore.MAGIC);
      data.writeInt(StateStore.FORMAT_VERSION);
      data.writeUTF(fingerprint);
      data.writeLong(version);
      data.writeInt(slice);
      lengthAt = count;
      data.writeInt(0);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private void room(int more) {
    if (count + more > buf.length) {
      buf = java.util.Arrays.copyOf(buf, Math.max(count + more, 2 * buf.length));
    }
  }

  @Override
  public void write(int b) {
    room(1);
    buf[count++] = (byte) b;
  }

  @Override
  public void write(byte[] bytes, int offset, int length) {
    room(length);
    System.arraycopy(bytes, offset, buf, count, length);
    count += length;
  }

  /** Where the next byte goes (the bytes so far). */
  int position() {
    return count;
  }

  /** Overwrites the four bytes at {@code at} with {@code value} (big-endian, as
   * {@link DataOutputStream#writeInt} writes it). */
  void putInt(int at, int value) {
    buf[at] = (byte) (value >>> 24);
    buf[at + 1] = (byte) (value >>> 16);
    buf[at + 2] = (byte) (value >>> 8);
    buf[at + 3] = (byte) value;
  }

  /** Ends the payload: its length into the header, its CRC32 after it. */
  void finish() throws IOException {
    int start = lengthAt + 4;
    int length = count - start;
    putInt(lengthAt, length);
    CRC32 crc = new CRC32();
    crc.update(buf, start, length);
    data.writeLong(crc.getValue());
  }

  /** The file's bytes, written to {@code out} from the buffer itself. */
  void writeTo(java.io.OutputStream out) throws IOException {
    out.write(buf, 0, count);
  }
}
