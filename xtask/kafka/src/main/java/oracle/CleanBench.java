package oracle;

import java.io.File;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import org.apache.kafka.storage.internals.log.Cleaner;
import org.apache.kafka.storage.internals.log.CleanerStats;
import org.apache.kafka.storage.internals.log.LogCleanerManager;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogToClean;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.SkimpyOffsetMap;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.internals.utils.Throttler;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

/**
 * Kafka's side of {@code cargo xtask vs-kafka --only clean}: one {@code Cleaner.doClean} of
 * a compacted partition directory, as a cleaner thread runs it, on Kafka 4.4.0's own
 * {@code UnifiedLog} in-process with a manual clock (as {@code CleanerOracle} does), timed
 * with {@link System#nanoTime}. Line protocol on stdin/stdout as {@code vs-kafka-ours}'s
 * {@code clean} (xtask/vs-kafka/src/lib.rs):
 *
 * <pre>
 * clean DIR LEO NOW MAP_BYTES   open DIR (log start 0, recovery point and high watermark
 *                               LEO, a clean shutdown), plan the clean from no checkpoint
 *                               at time NOW (cleanableOffsets, LogToClean), doClean (timed)
 *                               with a SkimpyOffsetMap of MAP_BYTES kept across runs (a
 *                               cleaner thread's map), load factor 0.9, an I/O buffer of
 *                               256 KiB growing to 1048588 bytes (the broker's defaults for
 *                               one thread); then the scheduled deletions run and the log is
 *                               flushed and closed
 *                               -> ok NANOS END_OFFSET MESSAGES_READ BYTES_READ
 *                                  MESSAGES_WRITTEN BYTES_WRITTEN MAP_BUFFER_BYTES MAP_BUFFER_BYTES
 * quit
 * </pre>
 * MAP_BUFFER_BYTES is the capacity of the map's own {@code ByteBuffer} (read by reflection).
 */
public final class CleanBench {
    private CleanBench() {}

    static SkimpyOffsetMap map;
    static int mapBytes = -1;

    public static void main(String[] args) throws Exception {
        LineServer.serve(w -> {
            if (!w[0].equals("clean")) throw new IllegalArgumentException("unknown command " + w[0]);
            return clean(w[1], Long.parseLong(w[2]), Long.parseLong(w[3]), Integer.parseInt(w[4]));
        });
        System.exit(0);
    }

    static String clean(String dir, long leo, long now, int bytes) throws Exception {
        if (map == null || mapBytes != bytes) {
            map = new SkimpyOffsetMap(bytes);
            mapBytes = bytes;
        }
        LeaderOracle.ManualTime time = new LeaderOracle.ManualTime(now);
        LeaderOracle.QueueScheduler scheduler = new LeaderOracle.QueueScheduler();
        Properties p = new Properties();
        p.put("cleanup.policy", "compact");
        UnifiedLog log = UnifiedLog.create(new File(dir), new LogConfig(p), 0L, leo, scheduler,
                new BrokerTopicStats(), time, 60_000, new ProducerStateManagerConfig(86_400_000, false),
                600_000, new LogDirFailureChannel(1), true, Optional.empty());
        scheduler.drain();
        log.updateHighWatermark(leo);
        Object offsets = CleanerOracle.method(LogCleanerManager.class, "cleanableOffsets", UnifiedLog.class,
                Optional.class, long.class).invoke(null, log, Optional.empty(), now);
        long firstDirty = (long) CleanerOracle.method(offsets.getClass(), "firstDirtyOffset").invoke(offsets);
        long uncleanable = (long) CleanerOracle.method(offsets.getClass(), "firstUncleanableDirtyOffset").invoke(offsets);
        long delay = (long) CleanerOracle.method(LogCleanerManager.class, "maxCompactionDelay", UnifiedLog.class,
                long.class, long.class).invoke(null, log, firstDirty, now);
        LogToClean ltc = new LogToClean(log, firstDirty, uncleanable, delay > 0);
        Cleaner cleaner = new Cleaner(0, map, 512 * 1024 / 2, 1048588, 0.9,
                new Throttler(Double.MAX_VALUE, 300, "cleaner-io", "bytes", time), time, tp -> {});
        long t0 = System.nanoTime();
        Map.Entry<Long, CleanerStats> r = cleaner.doClean(ltc, now);
        long ns = System.nanoTime() - t0;
        scheduler.drain();
        log.flush(true);
        log.close();
        scheduler.drain();
        Field f = SkimpyOffsetMap.class.getDeclaredField("bytes");
        f.setAccessible(true);
        int buffer = ((ByteBuffer) f.get(map)).capacity();
        CleanerStats st = r.getValue();
        return ns + " " + r.getKey() + " " + st.messagesRead() + " " + st.bytesRead() + " " + st.messagesWritten()
                + " " + st.bytesWritten() + " " + buffer + " " + buffer;
    }
}
