package windtunnel.flink;

import java.io.BufferedReader;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.runtime.typeutils.ExternalTypeInfo;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.types.Row;

/**
 * Runs a user's Flink SQL (a {@code CREATE TABLE} with {@code WATERMARK FOR}, and a query)
 * over many scenarios in one MiniCluster job, one independent branch per scenario.
 *
 * <p>The table's declared schema (columns, computed columns, watermark) is kept; its
 * connector is replaced by the scenario's rows: a DataStream per scenario registered as a
 * view {@code <table>__<sid>} with that schema, and the query runs once per view. Watermarks
 * follow the declared expression and are emitted after every row that raises them
 * ({@code pipeline.auto-watermark-interval} 0: Flink's WatermarkAssignerOperator then emits
 * eagerly), so runs are deterministic.
 *
 * <p>Input: {@code E sid seq json} per event (the time field in epoch ms); arguments:
 * {@code INPUT OUTPUT DDL_FILE QUERY_FILE TABLE}. Output: {@code R sid reason json} per
 * result row; the reason is {@code end_of_input} for rows emitted on the final watermark,
 * else {@code close}; timestamps are epoch ms. With a sixth argument {@code explain}: the
 * query's plan instead ({@link #explain}).
 */
public final class SqlHarness {
    private static final ObjectMapper JSON = new ObjectMapper();

    private SqlHarness() {}

    /** Tags result rows with the watermark that emitted them (see the class comment). */
    static final class Tag extends AbstractStreamOperator<String> implements OneInputStreamOperator<Row, String> {
        private static final long serialVersionUID = 1L;
        private final int sid;
        private final List<String> pending = new ArrayList<>();

        Tag(int sid) {
            this.sid = sid;
        }

        @Override
        public void processElement(StreamRecord<Row> element) throws Exception {
            pending.add(json(element.getValue()));
        }

        @Override
        public void processWatermark(Watermark mark) throws Exception {
            String reason = mark.getTimestamp() == Long.MAX_VALUE ? "end_of_input" : "close";
            for (String row : pending) {
                Harness.OUT.add("R\t" + sid + "\t" + reason + "\t" + row);
            }
            pending.clear();
            super.processWatermark(mark);
        }

        @Override
        public void finish() throws Exception {
            for (String row : pending) {
                Harness.OUT.add("R\t" + sid + "\tend_of_input\t" + row);
            }
            pending.clear();
            super.finish();
        }
    }

    static String json(Row row) throws IOException {
        ObjectNode node = JSON.createObjectNode();
        for (String name : row.getFieldNames(true)) {
            Object value = row.getField(name);
            if (value instanceof LocalDateTime) {
                node.put(name, ((LocalDateTime) value).toInstant(ZoneOffset.UTC).toEpochMilli());
            } else if (value instanceof Instant) {
                node.put(name, ((Instant) value).toEpochMilli());
            } else {
                node.set(name, JSON.valueToTree(value));
            }
        }
        return JSON.writeValueAsString(node);
    }

    /** A JSON value as the Java object Flink expects for {@code type} (external conversion). */
    static Object convert(JsonNode value, LogicalType type, String column) {
        if (value == null || value.isNull()) {
            return null;
        }
        switch (type.getTypeRoot()) {
            case CHAR:
            case VARCHAR:
                return value.isTextual() ? value.asText() : value.toString();
            case BOOLEAN:
                return value.asBoolean();
            case TINYINT:
                return (byte) value.asInt();
            case SMALLINT:
                return (short) value.asInt();
            case INTEGER:
                return value.asInt();
            case BIGINT:
                return value.asLong();
            case FLOAT:
                return (float) value.asDouble();
            case DOUBLE:
                return value.asDouble();
            case DECIMAL:
                return new BigDecimal(value.asText());
            case TIMESTAMP_WITHOUT_TIME_ZONE:
                return value.isNumber()
                    ? LocalDateTime.ofInstant(Instant.ofEpochMilli(value.asLong()), ZoneOffset.UTC)
                    : LocalDateTime.parse(value.asText());
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                return value.isNumber() ? Instant.ofEpochMilli(value.asLong()) : Instant.parse(value.asText());
            default:
                throw new IllegalArgumentException(
                    "column " + column + ": type " + type + " is not supported by windtunnel's Flink SQL feed");
        }
    }

    static String read(String path) throws IOException {
        return new String(Files.readAllBytes(Paths.get(path)), StandardCharsets.UTF_8);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 5 && !(args.length == 6 && "explain".equals(args[5]))) {
            System.err.println("usage: SqlHarness INPUT OUTPUT DDL_FILE QUERY_FILE TABLE [explain]");
            System.exit(2);
        }
        run(args);
    }

    /**
     * The query's plan over the declared table ({@code EXPLAIN}), one {@code P line} per line
     * of Flink's text; nothing runs. The table's connector is replaced by a view of the
     * declared schema, as for scenarios.
     */
    static void explain(StreamExecutionEnvironment env, StreamTableEnvironment tEnv, Schema declared,
                        DataType rowType, List<String> names, String query, String table, String output)
            throws Exception {
        Row none = Row.withNames();
        for (String n : names) {
            none.setField(n, null);
        }
        DataStream<Row> events = env.fromData(List.of(none), ExternalTypeInfo.of(rowType)).name("explained");
        String view = table + "__explained";
        tEnv.createTemporaryView(view, events, declared);
        Harness.OUT.clear();
        for (String line : tEnv.explainSql(viewed(query, table, view)).split("\n")) {
            Harness.OUT.add("P\t" + line);
        }
        Harness.write(output);
    }

    /** {@code query} reading {@code view} where it read {@code table}: after TABLE (a TVF's
     * argument), FROM or JOIN. */
    static String viewed(String query, String table, String view) {
        Pattern name = Pattern.compile("(\\b(?:TABLE|FROM|JOIN)\\s+)`?" + Pattern.quote(table) + "`?(?![\\w`.])",
            Pattern.CASE_INSENSITIVE);
        return name.matcher(query).replaceAll("$1" + Matcher.quoteReplacement("`" + view + "`"));
    }

    /** Runs {@code INPUT OUTPUT DDL_FILE QUERY_FILE TABLE} (see the class comment). */
    static void run(String[] args) throws Exception {
        String ddl = read(args[2]);
        String query = read(args[3]);
        String table = args[4];
        Map<Integer, List<JsonNode>> scenarios = new LinkedHashMap<>();
        try (BufferedReader in = Files.newBufferedReader(Paths.get(args[0]), StandardCharsets.UTF_8)) {
            String text;
            while ((text = in.readLine()) != null) {
                if (text.isEmpty()) {
                    continue;
                }
                String[] f = text.split("\t", 4);
                scenarios.computeIfAbsent(Integer.parseInt(f[1]), k -> new ArrayList<>()).add(JSON.readTree(f[3]));
            }
        }
        StreamExecutionEnvironment env = Harness.environment();
        StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
        tEnv.getConfig().set("table.optimizer.agg-phase-strategy", "ONE_PHASE");
        tEnv.executeSql(ddl);
        Schema declared = tEnv.from(table).getSchema().toSchema();
        ResolvedSchema resolved = tEnv.from(table).getResolvedSchema();
        List<String> names = new ArrayList<>();
        List<DataType> types = new ArrayList<>();
        for (Column column : resolved.getColumns()) {
            if (column.isPhysical()) {
                names.add(column.getName());
                types.add(column.getDataType());
            }
        }
        DataType rowType = org.apache.flink.table.api.DataTypes.ROW(
            names.stream().map(n -> org.apache.flink.table.api.DataTypes.FIELD(n, types.get(names.indexOf(n))))
                .toArray(org.apache.flink.table.api.DataTypes.Field[]::new));
        if (args.length == 6) {
            explain(env, tEnv, declared, rowType, names, query, table, args[1]);
            return;
        }
        List<Row> rows = new ArrayList<>();
        for (Map.Entry<Integer, List<JsonNode>> entry : scenarios.entrySet()) {
            for (JsonNode event : entry.getValue()) {
                Row row = Row.withNames();
                row.setField("__sid", entry.getKey());
                for (int i = 0; i < names.size(); i++) {
                    row.setField(names.get(i), convert(event.get(names.get(i)), types.get(i).getLogicalType(), names.get(i)));
                }
                rows.add(row);
            }
        }
        if (!rows.isEmpty()) {
            List<DataType> withSid = new ArrayList<>(types);
            List<String> sidNames = new ArrayList<>(names);
            sidNames.add(0, "__sid");
            withSid.add(0, org.apache.flink.table.api.DataTypes.INT());
            DataType sourceType = org.apache.flink.table.api.DataTypes.ROW(
                sidNames.stream().map(n -> org.apache.flink.table.api.DataTypes.FIELD(n, withSid.get(sidNames.indexOf(n))))
                    .toArray(org.apache.flink.table.api.DataTypes.Field[]::new));
            DataStream<Row> all = env.fromData(rows, ExternalTypeInfo.of(sourceType)).name("scenarios");
            for (Integer sid : scenarios.keySet()) {
                final int mine = sid;
                DataStream<Row> events = all.filter(r -> ((Integer) r.getField("__sid")) == mine)
                    .map(r -> {
                        Row out = Row.withNames();
                        for (String n : names) {
                            out.setField(n, r.getField(n));
                        }
                        return out;
                    }, ExternalTypeInfo.of(rowType));
                String view = table + "__" + sid;
                tEnv.createTemporaryView(view, events, declared);
                Table result = tEnv.sqlQuery(viewed(query, table, view));
                tEnv.toDataStream(result).transform("tag-" + sid, Types.STRING, new Tag(sid))
                    .sinkTo(new Harness.Collect());
            }
            Harness.execute(env, "windtunnel-flink-sql");
        }
        Harness.write(args[1]);
    }
}
