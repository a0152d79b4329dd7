package windtunnel.spark;

import java.util.List;
import java.util.Map;
import windtunnel.engine.EventFields;
import windtunnel.engine.JsonReader;
import windtunnel.engine.OutRecord;
import windtunnel.engine.Slice;
import windtunnel.engine.Spec;
import windtunnel.engine.StateCodec;

/**
 * The Spark side's one door into the engine ({@code windtunnel.engine}): a slice state per
 * lane, events filled from the values {@link Pack} shipped, outputs turned into Spark rows.
 * Nothing else in this package names an engine class.
 */
final class EngineAdapter {
  private final Spec spec;
  private final EventFields fields;
  private final int width;
  private final boolean wholePayload;

  private EngineAdapter(Spec spec) {
    this.spec = spec;
    this.fields = new EventFields(spec);
    this.width = spec.fields.size();
    this.wholePayload = spec.aggregates == null;
  }

  static EngineAdapter forSpec(String engineSpec) {
    return new EngineAdapter(Spec.parse(engineSpec));
  }

  /** A JSON text read as Python's {@code json.loads} reads it. */
  static Object parseJson(String text) {
    return JsonReader.parse(text);
  }

  Object fresh() {
    return new Slice(spec);
  }

  long openWindows(Object state) {
    return ((Slice) state).openWindows();
  }

  long wall(Object state) {
    return ((Slice) state).wallMs();
  }

  byte[] encode(Object state) {
    return StateCodec.snapshot((Slice) state);
  }

  /** {@link #encode}'s bytes, written to {@code out}. */
  void writeState(Object state, java.io.OutputStream out) {
    StateCodec.writeSnapshot((Slice) state, out);
  }

  /** The keys changed and removed since the state's last write ({@code StateCodec}'s
   * update), written to {@code out}; starts a new change set. */
  void writeUpdate(Object state, java.io.OutputStream out) {
    StateCodec.writeUpdate((Slice) state, out);
  }

  /** {@code bytes} (a snapshot, or an update) read onto {@code state} (null: none yet): the
   * state they give. */
  Object apply(Object state, byte[] bytes) {
    if (StateCodec.isSnapshot(bytes)) {
      return decode(bytes);
    }
    Object target = state == null ? fresh() : state;
    try {
      StateCodec.apply((Slice) target, bytes);
    } catch (StateCodec.StateFormatException e) {
      throw new StateError("a slice state cannot be read: " + e.getMessage());
    }
    return target;
  }

  Object decode(byte[] bytes) {
    try {
      return StateCodec.fromSnapshot(spec, bytes);
    } catch (StateCodec.StateFormatException e) {
      throw new StateError("a slice state cannot be read: " + e.getMessage());
    }
  }

  /** The wall clock moves to {@code wallMs} after event {@code afterSeq}, if that is later. */
  void wall(Object state, long wallMs, long afterSeq, Rows rows) {
    Slice slice = (Slice) state;
    if (wallMs > slice.wallMs()) {
      slice.wall(wallMs, afterSeq, rows);
    }
  }

  void event(Object state, long seq, Object[] values, Map<String, Object> payload, Rows rows) {
    fields.clear();
    for (int slot = 0; slot < values.length; slot++) {
      Object value = values[slot];
      if (value instanceof RowEvents.TimeMs) {
        fields.setLong(slot, ((RowEvents.TimeMs) value).ms);
      } else {
        fields.set(slot, value);
      }
    }
    if (payload != null) {
      fields.setPayload(payload);
    }
    ((Slice) state).event(seq, fields, rows);
  }

  /** Event {@code seq}, its slot values (and pass-through payload) read from {@code in} as
   * {@link Pack} wrote them. */
  @SuppressWarnings("unchecked")
  void event(Object state, long seq, Wire.In in, Rows rows) {
    fields.clear();
    for (int slot = 0; slot < width; slot++) {
      int tag = in.get();
      switch (tag) {
        case Wire.NULL:
          break;
        case Wire.LONG:
          fields.setLong(slot, in.zigzag());
          break;
        case Wire.TIME_MS:
          fields.setLong(slot, in.zigzag());
          break;
        case Wire.DOUBLE:
          fields.setDouble(slot, in.double64());
          break;
        case Wire.STRING:
          fields.set(slot, in.string());
          break;
        default:
          in.pos--;
          fields.set(slot, in.value());
      }
    }
    if (wholePayload) {
      Object payload = in.value();
      if (payload instanceof Map) {
        fields.setPayload((Map<String, Object>) payload);
      }
    }
    ((Slice) state).event(seq, fields, rows);
  }

  void end(Object state, long afterSeq, Rows rows) {
    ((Slice) state).end(afterSeq, rows);
  }

  /** The engine's outputs as output rows ({@link OutputRow}, reused; OutputRows.SCHEMA's
   * columns, the lane last when the plan has lanes), handed to a sink one by one; counts
   * them. */
  static final class Rows implements windtunnel.engine.Out {
    private final java.util.function.Consumer<OutputRow> sink;
    private final boolean lanes;
    private final OutputRow row;
    long lane;
    long count;

    Rows(java.util.function.Consumer<OutputRow> sink, boolean lanes) {
      this.sink = sink;
      this.lanes = lanes;
      this.row = new OutputRow(lanes ? 18 : 17);
    }

    /** Rows collected into {@code out} as objects (for Spark rows). */
    static Rows collecting(List<Object[]> out, boolean lanes) {
      return new Rows(row -> out.add(row.toArray()), lanes);
    }

    @Override
    public void accept(OutRecord r) {
      OutputRow row = this.row;
      row.clear();
      row.text(0, r.type);
      row.int64(1, r.hasStartMs, r.startMs);
      row.int64(2, r.hasEndMs, r.endMs);
      row.int64(3, r.hasStartOffset, r.startOffset);
      row.int64(4, r.hasEndOffset, r.endOffset);
      row.text(5, r.group);
      row.text(6, r.row);
      row.text(7, r.reason);
      row.int64(8, r.hasAfterSeq, r.afterSeq);
      row.int64(9, r.hasWallMs, r.wallMs);
      if (r.partial != null) {
        row.bool(10, r.partial);
      }
      row.int64(11, r.hasSeq, r.seq);
      row.text(12, r.windows);
      row.text(13, r.message);
      row.int64(14, r.step);
      row.int64(15, r.hasGroupFirstSeq, r.groupFirstSeq);
      row.int64(16, r.emitIndex);
      if (lanes) {
        row.int64(17, lane);
      }
      count++;
      sink.accept(row);
    }
  }

  /** Runs one event of {@code engineSpec}'s query through the engine, a state round trip
   * and the end of input (part of {@code Entry.selfCheck}); {@code values} fill the slots. */
  static void selfCheck(String engineSpec, Object[] values) {
    EngineAdapter engine = forSpec(engineSpec);
    Object state = engine.fresh();
    List<Object[]> rows = new java.util.ArrayList<>();
    Rows out = Rows.collecting(rows, false);
    engine.event(state, 0, values, null, out);
    engine.end(engine.decode(engine.encode(state)), 0, out);
    if (rows.isEmpty()) {
      throw new IllegalStateException("the engine's self-check gave no rows");
    }
  }
}
