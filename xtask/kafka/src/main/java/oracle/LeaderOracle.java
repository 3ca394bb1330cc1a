package oracle;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.File;
import java.io.FileReader;
import java.io.FileWriter;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.Delayed;
import java.util.concurrent.FutureTask;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.server.common.RequestLocal;
import org.apache.kafka.server.util.Scheduler;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.FetchDataInfo;
import org.apache.kafka.storage.internals.log.LogAppendInfo;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.OffsetResultHolder;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.RecordValidationException;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.internals.log.VerificationGuard;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

/**
 * {@code k4-leader CASES.txt ANSWERS.txt [BUILT.txt]}: Kafka's own {@code UnifiedLog} (in-process, a mock
 * clock, a scheduler that runs what Kafka schedules once right after the operation that
 * scheduled it) runs each case's leader operations; xtask runs the same on our {@code Log}
 * and compares the answers and, after the clean close, the partition directory's files.
 *
 * <p>Input, one case per block:
 * <pre>
 * case ID PARTITION_DIR TIME_MS      the directory's name is TOPIC-PARTITION
 * config KEY VALUE                   a topic config (LogConfig property)
 * op append CLIENT|COORDINATOR LEADER_EPOCH HEX   appendAsLeader (RequestLocal.noCaching,
 *                                    VerificationGuard.SENTINEL, transactionVersion -1 for
 *                                    CLIENT, 0 for COORDINATOR)
 * op hw OFFSET                       updateHighWatermark
 * op read OFFSET MAX_BYTES LOG_END|HIGH_WATERMARK|TXN_COMMITTED true|false
 * op list TIMESTAMP                  fetchOffsetByTimestamp(ts, Optional.empty())
 * op sleep MS                        advance the mock clock
 * op roll                            roll()
 * end                                close() (clean: producer snapshot, indexes trimmed)
 * build ID CODEC PID EPOCH SEQ TXN RECORD...   a producer batch built by Kafka's client
 *                                    classes ({@link #build}); an append's HEX {@code @ID}
 *                                    appends it
 * build-marker ID PID EPOCH COMMIT|ABORT COORDINATOR_EPOCH TIME   an end-txn marker, likewise
 * </pre>
 * BUILT.txt gets one line {@code ID HEX} per {@code build} line, the bytes Kafka built.
 * Output: {@code ID open LEO HW}; per operation K: {@code ID K append FIRST LAST MAX_TS
 * LOG_APPEND_TIME LOG_START LAST_EPOCH|none NUM_MESSAGES VALID_BYTES SOURCE_CODEC LEO_AFTER},
 * {@code ID K hw RESULT}, {@code ID K read HEX|- ABORTED|none} (ABORTED {@code -} or
 * {@code PID:FIRST,...}; HEX the bytes the read returns, {@code -} if none), {@code ID K list
 * TS OFFSET EPOCH|none} or {@code ID K list none}, {@code ID K ok} (sleep, roll), {@code ID K
 * error ERRORS_NAME RECORD_ERRORS} where RECORD_ERRORS is {@code -} or {@code INDEX[:m],...}
 * ({@code :m} when the record error has a message); every operation's line ends with
 * {@code  | lso LSO}, the log's last stable offset after it; finally {@code ID closed LEO HW}.
 */
final class LeaderOracle {
    private LeaderOracle() {}

    /** Kafka's {@code Time} that moves only when told to. */
    static final class ManualTime implements Time {
        long ms;

        ManualTime(long ms) {
            this.ms = ms;
        }

        @Override
        public long milliseconds() {
            return ms;
        }

        @Override
        public long nanoseconds() {
            return ms * 1_000_000L;
        }

        @Override
        public void sleep(long d) {
            ms += d;
        }

        @Override
        public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) {
            if (!condition.get()) throw new IllegalStateException("waitObject under a manual clock");
        }
    }

    /** A one-shot task, run by {@link QueueScheduler#drain}. */
    static final class Task extends FutureTask<Void> implements ScheduledFuture<Void> {
        Task(Runnable r) {
            super(r, null);
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return 0;
        }

        @Override
        public int compareTo(Delayed o) {
            return 0;
        }
    }

    /**
     * Queues the one-shot tasks Kafka schedules (the roll's flush, the metadata file's flush)
     * and runs them, in order, after the operation; periodic tasks (the producer-expiration
     * check) never run, so that the files depend on the operations alone.
     */
    static final class QueueScheduler implements Scheduler {
        final List<Task> queue = new ArrayList<>();
        int ran;

        @Override
        public void startup() {}

        @Override
        public void shutdown() {}

        @Override
        public ScheduledFuture<?> schedule(String name, Runnable r, long delayMs, long periodMs) {
            Task t = new Task(r);
            if (periodMs <= 0) queue.add(t);
            return t;
        }

        @Override
        public void resizeThreadPool(int n) {}

        void drain() throws Exception {
            while (!queue.isEmpty()) {
                Task t = queue.remove(0);
                t.run();
                t.get();
                ran++;
            }
        }
    }

    record Case(String id, String dir, long time, Properties config, List<String[]> ops) {}

    /** The batches Kafka's client classes built, by the id of their {@code build} line. */
    static final Map<String, byte[]> BUILT = new HashMap<>();

    static void run(String[] a) throws Exception {
        List<Case> cases = new ArrayList<>();
        List<String> builtIds = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new FileReader(a[0]), 1 << 20)) {
            Case cur = null;
            for (String line; (line = r.readLine()) != null; ) {
                String[] w = line.trim().split(" ");
                switch (w[0]) {
                    case "case" -> cur = new Case(w[1], w[2], Long.parseLong(w[3]), new Properties(), new ArrayList<>());
                    case "config" -> cur.config().put(w[1], w[2]);
                    case "op" -> cur.ops().add(w);
                    case "end" -> cases.add(cur);
                    case "build", "build-marker" -> {
                        BUILT.put(w[1], w[0].equals("build") ? build(w) : buildMarker(w));
                        builtIds.add(w[1]);
                    }
                    default -> {}
                }
            }
        }
        if (a.length > 2) {
            HexFormat hex = HexFormat.of();
            try (BufferedWriter out = new BufferedWriter(new FileWriter(a[2]), 1 << 20)) {
                for (String id : builtIds) out.write(id + " " + hex.formatHex(BUILT.get(id)) + "\n");
            }
        }
        try (BufferedWriter out = new BufferedWriter(new FileWriter(a[1]), 1 << 20)) {
            for (Case c : cases) runCase(c, out);
        }
    }

    /** A key, value or header value of a {@code build} line: {@code ~} null, {@code _} empty. */
    static byte[] field(String s) {
        if (s.equals("~")) return null;
        if (s.equals("_")) return new byte[0];
        return HexFormat.of().parseHex(s);
    }

    /**
     * {@code build ID CODEC PRODUCER_ID PRODUCER_EPOCH BASE_SEQUENCE TRANSACTIONAL RECORD...},
     * a RECORD being {@code TIMESTAMP/KEY/VALUE/HEADERS} (HEADERS {@code -} or
     * {@code NAME=VALUE,...}, hex): the batch a producer sends, built by the client's
     * {@code MemoryRecordsBuilder} ({@code MemoryRecords.withRecords}, magic 2, base offset
     * 0, CreateTime, no partition leader epoch).
     */
    static byte[] build(String[] w) throws Exception {
        Compression codec = w[2].equals("none") ? Compression.NONE : Compression.of(w[2]).build();
        long pid = Long.parseLong(w[3]);
        short epoch = Short.parseShort(w[4]);
        int seq = Integer.parseInt(w[5]);
        boolean txn = Boolean.parseBoolean(w[6]);
        SimpleRecord[] records = new SimpleRecord[w.length - 7];
        for (int i = 7; i < w.length; i++) {
            String[] f = w[i].split("/", -1);
            List<Header> headers = new ArrayList<>();
            if (!f[3].equals("-")) {
                for (String h : f[3].split(",")) {
                    String[] kv = h.split("=", -1);
                    headers.add(new RecordHeader(new String(field(kv[0]), StandardCharsets.UTF_8), field(kv[1])));
                }
            }
            records[i - 7] = new SimpleRecord(Long.parseLong(f[0]), field(f[1]), field(f[2]),
                    headers.toArray(new Header[0]));
        }
        MemoryRecords m = MemoryRecords.withRecords(RecordBatch.MAGIC_VALUE_V2, 0L, codec, TimestampType.CREATE_TIME,
                pid, epoch, seq, RecordBatch.NO_PARTITION_LEADER_EPOCH, txn, records);
        return bytes(m);
    }

    /**
     * {@code build-marker ID PRODUCER_ID PRODUCER_EPOCH COMMIT|ABORT COORDINATOR_EPOCH TIMESTAMP}:
     * an end-txn marker as a coordinator sends it ({@code MemoryRecords.withEndTransactionMarker}).
     */
    static byte[] buildMarker(String[] w) throws Exception {
        EndTransactionMarker marker = new EndTransactionMarker(ControlRecordType.valueOf(w[4]), Integer.parseInt(w[5]));
        return bytes(MemoryRecords.withEndTransactionMarker(Long.parseLong(w[6]), Long.parseLong(w[2]),
                Short.parseShort(w[3]), marker));
    }

    static String errorName(Throwable e) {
        if (e instanceof RecordValidationException rv) return Errors.forException(rv.invalidException()).name();
        return Errors.forException(e).name();
    }

    static String recordErrors(Throwable e) {
        if (!(e instanceof RecordValidationException rv) || rv.recordErrors().isEmpty()) return "-";
        StringBuilder s = new StringBuilder();
        for (ProduceResponse.RecordError re : rv.recordErrors()) {
            if (s.length() > 0) s.append(',');
            s.append(re.batchIndex);
            if (re.message != null) s.append(":m");
        }
        return s.toString();
    }

    static byte[] bytes(Records records) throws Exception {
        int n = records.sizeInBytes();
        ByteBuffer buf = ByteBuffer.allocate(n);
        if (records instanceof FileRecords fr) {
            fr.readInto(buf, 0);
        } else if (records instanceof MemoryRecords mr) {
            buf.put(mr.buffer().duplicate());
        } else {
            throw new IllegalStateException("records of " + records.getClass());
        }
        return buf.array();
    }

    /** One operation's answer (without the operation's number and the LSO). */
    static String answer(UnifiedLog log, ManualTime time, String[] op, HexFormat hex) throws Exception {
        switch (op[1]) {
            case "append" -> {
                // `@ID`: the batch Kafka's client classes built for the `build` line ID.
                // A copy: appendAsLeader stamps offsets and epochs into the buffer it is given.
                byte[] batch = op[4].startsWith("@") ? BUILT.get(op[4].substring(1)).clone() : hex.parseHex(op[4]);
                MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(batch));
                AppendOrigin origin = AppendOrigin.valueOf(op[2]);
                // Kafka 4.4 refuses an end-txn marker appended with transactionVersion
                // -1 (TV_UNKNOWN) unless it is replicated (IllegalArgumentException, so
                // UNKNOWN_SERVER_ERROR): a coordinator's markers go with TV 0, the
                // rules before KIP-890's epoch bump (an older epoch is fenced).
                short tv = origin == AppendOrigin.COORDINATOR ? (short) 0 : (short) -1;
                LogAppendInfo info = log.appendAsLeader(records, Integer.parseInt(op[3]), origin,
                        RequestLocal.noCaching(), VerificationGuard.SENTINEL, tv);
                return "append " + info.firstOffset() + " " + info.lastOffset() + " " + info.maxTimestamp()
                        + " " + info.logAppendTime() + " " + info.logStartOffset() + " "
                        + info.lastLeaderEpoch().map(String::valueOf).orElse("none") + " " + info.numMessages()
                        + " " + info.validBytes() + " " + info.sourceCompression().name + " " + log.logEndOffset();
            }
            case "hw" -> {
                return "hw " + log.updateHighWatermark(Long.parseLong(op[2]));
            }
            case "read" -> {
                FetchDataInfo f = log.read(Long.parseLong(op[2]), Integer.parseInt(op[3]),
                        FetchIsolation.valueOf(op[4]), Boolean.parseBoolean(op[5]));
                byte[] b = bytes(f.records);
                String aborted = "none";
                if (f.abortedTransactions.isPresent()) {
                    StringBuilder s = new StringBuilder();
                    for (FetchResponseData.AbortedTransaction t : f.abortedTransactions.get()) {
                        if (s.length() > 0) s.append(',');
                        s.append(t.producerId()).append(':').append(t.firstOffset());
                    }
                    aborted = s.length() == 0 ? "-" : s.toString();
                }
                return "read " + (b.length == 0 ? "-" : hex.formatHex(b)) + " " + aborted;
            }
            case "list" -> {
                OffsetResultHolder h = log.fetchOffsetByTimestamp(Long.parseLong(op[2]), Optional.empty());
                Optional<FileRecords.TimestampAndOffset> t = h.timestampAndOffsetOpt();
                if (t.isEmpty()) return "list none";
                return "list " + t.get().timestamp + " " + t.get().offset + " "
                        + t.get().leaderEpoch.map(String::valueOf).orElse("none");
            }
            case "sleep" -> {
                time.sleep(Long.parseLong(op[2]));
                return "ok";
            }
            case "roll" -> {
                log.roll();
                return "ok";
            }
            default -> throw new IllegalArgumentException(op[1]);
        }
    }

    static void runCase(Case c, BufferedWriter out) throws Exception {
        String p = c.id() + " ";
        ManualTime time = new ManualTime(c.time());
        QueueScheduler scheduler = new QueueScheduler();
        File dir = new File(c.dir());
        UnifiedLog log;
        try {
            log = UnifiedLog.create(dir, new LogConfig(c.config()), 0L, 0L, scheduler,
                    new BrokerTopicStats(), time, 60_000, new ProducerStateManagerConfig(86_400_000, false),
                    600_000, new LogDirFailureChannel(1), true, Optional.empty());
            scheduler.drain();
        } catch (Exception e) {
            out.write(p + "open error " + e.toString().replace('\n', ' ') + "\n");
            return;
        }
        out.write(p + "open " + log.logEndOffset() + " " + log.highWatermark() + "\n");
        HexFormat hex = HexFormat.of();
        for (int k = 0; k < c.ops().size(); k++) {
            String[] op = c.ops().get(k);
            String q = p + k + " ";
            String answer;
            try {
                answer = answer(log, time, op, hex);
            } catch (Exception e) {
                answer = "error " + errorName(e) + " " + recordErrors(e);
            }
            scheduler.drain();
            // The last stable offset as a value after every operation.
            out.write(q + answer + " | lso " + log.lastStableOffset() + "\n");
        }
        // A broker's LogManager.shutdown flushes each log (including the active segment)
        // before it closes it, as our Log::close does.
        log.flush(true);
        log.close();
        scheduler.drain();
        out.write(p + "closed " + log.logEndOffset() + " " + log.highWatermark() + "\n");
    }
}
