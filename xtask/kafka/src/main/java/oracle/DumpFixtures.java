package oracle;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogSegment;

/**
 * Writes the in-repository partitions of the `k6-dump` scenario that only Kafka's classes
 * can write today:
 *
 * <ul>
 *   <li>{@code LEGACY_DIR}: magic 0 and magic 1 segments (uncompressed and wrapped in gzip,
 *   snappy and lz4; CreateTime and LogAppendTime; null keys and values), and a segment that
 *   moves from magic 0 to 1 to 2, built by {@code MemoryRecordsBuilder} and appended batch
 *   by batch through {@code LogSegment.append}, which writes the {@code .index} and
 *   {@code .timeindex};</li>
 *   <li>{@code INCONSISTENT_DIR}: one directory per damage, each a copy of a magic 2 segment
 *   written the same way, with one index made inconsistent with its {@code .log} by
 *   patching bytes: offset index entries pointing at another batch, time index entries out
 *   of order, at a wrong timestamp or at an offset inside a batch, and indexes that fail
 *   Kafka's sanity check (a last offset below the base offset, a last timestamp below the
 *   first, a length that is no multiple of the entry size).</li>
 * </ul>
 *
 * Usage: java -cp CLASSPATH oracle.DumpFixtures LEGACY_DIR INCONSISTENT_DIR
 */
public final class DumpFixtures {
    private static final long T0 = 1_600_000_000_000L;

    private DumpFixtures() {}

    public static void main(String[] args) throws Exception {
        File legacy = new File(args[0]);
        File inconsistent = new File(args[1]);
        clean(legacy);
        clean(inconsistent);
        magic0(new File(legacy, "magic0-0"));
        magic1(new File(legacy, "magic1-0"));
        mixed(new File(legacy, "mixed-0"));
        inconsistent(inconsistent);
    }

    static void clean(File dir) throws IOException {
        File[] parts = dir.listFiles(File::isDirectory);
        if (parts != null) {
            for (File p : parts) {
                File[] files = p.listFiles();
                if (files != null) {
                    for (File f : files) {
                        Files.delete(f.toPath());
                    }
                }
                Files.delete(p.toPath());
            }
        }
        dir.mkdirs();
    }

    /** Record {@code i} of a fixture: every seventh has no key, every eleventh no value. */
    static SimpleRecord record(int i, long timestamp) {
        byte[] key = i % 7 == 3 ? null : ("key-" + i).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        String v = i % 5 == 0 ? "value-" + i + "-\u00e9t\u00e9" : "value-" + i + "-" + "x".repeat(i % 13);
        byte[] value = i % 11 == 5 ? null : v.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        return new SimpleRecord(timestamp, key, value);
    }

    /** A batch (or, for magic 0 and 1 uncompressed, a run of shallow records) from offset {@code base}. */
    static MemoryRecords batch(byte magic, Compression c, TimestampType type, long base, int first, int count,
                               long[] timestamps, long logAppendTime) {
        MemoryRecordsBuilder b = MemoryRecords.builder(ByteBuffer.allocate(64 * 1024), magic, c, type, base,
            logAppendTime);
        for (int i = 0; i < count; i++) {
            b.append(record(first + i, timestamps[i]));
        }
        return b.build();
    }

    /** Timestamps rising by about a second, with one step back in every batch of three or more. */
    static long[] times(long from, int count) {
        long[] t = new long[count];
        for (int i = 0; i < count; i++) {
            t[i] = from + i * 1000L + (i % 3 == 2 ? -2500 : 0);
        }
        return t;
    }

    static LogConfig config(int indexInterval) {
        Properties p = new Properties();
        p.put(TopicConfig.INDEX_INTERVAL_BYTES_CONFIG, Integer.toString(indexInterval));
        return new LogConfig(p);
    }

    /** A segment written by {@code LogSegment.append}, one shallow batch per call (as a leader appends). */
    static final class Seg implements AutoCloseable {
        final LogSegment segment;
        long next;

        Seg(File dir, long base, int indexInterval) throws IOException {
            dir.mkdirs();
            segment = LogSegment.open(dir, base, config(indexInterval), Time.SYSTEM, false, 0, false, "");
            next = base;
        }

        void append(MemoryRecords records) throws IOException {
            ByteBuffer buf = records.buffer();
            int pos = 0;
            for (RecordBatch batch : records.batches()) {
                int size = batch.sizeInBytes();
                ByteBuffer one = buf.duplicate();
                one.position(pos).limit(pos + size);
                segment.append(batch.lastOffset(), MemoryRecords.readableRecords(one.slice()));
                pos += size;
                next = batch.lastOffset() + 1;
            }
        }

        @Override
        public void close() throws IOException {
            // As a roll does: the closing time index entry, indexes trimmed to their entries.
            segment.onBecomeInactiveSegment();
            segment.close();
        }
    }

    static void magic0(File dir) throws IOException {
        int n = 0;
        try (Seg s = new Seg(dir, 0, 256)) {
            for (Compression c : new Compression[] {Compression.NONE, Compression.gzip().build(),
                    Compression.NONE, Compression.snappy().build(), Compression.lz4().build(), Compression.NONE}) {
                int count = c == Compression.NONE ? 4 : 6;
                s.append(batch(RecordBatch.MAGIC_VALUE_V0, c, TimestampType.NO_TIMESTAMP_TYPE, s.next, n, count,
                    new long[count], RecordBatch.NO_TIMESTAMP));
                n += count;
            }
        }
        System.out.println(dir + ": magic 0, " + n + " records");
    }

    static void magic1(File dir) throws IOException {
        int n = 0;
        long t = T0;
        long base = 0;
        for (int segment = 0; segment < 2; segment++) {
            try (Seg s = new Seg(dir, base, 300)) {
                for (Compression c : new Compression[] {Compression.NONE, Compression.gzip().build(),
                        Compression.snappy().build(), Compression.lz4().build()}) {
                    for (TimestampType type : new TimestampType[] {TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME}) {
                        int count = c == Compression.NONE ? 3 : 5;
                        long lat = type == TimestampType.LOG_APPEND_TIME ? t + 60_000 : RecordBatch.NO_TIMESTAMP;
                        s.append(batch(RecordBatch.MAGIC_VALUE_V1, c, type, s.next, n, count, times(t, count), lat));
                        n += count;
                        t += count * 1000L;
                    }
                }
                base = s.next;
            }
        }
        System.out.println(dir + ": magic 1, " + n + " records in 2 segments");
    }

    static void mixed(File dir) throws IOException {
        int n = 0;
        long t = T0;
        try (Seg s = new Seg(dir, 0, 200)) {
            for (byte magic : new byte[] {RecordBatch.MAGIC_VALUE_V0, RecordBatch.MAGIC_VALUE_V1, RecordBatch.MAGIC_VALUE_V2}) {
                for (Compression c : new Compression[] {Compression.NONE, Compression.gzip().build()}) {
                    TimestampType type = magic == 0 ? TimestampType.NO_TIMESTAMP_TYPE : TimestampType.CREATE_TIME;
                    s.append(batch(magic, c, type, s.next, n, 4, magic == 0 ? new long[4] : times(t, 4),
                        RecordBatch.NO_TIMESTAMP));
                    n += 4;
                    t += 4000;
                }
            }
        }
        System.out.println(dir + ": magic 0, 1 and 2, " + n + " records");
    }

    /** The good segment every inconsistent directory starts from: magic 2, 12 batches of 3 records. */
    static void good(File dir, long base) throws IOException {
        long t = T0;
        int n = 0;
        try (Seg s = new Seg(dir, base, 100)) {
            for (int i = 0; i < 12; i++) {
                Compression c = i % 3 == 1 ? Compression.gzip().build() : Compression.NONE;
                s.append(batch(RecordBatch.MAGIC_VALUE_V2, c, TimestampType.CREATE_TIME, s.next, n, 3, times(t, 3),
                    RecordBatch.NO_TIMESTAMP));
                n += 3;
                t += 3000;
            }
        }
    }

    static String name(long base, String suffix) {
        return String.format("%020d.%s", base, suffix);
    }

    static void putInt(File f, long at, int v) throws IOException {
        try (FileChannel ch = FileChannel.open(f.toPath(), StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(4).putInt(0, v), at);
        }
    }

    static void putLong(File f, long at, long v) throws IOException {
        try (FileChannel ch = FileChannel.open(f.toPath(), StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(8).putLong(0, v), at);
        }
    }

    static int getInt(File f, long at) throws IOException {
        try (FileChannel ch = FileChannel.open(f.toPath(), StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(4);
            ch.read(b, at);
            return b.getInt(0);
        }
    }

    static long getLong(File f, long at) throws IOException {
        try (FileChannel ch = FileChannel.open(f.toPath(), StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(8);
            ch.read(b, at);
            return b.getLong(0);
        }
    }

    static void inconsistent(File root) throws IOException {
        long base = 100;
        File good = new File(root, "good.tmp");
        good(good, base);
        File index = new File(good, name(base, "index"));
        File timeindex = new File(good, name(base, "timeindex"));
        long entries = index.length() / 8;
        long timeEntries = timeindex.length() / 12;
        if (entries < 5 || timeEntries < 4) {
            throw new IllegalStateException("the good segment has too few index entries: " + entries + ", "
                + timeEntries);
        }
        List<String> made = new ArrayList<>();

        // Offset index entries 1 and 3 at the positions of entries 2 and 0: two mismatches.
        File d = copy(good, root, "index-position-0", made);
        File ix = new File(d, name(base, "index"));
        putInt(ix, 1 * 8 + 4, getInt(index, 2 * 8 + 4));
        putInt(ix, 3 * 8 + 4, getInt(index, 0 * 8 + 4));

        // Time index entries 1 and 2 with their timestamps swapped: out of order, mismatched.
        d = copy(good, root, "time-order-0", made);
        File ti = new File(d, name(base, "timeindex"));
        long t1 = getLong(timeindex, 12);
        long t2 = getLong(timeindex, 24);
        putLong(ti, 12, t2);
        putLong(ti, 24, t1);

        // A time index entry whose timestamp no batch has.
        d = copy(good, root, "time-timestamp-0", made);
        ti = new File(d, name(base, "timeindex"));
        putLong(ti, 2 * 12, getLong(timeindex, 2 * 12) + 17);

        // A time index entry at an offset inside a batch (not a batch's last offset).
        d = copy(good, root, "time-offset-0", made);
        ti = new File(d, name(base, "timeindex"));
        putInt(ti, 1 * 12 + 8, getInt(timeindex, 1 * 12 + 8) - 1);

        // Sanity: the last offset index entry below the base offset.
        d = copy(good, root, "sanity-index-offset-0", made);
        ix = new File(d, name(base, "index"));
        putInt(ix, (entries - 1) * 8, -5);

        // Sanity: the last time index timestamp below the first.
        d = copy(good, root, "sanity-time-order-0", made);
        ti = new File(d, name(base, "timeindex"));
        putLong(ti, (timeEntries - 1) * 12, getLong(timeindex, 0) - 1000);

        // Sanity: an offset index three bytes longer than its entries.
        d = copy(good, root, "sanity-index-length-0", made);
        ix = new File(d, name(base, "index"));
        try (FileChannel ch = FileChannel.open(ix.toPath(), StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
            ch.write(ByteBuffer.wrap(new byte[] {0, 0, 1}));
        }

        for (File f : good.listFiles()) {
            Files.delete(f.toPath());
        }
        Files.delete(good.toPath());
        System.out.println(root + ": " + made + " (" + entries + " offset and " + timeEntries
            + " time index entries each)");
    }

    static File copy(File from, File root, String name, List<String> made) throws IOException {
        File to = new File(root, name);
        to.mkdirs();
        for (File f : from.listFiles()) {
            Files.copy(f.toPath(), new File(to, f.getName()).toPath(), StandardCopyOption.REPLACE_EXISTING);
        }
        made.add(name);
        return to;
    }
}
