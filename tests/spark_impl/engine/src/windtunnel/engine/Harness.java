package windtunnel.engine;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A line harness for the engine (main class): JSON lines on stdin, JSON lines on stdout, many
 * scenarios per JVM start.
 *
 * <p>A scenario is a {@code {"spec": ...}} line (the engine spec, as an object or its text),
 * optionally {@code {"slices": P}} (keys spread over P slices by {@link Slice#keyHash}; every
 * wall movement goes to every slice), then stream lines: {@code {"seq": n, "at": ms,
 * "event": {...}}} (an event; {@code at} null or missing: the current wall clock),
 * {@code {"at": ms}} (the wall clock moves), {@code {"end": true}},
 * {@code {"snapshot": "full"}} or {@code {"snapshot": "update"}} (every slice's state is
 * written and the slices are rebuilt from the written state: the last full snapshot plus the
 * updates since), {@code {"snapshot": "parts"}} (the changed keys' records are applied to a
 * store built from header and key records alone, and each slice goes on as a copy of it), and {@code {"reset": true}}, which ends the scenario with a line
 * {@code {"done": N}} (N outputs). Each output is its {@link OutRecord#toJson} with a
 * {@code "slice"} member added. An error prints {@code {"error": "..."}} and skips to the reset.
 *
 * <p>State lines inside a scenario answer one line: {@code {"encode": "full"}} or
 * {@code {"encode": "update"}} ({@code {"state": [BASE64 per slice]}}), {@code {"decode":
 * [BASE64 per slice], "kind": "full"}} (the slices are replaced by the decoded ones; with
 * {@code "update"} the updates are applied to them; {@code {"decoded": true}} or an error that
 * leaves the scenario going) and {@code {"dirty": true}} ({@code {"dirty": [[FIRST SEQ, ...] per
 * slice], "deleted": [...]}}).
 *
 * <p>Unit lines answer one line each: {@code {"dumps": TEXT}} (the JSON text re-written),
 * {@code {"repr": TEXT}}, {@code {"time": TEXT, "unit": U}} ({@code {"ms": ...}} or
 * {@code {"not_a_time": MESSAGE}}), {@code {"keys": TEXT}} (a JSON list: the class of each
 * member under Python equality), {@code {"divide": [INT TEXT, N]}} (the repr of the true
 * division), {@code {"compare": TEXT}} (a JSON pair of numbers).
 */
public final class Harness {
    private final Writer out;
    private Spec spec;
    private final List<Slice> slices = new ArrayList<>();
    private final List<List<byte[]>> stored = new ArrayList<>();
    private final List<Slice> mirrors = new ArrayList<>(); // a store of key records, per slice
    private EventFields fields;
    private long lastSeq = -1;
    private long wallMs;
    private long outputs;
    private boolean failed;

    private Harness(Writer out) {
        this.out = out;
    }

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Writer out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16);
        Harness harness = new Harness(out);
        String line;
        while ((line = in.readLine()) != null) {
            if (!line.isBlank()) {
                harness.line(line);
            }
        }
        out.flush();
    }

    @SuppressWarnings("unchecked")
    private void line(String text) throws IOException {
        Map<String, Object> line;
        try {
            line = (Map<String, Object>) JsonReader.parse(text);
        } catch (RuntimeException e) {
            error(e);
            return;
        }
        if (line.containsKey("reset")) {
            out.write("{\"done\": " + outputs + "}\n");
            out.flush();
            spec = null;
            slices.clear();
            stored.clear();
            mirrors.clear();
            failed = false;
            outputs = 0;
            return;
        }
        try {
            if (unit(line)) {
                return;
            }
        } catch (RuntimeException e) {
            error(e);
            return;
        }
        if (failed) {
            return;
        }
        try {
            if (state(line)) {
                return;
            }
        } catch (RuntimeException e) {
            error(e);
            return;
        }
        try {
            stream(line);
        } catch (RuntimeException e) {
            error(e);
            failed = true;
        }
    }

    private void error(RuntimeException e) throws IOException {
        StringBuilder text = new StringBuilder("{\"error\": ");
        JsonWriter.string(text, e.getClass().getSimpleName() + ": " + e.getMessage());
        out.write(text.append("}\n").toString());
        out.flush();
    }

    private void answer(String key, Object value) throws IOException {
        StringBuilder text = new StringBuilder("{");
        JsonWriter.string(text, key);
        text.append(": ");
        JsonWriter.append(text, value, false);
        out.write(text.append("}\n").toString());
    }

    private boolean unit(Map<String, Object> line) throws IOException {
        if (line.containsKey("dumps")) {
            answer("text", JsonWriter.write(JsonReader.parse((String) line.get("dumps"))));
        } else if (line.containsKey("repr")) {
            answer("text", PyRepr.repr(JsonReader.parse((String) line.get("repr"))));
        } else if (line.containsKey("time")) {
            Object value = JsonReader.parse((String) line.get("time"));
            try {
                answer("ms", Times.ms(value, (Long) line.get("unit")));
            } catch (Times.NotATime why) {
                answer("not_a_time", why.getMessage());
            }
        } else if (line.containsKey("keys")) {
            List<?> values = (List<?>) JsonReader.parse((String) line.get("keys"));
            List<Object> keys = new ArrayList<>();
            List<Object> classes = new ArrayList<>();
            for (Object value : values) {
                Object key = GroupKeys.of(value);
                int index = keys.indexOf(key);
                if (index < 0) {
                    keys.add(key);
                    index = keys.size() - 1;
                }
                classes.add((long) index);
            }
            answer("classes", classes);
        } else if (line.containsKey("divide")) {
            List<?> pair = (List<?>) line.get("divide");
            BigInteger a = new BigInteger((String) pair.get(0));
            answer("text", FloatRepr.repr(PyValues.trueDivide(a, (Long) pair.get(1))));
        } else if (line.containsKey("compare")) {
            List<?> pair = (List<?>) JsonReader.parse((String) line.get("compare"));
            answer("order", (long) PyValues.compare(pair.get(0), pair.get(1)));
        } else {
            return false;
        }
        out.flush();
        return true;
    }

    private boolean state(Map<String, Object> line) throws IOException {
        if (line.containsKey("encode")) {
            boolean full = "full".equals(line.get("encode"));
            List<Object> texts = new ArrayList<>();
            for (Slice slice : slices) {
                byte[] bytes = full ? StateCodec.snapshot(slice) : StateCodec.update(slice);
                texts.add(java.util.Base64.getEncoder().encodeToString(bytes));
            }
            answer("state", texts);
        } else if (line.containsKey("decode")) {
            List<?> texts = (List<?>) line.get("decode");
            boolean full = "full".equals(line.get("kind"));
            List<Slice> decoded = new ArrayList<>();
            for (int i = 0; i < texts.size(); i++) {
                byte[] bytes = java.util.Base64.getDecoder().decode((String) texts.get(i));
                if (full) {
                    decoded.add(StateCodec.fromSnapshot(spec, bytes));
                } else {
                    StateCodec.apply(slices.get(i), bytes);
                    decoded.add(slices.get(i));
                }
            }
            slices.clear();
            slices.addAll(decoded);
            answer("decoded", Boolean.TRUE);
        } else if (line.containsKey("dirty")) {
            List<Object> dirty = new ArrayList<>();
            List<Object> deleted = new ArrayList<>();
            for (Slice slice : slices) {
                dirty.add(slice.dirtyKeys());
                deleted.add(slice.deletedKeys());
            }
            StringBuilder text = new StringBuilder("{\"dirty\": ");
            JsonWriter.append(text, dirty, false);
            text.append(", \"deleted\": ");
            JsonWriter.append(text, deleted, false);
            out.write(text.append("}\n").toString());
        } else {
            return false;
        }
        out.flush();
        return true;
    }

    @SuppressWarnings("unchecked")
    private void stream(Map<String, Object> line) throws IOException {
        if (line.containsKey("spec")) {
            Object value = line.get("spec");
            spec = Spec.parse(value instanceof String ? (String) value : JsonWriter.write(value));
            fields = new EventFields(spec);
            slices.clear();
            slices.add(new Slice(spec));
            stored.clear();
            stored.add(new ArrayList<>());
            lastSeq = -1;
            wallMs = spec.startWallMs;
            return;
        }
        if (spec == null) {
            throw new IllegalArgumentException("a spec line must come first");
        }
        if (line.containsKey("slices")) {
            int n = ((Long) line.get("slices")).intValue();
            slices.clear();
            stored.clear();
            mirrors.clear();
            for (int i = 0; i < n; i++) {
                slices.add(new Slice(spec));
                stored.add(new ArrayList<>());
            }
        } else if (line.containsKey("event")) {
            Object at = line.get("at");
            if (at != null && (Long) at > wallMs) {
                wall((Long) at);
            }
            long seq = (Long) line.get("seq");
            fields.clear();
            fields.readPayload((Map<String, Object>) line.get("event"));
            int index = Math.floorMod(Slice.keyHash(spec, fields), slices.size());
            slices.get(index).event(seq, fields, record -> write(record, index));
            lastSeq = seq;
        } else if (line.containsKey("end")) {
            for (int i = 0; i < slices.size(); i++) {
                int index = i;
                slices.get(i).end(lastSeq, record -> write(record, index));
            }
        } else if ("parts".equals(line.get("snapshot"))) {
            parts();
        } else if (line.containsKey("snapshot")) {
            boolean full = "full".equals(line.get("snapshot"));
            for (int i = 0; i < slices.size(); i++) {
                List<byte[]> written = stored.get(i);
                if (full || written.isEmpty()) {
                    written.clear();
                    written.add(StateCodec.snapshot(slices.get(i)));
                } else {
                    written.add(StateCodec.update(slices.get(i)));
                }
                if (i < mirrors.size()) {
                    mirrors.set(i, null); // the next key-by-key write starts over with every key
                }
                Slice rebuilt = StateCodec.fromSnapshot(spec, written.get(0));
                for (byte[] update : written.subList(1, written.size())) {
                    StateCodec.apply(rebuilt, update);
                }
                slices.set(i, rebuilt);
            }
        } else if (line.containsKey("at")) {
            long at = (Long) line.get("at");
            if (at > wallMs) {
                wall(at);
            }
        } else {
            throw new IllegalArgumentException("unknown line: " + JsonWriter.write(line));
        }
    }

    /**
     * Key by key: each slice's changed keys (all of them the first time) go to a mirror slice
     * built only from header and key records; the slice goes on as a copy of its mirror.
     */
    private void parts() {
        while (mirrors.size() < slices.size()) {
            mirrors.add(null);
        }
        for (int i = 0; i < slices.size(); i++) {
            Slice live = slices.get(i);
            Slice mirror = mirrors.get(i);
            byte[] header = StateCodec.header(live);
            if (mirror == null) {
                mirror = StateCodec.fromParts(spec, header, StateCodec.keyRecords(live, true).values());
                mirrors.set(i, mirror);
            } else {
                StateCodec.applyParts(mirror, header, StateCodec.keyRecords(live, false).values());
            }
            live.clearDirty();
            Slice copy = StateCodec.fromParts(spec, StateCodec.header(mirror),
                    StateCodec.keyRecords(mirror, true).values());
            slices.set(i, copy);
            stored.get(i).clear(); // later updates are written against this state
            stored.get(i).add(StateCodec.snapshot(copy));
        }
    }

    private void wall(long at) {
        wallMs = at;
        for (int i = 0; i < slices.size(); i++) {
            int index = i;
            slices.get(i).wall(at, lastSeq, record -> write(record, index));
        }
    }

    private void write(OutRecord record, int slice) {
        String json = record.toJson();
        try {
            out.write(json, 0, json.length() - 1);
            out.write(", \"slice\": " + slice + "}\n");
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        outputs++;
    }
}
