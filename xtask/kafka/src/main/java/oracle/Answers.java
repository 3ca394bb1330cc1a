package oracle;

import java.io.BufferedWriter;
import java.io.FileWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeSet;
import java.util.zip.CRC32;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * {@code answers BOOTSTRAP OUT.json SEED TOPIC...}: what the broker answers for every partition
 * of the topics: earliest and latest offsets, every record a read_uncommitted consumer returns
 * (offset, timestamp, content hash), the offsets a read_committed consumer returns, and
 * offsetsForTimes for many targets (every distinct timestamp's neighbours and random ones).
 */
final class Answers {
    private Answers() {}

    static KafkaConsumer<byte[], byte[]> consumer(String bootstrap, String isolation) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        p.put(ConsumerConfig.CHECK_CRCS_CONFIG, "true");
        return new KafkaConsumer<>(p);
    }

    /** CRC-32 of key, value and headers, each nullable part prefixed by 0 (null) or 1. */
    static long hash(ConsumerRecord<byte[], byte[]> rec) {
        CRC32 c = new CRC32();
        nullable(c, rec.key());
        nullable(c, rec.value());
        Header[] hs = rec.headers().toArray();
        c.update(new byte[] {(byte) (hs.length >>> 24), (byte) (hs.length >>> 16), (byte) (hs.length >>> 8), (byte) hs.length});
        for (Header h : hs) {
            nullable(c, h.key().getBytes(StandardCharsets.UTF_8));
            nullable(c, h.value());
        }
        return c.getValue();
    }

    static void nullable(CRC32 c, byte[] b) {
        if (b == null) {
            c.update(0);
        } else {
            c.update(1);
            c.update(b);
        }
    }

    static List<ConsumerRecord<byte[], byte[]>> readAll(KafkaConsumer<byte[], byte[]> c, TopicPartition tp) {
        c.assign(List.of(tp));
        c.seekToBeginning(List.of(tp));
        long end = c.endOffsets(List.of(tp)).get(tp);
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        long deadline = System.currentTimeMillis() + 60_000;
        while (c.position(tp) < end) {
            if (System.currentTimeMillis() > deadline) throw new IllegalStateException("timed out reading " + tp);
            for (ConsumerRecord<byte[], byte[]> rec : c.poll(Duration.ofMillis(200))) out.add(rec);
        }
        return out;
    }

    static void run(String[] a) throws Exception {
        String bootstrap = a[0];
        String outPath = a[1];
        Random rnd = new Random(Long.parseLong(a[2]));
        List<String> topics = List.of(a).subList(3, a.length);
        try (Admin admin = Workload.admin(bootstrap);
                KafkaConsumer<byte[], byte[]> ru = consumer(bootstrap, "read_uncommitted");
                KafkaConsumer<byte[], byte[]> rc = consumer(bootstrap, "read_committed");
                BufferedWriter w = new BufferedWriter(new FileWriter(outPath, StandardCharsets.UTF_8))) {
            Json j = new Json(w);
            j.begin().key("partitions").beginArray();
            Map<String, TopicDescription> desc = admin.describeTopics(topics).allTopicNames().get();
            for (String topic : topics) {
                for (var info : desc.get(topic).partitions()) {
                    TopicPartition tp = new TopicPartition(topic, info.partition());
                    ListOffsetsResult.ListOffsetsResultInfo earliest =
                            admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).partitionResult(tp).get();
                    ListOffsetsResult.ListOffsetsResultInfo latest =
                            admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get();
                    ListOffsetsResult.ListOffsetsResultInfo maxTs =
                            admin.listOffsets(Map.of(tp, OffsetSpec.maxTimestamp())).partitionResult(tp).get();
                    j.begin().key("topic").value(topic).key("partition").value(tp.partition());
                    j.key("earliest").value(earliest.offset()).key("latest").value(latest.offset());
                    j.key("max_timestamp").beginArray().value(maxTs.timestamp()).value(maxTs.offset()).endArray();
                    List<ConsumerRecord<byte[], byte[]>> all = readAll(ru, tp);
                    TreeSet<Long> stamps = new TreeSet<>();
                    j.key("records").beginArray();
                    for (ConsumerRecord<byte[], byte[]> rec : all) {
                        stamps.add(rec.timestamp());
                        j.beginArray().value(rec.offset()).value(rec.timestamp()).value(hash(rec)).endArray();
                    }
                    j.endArray();
                    j.key("committed").beginArray();
                    for (ConsumerRecord<byte[], byte[]> rec : readAll(rc, tp)) j.value(rec.offset());
                    j.endArray();
                    TreeSet<Long> targets = new TreeSet<>();
                    if (!stamps.isEmpty()) {
                        long lo = stamps.first(), hi = stamps.last();
                        targets.add(lo - 1000);
                        targets.add(hi + 1);
                        int i = 0;
                        int step = Math.max(1, stamps.size() / 300);
                        for (long t : stamps) {
                            if (i++ % step == 0) {
                                targets.add(t - 1);
                                targets.add(t);
                                targets.add(t + 1);
                            }
                        }
                        for (int k = 0; k < 200; k++) targets.add(lo + (long) (rnd.nextDouble() * (hi - lo + 1)));
                    }
                    ru.assign(List.of(tp));
                    j.key("times").beginArray();
                    for (long t : targets) {
                        OffsetAndTimestamp found = ru.offsetsForTimes(Map.of(tp, t)).get(tp);
                        j.beginArray().value(t);
                        if (found == null) j.value(-1).value(-1);
                        else j.value(found.offset()).value(found.timestamp());
                        j.endArray();
                    }
                    j.endArray();
                    j.end();
                }
            }
            j.endArray().end();
        }
    }
}
