package windtunnel.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

/**
 * One query's plan for the production operator, as the Python side writes it
 * ({@code windtunnel.spark_impl.production.plan}): where each stream column sits in the input
 * rows, how the event is read, which fields the engine needs, how many slices, the engine's
 * spec and its fingerprint. Travels to tasks inside {@link Pack} and {@link Step}.
 */
public final class Plan implements Serializable {
  private static final long serialVersionUID = 1L;

  /** How an event's fields are read: a JSON text column, or typed columns. */
  public enum Payload { JSON, COLUMNS }

  public final String engineSpec;
  public final String fingerprint;
  public final int slices;
  /** Column positions in the input rows; -1 when absent. */
  public final int seq;
  public final int arrival;
  public final int kind;
  public final int afterSeq;
  /** Independent streams in one query (their own seq, wall clock and end of input); -1: one. */
  public final int lane;
  public final int payloadColumn;
  public final Payload payload;
  /** The event fields as typed columns: name, position, Spark type name. */
  public final List<Column> columns;
  /** Dotted paths the engine reads, in its slot order (the engine spec's {@code fields}). */
  public final List<String> paths;
  /** The slots of the group key's fields, in group_by order (they decide the slice). */
  public final int[] keySlots;
  /** Whether the engine needs each event's whole payload (pass-through windows). */
  public final boolean wholePayload;
  /** Whether the time field is a Spark timestamp column (read as epoch ms). */
  public final boolean timeIsTimestamp;
  /** The wall clock is the system clock, read by the driver once per micro-batch (the rows'
   * arrivals are not read); else the lanes' arrivals. */
  public final boolean systemWall;

  /** A typed event column. */
  public static final class Column implements Serializable {
    private static final long serialVersionUID = 1L;
    public final String name;
    public final int index;
    public final String type;

    Column(String name, int index, String type) {
      this.name = name;
      this.index = index;
      this.type = type;
    }
  }

  private Plan(JsonNode n) {
    engineSpec = n.get("engine").asText();
    fingerprint = n.get("fingerprint").asText();
    slices = n.get("slices").asInt();
    JsonNode input = n.get("input");
    seq = input.get("seq").asInt();
    arrival = input.get("arrival").asInt();
    kind = input.get("kind").asInt();
    afterSeq = input.get("after_seq").asInt();
    lane = input.has("lane") ? input.get("lane").asInt() : -1;
    payloadColumn = input.get("payload").asInt();
    payload = payloadColumn >= 0 ? Payload.JSON : Payload.COLUMNS;
    columns = new ArrayList<>();
    for (JsonNode c : input.get("columns")) {
      columns.add(new Column(c.get("name").asText(), c.get("index").asInt(), c.get("type").asText()));
    }
    paths = new ArrayList<>();
    for (JsonNode p : n.get("paths")) {
      paths.add(p.asText());
    }
    JsonNode slots = n.get("key_slots");
    keySlots = new int[slots.size()];
    for (int i = 0; i < keySlots.length; i++) {
      keySlots[i] = slots.get(i).asInt();
    }
    wholePayload = n.get("whole_payload").asBoolean();
    timeIsTimestamp = n.get("time_is_timestamp").asBoolean();
    systemWall = n.has("wall") && n.get("wall").asText().equals("system");
    if (slices < 1 || seq < 0) {
      throw new IllegalArgumentException("a plan needs slices >= 1 and a seq column");
    }
  }

  /** Reads the plan from its JSON text. */
  public static Plan parse(String json) {
    try {
      return new Plan(new ObjectMapper().readTree(json));
    } catch (IOException e) {
      throw new IllegalArgumentException("not a plan: " + e.getMessage(), e);
    }
  }
}
