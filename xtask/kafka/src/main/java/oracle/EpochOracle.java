package oracle;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.File;
import java.io.FileReader;
import java.io.FileWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.storage.internals.checkpoint.LeaderEpochCheckpointFile;
import org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache;
import org.apache.kafka.storage.internals.log.EpochEntry;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;

/**
 * {@code k4-epochs CASES.txt ANSWERS.txt}: Kafka's own {@code LeaderEpochFileCache} over a
 * {@code LeaderEpochCheckpointFile} runs each case's operations; the entries and the latest
 * epoch are printed after the open and after every operation. xtask has put the case's
 * initial {@code leader-epoch-checkpoint} (if any) in DIR; after the last operation the file
 * Kafka left there is what xtask compares, byte for byte, with ours.
 *
 * <p>Input, one case per block:
 * <pre>
 * case ID DIR
 * op assign EPOCH START_OFFSET
 * op truncate_from_end OFFSET      truncateFromEndAsyncFlush
 * op truncate_from_start OFFSET    truncateFromStartAsyncFlush
 * op reload                        a new LeaderEpochFileCache over the file (a restart)
 * end
 * </pre>
 * Output lines: {@code ID open ENTRIES latest EPOCH|none}, then {@code ID K ENTRIES latest
 * EPOCH|none} for operation K (from 0), ENTRIES being {@code -} or {@code E:O,E:O,...};
 * {@code ID K error EXCEPTION} when Kafka throws (then the case stops); finally {@code ID
 * flushes N}: the asynchronous checkpoint flushes Kafka scheduled (each awaited before the
 * next operation, so the file is deterministic).
 */
final class EpochOracle {
    private EpochOracle() {}

    /**
     * Kafka's {@code org.apache.kafka.server.util.Scheduler} (in kafka-server-common, on the
     * runtime classpath only, hence a proxy) on one thread of its own, keeping the futures
     * of what Kafka schedules (the truncations' checkpoint flushes) so that they can be
     * awaited.
     */
    static final class AwaitingScheduler implements InvocationHandler {
        static final String SCHEDULER = "org.apache.kafka.server.util.Scheduler";
        private final ScheduledExecutorService ex = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "epoch-oracle-flush");
            t.setDaemon(true);
            return t;
        });
        private final List<ScheduledFuture<?>> pending = new ArrayList<>();
        final Class<?> iface;
        final Object proxy;
        int scheduled;

        AwaitingScheduler() throws ClassNotFoundException {
            iface = Class.forName(SCHEDULER);
            proxy = Proxy.newProxyInstance(iface.getClassLoader(), new Class<?>[] {iface}, this);
        }

        @Override
        public synchronized Object invoke(Object self, Method m, Object[] args) {
            switch (m.getName()) {
                case "startup", "resizeThreadPool" -> {
                    return null;
                }
                case "shutdown" -> {
                    ex.shutdownNow();
                    return null;
                }
                case "scheduleOnce", "schedule" -> {
                    long delayMs = args.length > 2 ? (Long) args[2] : 0L;
                    if (m.getName().equals("schedule") && (Long) args[3] > 0) {
                        throw new UnsupportedOperationException("periodic task " + args[0]);
                    }
                    ScheduledFuture<?> f = ex.schedule((Runnable) args[1], delayMs, TimeUnit.MILLISECONDS);
                    pending.add(f);
                    scheduled++;
                    return f;
                }
                case "toString" -> {
                    return "AwaitingScheduler";
                }
                case "hashCode" -> {
                    return System.identityHashCode(self);
                }
                case "equals" -> {
                    return self == args[0];
                }
                default -> throw new UnsupportedOperationException(m.toString());
            }
        }

        /** Waits for every task scheduled so far (rethrows what one threw). */
        synchronized void drain() throws Exception {
            for (ScheduledFuture<?> f : pending) {
                f.get(30, TimeUnit.SECONDS);
            }
            pending.clear();
        }

        void shutdown() {
            ex.shutdownNow();
        }
    }

    record Case(String id, String dir, List<String[]> ops) {}

    static void run(String[] a) throws Exception {
        List<Case> cases = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new FileReader(a[0]))) {
            Case cur = null;
            for (String line; (line = r.readLine()) != null; ) {
                String[] w = line.trim().split(" ");
                switch (w[0]) {
                    case "case" -> cur = new Case(w[1], w[2], new ArrayList<>());
                    case "op" -> cur.ops().add(w);
                    case "end" -> cases.add(cur);
                    default -> {}
                }
            }
        }
        AwaitingScheduler scheduler = new AwaitingScheduler();
        try (BufferedWriter out = new BufferedWriter(new FileWriter(a[1]))) {
            for (Case c : cases) {
                runCase(c, scheduler, out);
            }
        } finally {
            scheduler.shutdown();
        }
    }

    static LeaderEpochFileCache open(File dir, AwaitingScheduler scheduler) throws Exception {
        LeaderEpochCheckpointFile file = new LeaderEpochCheckpointFile(
                LeaderEpochCheckpointFile.newFile(dir), new LogDirFailureChannel(1));
        try {
            return LeaderEpochFileCache.class
                    .getConstructor(TopicPartition.class, LeaderEpochCheckpointFile.class, scheduler.iface)
                    .newInstance(new TopicPartition("k4", 0), file, scheduler.proxy);
        } catch (java.lang.reflect.InvocationTargetException e) {
            throw (e.getCause() instanceof Exception x) ? x : e;
        }
    }

    static void runCase(Case c, AwaitingScheduler scheduler, BufferedWriter out) throws Exception {
        String p = c.id() + " ";
        File dir = new File(c.dir());
        int before = scheduler.scheduled;
        LeaderEpochFileCache cache;
        try {
            cache = open(dir, scheduler);
        } catch (Exception e) {
            out.write(p + "open error " + e + "\n");
            return;
        }
        out.write(p + "open " + state(cache) + "\n");
        for (int k = 0; k < c.ops().size(); k++) {
            String[] op = c.ops().get(k);
            try {
                switch (op[1]) {
                    case "assign" -> cache.assign(Integer.parseInt(op[2]), Long.parseLong(op[3]));
                    case "truncate_from_end" -> cache.truncateFromEndAsyncFlush(Long.parseLong(op[2]));
                    case "truncate_from_start" -> cache.truncateFromStartAsyncFlush(Long.parseLong(op[2]));
                    case "reload" -> {
                        scheduler.drain();
                        cache = open(dir, scheduler);
                    }
                    default -> throw new IllegalArgumentException(op[1]);
                }
                scheduler.drain();
            } catch (Exception e) {
                out.write(p + k + " error " + e + "\n");
                return;
            }
            out.write(p + k + " " + state(cache) + "\n");
        }
        scheduler.drain();
        out.write(p + "flushes " + (scheduler.scheduled - before) + "\n");
    }

    static String state(LeaderEpochFileCache cache) {
        List<EpochEntry> entries = cache.epochEntries();
        StringBuilder s = new StringBuilder();
        for (EpochEntry e : entries) {
            if (s.length() > 0) s.append(',');
            s.append(e.epoch()).append(':').append(e.startOffset());
        }
        Optional<Integer> latest = cache.latestEpoch();
        return (s.length() == 0 ? "-" : s.toString()) + " latest " + latest.map(String::valueOf).orElse("none");
    }
}
