package windtunnel.engine;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A slice's state as bytes and back, in a versioned binary format of its own (no Java
 * serialization). Every record starts with a header: the magic {@code WTES}, the format
 * version, whether it is a full snapshot or an update, the query's fingerprint
 * ({@link Spec#fingerprint}), then the slice's wall clock, last seqs, end flag and window
 * counter. Key records follow: a put (the key's first seq, its group value and its window
 * state) or a deletion (the first seq).
 *
 * <p>A snapshot holds every key; an update holds the keys changed since the last write
 * ({@link Slice#dirtyKeys}) and those removed; a slice decoded from a snapshot and then every
 * later update in order continues exactly as the uninterrupted slice would. Writing either
 * starts a new change set. For a store that keeps keys apart, {@link #header} and
 * {@link #keyRecords} give the same records one by one, and {@link #fromParts} and
 * {@link #applyParts} read them back. Reading state of another format version or another query, or a
 * truncated or corrupt state, raises {@link StateFormatException}.
 */
public final class StateCodec {
    /** The magic word at the start of every state record: "WTES". */
    public static final int MAGIC = 0x57544553;
    /** The state format version this engine writes and reads. */
    public static final int VERSION = 1;
    private static final int SNAPSHOT = 'S';
    private static final int UPDATE = 'U';
    private static final int HEADER = 'H';
    private static final int PUT = 1;
    private static final int DELETE = 2;

    private StateCodec() {
    }

    /** State that cannot be read: another format or query, truncated or corrupt. */
    public static final class StateFormatException extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        public StateFormatException(String message) {
            super(message);
        }
    }

    /** The whole state of {@code slice}. */
    public static byte[] snapshot(Slice slice) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        writeSnapshot(slice, bytes);
        return bytes.toByteArray();
    }

    /** The changes since the last write (or the slice's start). */
    public static byte[] update(Slice slice) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        writeUpdate(slice, bytes);
        return bytes.toByteArray();
    }

    /** Writes the whole state of {@code slice} to {@code stream} (not closed). */
    public static void writeSnapshot(Slice slice, OutputStream stream) {
        try {
            DataOutputStream out = new DataOutputStream(stream);
            header(slice, SNAPSHOT, out);
            out.writeInt(slice.keys.size());
            for (Key key : slice.keys.values()) {
                put(slice, key, out);
            }
            out.flush();
            slice.clearDirty();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Writes the keys changed and removed since the last write to {@code stream}. */
    public static void writeUpdate(Slice slice, OutputStream stream) {
        try {
            DataOutputStream out = new DataOutputStream(stream);
            header(slice, UPDATE, out);
            List<Long> deleted = slice.deletedKeys();
            out.writeInt(slice.dirtyKeyStates().size() + deleted.size());
            for (long firstSeq : deleted) {
                out.writeByte(DELETE);
                out.writeLong(firstSeq);
            }
            for (Key key : slice.dirtyKeyStates()) {
                put(slice, key, out);
            }
            out.flush();
            slice.clearDirty();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Whether {@code state} is a snapshot's record (else an update's, or not a record). */
    public static boolean isSnapshot(byte[] state) {
        return state.length > 8 && state[8] == SNAPSHOT;
    }

    /** A slice of {@code spec} from a snapshot. */
    public static Slice fromSnapshot(Spec spec, byte[] state) {
        ByteArrayInputStream in = new ByteArrayInputStream(state);
        Slice slice = readSnapshot(spec, in);
        whole(in);
        return slice;
    }

    private static void whole(ByteArrayInputStream in) {
        if (in.available() > 0) {
            throw new StateFormatException("corrupt state: " + in.available() + " bytes after the last key record");
        }
    }

    /** Applies an update written after the state {@code slice} holds. */
    public static void apply(Slice slice, byte[] update) {
        ByteArrayInputStream in = new ByteArrayInputStream(update);
        applyUpdate(slice, in);
        whole(in);
    }

    /** Reads a snapshot from {@code stream}. */
    public static Slice readSnapshot(Spec spec, InputStream stream) {
        Slice slice = new Slice(spec);
        read(slice, stream, SNAPSHOT);
        slice.clearDirty();
        return slice;
    }

    /** Reads an update from {@code stream} into {@code slice}. */
    public static void applyUpdate(Slice slice, InputStream stream) {
        read(slice, stream, UPDATE);
        slice.clearDirty();
    }

    /** The slice's header alone (wall clock, seqs, end flag, counters), to go with {@link #keyRecords}. */
    public static byte[] header(Slice slice) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try {
            DataOutputStream out = new DataOutputStream(bytes);
            header(slice, HEADER, out);
            out.flush();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /**
     * One record per key, by the key's first seq: with {@code all} every key's state (what a
     * snapshot holds), else the keys changed since the last write and a deletion for each key
     * removed (what an update holds). Does not start a new change set: call
     * {@link Slice#clearDirty} once the records are stored.
     */
    public static Map<Long, byte[]> keyRecords(Slice slice, boolean all) {
        Map<Long, byte[]> records = new java.util.LinkedHashMap<>();
        try {
            if (!all) {
                for (long firstSeq : slice.deletedKeys()) {
                    ByteArrayOutputStream bytes = new ByteArrayOutputStream(9);
                    DataOutputStream out = new DataOutputStream(bytes);
                    out.writeByte(DELETE);
                    out.writeLong(firstSeq);
                    out.flush();
                    records.put(firstSeq, bytes.toByteArray());
                }
            }
            for (Key key : all ? slice.keys.values() : slice.dirtyKeyStates()) {
                ByteArrayOutputStream bytes = new ByteArrayOutputStream();
                DataOutputStream out = new DataOutputStream(bytes);
                put(slice, key, out);
                out.flush();
                records.put(key.firstSeq, bytes.toByteArray());
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return records;
    }

    /** A slice of {@code spec} from a {@link #header} and the records of all its keys ({@link #keyRecords}). */
    public static Slice fromParts(Spec spec, byte[] header, Iterable<byte[]> keys) {
        Slice slice = new Slice(spec);
        applyParts(slice, header, keys);
        return slice;
    }

    /** Applies a later {@link #header} and the key records written with it (puts replace, deletions remove). */
    public static void applyParts(Slice slice, byte[] header, Iterable<byte[]> keys) {
        java.util.List<byte[]> records = new java.util.ArrayList<>();
        int total = 0;
        for (byte[] key : keys) {
            records.add(key);
            total++;
        }
        ByteArrayOutputStream joined = new ByteArrayOutputStream();
        try {
            DataOutputStream out = new DataOutputStream(joined);
            out.write(header);
            out.writeInt(total);
            for (byte[] record : records) {
                out.write(record);
            }
            out.flush();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        ByteArrayInputStream in = new ByteArrayInputStream(joined.toByteArray());
        read(slice, in, HEADER);
        whole(in);
        slice.clearDirty();
    }

    private static void header(Slice slice, int kind, DataOutputStream out) throws IOException {
        out.writeInt(MAGIC);
        out.writeInt(VERSION);
        out.writeByte(kind);
        out.writeLong(slice.spec.fingerprint());
        out.writeLong(slice.wallMs);
        out.writeLong(slice.afterSeq);
        out.writeLong(slice.lastSeq);
        out.writeBoolean(slice.ended);
        out.writeLong(slice.opened);
        out.writeLong(slice.step);
        out.writeLong(slice.emitIndex);
    }

    private static String name(int kind) {
        return switch (kind) {
            case SNAPSHOT -> "a snapshot";
            case UPDATE -> "an update";
            case HEADER -> "a slice header";
            default -> "record kind " + kind;
        };
    }

    private static void put(Slice slice, Key key, DataOutputStream out) throws IOException {
        out.writeByte(PUT);
        out.writeLong(key.firstSeq);
        Binary.writeValue(out, key.groupValue);
        slice.operator.writeKey(key, out);
    }

    private static void read(Slice slice, InputStream stream, int expected) {
        DataInputStream in = new DataInputStream(stream);
        try {
            int magic = in.readInt();
            if (magic != MAGIC) {
                throw new StateFormatException(String.format(
                        "not windtunnel engine state (magic 0x%08x, expected 0x%08x)", magic, MAGIC));
            }
            int version = in.readInt();
            if (version != VERSION) {
                throw new StateFormatException("engine state format version " + version
                        + ", this engine reads version " + VERSION);
            }
            int kind = in.readUnsignedByte();
            if (kind != expected) {
                throw new StateFormatException("expected " + name(expected) + ", found " + name(kind));
            }
            long fingerprint = in.readLong();
            if (fingerprint != slice.spec.fingerprint()) {
                throw new StateFormatException(String.format(
                        "engine state was written for another query (fingerprint %016x, this query %016x)",
                        fingerprint, slice.spec.fingerprint()));
            }
            slice.wallMs = in.readLong();
            slice.afterSeq = in.readLong();
            slice.lastSeq = in.readLong();
            slice.ended = in.readBoolean();
            slice.opened = in.readLong();
            slice.step = in.readLong();
            slice.emitIndex = in.readLong();
            int n = Binary.length(in);
            Map<Long, Key> bySeq = null;
            for (int i = 0; i < n; i++) {
                int op = in.readUnsignedByte();
                long firstSeq = in.readLong();
                if (op != PUT && op != DELETE) {
                    throw new StateFormatException("corrupt state: key record kind " + op);
                }
                if (expected != SNAPSHOT && bySeq == null) {
                    bySeq = new HashMap<>();
                    for (Key key : slice.keys.values()) {
                        bySeq.put(key.firstSeq, key);
                    }
                }
                if (bySeq != null) {
                    Key old = bySeq.remove(firstSeq);
                    if (old != null) {
                        slice.unlink(old);
                    }
                }
                if (op == PUT) {
                    Object groupValue = Binary.readValue(in);
                    Key key = slice.operator.readKey(groupValue, firstSeq, in);
                    slice.restore(key);
                    if (bySeq != null) {
                        bySeq.put(firstSeq, key);
                    }
                }
            }
            slice.operator.restored();
        } catch (EOFException e) {
            throw new StateFormatException("engine state is truncated");
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
