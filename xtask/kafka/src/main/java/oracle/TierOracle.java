package oracle;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.File;
import java.io.FileReader;
import java.io.FileWriter;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.server.common.RequestLocal;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentState;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogOffsetsListener;
import org.apache.kafka.storage.internals.log.LogStartOffsetIncrementReason;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.internals.log.VerificationGuard;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

/**
 * {@code k8-local-retention CASES.txt ANSWERS.txt}: Kafka's own {@code UnifiedLog} with remote
 * storage enabled ({@code remoteStorageSystemEnable} true and the topic's
 * {@code remote.storage.enable}), in-process, with the k4-leader mock clock and scheduler.
 * No {@code RemoteLogManager} is needed: what it tells the log, the highest offset in remote
 * storage and the log start offset after a remote deletion, are operations of the case, as
 * Kafka's own {@code UnifiedLogTest} drives them.
 *
 * <p>Input, one case per block:
 * <pre>
 * case ID PARTITION_DIR TIME_MS
 * config KEY VALUE          a topic config
 * op append HEX             appendAsLeader(leader epoch 0, CLIENT)
 * op hw OFFSET              updateHighWatermark
 * op uploaded OFFSET        updateHighestOffsetInRemoteStorage
 * op remote-start OFFSET    updateLogStartOffsetFromRemoteTier
 * op delete-records OFFSET  maybeIncrementLogStartOffset(ClientRecordDeletion)
 * op sleep MS               advance the mock clock
 * op roll                   roll()
 * op retain                 deleteOldSegments()
 * end                       close()
 * </pre>
 * Output: per operation K, {@code ID K ANSWER | STATE}, where ANSWER is {@code ok},
 * {@code deleted N} (retain) or {@code error ERRORS_NAME}, and STATE is
 * {@code segs B,B,.. ls LOG_START lls LOCAL_LOG_START leo LEO hw HW remote HIGHEST files
 * BASE.log,..} (files: the {@code .log} files in the directory). The first line is
 * {@link #transitions}.
 */
final class TierOracle {
    private TierOracle() {}

    record Case(String id, String dir, long time, Properties config, List<String[]> ops) {}

    static void run(String[] a) throws Exception {
        List<Case> cases = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new FileReader(a[0]), 1 << 20)) {
            Case cur = null;
            for (String line; (line = r.readLine()) != null; ) {
                String[] w = line.trim().split(" ");
                switch (w[0]) {
                    case "case" -> cur = new Case(w[1], w[2], Long.parseLong(w[3]), new Properties(), new ArrayList<>());
                    case "config" -> cur.config().put(w[1], w[2]);
                    case "op" -> cur.ops().add(w);
                    case "end" -> cases.add(cur);
                    default -> {}
                }
            }
        }
        try (BufferedWriter out = new BufferedWriter(new FileWriter(a[1]), 1 << 20)) {
            transitions(out);
            for (Case c : cases) runCase(c, out);
        }
    }

    /**
     * {@code transitions SRC>TARGET=true|false ...}: Kafka's
     * {@code RemoteLogSegmentState.isValidTransition} for every source (none as {@code -},
     * else the state's id) and target id.
     */
    static void transitions(BufferedWriter out) throws Exception {
        StringBuilder s = new StringBuilder("transitions");
        List<RemoteLogSegmentState> sources = new ArrayList<>();
        sources.add(null);
        sources.addAll(Arrays.asList(RemoteLogSegmentState.values()));
        for (RemoteLogSegmentState src : sources) {
            for (RemoteLogSegmentState target : RemoteLogSegmentState.values()) {
                s.append(' ').append(src == null ? "-" : String.valueOf(src.id())).append('>')
                        .append(target.id()).append('=')
                        .append(RemoteLogSegmentState.isValidTransition(src, target));
            }
        }
        out.write(s + "\n");
    }

    static String state(UnifiedLog log, File dir) {
        StringBuilder s = new StringBuilder("segs ");
        boolean first = true;
        for (var seg : log.logSegments()) {
            if (!first) s.append(',');
            s.append(seg.baseOffset());
            first = false;
        }
        String[] names = dir.list((d, n) -> n.endsWith(".log"));
        Arrays.sort(names);
        s.append(" ls ").append(log.logStartOffset()).append(" lls ").append(log.localLogStartOffset())
                .append(" leo ").append(log.logEndOffset()).append(" hw ").append(log.highWatermark())
                .append(" remote ").append(log.highestOffsetInRemoteStorage())
                .append(" files ").append(names.length == 0 ? "-" : String.join(",", names));
        return s.toString();
    }

    static String answer(UnifiedLog log, LeaderOracle.ManualTime time, String[] op) throws Exception {
        switch (op[1]) {
            case "append" -> {
                MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(HexFormat.of().parseHex(op[2])));
                log.appendAsLeader(records, 0, AppendOrigin.CLIENT, RequestLocal.noCaching(),
                        VerificationGuard.SENTINEL, (short) -1);
                return "ok";
            }
            case "hw" -> {
                log.updateHighWatermark(Long.parseLong(op[2]));
                return "ok";
            }
            case "uploaded" -> {
                log.updateHighestOffsetInRemoteStorage(Long.parseLong(op[2]));
                return "ok";
            }
            case "remote-start" -> {
                log.updateLogStartOffsetFromRemoteTier(Long.parseLong(op[2]));
                return "ok";
            }
            case "delete-records" -> {
                log.maybeIncrementLogStartOffset(Long.parseLong(op[2]), LogStartOffsetIncrementReason.ClientRecordDeletion);
                return "ok";
            }
            case "sleep" -> {
                time.sleep(Long.parseLong(op[2]));
                return "ok";
            }
            case "roll" -> {
                log.roll();
                return "ok";
            }
            case "retain" -> {
                return "deleted " + log.deleteOldSegments();
            }
            default -> throw new IllegalArgumentException(op[1]);
        }
    }

    static void runCase(Case c, BufferedWriter out) throws Exception {
        String p = c.id() + " ";
        LeaderOracle.ManualTime time = new LeaderOracle.ManualTime(c.time());
        LeaderOracle.QueueScheduler scheduler = new LeaderOracle.QueueScheduler();
        File dir = new File(c.dir());
        UnifiedLog log;
        try {
            log = UnifiedLog.create(dir, new LogConfig(c.config()), 0L, 0L, scheduler,
                    new BrokerTopicStats(), time, 60_000, new ProducerStateManagerConfig(86_400_000, false),
                    600_000, new LogDirFailureChannel(1), true, Optional.empty(),
                    new ConcurrentHashMap<>(), true, LogOffsetsListener.NO_OP_OFFSETS_LISTENER);
            scheduler.drain();
        } catch (Exception e) {
            out.write(p + "open error " + e.toString().replace('\n', ' ') + "\n");
            return;
        }
        out.write(p + "open | " + state(log, dir) + "\n");
        for (int k = 0; k < c.ops().size(); k++) {
            String[] op = c.ops().get(k);
            String answer;
            try {
                answer = answer(log, time, op);
            } catch (Exception e) {
                answer = "error " + Errors.forException(e).name();
            }
            scheduler.drain();
            out.write(p + k + " " + answer + " | " + state(log, dir) + "\n");
        }
        log.close();
        scheduler.drain();
        out.write(p + "closed\n");
    }
}
