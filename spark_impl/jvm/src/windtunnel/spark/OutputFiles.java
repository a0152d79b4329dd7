package windtunnel.spark;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.io.OutputFile;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.ParquetWriter;
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
      FileWrites.mkdirs(fs, target.getParent());
      if (format.equals("parquet")) {
        writeParquet(FileWrites.parquetFile(conf, fs, tmp), conf, schema, rows);
      } else {
        try (OutputStream out = FileWrites.create(fs, tmp)) {
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

  private static void writeParquet(OutputFile file, Configuration conf, StructType schema,
      List<Object[]> rows) throws IOException {
    // dictionaries only where values repeat (type, reason): for times, groups and results
    // they cost a hash lookup per value and fall back to plain pages anyway
    try (ParquetWriter<Object[]> writer = new RowsParquet.Builder(file, parquetSchema(schema))
        .withConf(conf)
        .withCompressionCodec(CompressionCodecName.SNAPPY)
        .withWriteMode(ParquetFileWriter.Mode.OVERWRITE)
        .withDictionaryEncoding(false)
        .withDictionaryEncoding("type", true)
        .withDictionaryEncoding("reason", true)
        // no min/max of JSON texts (group, row, windows, message): comparing every value
        // costs more than any reader gains from them; the time and position columns keep theirs
        .withStatisticsEnabled("group", false)
        .withStatisticsEnabled("row", false)
        .withStatisticsEnabled("windows", false)
        .withStatisticsEnabled("message", false)
        .build()) {
      for (Object[] row : rows) {
        writer.write(row);
      }
    }
  }

}
