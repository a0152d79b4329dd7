package windtunnel.spark;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;
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
 * A slice's output rows of one micro-batch, written by its task as they come ({@link Writer})
 * as one file of the output directory: {@code part-<batch>-<slice>-windtunnel.json} (JSON lines, nulls left out, as
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

  /**
   * A slice's output file of one micro-batch, written row by row as the engine emits them:
   * opened under a temporary name at the first row (no rows, no file), renamed over the
   * target by {@link #finish}, deleted by {@link #abort}.
   */
  static final class Writer implements Consumer<OutputRow> {
    private final Configuration conf;
    private final Path target;
    private final Path tmp;
    private final String format;
    private final StructType schema;
    private final String[] names;
    private FileSystem fs;
    private ParquetWriter<OutputRow> parquet;
    private OutputStream json;
    private final StringBuilder lines = new StringBuilder(JSON_CHUNK + 1024);

    Writer(Configuration conf, String directory, long batch, int slice, String format,
        StructType schema) {
      this.conf = conf;
      this.target = new Path(directory, name(batch, slice, format));
      this.tmp = new Path(directory, "." + target.getName() + "." + UUID.randomUUID() + ".tmp");
      this.format = format;
      this.schema = schema;
      this.names = schema.fieldNames();
    }

    @Override
    public void accept(OutputRow row) {
      try {
        if (fs == null) {
          open();
        }
        if (parquet != null) {
          parquet.write(row);
        } else {
          appendJson(lines, names, row);
          if (lines.length() >= JSON_CHUNK) {
            flushJson();
          }
        }
      } catch (IOException e) {
        throw failed(e);
      }
    }

    private void open() throws IOException {
      fs = target.getFileSystem(conf);
      FileWrites.mkdirs(fs, target.getParent());
      if (format.equals("parquet")) {
        parquet = parquetWriter(FileWrites.parquetFile(conf, fs, tmp), conf, schema);
      } else {
        json = FileWrites.create(fs, tmp);
      }
    }

    private void flushJson() throws IOException {
      json.write(lines.toString().getBytes(StandardCharsets.UTF_8));
      lines.setLength(0);
    }

    /** Closes the file and renames it over the target (replacing an earlier attempt's);
     * nothing when no row came. */
    void finish() {
      if (fs == null) {
        return;
      }
      try {
        if (json != null) {
          flushJson();
        }
        close();
        FileWrites.publish(fs, tmp, target);
      } catch (IOException e) {
        throw failed(e);
      }
    }

    /** Closes and deletes the temporary file (the task failed). */
    void abort() {
      if (fs == null) {
        return;
      }
      try {
        close();
      } catch (IOException | RuntimeException ignored) {
        // deleted below
      }
      try {
        fs.delete(tmp, false);
      } catch (IOException ignored) {
        // a hidden temporary file left behind: readers skip names starting with '.'
      }
    }

    private void close() throws IOException {
      if (parquet != null) {
        parquet.close();
      } else {
        json.close();
      }
    }

    private IllegalStateException failed(IOException e) {
      return new IllegalStateException("cannot write the output file " + target + ": "
          + e.getMessage(), e);
    }
  }

  /** JSON text is handed to the file in chunks of about this many characters. */
  private static final int JSON_CHUNK = 1 << 16;

  /** One JSON line of {@code row} (nulls left out) appended to {@code out}. */
  static void appendJson(StringBuilder out, String[] names, OutputRow row) {
    out.append('{');
    boolean first = true;
    for (int i = 0; i < names.length; i++) {
      byte kind = row.kind[i];
      if (kind == OutputRow.NULL) {
        continue;
      }
      if (!first) {
        out.append(',');
      }
      first = false;
      out.append('"').append(names[i]).append("\":");
      if (kind == OutputRow.TEXT) {
        JsonWriter.string(out, row.texts[i]);
      } else if (kind == OutputRow.BOOL) {
        out.append(row.bools[i]);
      } else {
        out.append(row.longs[i]);
      }
    }
    out.append("}\n");
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

  private static ParquetWriter<OutputRow> parquetWriter(OutputFile file, Configuration conf,
      StructType schema) throws IOException {
    // dictionaries only where values repeat (type, reason): for times, groups and results
    // they cost a hash lookup per value and fall back to plain pages anyway
    return new RowsParquet.Builder(file, parquetSchema(schema))
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
        .build();
  }
}
