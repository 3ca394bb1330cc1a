package oracle;

import java.io.BufferedWriter;
import java.io.FileWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * The {@code k7-broker-compaction} side of the helper: a compacted topic written with keyed
 * updates, tombstones and transactions, and read back at both isolation levels with the keys
 * and values of every record.
 */
final class Compaction {
    private Compaction() {}

    /**
     * {@code compact-create BOOTSTRAP NAME:SEGMENT_BYTES:DELETE_RETENTION_MS:MIN_DIRTY_RATIO...}:
     * one partition each, replication factor 1, {@code cleanup.policy=compact}, no time
     * retention.
     */
    static void create(String[] a) throws Exception {
        List<NewTopic> topics = new ArrayList<>();
        for (int i = 1; i < a.length; i++) {
            String[] w = a[i].split(":");
            topics.add(new NewTopic(w[0], 1, (short) 1).configs(Map.of(
                    "cleanup.policy", "compact",
                    "internal.segment.bytes", w[1],
                    "delete.retention.ms", w[2],
                    "min.cleanable.dirty.ratio", w[3],
                    "min.compaction.lag.ms", "0",
                    // A time roll on the first append a second after the segment began.
                    "segment.ms", "1000",
                    "retention.ms", "-1",
                    "message.timestamp.before.max.ms", Long.toString(Long.MAX_VALUE),
                    "message.timestamp.after.max.ms", Long.toString(Long.MAX_VALUE))));
        }
        try (Admin admin = Workload.admin(a[0])) {
            admin.createTopics(topics).all().get();
        }
    }

    static String hex(byte[] b) {
        return b == null ? null : HexFormat.of().formatHex(b);
    }

    /**
     * {@code compact-produce BOOTSTRAP TOPIC PHASE ROUNDS KEYS}: ROUNDS rounds of keyed
     * updates (an idempotent lz4 producer; every seventh record a tombstone) and two
     * transactions of a transactional producer (the second aborted every other round), over
     * KEYS keys. Prints {@code rec OFFSET KEY VALUE STATUS} per record once acknowledged
     * (hex key and value, {@code ~} for a null value; STATUS {@code committed} or
     * {@code aborted}, {@code plain} for the idempotent producer's).
     */
    static void produce(String[] a) throws Exception {
        String bootstrap = a[0];
        String topic = a[1];
        String phase = a[2];
        int rounds = Integer.parseInt(a[3]);
        int keys = Integer.parseInt(a[4]);
        long n = 0;
        List<String> out = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> idem = Workload.producer(bootstrap, "lz4", true, null);
                KafkaProducer<byte[], byte[]> tx = Workload.producer(bootstrap, "none", false, "k7b-" + phase)) {
            tx.initTransactions();
            for (int round = 0; round < rounds; round++) {
                List<Future<RecordMetadata>> fs = new ArrayList<>();
                List<byte[][]> kv = new ArrayList<>();
                for (int i = 0; i < 40; i++, n++) {
                    byte[] k = String.format("key-%03d", (n * 13) % keys).getBytes(StandardCharsets.US_ASCII);
                    byte[] v = n % 7 == 3 ? null
                            : (phase + " plain " + n + " " + "x".repeat((int) (n % 61))).getBytes(StandardCharsets.US_ASCII);
                    kv.add(new byte[][] {k, v});
                    fs.add(idem.send(new ProducerRecord<>(topic, 0, k, v)));
                }
                idem.flush();
                for (int i = 0; i < fs.size(); i++) {
                    out.add(line(fs.get(i).get(), kv.get(i), "plain"));
                }
                for (int t = 0; t < 2; t++) {
                    boolean abort = t == 1 && round % 2 == 0;
                    tx.beginTransaction();
                    fs.clear();
                    kv.clear();
                    for (int i = 0; i < 15; i++, n++) {
                        byte[] k = String.format("key-%03d", (n * 7) % keys).getBytes(StandardCharsets.US_ASCII);
                        byte[] v = n % 11 == 5 ? null
                                : (phase + (abort ? " aborted " : " txn ") + n).getBytes(StandardCharsets.US_ASCII);
                        kv.add(new byte[][] {k, v});
                        fs.add(tx.send(new ProducerRecord<>(topic, 0, k, v)));
                    }
                    tx.flush();
                    if (abort) tx.abortTransaction();
                    else tx.commitTransaction();
                    for (int i = 0; i < fs.size(); i++) {
                        out.add(line(fs.get(i).get(), kv.get(i), abort ? "aborted" : "committed"));
                    }
                }
            }
            // Last, an aborted transaction over keys nothing of this phase writes after it
            // (KEYS and up, so never committed in a phase of KEYS keys; in a phase of fewer
            // keys, keys an earlier phase wrote): the newest records of their keys.
            tx.beginTransaction();
            List<Future<RecordMetadata>> fs = new ArrayList<>();
            List<byte[][]> kv = new ArrayList<>();
            for (int i = 0; i < 8; i++, n++) {
                byte[] k = String.format("key-%03d", keys + i).getBytes(StandardCharsets.US_ASCII);
                byte[] v = (phase + " aborted last " + n).getBytes(StandardCharsets.US_ASCII);
                kv.add(new byte[][] {k, v});
                fs.add(tx.send(new ProducerRecord<>(topic, 0, k, v)));
            }
            tx.flush();
            tx.abortTransaction();
            for (int i = 0; i < fs.size(); i++) out.add(line(fs.get(i).get(), kv.get(i), "aborted"));
        }
        for (String l : out) System.out.println(l);
    }

    static String line(RecordMetadata md, byte[][] kv, String status) {
        return "rec " + md.offset() + " " + hex(kv[0]) + " " + (kv[1] == null ? "~" : hex(kv[1])) + " " + status;
    }

    /**
     * {@code compact-read BOOTSTRAP OUT.json TOPIC}: every record of partition 0 as a
     * read_uncommitted and a read_committed consumer return it from the log start: offset,
     * timestamp, key and value (hex, null for null), and the earliest and latest offsets.
     */
    static void read(String[] a) throws Exception {
        String bootstrap = a[0];
        TopicPartition tp = new TopicPartition(a[2], 0);
        try (KafkaConsumer<byte[], byte[]> ru = Answers.consumer(bootstrap, "read_uncommitted");
                KafkaConsumer<byte[], byte[]> rc = Answers.consumer(bootstrap, "read_committed");
                BufferedWriter w = new BufferedWriter(new FileWriter(a[1], StandardCharsets.UTF_8))) {
            Json j = new Json(w);
            j.begin();
            ru.assign(List.of(tp));
            j.key("earliest").value(ru.beginningOffsets(List.of(tp)).get(tp));
            j.key("latest").value(ru.endOffsets(List.of(tp)).get(tp));
            for (var e : Map.of("uncommitted", ru, "committed", rc).entrySet()) {
                j.key(e.getKey()).beginArray();
                for (ConsumerRecord<byte[], byte[]> r : Answers.readAll(e.getValue(), tp)) {
                    j.beginArray().value(r.offset()).value(r.timestamp()).value(hex(r.key())).value(hex(r.value())).endArray();
                }
                j.endArray();
            }
            j.end();
        }
    }
}
