package oracle;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.storage.internals.log.AbstractIndex;
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

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false);
        for (String line; (line = in.readLine()) != null; ) {
            String[] w = line.trim().split(" ");
            if (w[0].equals("quit")) break;
            String reply;
            try {
                reply = "ok " + command(w);
            } catch (Exception e) {
                reply = "err " + e.toString().replace('\n', ' ');
            }
            out.println(reply);
            out.flush();
        }
        for (AbstractIndex i : INDEXES.values()) i.close();
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
}
