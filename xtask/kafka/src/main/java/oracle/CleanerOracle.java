package oracle;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.File;
import java.io.FileReader;
import java.io.FileWriter;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.server.common.RequestLocal;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.Cleaner;
import org.apache.kafka.storage.internals.log.CleanerStats;
import org.apache.kafka.storage.internals.log.LogCleanerManager;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogSegment;
import org.apache.kafka.storage.internals.log.LogStartOffsetIncrementReason;
import org.apache.kafka.storage.internals.log.LogToClean;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.SkimpyOffsetMap;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.internals.log.VerificationGuard;
import org.apache.kafka.storage.internals.utils.Throttler;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

/**
 * {@code oracle.CleanerOracle CASES.txt ANSWERS.txt} (the {@code k7-cleaner} scenario): Kafka's
 * own {@code UnifiedLog} (in-process, a manual clock) is written by each case, then asked
 * for the log cleaner's plan: {@code LogCleanerManager.cleanableOffsets} and
 * {@code maxCompactionDelay} (package-private and private: called by reflection),
 * {@code LogToClean}, {@code Cleaner.buildOffsetMap} into a {@code SkimpyOffsetMap} of the
 * case's size, and {@code Cleaner.groupSegmentsBySize} up to the map's end offset, as
 * {@code Cleaner.doClean} calls them. The log is then flushed and closed; xtask opens the
 * directory with our {@code Log} and compares our plan.
 *
 * <p>Input, one case per block:
 * <pre>
 * case ID PARTITION_DIR NOW_MS
 * config KEY VALUE          a topic config
 * batch TS KEY...           appendAsLeader of one uncompressed batch, a record per key
 *                           (timestamp TS, value "v"; a key written -KEY: a tombstone)
 * legacy MAGIC LAT TS KEY...  appendAsFollower (at the log end, leader epoch 0) of a legacy
 *                           magic 0 or 1 message set of the log's codec: uncompressed, a
 *                           message per key, each its own append; compressed, one wrapper (LAT 1: magic 1
 *                           LogAppendTime at TS; magic 0 has no timestamp; a key written _:
 *                           a keyless record)
 * txn PID TS KEY...         the same, transactional, of producer PID (epoch 0)
 * marker PID COMMIT|ABORT TS   the coordinator's end-txn marker for PID
 * roll                      roll()
 * hw OFFSET                 updateHighWatermark
 * logstart OFFSET           maybeIncrementLogStartOffset (ClientRecordDeletion)
 * checkpoint OFFSET|none    the cleaner checkpoint's offset for the partition
 * map BYTES LOAD_FACTOR     the offset map's memory and the dedupe buffer load factor
 * end
 * </pre>
 * Output per case: {@code ID bounds LOG_START LEO HW LSO}, {@code ID offsets FIRST_DIRTY
 * FIRST_UNCLEANABLE_DIRTY FORCE}, {@code ID delay MS}, {@code ID ltc FIRST_UNCLEANABLE
 * CLEAN_BYTES CLEANABLE_BYTES TOTAL_BYTES RATIO_BITS NEED_NOW} (RATIO_BITS the double's
 * {@code doubleToLongBits} in hex), then, for a log with cleanable bytes (the only kind
 * {@code doClean} sees), {@code ID map SLOTS MAX_ENTRIES SIZE END_OFFSET} and {@code ID groups
 * BASE,BASE;BASE;...} ({@code -} for none), else {@code ID map skipped}; then {@code ID closed}.
 */
final class CleanerOracle {
    private CleanerOracle() {}

    record Case(String id, String dir, long now, Properties config, List<String[]> ops) {}

    public static void main(String[] a) throws Exception {
        List<Case> cases = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new FileReader(a[0]), 1 << 20)) {
            Case cur = null;
            for (String line; (line = r.readLine()) != null; ) {
                String[] w = line.trim().split(" ");
                switch (w[0]) {
                    case "case" -> cur = new Case(w[1], w[2], Long.parseLong(w[3]), new Properties(), new ArrayList<>());
                    case "config" -> cur.config().put(w[1], w[2]);
                    case "end" -> cases.add(cur);
                    case "" -> {}
                    default -> cur.ops().add(w);
                }
            }
        }
        try (BufferedWriter out = new BufferedWriter(new FileWriter(a[1]), 1 << 20)) {
            for (Case c : cases) {
                try {
                    runCase(c, out);
                } catch (Exception e) {
                    out.write(c.id() + " failed " + e.toString().replace('\n', ' ') + "\n");
                }
            }
        }
    }

    static Method method(Class<?> c, String name, Class<?>... params) throws Exception {
        Method m = c.getDeclaredMethod(name, params);
        m.setAccessible(true);
        return m;
    }

    static void runCase(Case c, BufferedWriter out) throws Exception {
        String p = c.id() + " ";
        LeaderOracle.ManualTime time = new LeaderOracle.ManualTime(c.now());
        LeaderOracle.QueueScheduler scheduler = new LeaderOracle.QueueScheduler();
        UnifiedLog log = UnifiedLog.create(new File(c.dir()), new LogConfig(c.config()), 0L, 0L, scheduler,
                new BrokerTopicStats(), time, 60_000, new ProducerStateManagerConfig(86_400_000, false),
                600_000, new LogDirFailureChannel(1), true, Optional.empty());
        scheduler.drain();
        Optional<Long> checkpoint = Optional.empty();
        java.util.Map<Long, Integer> seqs = new java.util.HashMap<>();
        int mapBytes = 24 * 1024;
        double loadFactor = 0.9;
        Compression codec = Compression.NONE;
        for (String[] op : c.ops()) {
            switch (op[0]) {
                case "codec" -> codec = switch (op[1]) {
                    case "gzip" -> Compression.gzip().build();
                    case "snappy" -> Compression.snappy().build();
                    case "lz4" -> Compression.lz4().build();
                    case "zstd" -> Compression.zstd().build();
                    default -> Compression.NONE;
                };
                case "batch" -> {
                    long ts = Long.parseLong(op[1]);
                    SimpleRecord[] rs = new SimpleRecord[op.length - 2];
                    for (int i = 2; i < op.length; i++) {
                        // "-KEY": a tombstone of KEY.
                        boolean tomb = op[i].startsWith("-");
                        String key = tomb ? op[i].substring(1) : op[i];
                        rs[i - 2] = new SimpleRecord(ts, key.getBytes(StandardCharsets.UTF_8),
                                tomb ? null : "v".getBytes(StandardCharsets.UTF_8));
                    }
                    log.appendAsLeader(MemoryRecords.withRecords(codec, rs), 0);
                }
                case "legacy" -> {
                    // An old leader's message set, copied by a follower as it is (Kafka
                    // 4.4's leader appends always convert to magic 2).
                    byte magic = Byte.parseByte(op[1]);
                    boolean lat = op[2].equals("1");
                    long ts = Long.parseLong(op[3]);
                    TimestampType type = magic == 0 ? TimestampType.NO_TIMESTAMP_TYPE
                            : lat ? TimestampType.LOG_APPEND_TIME : TimestampType.CREATE_TIME;
                    MemoryRecordsBuilder b = MemoryRecords.builder(java.nio.ByteBuffer.allocate(64 * 1024), magic,
                            codec, type, log.logEndOffset(), lat ? ts : RecordBatch.NO_TIMESTAMP);
                    for (int i = 4; i < op.length; i++) {
                        boolean tomb = op[i].startsWith("-");
                        String key = tomb ? op[i].substring(1) : op[i];
                        b.append(new SimpleRecord(magic == 0 ? RecordBatch.NO_TIMESTAMP : ts,
                                key.equals("_") ? null : key.getBytes(StandardCharsets.UTF_8),
                                tomb ? null : "v".getBytes(StandardCharsets.UTF_8)));
                    }
                    // One message (or wrapper) per append: the roll check runs per append,
                    // and an uncompressed set of several messages could overflow a small
                    // segment.index.bytes within one append (Kafka then throws).
                    MemoryRecords built = b.build();
                    java.nio.ByteBuffer buf = built.buffer();
                    int pos = 0;
                    for (RecordBatch batch : built.batches()) {
                        java.nio.ByteBuffer one = buf.duplicate();
                        one.position(pos).limit(pos + batch.sizeInBytes());
                        log.appendAsFollower(MemoryRecords.readableRecords(one.slice()), 0);
                        pos += batch.sizeInBytes();
                    }
                }
                case "txn" -> {
                    // A transactional batch of producer PID (epoch 0, its next sequence).
                    long pid = Long.parseLong(op[1]);
                    long ts = Long.parseLong(op[2]);
                    SimpleRecord[] rs = new SimpleRecord[op.length - 3];
                    for (int i = 3; i < op.length; i++) {
                        rs[i - 3] = new SimpleRecord(ts, op[i].getBytes(StandardCharsets.UTF_8),
                                "t".getBytes(StandardCharsets.UTF_8));
                    }
                    int seq = seqs.getOrDefault(pid, 0);
                    seqs.put(pid, seq + rs.length);
                    log.appendAsLeader(MemoryRecords.withTransactionalRecords(codec, pid, (short) 0, seq, rs),
                            0, AppendOrigin.CLIENT, RequestLocal.noCaching(), VerificationGuard.SENTINEL, (short) -1);
                }
                case "marker" -> {
                    // The coordinator's end-txn marker (transactionVersion 0, as k4-leader).
                    EndTransactionMarker m = new EndTransactionMarker(ControlRecordType.valueOf(op[2]), 0);
                    log.appendAsLeader(MemoryRecords.withEndTransactionMarker(Long.parseLong(op[3]),
                            Long.parseLong(op[1]), (short) 0, m), 0, AppendOrigin.COORDINATOR,
                            RequestLocal.noCaching(), VerificationGuard.SENTINEL, (short) 0);
                }
                case "roll" -> log.roll();
                case "hw" -> log.updateHighWatermark(Long.parseLong(op[1]));
                case "logstart" -> log.maybeIncrementLogStartOffset(Long.parseLong(op[1]),
                        LogStartOffsetIncrementReason.ClientRecordDeletion);
                case "checkpoint" -> checkpoint = op[1].equals("none") ? Optional.empty() : Optional.of(Long.parseLong(op[1]));
                case "map" -> {
                    mapBytes = Integer.parseInt(op[1]);
                    loadFactor = Double.parseDouble(op[2]);
                }
                default -> throw new IllegalArgumentException(op[0]);
            }
            scheduler.drain();
        }
        long now = c.now();
        out.write(p + "bounds " + log.logStartOffset() + " " + log.logEndOffset() + " " + log.highWatermark()
                + " " + log.lastStableOffset() + "\n");
        Object offsets = method(LogCleanerManager.class, "cleanableOffsets", UnifiedLog.class, Optional.class, long.class)
                .invoke(null, log, checkpoint, now);
        long firstDirty = (long) method(offsets.getClass(), "firstDirtyOffset").invoke(offsets);
        long uncleanable = (long) method(offsets.getClass(), "firstUncleanableDirtyOffset").invoke(offsets);
        boolean force = (boolean) method(offsets.getClass(), "forceUpdateCheckpoint").invoke(offsets);
        out.write(p + "offsets " + firstDirty + " " + uncleanable + " " + force + "\n");
        long delay = (long) method(LogCleanerManager.class, "maxCompactionDelay", UnifiedLog.class, long.class, long.class)
                .invoke(null, log, firstDirty, now);
        out.write(p + "delay " + delay + "\n");
        LogToClean ltc = new LogToClean(log, firstDirty, uncleanable, delay > 0);
        out.write(p + "ltc " + ltc.firstUncleanableOffset() + " " + ltc.cleanBytes() + " " + ltc.cleanableBytes()
                + " " + ltc.totalBytes() + " " + Long.toHexString(Double.doubleToLongBits(ltc.cleanableRatio()))
                + " " + (delay > 0) + "\n");
        // doClean runs only on a log grabFilthiestCompactedLog chose, which has cleanable
        // bytes (so its first dirty offset is below its first uncleanable segment).
        if (ltc.cleanableBytes() > 0) {
            SkimpyOffsetMap map = new SkimpyOffsetMap(mapBytes);
            // Kafka 4.4 only asserts slots * loadFactor > 1: no exception here.
            Cleaner cleaner = new Cleaner(0, map, 64 * 1024, 10 << 20, loadFactor,
                    new Throttler(Double.MAX_VALUE, 300, "cleaner-io", "bytes", time), time, tp -> {});
            cleaner.buildOffsetMap(log, firstDirty, ltc.firstUncleanableOffset(), map, new CleanerStats(time));
            long end = map.latestOffset() + 1;
            out.write(p + "map " + map.slots() + " " + (int) (map.slots() * loadFactor) + " " + map.size() + " " + end + "\n");
            List<List<LogSegment>> groups = cleaner.groupSegmentsBySize(log.logSegments(0, end),
                    log.config().segmentSize(), log.config().maxIndexSize, ltc.firstUncleanableOffset());
            StringBuilder g = new StringBuilder();
            for (List<LogSegment> group : groups) {
                if (g.length() > 0) g.append(';');
                for (int i = 0; i < group.size(); i++) {
                    if (i > 0) g.append(',');
                    g.append(group.get(i).baseOffset());
                }
            }
            out.write(p + "groups " + (g.length() == 0 ? "-" : g) + "\n");
        } else {
            out.write(p + "map skipped\n");
        }
        long logStart = log.logStartOffset();
        long leo = log.logEndOffset();
        long hw = log.highWatermark();
        log.flush(true);
        log.close();
        scheduler.drain();
        // Our side's copy of the directory Kafka closed, then Kafka's clean of it.
        File dir = new File(c.dir());
        copyDir(dir, new File(new File(dir.getParentFile(), "ours"), dir.getName()));
        cleanCase(c, p, out, checkpoint, mapBytes, loadFactor, logStart, leo, hw, time, scheduler);
        out.write(p + "closed\n");
    }

    static void copyDir(File from, File to) throws java.io.IOException {
        if (to.exists()) {
            for (File f : to.listFiles()) {
                f.delete();
            }
        }
        to.mkdirs();
        for (File f : from.listFiles()) {
            if (f.isFile()) {
                java.nio.file.Files.copy(f.toPath(), new File(to, f.getName()).toPath(),
                        java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
            }
        }
    }

    /**
     * The clean step: Kafka's log reopened from the directory it closed (the log start, a
     * recovery point at the log end, the high watermark it had), its plan taken again from
     * the case's checkpoint, and, when it has cleanable bytes and a map that takes a key,
     * {@code Cleaner.doClean(ltc, now)}: {@code ID clean END_OFFSET MESSAGES_READ BYTES_READ
     * MESSAGES_WRITTEN BYTES_WRITTEN INVALID_MESSAGES_READ}, else {@code ID clean skipped}; then
     * a second round ({@code clean2}) with no checkpoint at {@code now + delete.retention.ms +
     * 1}, when round 1's delete horizons have passed. The log is then flushed and closed (the
     * files xtask compares).
     */
    static void cleanCase(Case c, String p, BufferedWriter out, Optional<Long> checkpoint, int mapBytes,
            double loadFactor, long logStart, long leo, long hw, LeaderOracle.ManualTime time,
            LeaderOracle.QueueScheduler scheduler) throws Exception {
        UnifiedLog log = UnifiedLog.create(new File(c.dir()), new LogConfig(c.config()), logStart, leo, scheduler,
                new BrokerTopicStats(), time, 60_000, new ProducerStateManagerConfig(86_400_000, false),
                600_000, new LogDirFailureChannel(1), true, Optional.empty());
        scheduler.drain();
        log.updateHighWatermark(hw);
        long deleteRetention = log.config().deleteRetentionMs;
        for (int round = 1; round <= 2; round++) {
            // Round 1 from the case's checkpoint at the case's time; round 2 from none (the
            // whole log dirty again) once round 1's delete horizons have passed.
            Optional<Long> cp = round == 1 ? checkpoint : Optional.empty();
            long now = round == 1 ? c.now() : c.now() + deleteRetention + 1;
            Object offsets = method(LogCleanerManager.class, "cleanableOffsets", UnifiedLog.class, Optional.class, long.class)
                    .invoke(null, log, cp, now);
            long firstDirty = (long) method(offsets.getClass(), "firstDirtyOffset").invoke(offsets);
            long uncleanable = (long) method(offsets.getClass(), "firstUncleanableDirtyOffset").invoke(offsets);
            long delay = (long) method(LogCleanerManager.class, "maxCompactionDelay", UnifiedLog.class, long.class, long.class)
                    .invoke(null, log, firstDirty, now);
            LogToClean ltc = new LogToClean(log, firstDirty, uncleanable, delay > 0);
            SkimpyOffsetMap map = new SkimpyOffsetMap(mapBytes);
            String tag = round == 1 ? "clean" : "clean2";
            if (ltc.cleanableBytes() > 0 && map.slots() * loadFactor >= 1.0) {
                Cleaner cleaner = new Cleaner(0, map, 64 * 1024, 10 << 20, loadFactor,
                        new Throttler(Double.MAX_VALUE, 300, "cleaner-io", "bytes", time), time, tp -> {});
                java.util.Map.Entry<Long, CleanerStats> r;
                try {
                    r = cleaner.doClean(ltc, now);
                } catch (Exception e) {
                    // E.g. a cleaned segment's time index full (a small segment.index.bytes):
                    // the clean aborts, the log keeps its segments.
                    out.write(p + tag + " failed\n");
                    scheduler.drain();
                    continue;
                }
                CleanerStats st = r.getValue();
                out.write(p + tag + " " + r.getKey() + " " + st.messagesRead() + " " + st.bytesRead() + " "
                        + st.messagesWritten() + " " + st.bytesWritten() + " " + st.invalidMessagesRead() + "\n");
            } else {
                out.write(p + tag + " skipped\n");
            }
            scheduler.drain();
        }
        reads(log, p, out, fetchBytes(c));
        scheduler.drain();
        log.flush(true);
        log.close();
        scheduler.drain();
    }

    /**
     * Every record of the cleaned log at every isolation level: from the log start, fetches
     * of 1000 bytes (at least one batch) until one returns nothing, each answered as
     * {@code ID read ISOLATION OFFSET BASE-LAST-CRC-SIZE,... aborted PID:FIRST,...} ({@code -}
     * for none, {@code none} for no aborted list), after {@code ID read lso OFFSET}.
     */
    /**
     * The fetch size of a case's reads: 1000 bytes, or 1 MiB (a segment per fetch) when its
     * batches are compressed, so that recompressed sizes do not change what a fetch holds.
     */
    static int fetchBytes(Case c) {
        for (String[] op : c.ops()) {
            if (op[0].equals("codec") && !op[1].equals("none")) return 1 << 20;
        }
        return 1000;
    }

    static void reads(UnifiedLog log, String p, BufferedWriter out, int fetchBytes) throws Exception {
        out.write(p + "read lso " + log.lastStableOffset() + "\n");
        for (org.apache.kafka.server.storage.log.FetchIsolation iso : org.apache.kafka.server.storage.log.FetchIsolation.values()) {
            long offset = log.logStartOffset();
            for (int n = 0; n < 100_000; n++) {
                org.apache.kafka.storage.internals.log.FetchDataInfo d = log.read(offset, fetchBytes, iso, true);
                StringBuilder line = new StringBuilder(p + "read " + iso + " " + offset + " ");
                long next = -1;
                int count = 0;
                for (org.apache.kafka.common.record.internal.RecordBatch b : d.records.batches()) {
                    if (count++ > 0) line.append(',');
                    line.append(b.baseOffset()).append('-').append(b.lastOffset()).append('-')
                            .append(Long.toHexString(b.checksum())).append('-').append(b.sizeInBytes());
                    next = b.nextOffset();
                }
                if (count == 0) line.append('-');
                line.append(" aborted ");
                if (d.abortedTransactions.isEmpty()) {
                    line.append("none");
                } else {
                    StringBuilder a = new StringBuilder();
                    for (org.apache.kafka.common.message.FetchResponseData.AbortedTransaction t : d.abortedTransactions.get()) {
                        if (a.length() > 0) a.append(',');
                        a.append(t.producerId()).append(':').append(t.firstOffset());
                    }
                    line.append(a.length() == 0 ? "-" : a);
                }
                out.write(line + "\n");
                if (count == 0) break;
                offset = next;
            }
        }
    }
}
