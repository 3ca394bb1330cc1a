package oracle;

import java.io.File;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.HashMap;
import java.util.Map;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.storage.internals.log.AbstractIndex;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogSegment;
import org.apache.kafka.storage.internals.log.ProducerStateManager;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.OffsetIndex;
import org.apache.kafka.storage.internals.log.OffsetPosition;
import org.apache.kafka.storage.internals.log.TimeIndex;
import org.apache.kafka.storage.internals.log.TimestampOffset;

/**
 * Kafka's side of {@code cargo xtask vs-kafka}: the index work of the Rust server
 * {@code vs-kafka-ours} (xtask/vs-kafka), run on Kafka 4.4.0's own {@code OffsetIndex} and
 * {@code TimeIndex}, timed with {@link System#nanoTime}. Same line protocol on stdin/stdout
 * (see xtask/vs-kafka/src/lib.rs), minus {@code gen} (our side writes the inputs, this side
 * opens the same bytes); the strategy of {@code open} is ignored (Kafka has one) and there is
 * no sabotage. Exits at {@code quit} or at end of file on stdin (xtask gone).
 *
 * <p>Answers are folded with the same FNV-1a on 64-bit words as the Rust side's
 * {@code fold}, so equal hashes mean equal answers.
 */
public final class VsBench {
    private VsBench() {}

    static final long FOLD_START = 0xcbf29ce484222325L;
    static final long PRIME = 0x100000001b3L;

    static long fold(long h, long a, long b) {
        h = (h ^ a) * PRIME;
        return (h ^ b) * PRIME;
    }

    static final Map<String, AbstractIndex> INDEXES = new HashMap<>();
    static final Map<String, long[]> TARGETS = new HashMap<>();
    static final Map<String, LogSegment> SEGMENTS = new HashMap<>();

    public static void main(String[] args) throws Exception {
        LineServer.serve(VsBench::command);
        for (AbstractIndex i : INDEXES.values()) i.close();
        for (LogSegment g : SEGMENTS.values()) g.close();
        System.exit(0);
    }

    static String command(String[] w) throws Exception {
        switch (w[0]) {
            case "open": {
                File f = new File(w[3]);
                long base = Long.parseLong(w[4]);
                int max = Integer.parseInt(w[5]);
                AbstractIndex idx = w[2].equals("offset") ? new OffsetIndex(f, base, max, true)
                        : new TimeIndex(f, base, max, true);
                INDEXES.put(w[1], idx);
                return idx.entries() + " kafka";
            }
            case "targets": {
                ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(new File(w[2]).toPath()));
                long[] t = new long[b.remaining() / 8];
                for (int i = 0; i < t.length; i++) t[i] = b.getLong();
                TARGETS.put(w[1], t);
                return Integer.toString(t.length);
            }
            case "lookup": {
                AbstractIndex idx = INDEXES.get(w[1]);
                long[] t = TARGETS.get(w[2]);
                if (idx instanceof OffsetIndex o) return lookupOffsets(o, t);
                return lookupTimes((TimeIndex) idx, t);
            }
            case "append":
                return append(w[1], new File(w[2]), new File(w[3]), Long.parseLong(w[4]), Integer.parseInt(w[5]),
                        w[6]);
            case "seg-append":
                return segmentAppend(new File(w[1]), new File(w[2]), w.length > 3 && w[3].equals("prealloc"));
            case "seg-recover":
                return segmentRecover(new File(w[1]), new File(w[2]));
            case "seg-open": {
                LogSegment g = LogSegment.open(new File(w[2]), 0, config(), Time.SYSTEM, true, 0, false, "");
                SEGMENTS.put(w[1], g);
                return Integer.toString(g.size());
            }
            case "seg-open-all":
                return openSegments(new File(w[1]), Integer.parseInt(w[2]), Long.parseLong(w[3]));
            case "seg-translate":
                return segmentTranslate(SEGMENTS.get(w[1]), TARGETS.get(w[2]));
            case "leader":
                return leaderAppend(new File(w[1]), new File(w[2]), w[3]);
            case "log-append":
                return logAppend(new File(w[1]), new File(w[2]), Integer.parseInt(w[3]));
            case "seg-fetch":
                return segmentFetch(SEGMENTS.get(w[1]), TARGETS.get(w[2]), Integer.parseInt(w[3]), w[4],
                        Integer.parseInt(w[5]));
            default:
                throw new IllegalArgumentException("unknown command " + w[0]);
        }
    }

    static String lookupOffsets(OffsetIndex idx, long[] targets) {
        long h = FOLD_START;
        long start = System.nanoTime();
        for (long t : targets) {
            OffsetPosition p = idx.lookup(t);
            h = fold(h, p.offset(), p.position());
        }
        long ns = System.nanoTime() - start;
        return ns + " " + Long.toUnsignedString(h);
    }

    static String lookupTimes(TimeIndex idx, long[] targets) {
        long h = FOLD_START;
        long start = System.nanoTime();
        for (long t : targets) {
            TimestampOffset p = idx.lookup(t);
            h = fold(h, p.timestamp(), p.offset());
        }
        long ns = System.nanoTime() - start;
        return ns + " " + Long.toUnsignedString(h);
    }

    /**
     * Every entry of the index {@code src} appended to a new index {@code dst}, one
     * {@code append}/{@code maybeAppend} per entry (Kafka has no bulk appender), timed; then
     * trimmed and closed as a segment closes (Kafka 4.4's {@code close} only unmaps).
     */
    static String append(String kind, File src, File dst, long base, int max, String mode) throws Exception {
        if (!mode.equals("call")) throw new IllegalArgumentException("Kafka has no append mode " + mode);
        Files.deleteIfExists(dst.toPath());
        if (kind.equals("offset")) {
            OffsetIndex s = new OffsetIndex(src, base, max, false);
            int n = s.entries();
            long[] off = new long[n];
            int[] pos = new int[n];
            for (int i = 0; i < n; i++) {
                OffsetPosition p = s.entry(i);
                off[i] = p.offset();
                pos[i] = p.position();
            }
            s.close();
            OffsetIndex idx = new OffsetIndex(dst, base, max, true);
            long start = System.nanoTime();
            for (int i = 0; i < n; i++) idx.append(off[i], pos[i]);
            long ns = System.nanoTime() - start;
            idx.trimToValidSize();
            idx.close();
            return ns + " " + n;
        }
        TimeIndex s = new TimeIndex(src, base, max, false);
        int n = s.entries();
        long[] ts = new long[n];
        long[] off = new long[n];
        for (int i = 0; i < n; i++) {
            TimestampOffset p = s.entry(i);
            ts[i] = p.timestamp();
            off[i] = p.offset();
        }
        s.close();
        TimeIndex idx = new TimeIndex(dst, base, max, true);
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) idx.maybeAppend(ts[i], off[i], false);
        long ns = System.nanoTime() - start;
        int written = idx.entries();
        idx.trimToValidSize();
        idx.close();
        return ns + " " + written;
    }

    /** Kafka's defaults: 1 GiB segments, index.interval.bytes 4096, 10 MiB indexes. */
    static LogConfig config() {
        return new LogConfig(new java.util.Properties());
    }

    static void clearDir(File dir) throws Exception {
        if (dir.exists()) {
            try (var s = Files.walk(dir.toPath())) {
                s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        Files.createDirectories(dir.toPath());
    }

    /**
     * Every batch of {@code src} appended to a new segment in {@code dir}, one
     * {@code LogSegment.append(lastOffset, records)} per batch (as {@code UnifiedLog} calls it
     * for one batch), timed from the open; then {@code onBecomeInactiveSegment} (the final
     * time-index entry, the trims) and {@code close}, untimed.
     */
    static String segmentAppend(File src, File dir, boolean preallocate) throws Exception {
        MappedByteBuffer buf;
        try (FileChannel ch = FileChannel.open(src.toPath())) {
            buf = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size());
        }
        java.util.List<MemoryRecords> batches = new java.util.ArrayList<>();
        java.util.List<Long> lasts = new java.util.ArrayList<>();
        int pos = 0;
        while (pos < buf.limit()) {
            int size = buf.getInt(pos + 8) + 12;
            lasts.add(buf.getLong(pos) + buf.getInt(pos + 23));
            batches.add(MemoryRecords.readableRecords(buf.slice(pos, size)));
            pos += size;
        }
        clearDir(dir);
        long[] last = lasts.stream().mapToLong(Long::longValue).toArray();
        long start = System.nanoTime();
        // With preallocate, as UnifiedLog rolls a new segment of a topic with
        // preallocate=true (its LogConfig.initFileSize): the .log created at
        // segment.bytes, trimmed by close.
        LogConfig c = config();
        LogSegment g = LogSegment.open(dir, 0, c, Time.SYSTEM, false,
                preallocate ? c.segmentSize() : 0, preallocate, "");
        for (int i = 0; i < last.length; i++) g.append(last[i], batches.get(i));
        long ns = System.nanoTime() - start;
        g.onBecomeInactiveSegment();
        g.close();
        return ns + " " + last.length;
    }

    /** {@code dir} emptied, {@code src} copied to its .log, opened, {@code recover} timed. */
    static String segmentRecover(File src, File dir) throws Exception {
        clearDir(dir);
        Files.copy(src.toPath(), new File(dir, String.format("%020d.log", 0)).toPath(),
                StandardCopyOption.REPLACE_EXISTING);
        LogSegment g = LogSegment.open(dir, 0, config(), Time.SYSTEM, true, 0, false, "");
        ProducerStateManager psm = new ProducerStateManager(new TopicPartition("vs-kafka", 0), dir, 60_000,
                new ProducerStateManagerConfig(86_400_000, false), Time.SYSTEM);
        long start = System.nanoTime();
        int truncated = g.recover(psm, null);
        long ns = System.nanoTime() - start;
        g.onBecomeInactiveSegment();
        g.close();
        return ns + " " + truncated;
    }

    /**
     * {@code translateOffset} of every target, timed; {@code HASH1:HASH2} as on the Rust side:
     * (position, size) of each answer, then the answers' {@code offset}, which in Kafka 4.4 is
     * the batch's base offset.
     */
    static String segmentTranslate(LogSegment g, long[] targets) throws Exception {
        long h = FOLD_START;
        long[] offsets = new long[targets.length];
        int found = 0;
        long start = System.nanoTime();
        for (long t : targets) {
            FileRecords.LogOffsetPosition p = g.translateOffset(t);
            if (p == null) {
                h = fold(h, -1, -1);
            } else {
                h = fold(h, p.position, p.size);
                offsets[found++] = p.offset;
            }
        }
        long ns = System.nanoTime() - start;
        long h2 = FOLD_START;
        for (int i = 0; i < found; i++) h2 = fold(h2, offsets[i], 0);
        return ns + " " + Long.toUnsignedString(h) + ":" + Long.toUnsignedString(h2);
    }

    /**
     * A fetch of up to {@code maxBytes} at each of the first {@code count} targets:
     * {@code LogSegment.read(t, maxBytes, size, minOneMessage = true)}, then the records
     * delivered by {@code mode}: {@code copy} ({@code FileRecords.readInto} a reused heap
     * buffer), {@code pipe} or {@code socket} ({@code FileRecords.writeTo} a channel whose
     * {@code transferFrom} is {@code FileChannel.transferTo}, as Kafka's plaintext transport
     * layer's, into a drained pipe or loopback socket). Timed as the Rust side; answers
     * {@code NANOS BYTES HASH} with the same hash.
     */
    static String segmentFetch(LogSegment g, long[] targets, int maxBytes, String mode, int count)
            throws Exception {
        int n = Math.min(count, targets.length);
        long size = g.size();
        long h = FOLD_START;
        long bytes = 0;
        if (mode.equals("copy")) {
            ByteBuffer buf = ByteBuffer.allocate(2 * maxBytes + (1 << 20));
            long start = System.nanoTime();
            for (int i = 0; i < n; i++) {
                FileRecords r = (FileRecords) g.read(targets[i], maxBytes, java.util.Optional.of(size), true).records;
                int len = r.sizeInBytes();
                if (buf.capacity() < len) buf = ByteBuffer.allocate(len);
                buf.clear();
                buf.limit(len);
                r.readInto(buf, 0);
                h = fold(h, len, len >= 8 ? buf.getLong(0) : -1);
                bytes += len;
            }
            long ns = System.nanoTime() - start;
            return ns + " " + bytes + " " + Long.toUnsignedString(h);
        }
        java.nio.channels.GatheringByteChannel sink;
        java.nio.channels.ReadableByteChannel source;
        java.nio.channels.ServerSocketChannel server = null;
        if (mode.equals("pipe")) {
            java.nio.channels.Pipe p = java.nio.channels.Pipe.open();
            sink = p.sink();
            source = p.source();
        } else if (mode.equals("socket")) {
            server = java.nio.channels.ServerSocketChannel.open();
            server.bind(new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0));
            java.nio.channels.SocketChannel client = java.nio.channels.SocketChannel.open(server.getLocalAddress());
            java.nio.channels.SocketChannel accepted = server.accept();
            accepted.socket().setTcpNoDelay(true);
            sink = accepted;
            source = client;
        } else {
            throw new IllegalArgumentException("no delivery " + mode);
        }
        final java.nio.channels.ReadableByteChannel from = source;
        final long[] drained = {0};
        final Exception[] failed = {null};
        Thread drain = new Thread(() -> {
            ByteBuffer b = ByteBuffer.allocate(1 << 16);
            try {
                while (true) {
                    b.clear();
                    int k = from.read(b);
                    if (k < 0) break;
                    drained[0] += k;
                }
            } catch (Exception e) {
                failed[0] = e;
            }
        });
        drain.start();
        Channel out = new Channel(sink);
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            FileRecords r = (FileRecords) g.read(targets[i], maxBytes, java.util.Optional.of(size), true).records;
            int len = r.sizeInBytes();
            int sent = 0;
            while (sent < len) sent += r.writeTo(out, sent, len - sent);
            h = fold(h, len, 0);
            bytes += len;
        }
        long ns = System.nanoTime() - start;
        sink.close();
        drain.join();
        source.close();
        if (server != null) server.close();
        if (failed[0] != null) throw failed[0];
        if (drained[0] != bytes) throw new IllegalStateException("sent " + bytes + " bytes, the drain read " + drained[0]);
        return ns + " " + bytes + " " + Long.toUnsignedString(h);
    }

    /**
     * A new {@code UnifiedLog} in {@code dir} (emptied first with {@link #clearDir}; the
     * topic-partition directory name) whose {@code LogConfig} is {@code props} over Kafka's
     * defaults: log start offset and recovery point 0, the system clock, a clean last
     * shutdown, no topic id. Its tasks go to {@code scheduler}, which is drained before the
     * log is returned (the creation's scheduled flush), so that none of this falls inside a
     * caller's timed region.
     */
    static org.apache.kafka.storage.internals.log.UnifiedLog newLog(File dir, java.util.Properties props,
            LeaderOracle.QueueScheduler scheduler) throws Exception {
        clearDir(dir);
        org.apache.kafka.storage.internals.log.UnifiedLog log = org.apache.kafka.storage.internals.log.UnifiedLog.create(
                dir, new LogConfig(props), 0L, 0L, scheduler, new org.apache.kafka.storage.log.metrics.BrokerTopicStats(),
                Time.SYSTEM, 60_000, new ProducerStateManagerConfig(86_400_000, false), 600_000,
                new org.apache.kafka.storage.internals.log.LogDirFailureChannel(1), true, java.util.Optional.empty());
        scheduler.drain();
        return log;
    }

    /**
     * Every entry of {@code input} (origin byte, big-endian length, a producer's v2 batch)
     * appended with {@code UnifiedLog.appendAsLeader} (leader epoch 0; a client's batches
     * with transaction version -1, the coordinator's markers with 0, as {@code
     * LeaderOracle}; the request-local buffers of a broker's request handler) to a new log
     * in {@code dir} (emptied first; the topic-partition directory name) whose
     * {@code compression.type} is {@code producer} ({@code none}) or {@code lz4}, timed; the
     * batches are copied into their own buffers before the clock starts, as a request's
     * arrive. Then the log is closed. Answers {@code NANOS LOG_END_OFFSET HASH} with the
     * Rust side's hash of each append's first and last offsets.
     */
    static String leaderAppend(File input, File dir, String codec) throws Exception {
        ByteBuffer in = ByteBuffer.wrap(Files.readAllBytes(input.toPath()));
        java.util.List<MemoryRecords> batches = new java.util.ArrayList<>();
        java.util.List<org.apache.kafka.storage.internals.log.AppendOrigin> origins = new java.util.ArrayList<>();
        while (in.hasRemaining()) {
            byte origin = in.get();
            byte[] b = new byte[in.getInt()];
            in.get(b);
            batches.add(MemoryRecords.readableRecords(ByteBuffer.wrap(b)));
            origins.add(origin == 1 ? org.apache.kafka.storage.internals.log.AppendOrigin.COORDINATOR
                    : org.apache.kafka.storage.internals.log.AppendOrigin.CLIENT);
        }
        java.util.Properties props = new java.util.Properties();
        props.put("compression.type", codec.equals("none") ? "producer" : codec);
        LeaderOracle.QueueScheduler scheduler = new LeaderOracle.QueueScheduler();
        org.apache.kafka.storage.internals.log.UnifiedLog log = newLog(dir, props, scheduler);
        org.apache.kafka.server.common.RequestLocal local = org.apache.kafka.server.common.RequestLocal.withThreadConfinedCaching();
        long h = FOLD_START;
        long start = System.nanoTime();
        for (int i = 0; i < batches.size(); i++) {
            org.apache.kafka.storage.internals.log.AppendOrigin origin = origins.get(i);
            short tv = origin == org.apache.kafka.storage.internals.log.AppendOrigin.COORDINATOR ? (short) 0 : (short) -1;
            org.apache.kafka.storage.internals.log.LogAppendInfo info = log.appendAsLeader(batches.get(i), 0, origin,
                    local, org.apache.kafka.storage.internals.log.VerificationGuard.SENTINEL, tv);
            h = fold(h, info.firstOffset(), info.lastOffset());
        }
        long ns = System.nanoTime() - start;
        long leo = log.logEndOffset();
        log.close();
        scheduler.drain();
        return ns + " " + leo + " " + Long.toUnsignedString(h);
    }

    /**
     * Every batch of {@code src} (v2 batches carrying their offsets) appended with
     * {@code UnifiedLog.appendAsFollower(batch, 0)}, one call per batch (as a follower's fetch
     * of one batch), to a new log in {@code dir} (emptied first; the topic-partition directory
     * name) with {@code segment.bytes} = {@code segmentBytes}, so that it rolls; timed from
     * after the log's creation, the batches sliced from the mapped source before the clock
     * starts. Then the log is closed. Answers {@code NANOS LOG_END_OFFSET:HASH}, the hash of
     * each append's first and last offsets as the Rust side's {@code log_append}.
     */
    static String logAppend(File src, File dir, int segmentBytes) throws Exception {
        MappedByteBuffer buf;
        try (FileChannel ch = FileChannel.open(src.toPath())) {
            buf = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size());
        }
        java.util.List<MemoryRecords> batches = new java.util.ArrayList<>();
        int pos = 0;
        while (pos < buf.limit()) {
            int size = buf.getInt(pos + 8) + 12;
            batches.add(MemoryRecords.readableRecords(buf.slice(pos, size)));
            pos += size;
        }
        java.util.Properties props = new java.util.Properties();
        props.put("segment.bytes", Integer.toString(segmentBytes));
        LeaderOracle.QueueScheduler scheduler = new LeaderOracle.QueueScheduler();
        org.apache.kafka.storage.internals.log.UnifiedLog log = newLog(dir, props, scheduler);
        long h = FOLD_START;
        long start = System.nanoTime();
        for (MemoryRecords b : batches) {
            org.apache.kafka.storage.internals.log.LogAppendInfo info = log.appendAsFollower(b, 0);
            h = fold(h, info.firstOffset(), info.lastOffset());
        }
        long ns = System.nanoTime() - start;
        long leo = log.logEndOffset();
        // The roll's background flush of the rolled segment, then the close.
        scheduler.drain();
        log.close();
        scheduler.drain();
        return ns + " " + leo + ":" + Long.toUnsignedString(h);
    }

    /** A {@code TransferableChannel} over a channel, as Kafka's {@code PlaintextTransportLayer}. */
    static final class Channel implements org.apache.kafka.common.network.TransferableChannel {
        final java.nio.channels.GatheringByteChannel ch;

        Channel(java.nio.channels.GatheringByteChannel ch) {
            this.ch = ch;
        }

        public boolean hasPendingWrites() {
            return false;
        }

        public long transferFrom(FileChannel fileChannel, long position, long count) throws java.io.IOException {
            return fileChannel.transferTo(position, count, ch);
        }

        public int write(ByteBuffer src) throws java.io.IOException {
            return ch.write(src);
        }

        public long write(ByteBuffer[] srcs, int offset, int length) throws java.io.IOException {
            return ch.write(srcs, offset, length);
        }

        public long write(ByteBuffer[] srcs) throws java.io.IOException {
            return ch.write(srcs);
        }

        public boolean isOpen() {
            return ch.isOpen();
        }

        public void close() throws java.io.IOException {
            ch.close();
        }
    }

    /**
     * {@code LogSegment.open} of {@code n} existing segments (base offsets 0, step, ...) and
     * {@code sanityCheck(false)} of each, as {@code LogLoader} does after a clean shutdown,
     * timed; then {@code close} (untimed).
     */
    static String openSegments(File dir, int n, long step) throws Exception {
        LogConfig config = config();
        long h = FOLD_START;
        LogSegment[] open = new LogSegment[n];
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            long base = i * step;
            LogSegment g = LogSegment.open(dir, base, config, Time.SYSTEM, true, 0, false, "");
            g.sanityCheck(false);
            h = fold(h, base, g.size());
            open[i] = g;
        }
        long ns = System.nanoTime() - start;
        for (LogSegment g : open) g.close();
        return ns + " " + Long.toUnsignedString(h);
    }
}
