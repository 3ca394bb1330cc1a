package oracle;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.stream.Stream;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

/**
 * Kafka's side of {@code cargo xtask vs-kafka --only opens}: a partition directory opened by
 * Kafka 4.4.0's {@code UnifiedLog.create} (its {@code LogLoader}) in-process, as a broker's
 * log manager opens each partition at start-up, timed with {@link System#nanoTime}. Line
 * protocol on stdin/stdout as {@code vs-kafka-ours}'s {@code log-open}
 * (xtask/vs-kafka/src/lib.rs):
 *
 * <pre>
 * open ID DIR CLEAN RECOVERY_POINT   UnifiedLog.create of DIR with Kafka's default config,
 *                               log start offset 0, the recovery point RECOVERY_POINT and
 *                               lastShutdownClean = (CLEAN == 1), timed; the log held as ID
 *                               -> ok NANOS LOG_START LOG_END SEGMENTS FDS_BEFORE FDS_AFTER
 *                                  MAPS_BEFORE MAPS_AFTER
 * close ID                      close the log held as ID (untimed) -> ok
 * quit
 * </pre>
 * FDS are the entries of /proc/self/fd and MAPS the lines of /proc/self/maps of this JVM.
 */
public final class OpensBench {
    private OpensBench() {}

    static final Map<String, UnifiedLog> LOGS = new HashMap<>();
    static final Map<String, LeaderOracle.QueueScheduler> SCHEDULERS = new HashMap<>();

    public static void main(String[] args) throws Exception {
        LineServer.serve(OpensBench::command);
        for (UnifiedLog l : LOGS.values()) l.close();
        System.exit(0);
    }

    static String command(String[] w) throws Exception {
        switch (w[0]) {
            case "open":
                return open(w[1], new File(w[2]), w[3].equals("1"), Long.parseLong(w[4]));
            case "close": {
                UnifiedLog log = LOGS.remove(w[1]);
                if (log == null) throw new IllegalArgumentException("no open log " + w[1]);
                log.close();
                SCHEDULERS.remove(w[1]).drain();
                return "";
            }
            default:
                throw new IllegalArgumentException("unknown command " + w[0]);
        }
    }

    static long fds() throws Exception {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }

    static long maps() throws Exception {
        try (Stream<String> s = Files.lines(Path.of("/proc/self/maps"))) {
            return s.count();
        }
    }

    static String open(String id, File dir, boolean clean, long recoveryPoint) throws Exception {
        if (LOGS.containsKey(id)) throw new IllegalArgumentException("log " + id + " is open already");
        LeaderOracle.QueueScheduler scheduler = new LeaderOracle.QueueScheduler();
        LogConfig config = new LogConfig(new Properties());
        BrokerTopicStats stats = new BrokerTopicStats();
        ProducerStateManagerConfig psm = new ProducerStateManagerConfig(86_400_000, false);
        LogDirFailureChannel failures = new LogDirFailureChannel(1);
        long fds0 = fds(), maps0 = maps();
        long t0 = System.nanoTime();
        UnifiedLog log = UnifiedLog.create(dir, config, 0L, recoveryPoint, scheduler, stats, Time.SYSTEM, 60_000,
                psm, 600_000, failures, clean, Optional.empty());
        long ns = System.nanoTime() - t0;
        long fds1 = fds(), maps1 = maps();
        LOGS.put(id, log);
        SCHEDULERS.put(id, scheduler);
        return ns + " " + log.logStartOffset() + " " + log.logEndOffset() + " " + log.numberOfSegments() + " "
                + fds0 + " " + fds1 + " " + maps0 + " " + maps1;
    }
}
