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
 * Output rows ({@code Object[]}: String, Boolean, a Number written as a long, or null) written
 * straight to Parquet's record consumer: no Group objects and no field lookups by name per
 * value, which Parquet's example writer spends most of its time on.
 */
final class RowsParquet extends WriteSupport<Object[]> {
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
  public void write(Object[] row) {
    consumer.startMessage();
    for (int i = 0; i < names.length; i++) {
      Object value = row[i];
      if (value == null) {
        continue;
      }
      consumer.startField(names[i], i);
      if (value instanceof String) {
        if (value != lastText[i]) {
          lastText[i] = (String) value;
          lastBinary[i] = Binary.fromConstantByteArray(
              lastText[i].getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        consumer.addBinary(lastBinary[i]);
      } else if (value instanceof Boolean) {
        consumer.addBoolean((Boolean) value);
      } else {
        consumer.addLong(((Number) value).longValue());
      }
      consumer.endField(names[i], i);
    }
    consumer.endMessage();
  }

  /** A writer of rows of {@code type} to {@code file}. */
  static final class Builder extends ParquetWriter.Builder<Object[], Builder> {
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
    protected WriteSupport<Object[]> getWriteSupport(Configuration conf) {
      return new RowsParquet(type);
    }
  }
}
