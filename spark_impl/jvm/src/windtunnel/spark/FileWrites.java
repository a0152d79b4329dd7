package windtunnel.spark;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.parquet.hadoop.util.HadoopOutputFile;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.io.OutputFile;

/**
 * New files and directories on the checkpoint's (or output's) Hadoop file system.
 *
 * <p>On {@code file:} paths Hadoop's {@link LocalFileSystem} sets the permission of every file
 * and directory it creates by running {@code chmod} in a child process (without Hadoop's
 * native library, which PySpark does not ship) and writes a {@code .crc} side file, created
 * the same way, for several files per micro-batch (docs/spark.md, "State on the checkpoint").
 * Here local files are created with {@code java.nio} instead: the permissions
 * the process umask gives (what Hadoop's default 0666 under umask 022 also gives), no side
 * file (Hadoop reads a file without one unverified; the state files carry their own CRC32).
 * Every other file system goes through Hadoop's own {@code create} and {@code mkdirs}.
 */
final class FileWrites {
  private FileWrites() {}

  /** The local file behind {@code path}, or null when {@code fs} is not the local one. */
  static File localFile(FileSystem fs, Path path) {
    if (fs instanceof LocalFileSystem) {
      return ((LocalFileSystem) fs).pathToFile(path);
    }
    if (fs instanceof RawLocalFileSystem) {
      return ((RawLocalFileSystem) fs).pathToFile(path);
    }
    return null;
  }

  /** A new file at {@code path} (replacing one there), its parent directories created. */
  static OutputStream create(FileSystem fs, Path path) throws IOException {
    File file = localFile(fs, path);
    if (file == null) {
      return fs.create(path, true);
    }
    Files.createDirectories(file.toPath().getParent());
    return Files.newOutputStream(file.toPath());
  }

  /** Renames the finished temporary file {@code tmp} to {@code target}, replacing a file
   * there (an earlier attempt's): readers see the whole file or the one before. */
  static void publish(FileSystem fs, Path tmp, Path target) throws IOException {
    if (fs.exists(target)) {
      fs.delete(target, false);
    }
    if (!fs.rename(tmp, target)) {
      fs.delete(tmp, false);
      throw new IOException("cannot rename " + tmp + " to " + target);
    }
  }

  /** Makes {@code dir} and its parents. */
  static void mkdirs(FileSystem fs, Path dir) throws IOException {
    File file = localFile(fs, dir);
    if (file == null) {
      fs.mkdirs(dir);
    } else {
      Files.createDirectories(file.toPath());
    }
  }

  /** Parquet's view of a new file at {@code path}. */
  static OutputFile parquetFile(Configuration conf, FileSystem fs, Path path) throws IOException {
    File file = localFile(fs, path);
    if (file == null) {
      return HadoopOutputFile.fromPath(path, conf);
    }
    Files.createDirectories(file.toPath().getParent());
    return new LocalOutputFile(file.toPath());
  }
}
