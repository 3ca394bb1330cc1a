package oracle;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.storage.internals.log.BatchMetadata;
import org.apache.kafka.storage.internals.log.ProducerStateEntry;
import org.apache.kafka.storage.internals.log.ProducerStateManager;

/**
 * The three-broker cluster of the {@code k5-cluster} scenario, driven through the Admin client:
 *
 * <pre>
 *   cluster-create   BOOTSTRAP TOPIC SEG INTERVAL BROKER   topic of one partition on BROKER only
 *   cluster-state    BOOTSTRAP TOPIC [LEADER TIMEOUT_S]    print the partition's state (once it
 *                                                          has that leader, -1 for none)
 *   cluster-reassign BOOTSTRAP TOPIC R1,R2,.. END TIMEOUT_S
 *       reassign the partition to the replicas, wait until the reassignment is done, every
 *       replica is in the ISR, every replica's log holds the same bytes (DescribeLogDirs) and
 *       the high watermark is END
 *   cluster-await-leader BOOTSTRAP TOPIC GONE END TIMEOUT_S
 *       wait until a broker other than GONE leads, GONE left the ISR and the high watermark
 *       is END
 *   cluster-snapshots FILE..
 *       each producer-state snapshot as Kafka's ProducerStateManager.readSnapshot reads it:
 *       a {@code file PATH} line, then one {@code producer ..} line per entry, by producer id
 * </pre>
 *
 * The reassignment gives up early, naming the cause, when the partition has no leader or a
 * target broker is not registered for {@link #STALL_MS}, or when nothing moves (ISR,
 * replicas, sizes, high watermark) for that long; every {@link #STALL_MS} / 3 it prints its
 * state on stderr.
 *
 * Each prints {@code state leader=L isr=[..] elr=[..] last-known-elr=[..]
 * replicas=[..] sizes={..} hw=N waited-ms=N} lines: the last one is the state it ended on.
 */
final class Cluster {
    private Cluster() {}

    static void create(String[] a) throws Exception {
        int broker = Integer.parseInt(a[4]);
        NewTopic t = new NewTopic(a[1], Map.of(0, List.of(broker)))
                .configs(Workload.topicConfig(Integer.parseInt(a[2]), Integer.parseInt(a[3]), "CreateTime"));
        try (Admin admin = Workload.admin(a[0])) {
            admin.createTopics(List.of(t)).all().get();
        }
    }

    record State(int leader, List<Integer> isr, List<Integer> elr, List<Integer> lastKnownElr,
            List<Integer> replicas, Map<Integer, Long> sizes, long hw) {
        String line(long waited) {
            return "state leader=" + leader + " isr=" + isr + " elr=" + elr + " last-known-elr=" + lastKnownElr
                    + " replicas=" + replicas + " sizes=" + sizes + " hw=" + hw + " waited-ms=" + waited;
        }
    }

    static List<Integer> ids(List<Node> nodes) {
        return nodes == null ? List.of() : nodes.stream().map(Node::id).sorted().collect(Collectors.toList());
    }

    /** The partition's state; sizes and hw only when asked (they need a live leader). */
    static State state(Admin admin, String topic, boolean full) throws Exception {
        TopicPartition tp = new TopicPartition(topic, 0);
        TopicPartitionInfo info = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic)
                .partitions().get(0);
        int leader = info.leader() == null || info.leader().isEmpty() ? -1 : info.leader().id();
        Map<Integer, Long> sizes = new TreeMap<>();
        long hw = -1;
        if (full && leader >= 0) {
            List<Integer> live = new ArrayList<>();
            for (Node n : admin.describeCluster().nodes().get()) live.add(n.id());
            List<Integer> asked = ids(info.replicas()).stream().filter(live::contains).collect(Collectors.toList());
            Map<Integer, Map<String, LogDirDescription>> dirs = admin.describeLogDirs(asked).allDescriptions().get();
            for (var e : dirs.entrySet()) {
                for (LogDirDescription d : e.getValue().values()) {
                    ReplicaInfo r = d.replicaInfos().get(tp);
                    if (r != null && !r.isFuture()) sizes.put(e.getKey(), r.size());
                }
            }
            hw = admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get().offset();
        }
        return new State(leader, ids(info.isr()), ids(info.elr()), ids(info.lastKnownElr()),
                ids(info.replicas()), sizes, hw);
    }

    static void printState(String[] a) throws Exception {
        long t0 = System.currentTimeMillis();
        Integer want = a.length > 2 ? Integer.parseInt(a[2]) : null;
        long deadline = t0 + (a.length > 3 ? Long.parseLong(a[3]) * 1000 : 0);
        try (Admin admin = Workload.admin(a[0])) {
            while (true) {
                State s = state(admin, a[1], false);
                if (want == null || s.leader() == want || System.currentTimeMillis() > deadline) {
                    System.out.println(s.line(System.currentTimeMillis() - t0));
                    return;
                }
                Thread.sleep(100);
            }
        }
    }

    /** How long a reassignment may show no progress (or no leader, or a missing broker). */
    static final long STALL_MS = 45_000;

    static void snapshots(String[] files) throws Exception {
        for (String f : files) {
            System.out.println("file " + f);
            List<ProducerStateEntry> entries = new ArrayList<>(ProducerStateManager.readSnapshot(new java.io.File(f)));
            entries.sort(java.util.Comparator.comparingLong(ProducerStateEntry::producerId));
            for (ProducerStateEntry e : entries) {
                StringBuilder b = new StringBuilder("producer id=" + e.producerId() + " epoch=" + e.producerEpoch()
                        + " coordinatorEpoch=" + e.coordinatorEpoch() + " lastTimestamp=" + e.lastTimestamp()
                        + " currentTxnFirstOffset=" + e.currentTxnFirstOffset() + " batches=[");
                for (BatchMetadata m : e.batchMetadata()) {
                    b.append(" seq=").append(m.firstSeq()).append("..").append(m.lastSeq())
                            .append(" offsets=").append(m.firstOffset()).append("..").append(m.lastOffset())
                            .append(" delta=").append(m.offsetDelta()).append(" ts=").append(m.timestamp());
                }
                System.out.println(b.append(" ]"));
            }
        }
    }

    /** Why a reassignment makes no progress, or null: no leader, a target broker missing. */
    static String stuck(Admin admin, State s, List<Integer> target) throws Exception {
        if (s != null && s.leader() < 0) {
            return "the partition has no leader";
        }
        List<Integer> live = new ArrayList<>();
        for (Node n : admin.describeCluster().nodes().get()) live.add(n.id());
        List<Integer> missing = target.stream().filter(id -> !live.contains(id)).collect(Collectors.toList());
        return missing.isEmpty() ? null : "target broker(s) " + missing + " not registered (live: " + live + ")";
    }

    static void reassign(String[] a) throws Exception {
        String topic = a[1];
        List<Integer> target = new ArrayList<>();
        for (String s : a[2].split(",")) target.add(Integer.parseInt(s));
        long end = Long.parseLong(a[3]);
        long deadline = System.currentTimeMillis() + Long.parseLong(a[4]) * 1000;
        TopicPartition tp = new TopicPartition(topic, 0);
        long t0 = System.currentTimeMillis();
        try (Admin admin = Workload.admin(a[0])) {
            admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(target))))
                    .all().get();
            List<Integer> want = target.stream().sorted().collect(Collectors.toList());
            State s = null;
            String lastError = null;
            String progress = null;
            long progressAt = System.currentTimeMillis();
            String stuckSince = null;
            long stuckAt = 0;
            long printedAt = System.currentTimeMillis();
            while (true) {
                PartitionReassignment r = admin.listPartitionReassignments(Set.of(tp)).reassignments().get().get(tp);
                boolean moving = r != null;
                try {
                    s = state(admin, topic, true);
                } catch (Exception e) {
                    s = null; // a replica not yet known to DescribeLogDirs: ask again
                    lastError = e.toString();
                }
                if (!moving && s != null && s.isr().equals(want) && s.replicas().equals(want)
                        && s.sizes().size() == want.size() && s.sizes().values().stream().distinct().count() == 1
                        && s.hw() == end) {
                    System.out.println(s.line(System.currentTimeMillis() - t0));
                    return;
                }
                long now = System.currentTimeMillis();
                String moved = (s == null ? "unknown" : s.isr() + " " + s.replicas() + " " + s.sizes() + " " + s.hw())
                        + " " + (r == null ? "done" : r.addingReplicas() + "/" + r.removingReplicas());
                if (!moved.equals(progress)) {
                    progress = moved;
                    progressAt = now;
                }
                String why = stuck(admin, s, target);
                if (why == null || !why.equals(stuckSince)) {
                    stuckSince = why;
                    stuckAt = now;
                }
                String cause = null;
                if (why != null && now - stuckAt > STALL_MS) {
                    cause = why + " for " + (now - stuckAt) / 1000 + " s";
                } else if (now - progressAt > STALL_MS) {
                    cause = "no progress for " + (now - progressAt) / 1000 + " s";
                } else if (now > deadline) {
                    cause = "the timeout";
                }
                String where = (s == null ? "state unknown" : s.line(now - t0)) + " reassignment="
                        + (r == null ? "none" : "adding=" + r.addingReplicas() + " removing=" + r.removingReplicas())
                        + (lastError == null ? "" : " last-error=" + lastError);
                if (now - printedAt > STALL_MS / 3) {
                    System.err.println("reassigning: " + where);
                    printedAt = now;
                }
                if (cause != null) {
                    System.out.println(s == null ? "state unknown" : s.line(now - t0));
                    System.err.println("the reassignment to " + target + " did not complete with every replica "
                            + "in the ISR, equal sizes and high watermark " + end + ": gave up after " + cause
                            + "; " + where);
                    System.exit(1);
                }
                Thread.sleep(200);
            }
        }
    }

    static void awaitLeader(String[] a) throws Exception {
        String topic = a[1];
        int gone = Integer.parseInt(a[2]);
        long end = Long.parseLong(a[3]);
        long deadline = System.currentTimeMillis() + Long.parseLong(a[4]) * 1000;
        long t0 = System.currentTimeMillis();
        try (Admin admin = Workload.admin(a[0])) {
            State s = null;
            String lastError = null;
            while (true) {
                try {
                    s = state(admin, topic, false);
                    if (s.leader() >= 0 && s.leader() != gone && !s.isr().contains(gone)) {
                        s = state(admin, topic, true);
                        if (s.hw() == end) {
                            System.out.println(s.line(System.currentTimeMillis() - t0));
                            return;
                        }
                    }
                } catch (Exception e) {
                    // The leader moving under the request: ask again.
                    lastError = e.toString();
                }
                long now = System.currentTimeMillis();
                // Kafka fences a killed broker after its session timeout (seconds): a
                // partition still led by it, or by nobody, well after that will stay so.
                String why = s == null ? null
                        : s.leader() == gone ? "broker " + gone + " still leads"
                        : s.leader() < 0 ? "the partition has no leader" : null;
                if ((why != null && now - t0 > 2 * STALL_MS) || now > deadline) {
                    System.out.println(s == null ? "state unknown" : s.line(now - t0));
                    System.err.println("no broker but " + gone + " took over with high watermark " + end + ": gave up after "
                            + (now - t0) / 1000 + " s" + (why == null ? "" : ", " + why)
                            + (s == null ? "" : "; " + s.line(now - t0))
                            + (lastError == null ? "" : "; last error " + lastError));
                    System.exit(1);
                }
                Thread.sleep(100);
            }
        }
    }
}
