package windtunnel.engine;

/**
 * One output row with exactly the columns of {@code spark_impl/schema.py}'s {@code OUTPUT_DDL}
 * and the values {@code schema.output_record} gives the oracle's output. A nullable long column
 * is a primitive with a {@code has...} flag (false: null). {@code group}, {@code row} and
 * {@code windows} are JSON texts as the oracle writes them.
 */
public final class OutRecord {
    public String type;
    public boolean hasStartMs;
    public long startMs;
    public boolean hasEndMs;
    public long endMs;
    public boolean hasStartOffset;
    public long startOffset;
    public boolean hasEndOffset;
    public long endOffset;
    public String group;
    public String row;
    public String reason;
    public boolean hasAfterSeq;
    public long afterSeq;
    public boolean hasWallMs;
    public long wallMs;
    /** null for drops. */
    public Boolean partial;
    public boolean hasSeq;
    public long seq;
    public String windows;
    public String message;
    public long step;
    public boolean hasGroupFirstSeq;
    public long groupFirstSeq;
    public long emitIndex;

    void clear() {
        type = null;
        hasStartMs = hasEndMs = hasStartOffset = hasEndOffset = false;
        hasAfterSeq = hasWallMs = hasSeq = hasGroupFirstSeq = false;
        group = row = reason = windows = message = null;
        partial = null;
    }

    /** The record as one JSON object, columns in OUTPUT_COLUMNS order. */
    public String toJson() {
        StringBuilder out = new StringBuilder(160);
        out.append("{\"type\": ");
        JsonWriter.string(out, type);
        number(out, "start_ms", hasStartMs, startMs);
        number(out, "end_ms", hasEndMs, endMs);
        number(out, "start_offset", hasStartOffset, startOffset);
        number(out, "end_offset", hasEndOffset, endOffset);
        text(out, "group", group);
        text(out, "row", row);
        text(out, "reason", reason);
        number(out, "after_seq", hasAfterSeq, afterSeq);
        number(out, "wall_ms", hasWallMs, wallMs);
        out.append(", \"partial\": ").append(partial == null ? "null" : partial.toString());
        number(out, "seq", hasSeq, seq);
        text(out, "windows", windows);
        text(out, "message", message);
        number(out, "step", true, step);
        number(out, "group_first_seq", hasGroupFirstSeq, groupFirstSeq);
        number(out, "emit_index", true, emitIndex);
        return out.append('}').toString();
    }

    private static void number(StringBuilder out, String name, boolean present, long value) {
        out.append(", \"").append(name).append("\": ");
        if (present) {
            out.append(value);
        } else {
            out.append("null");
        }
    }

    private static void text(StringBuilder out, String name, String value) {
        out.append(", \"").append(name).append("\": ");
        if (value == null) {
            out.append("null");
        } else {
            JsonWriter.string(out, value);
        }
    }
}
