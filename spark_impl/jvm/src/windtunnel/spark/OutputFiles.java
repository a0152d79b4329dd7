package windtunnel.spark;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Types;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import windtunnel.engine.JsonWriter;

/**
 * A slice's output rows of one micro-batch, written by its task as one file of the output
 * directory: {@code part-<batch>-<slice>-windtunnel.json} (JSON lines, nulls left out, as
 * Spark's JSON writer writes them) or {@code .snappy.parquet} (Parquet's own writer, the
 * columns and types of {@link OutputRows#SCHEMA}). Written under a temporary name and renamed,
 * replacing an earlier attempt's file: a micro-batch Spark runs again after a restart writes
 * the same file. Read them back with {@code spark.read.schema(OUTPUT_DDL).json(dir)} (or
 * {@code .parquet}).
 */
final class OutputFiles {
  private OutputFiles() {}

  static String name(long batch, int slice, String format) {
    String ext = format.equals("parquet") ? ".snappy.parquet" : ".json";
    return String.format("part-%05d-%05d-windtunnel%s", batch, slice, ext);
  }

  /** Writes {@code rows} (values in {@code schema}'s order) as the slice's file. */
  static void write(Configuration conf, String directory, long batch, int slice, String format,
      StructType schema, List<Object[]> rows) {
    Path target = new Path(directory, name(batch, slice, format));
    Path tmp = new Path(directory, "." + target.getName() + "." + UUID.randomUUID() + ".tmp");
    try {
      FileSystem fs = target.getFileSystem(conf);
      fs.mkdirs(target.getParent());
      if (format.equals("parquet")) {
        writeParquet(conf, tmp, schema, rows);
      } else {
        try (OutputStream out = fs.create(tmp, true)) {
          out.write(jsonLines(schema, rows).getBytes(StandardCharsets.UTF_8));
        }
      }
      if (fs.exists(target)) {
        fs.delete(target, false);
      }
      if (!fs.rename(tmp, target)) {
        throw new IOException("cannot rename " + tmp + " to " + target);
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot write the output file " + target + ": "
          + e.getMessage(), e);
    }
  }

  static String jsonLines(StructType schema, List<Object[]> rows) {
    StructField[] fields = schema.fields();
    StringBuilder out = new StringBuilder(rows.size() * 160);
    for (Object[] row : rows) {
      out.append('{');
      boolean first = true;
      for (int i = 0; i < fields.length; i++) {
        Object value = row[i];
        if (value == null) {
          continue;
        }
        if (!first) {
          out.append(',');
        }
        first = false;
        out.append('"').append(fields[i].name()).append("\":");
        if (value instanceof String) {
          JsonWriter.string(out, (String) value);
        } else {
          out.append(value);
        }
      }
      out.append("}\n");
    }
    return out.toString();
  }

  static MessageType parquetSchema(StructType schema) {
    Types.MessageTypeBuilder builder = Types.buildMessage();
    for (StructField field : schema.fields()) {
      if (field.dataType().equals(DataTypes.StringType)) {
        builder.optional(PrimitiveTypeName.BINARY).as(LogicalTypeAnnotation.stringType())
            .named(field.name());
      } else if (field.dataType().equals(DataTypes.BooleanType)) {
        builder.optional(PrimitiveTypeName.BOOLEAN).named(field.name());
      } else {
        builder.optional(PrimitiveTypeName.INT64).named(field.name());
      }
    }
    return builder.named("spark_schema");
  }

  private static void writeParquet(Configuration conf, Path path, StructType schema,
      List<Object[]> rows) throws IOException {
    MessageType type = parquetSchema(schema);
    SimpleGroupFactory groups = new SimpleGroupFactory(type);
    StructField[] fields = schema.fields();
    try (ParquetWriter<Group> writer = ExampleParquetWriter.builder(path)
        .withConf(conf)
        .withType(type)
        .withCompressionCodec(CompressionCodecName.SNAPPY)
        .withWriteMode(ParquetFileWriter.Mode.OVERWRITE)
        .build()) {
      for (Object[] row : rows) {
        Group group = groups.newGroup();
        for (int i = 0; i < fields.length; i++) {
          Object value = row[i];
          if (value instanceof String) {
            group.append(fields[i].name(), (String) value);
          } else if (value instanceof Boolean) {
            group.append(fields[i].name(), (Boolean) value);
          } else if (value != null) {
            group.append(fields[i].name(), ((Number) value).longValue());
          }
        }
        writer.write(group);
      }
    }
  }
}
