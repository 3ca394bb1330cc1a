package oracle;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.File;
import java.io.FileReader;
import java.io.FileWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.common.message.AbortedTxn;
import org.apache.kafka.storage.internals.log.OffsetIndex;
import org.apache.kafka.storage.internals.log.OffsetPosition;
import org.apache.kafka.storage.internals.log.TimeIndex;
import org.apache.kafka.storage.internals.log.TimestampOffset;
import org.apache.kafka.storage.internals.log.TransactionIndex;
import org.apache.kafka.storage.internals.log.TxnIndexSearchResult;

/**
 * {@code k3 CASES.txt ANSWERS.txt}: Kafka's own OffsetIndex, TimeIndex and TransactionIndex
 * write index files (the cases' operations) and answer queries on them and on the files
 * that xtask wrote with this workspace's crates.
 *
 * <p>Input, one case per block:
 * <pre>
 * case ID KIND BASE MAX_SIZE OURS_PATH KAFKA_PATH|-      (KIND: offset, time, txn)
 * op append A B [C D]       offset: offset position; time: timestamp offset;
 *                           txn: producerId firstOffset lastOffset lastStableOffset
 * op truncate_to X | op truncate_to_entries N | op resize N
 * op reopen                 a clean close (trimmed, as a segment closes) and a reopen
 * op reopen_untrimmed       a close without the trim (Kafka 4.4's close) and a reopen
 * q lookup T | q upper POSITION SIZE | q collect FETCH UPPER
 * end
 * </pre>
 * KAFKA_PATH "-" means no file is written (a raw file given by xtask is only queried).
 * Output lines: {@code ID SIDE what answer}, SIDE being {@code ours} or {@code kafka}.
 */
final class IndexOracle {
    private IndexOracle() {}

    record Case(String id, String kind, long base, int maxSize, String ours, String kafka,
            List<String[]> ops, List<String[]> queries) {}

    static void run(String[] a) throws Exception {
        List<Case> cases = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new FileReader(a[0]))) {
            Case cur = null;
            for (String line; (line = r.readLine()) != null; ) {
                String[] w = line.trim().split(" ");
                switch (w[0]) {
                    case "case" -> cur = new Case(w[1], w[2], Long.parseLong(w[3]), Integer.parseInt(w[4]), w[5], w[6],
                            new ArrayList<>(), new ArrayList<>());
                    case "op" -> cur.ops().add(w);
                    case "q" -> cur.queries().add(w);
                    case "end" -> cases.add(cur);
                    default -> {}
                }
            }
        }
        try (BufferedWriter out = new BufferedWriter(new FileWriter(a[1]))) {
            for (Case c : cases) {
                if (!c.kafka().equals("-")) {
                    try {
                        write(c);
                    } catch (Exception e) {
                        out.write(c.id() + " kafka write-error " + e + "\n");
                        continue;
                    }
                }
                answer(c, "ours", c.ours(), out);
                if (!c.kafka().equals("-")) answer(c, "kafka", c.kafka(), out);
            }
        }
    }

    static void write(Case c) throws Exception {
        File f = new File(c.kafka());
        switch (c.kind()) {
            case "offset" -> {
                OffsetIndex idx = new OffsetIndex(f, c.base(), c.maxSize(), true);
                for (String[] op : c.ops()) {
                    switch (op[1]) {
                        case "append" -> idx.append(Long.parseLong(op[2]), Integer.parseInt(op[3]));
                        case "truncate_to" -> idx.truncateTo(Long.parseLong(op[2]));
                        case "resize" -> idx.resize(Integer.parseInt(op[2]));
                        case "truncate_to_entries" -> truncateToEntries(idx, Integer.parseInt(op[2]));
                        case "reopen" -> {
                            closeTrimmed(idx);
                            idx = new OffsetIndex(f, c.base(), c.maxSize(), true);
                        }
                        case "reopen_untrimmed" -> {
                            closeUntrimmed(idx, f);
                            idx = new OffsetIndex(f, c.base(), c.maxSize(), true);
                        }
                        default -> throw new IllegalArgumentException(op[1]);
                    }
                }
                closeTrimmed(idx);
            }
            case "time" -> {
                TimeIndex idx = new TimeIndex(f, c.base(), c.maxSize(), true);
                for (String[] op : c.ops()) {
                    switch (op[1]) {
                        case "append" -> idx.maybeAppend(Long.parseLong(op[2]), Long.parseLong(op[3]), false);
                        case "truncate_to" -> idx.truncateTo(Long.parseLong(op[2]));
                        case "resize" -> idx.resize(Integer.parseInt(op[2]));
                        case "truncate_to_entries" -> truncateToEntries(idx, Integer.parseInt(op[2]));
                        case "reopen" -> {
                            closeTrimmed(idx);
                            idx = new TimeIndex(f, c.base(), c.maxSize(), true);
                        }
                        case "reopen_untrimmed" -> {
                            closeUntrimmed(idx, f);
                            idx = new TimeIndex(f, c.base(), c.maxSize(), true);
                        }
                        default -> throw new IllegalArgumentException(op[1]);
                    }
                }
                closeTrimmed(idx);
            }
            case "txn" -> {
                TransactionIndex idx = new TransactionIndex(c.base(), f);
                for (String[] op : c.ops()) {
                    switch (op[1]) {
                        case "append" -> idx.append(new AbortedTxn().setProducerId(Long.parseLong(op[2]))
                                .setFirstOffset(Long.parseLong(op[3])).setLastOffset(Long.parseLong(op[4]))
                                .setLastStableOffset(Long.parseLong(op[5])));
                        case "truncate_to" -> idx.truncateTo(Long.parseLong(op[2]));
                        case "reopen" -> {
                            idx.close();
                            idx = new TransactionIndex(c.base(), f);
                        }
                        default -> throw new IllegalArgumentException(op[1]);
                    }
                }
                idx.close();
            }
            default -> throw new IllegalArgumentException(c.kind());
        }
    }

    /**
     * Closes as a segment does: in Kafka 4.4 {@code AbstractIndex.close()} only unmaps, and
     * its callers ({@code LogSegment.close}, {@code onBecomeInactiveSegment}) trim first.
     * Our {@code close} trims itself (as Kafka's index {@code close} did up to 3.x).
     */
    static void closeTrimmed(org.apache.kafka.storage.internals.log.AbstractIndex idx) throws Exception {
        idx.trimToValidSize();
        idx.close();
    }

    /**
     * Closes without the trim: Kafka 4.4's {@code AbstractIndex.close()} only unmaps. The
     * file must keep its length (should a Kafka version trim here, the case says so).
     */
    static void closeUntrimmed(org.apache.kafka.storage.internals.log.AbstractIndex idx, File f) throws Exception {
        long before = f.length();
        idx.close();
        if (f.length() != before) {
            throw new IllegalStateException("close() trimmed " + f + " from " + before + " to " + f.length()
                    + " bytes: no untrimmed close");
        }
    }

    /** Kafka's {@code truncateToEntries(int)}, private in OffsetIndex and TimeIndex. */
    static void truncateToEntries(org.apache.kafka.storage.internals.log.AbstractIndex idx, int n) throws Exception {
        java.lang.reflect.Method m = idx.getClass().getDeclaredMethod("truncateToEntries", int.class);
        m.setAccessible(true);
        try {
            m.invoke(idx, n);
        } catch (java.lang.reflect.InvocationTargetException e) {
            throw (e.getCause() instanceof Exception x) ? x : e;
        }
    }

    static String sanity(Runnable check) {
        try {
            check.run();
            return "ok";
        } catch (Exception e) {
            return "err";
        }
    }

    static void answer(Case c, String side, String path, BufferedWriter out) throws Exception {
        String p = c.id() + " " + side + " ";
        File f = new File(path);
        switch (c.kind()) {
            case "offset" -> {
                OffsetIndex idx = new OffsetIndex(f, c.base(), c.maxSize(), false);
                out.write(p + "entries " + idx.entries() + "\n");
                out.write(p + "sanity " + sanity(idx::sanityCheck) + "\n");
                for (String[] q : c.queries()) {
                    if (q[1].equals("lookup")) {
                        OffsetPosition e = idx.lookup(Long.parseLong(q[2]));
                        out.write(p + "lookup " + q[2] + " " + e.offset() + " " + e.position() + "\n");
                    } else {
                        Optional<OffsetPosition> e = idx.fetchUpperBoundOffset(
                                new OffsetPosition(0, Integer.parseInt(q[2])), Integer.parseInt(q[3]));
                        out.write(p + "upper " + q[2] + " " + q[3] + " "
                                + e.map(x -> x.offset() + " " + x.position()).orElse("none") + "\n");
                    }
                }
                try {
                    idx.close();
                } catch (Exception e) {
                    // read-only: nothing to trim
                }
            }
            case "time" -> {
                TimeIndex idx = new TimeIndex(f, c.base(), c.maxSize(), false);
                out.write(p + "entries " + idx.entries() + "\n");
                out.write(p + "sanity " + sanity(idx::sanityCheck) + "\n");
                for (String[] q : c.queries()) {
                    TimestampOffset e = idx.lookup(Long.parseLong(q[2]));
                    out.write(p + "lookup " + q[2] + " " + e.timestamp() + " " + e.offset() + "\n");
                }
                try {
                    idx.close();
                } catch (Exception e) {
                    // read-only: nothing to trim
                }
            }
            case "txn" -> {
                TransactionIndex idx = new TransactionIndex(c.base(), f);
                out.write(p + "entries " + idx.allAbortedTxns().size() + "\n");
                out.write(p + "sanity " + sanity(() -> {
                    try {
                        idx.sanityCheck();
                    } catch (RuntimeException e) {
                        throw e;
                    }
                }) + "\n");
                for (String[] q : c.queries()) {
                    TxnIndexSearchResult r = idx.collectAbortedTxns(Long.parseLong(q[2]), Long.parseLong(q[3]));
                    StringBuilder s = new StringBuilder(p + "collect " + q[2] + " " + q[3] + " "
                            + (r.isComplete() ? "complete" : "partial"));
                    for (AbortedTxn t : r.abortedTransactions()) {
                        s.append(' ').append(t.producerId()).append(':').append(t.firstOffset()).append(':')
                                .append(t.lastOffset()).append(':').append(t.lastStableOffset());
                    }
                    out.write(s + "\n");
                }
                idx.close();
            }
            default -> throw new IllegalArgumentException(c.kind());
        }
    }
}
