package oracle;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;

/**
 * The {@code k8-tiered} side of the helper: a topic with remote storage enabled on a broker
 * that tiers to {@code LocalTieredStorage}, written by idempotent and transactional producers
 * in every codec, its configuration altered, and its ListOffsets answers printed.
 */
final class Tiered {
    private Tiered() {}

    static Map<String, String> configs(String[] a, int from) {
        Map<String, String> m = new HashMap<>();
        for (int i = from; i < a.length; i++) {
            int eq = a[i].indexOf('=');
            m.put(a[i].substring(0, eq), a[i].substring(eq + 1));
        }
        return m;
    }

    /** {@code tier-create BOOTSTRAP TOPIC KEY=VALUE...}: one partition, replication factor 1. */
    static void create(String[] a) throws Exception {
        try (Admin admin = Workload.admin(a[0])) {
            admin.createTopics(List.of(new NewTopic(a[1], 1, (short) 1).configs(configs(a, 2)))).all().get();
        }
    }

    /** {@code tier-alter BOOTSTRAP TOPIC KEY=VALUE...}: sets the topic's configs. */
    static void alter(String[] a) throws Exception {
        Collection<AlterConfigOp> ops = new ArrayList<>();
        for (var e : configs(a, 2).entrySet()) {
            ops.add(new AlterConfigOp(new ConfigEntry(e.getKey(), e.getValue()), AlterConfigOp.OpType.SET));
        }
        try (Admin admin = Workload.admin(a[0])) {
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, a[1]), ops)).all().get();
        }
    }

    /**
     * {@code tier-produce BOOTSTRAP TOPIC SEED ROUNDS}: per round, an idempotent producer of
     * each codec writes 60 records, and a transactional producer of each codec one
     * transaction of 40 records, overlapping the next codec's; a third of them aborted. Ends
     * with every transaction complete. Prints {@code produced N}.
     */
    static void produce(String[] a) throws Exception {
        String bootstrap = a[0];
        String topic = a[1];
        Random r = new Random(Long.parseLong(a[2]));
        int rounds = Integer.parseInt(a[3]);
        String[] codecs = {"none", "gzip", "snappy", "lz4", "zstd"};
        List<KafkaProducer<byte[], byte[]>> idem = new ArrayList<>();
        List<KafkaProducer<byte[], byte[]>> tx = new ArrayList<>();
        long n = 0;
        try {
            for (String c : codecs) {
                idem.add(Workload.producer(bootstrap, c, true, null));
                KafkaProducer<byte[], byte[]> t = Workload.producer(bootstrap, c, false, "k8t-" + c);
                t.initTransactions();
                tx.add(t);
            }
            for (int round = 0; round < rounds; round++) {
                for (int k = 0; k < codecs.length; k++) {
                    KafkaProducer<byte[], byte[]> p = idem.get(k);
                    for (int i = 0; i < 60; i++, n++) p.send(Workload.record(r, topic, null, n));
                    p.flush();
                }
                // Overlapping transactions: k begins, k+1 begins, k ends.
                for (int k = 0; k <= codecs.length; k++) {
                    if (k < codecs.length) {
                        KafkaProducer<byte[], byte[]> t = tx.get(k);
                        t.beginTransaction();
                        for (int i = 0; i < 40; i++, n++) t.send(Workload.record(r, topic, null, n));
                        t.flush();
                    }
                    if (k > 0) {
                        KafkaProducer<byte[], byte[]> t = tx.get(k - 1);
                        if ((round + k) % 3 == 0) t.abortTransaction();
                        else t.commitTransaction();
                    }
                }
            }
        } finally {
            for (var p : idem) p.close();
            for (var p : tx) p.close();
        }
        System.out.println("produced " + n);
    }

    /**
     * {@code tier-offsets BOOTSTRAP TOPIC}: partition 0's ListOffsets answers, one
     * {@code NAME OFFSET} line each: earliest (-2), latest (-1), earliest-local (-4),
     * latest-tiered (-3), earliest-pending-upload (-5).
     */
    static void offsets(String[] a) throws Exception {
        TopicPartition tp = new TopicPartition(a[1], 0);
        Map<String, OffsetSpec> specs = new java.util.LinkedHashMap<>();
        specs.put("earliest", OffsetSpec.earliest());
        specs.put("latest", OffsetSpec.latest());
        specs.put("earliest-local", OffsetSpec.earliestLocal());
        specs.put("latest-tiered", OffsetSpec.latestTiered());
        specs.put("earliest-pending-upload", OffsetSpec.earliestPendingUpload());
        try (Admin admin = Workload.admin(a[0])) {
            for (var e : specs.entrySet()) {
                long o = admin.listOffsets(Map.of(tp, e.getValue())).partitionResult(tp).get().offset();
                System.out.println(e.getKey() + " " + o);
            }
        }
    }
}
