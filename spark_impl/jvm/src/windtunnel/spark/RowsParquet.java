package windtunnel.spark;

import java.util.Collections;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.api.WriteSupport;
import org.apache.parquet.io.OutputFile;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.io.api.RecordConsumer;
import org.apache.parquet.schema.MessageType;

/**
 * Output rows ({@link OutputRow}) written straight to Parquet's record consumer: no Group
 * objects and no field lookups by name per value, which Parquet's example writer spends most
 * of its time on.
 */
final class RowsParquet extends WriteSupport<OutputRow> {
  private final MessageType type;
  private final String[] names;
  /** Per column, the last string written and its bytes: rows in a row repeat the same
   * group, type and reason objects, so they are encoded once. */
  private final String[] lastText;
  private final Binary[] lastBinary;
  private RecordConsumer consumer;

  RowsParquet(MessageType type) {
    this.type = type;
    this.names = new String[type.getFieldCount()];
    for (int i = 0; i < names.length; i++) {
      names[i] = type.getFieldName(i);
    }
    this.lastText = new String[names.length];
    this.lastBinary = new Binary[names.length];
  }

  @Override
  public WriteContext init(Configuration configuration) {
    return new WriteContext(type, Collections.emptyMap());
  }

  @Override
  public void prepareForWrite(RecordConsumer recordConsumer) {
    this.consumer = recordConsumer;
  }

  @Override
  public void write(OutputRow row) {
    consumer.startMessage();
    for (int i = 0; i < names.length; i++) {
      byte kind = row.kind[i];
      if (kind == OutputRow.NULL) {
        continue;
      }
      consumer.startField(names[i], i);
      if (kind == OutputRow.TEXT) {
        String value = row.texts[i];
        if (value != lastText[i]) {
          lastText[i] = value;
          lastBinary[i] = Binary.fromConstantByteArray(
              value.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        consumer.addBinary(lastBinary[i]);
      } else if (kind == OutputRow.BOOL) {
        consumer.addBoolean(row.bools[i]);
      } else {
        consumer.addLong(row.longs[i]);
      }
      consumer.endField(names[i], i);
    }
    consumer.endMessage();
  }

  /** A writer of rows of {@code type} to {@code file}. */
  static final class Builder extends ParquetWriter.Builder<OutputRow, Builder> {
    private final MessageType type;

    Builder(OutputFile file, MessageType type) {
      super(file);
      this.type = type;
    }

    @Override
    protected Builder self() {
      return this;
    }

    @Override
    protected WriteSupport<OutputRow> getWriteSupport(Configuration conf) {
      return new RowsParquet(type);
    }
  }
}
