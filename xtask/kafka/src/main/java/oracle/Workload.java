package oracle;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The K1 producer workload: plain, idempotent and transactional producers (commit, abort,
 * overlapping transactions, transactions spanning a roll), all five compression types, keys,
 * headers and null values, a CreateTime topic with out-of-order timestamps and a
 * LogAppendTime topic. Deterministic for a given seed (apart from broker-assigned times).
 */
final class Workload {
    private Workload() {}

    /** Base of the CreateTime timestamps (2025-06-15), far from "now" on purpose. */
    static final long BASE_TS = 1_750_000_000_000L;

    static final String CODECS = "codecs";
    static final String TXN = "txn";
    static final String APPEND_TIME = "appendtime";

    static Admin admin(String bootstrap) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return Admin.create(p);
    }

    static KafkaProducer<byte[], byte[]> producer(String bootstrap, String codec, boolean idempotent, String txnId) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
        p.put(ProducerConfig.LINGER_MS_CONFIG, "2");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, "16384");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, Boolean.toString(idempotent || txnId != null));
        p.put(ProducerConfig.ACKS_CONFIG, idempotent || txnId != null ? "all" : "1");
        if (txnId != null) p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId);
        return new KafkaProducer<>(p);
    }

    static Map<String, String> topicConfig(int segmentBytes, int indexInterval, String tsType) {
        return Map.of(
                "internal.segment.bytes", Integer.toString(segmentBytes),
                "index.interval.bytes", Integer.toString(indexInterval),
                "message.timestamp.type", tsType,
                "message.timestamp.before.max.ms", Long.toString(Long.MAX_VALUE),
                "message.timestamp.after.max.ms", Long.toString(Long.MAX_VALUE),
                "compression.type", "producer",
                // No retention: the CreateTime stamps are far in the past, and Kafka's 7-day
                // default would delete the partitions 30 s after start-up.
                "retention.ms", "-1",
                "retention.bytes", "-1");
    }

    static final String WORDS = "kafka segment index offset time transaction batch record roll recover "
            + "broker partition leader epoch producer sequence marker commit abort ";

    static byte[] value(Random r, int n) {
        byte[] v = new byte[n];
        if (r.nextBoolean()) {
            byte[] w = WORDS.getBytes(StandardCharsets.US_ASCII);
            int off = r.nextInt(w.length);
            for (int i = 0; i < n; i++) v[i] = w[(off + i) % w.length];
        } else {
            r.nextBytes(v);
        }
        return v;
    }

    static ProducerRecord<byte[], byte[]> record(Random r, String topic, Long ts, long i) {
        byte[] key = r.nextInt(5) == 0 ? null : ("k-" + (i % 97)).getBytes(StandardCharsets.US_ASCII);
        byte[] val = r.nextInt(20) == 0 ? null : value(r, 20 + r.nextInt(380));
        List<Header> headers = new ArrayList<>();
        int nh = r.nextInt(10) < 3 ? 1 + r.nextInt(2) : 0;
        for (int h = 0; h < nh; h++) {
            byte[] hv = h == 1 ? null : ("h" + i).getBytes(StandardCharsets.US_ASCII);
            headers.add(new RecordHeader("hk" + h, hv));
        }
        return new ProducerRecord<>(topic, 0, ts, key, val, headers);
    }

    /** {@code k1-produce BOOTSTRAP SEED SCALE}: creates the topics and writes the workload. */
    static void produce(String[] a) throws Exception {
        String bootstrap = a[0];
        long seed = Long.parseLong(a[1]);
        int scale = Integer.parseInt(a[2]);
        Random r = new Random(seed);
        try (Admin admin = admin(bootstrap)) {
            admin.createTopics(List.of(
                    new NewTopic(CODECS, 1, (short) 1).configs(topicConfig(128 * 1024, 1024, "CreateTime")),
                    new NewTopic(TXN, 1, (short) 1).configs(topicConfig(64 * 1024, 512, "CreateTime")),
                    new NewTopic(APPEND_TIME, 1, (short) 1).configs(topicConfig(64 * 1024, 1024, "LogAppendTime"))))
                    .all().get();
        }
        String[] codecs = {"none", "gzip", "snappy", "lz4", "zstd"};
        List<KafkaProducer<byte[], byte[]>> plain = new ArrayList<>();
        for (String c : codecs) plain.add(producer(bootstrap, c, false, null));
        long n = 0;
        // CreateTime, out of order: a rising clock with +-3 s of jitter.
        for (int round = 0; round < 4 * scale; round++) {
            for (KafkaProducer<byte[], byte[]> p : plain) {
                for (int i = 0; i < 120; i++, n++) {
                    long ts = BASE_TS + n * 5 + r.nextInt(6000) - 3000;
                    p.send(record(r, CODECS, ts, n));
                }
                p.flush();
            }
        }
        // LogAppendTime: the broker overwrites the producer's timestamps.
        for (int round = 0; round < 3 * scale; round++) {
            KafkaProducer<byte[], byte[]> p = plain.get(round % 2 == 0 ? 0 : 1);
            for (int i = 0; i < 150; i++, n++) p.send(record(r, APPEND_TIME, BASE_TS - n, n));
            p.flush();
            Thread.sleep(3);
        }
        for (KafkaProducer<byte[], byte[]> p : plain) p.close();

        try (KafkaProducer<byte[], byte[]> idem = producer(bootstrap, "lz4", true, null);
                KafkaProducer<byte[], byte[]> ta = producer(bootstrap, "zstd", false, "tx-a");
                KafkaProducer<byte[], byte[]> tb = producer(bootstrap, "snappy", false, "tx-b")) {
            ta.initTransactions();
            tb.initTransactions();
            for (int round = 0; round < 6 * scale; round++) {
                ta.beginTransaction();
                for (int i = 0; i < 30; i++, n++) ta.send(record(r, TXN, null, n));
                ta.flush();
                tb.beginTransaction();
                for (int i = 0; i < 30; i++, n++) tb.send(record(r, TXN, null, n));
                tb.flush();
                for (int i = 0; i < 20; i++, n++) idem.send(record(r, TXN, null, n));
                idem.flush();
                for (int i = 0; i < 30; i++, n++) ta.send(record(r, TXN, null, n));
                ta.flush();
                if (round % 3 == 1) ta.abortTransaction();
                else ta.commitTransaction();
                for (int i = 0; i < 20; i++, n++) tb.send(record(r, TXN, null, n));
                tb.flush();
                if (round % 2 == 0) tb.abortTransaction();
                else tb.commitTransaction();
            }
            // Transactions spanning rolls (64 KiB segments): one aborted, one committed, each
            // overlapping a short transaction of the other producer.
            for (int k = 0; k < 2; k++) {
                ta.beginTransaction();
                tb.beginTransaction();
                for (int i = 0; i < 500; i++, n++) {
                    ta.send(record(r, TXN, null, n));
                    if (i % 100 == 0) {
                        ta.flush();
                        tb.send(record(r, TXN, null, n++));
                        tb.flush();
                    }
                }
                ta.flush();
                if (k == 0) ta.abortTransaction();
                else ta.commitTransaction();
                if (k == 0) tb.commitTransaction();
                else tb.abortTransaction();
            }
            for (int i = 0; i < 50; i++, n++) idem.send(record(r, TXN, null, n));
            idem.flush();
        }
        System.out.println("produced " + n + " records");
    }

    /**
     * {@code create-topics BOOTSTRAP NAME:SEGMENT_BYTES:INDEX_INTERVAL:TIMESTAMP_TYPE...}: one
     * partition each, replication factor 1.
     */
    static void createTopics(String[] a) throws Exception {
        List<NewTopic> topics = new ArrayList<>();
        for (int i = 1; i < a.length; i++) {
            String[] w = a[i].split(":");
            topics.add(new NewTopic(w[0], 1, (short) 1)
                    .configs(topicConfig(Integer.parseInt(w[1]), Integer.parseInt(w[2]), w[3])));
        }
        try (Admin admin = admin(a[0])) {
            admin.createTopics(topics).all().get();
        }
    }

    /** {@code append BOOTSTRAP TOPIC N}: produces N records (acks=all) and prints their offsets. */
    static void append(String[] a) throws Exception {
        Random r = new Random(42);
        try (KafkaProducer<byte[], byte[]> p = producer(a[0], "none", true, null)) {
            List<java.util.concurrent.Future<org.apache.kafka.clients.producer.RecordMetadata>> fs = new ArrayList<>();
            for (int i = 0; i < Integer.parseInt(a[2]); i++) fs.add(p.send(record(r, a[1], null, i)));
            p.flush();
            for (var f : fs) System.out.println(f.get().offset());
        }
    }

    /**
     * {@code txn-open BOOTSTRAP TOPIC N}: begins a transaction, writes N records and flushes,
     * prints {@code OPEN} and waits (never commits): the caller kills the broker meanwhile.
     */
    static void openTransaction(String[] a) throws Exception {
        String bootstrap = a[0];
        String topic = a[1];
        int count = Integer.parseInt(a[2]);
        Random r = new Random(count);
        KafkaProducer<byte[], byte[]> t = producer(bootstrap, "lz4", false, "tx-open-" + count);
        t.initTransactions();
        t.beginTransaction();
        for (int i = 0; i < count; i++) t.send(record(r, topic, null, i));
        t.flush();
        System.out.println("OPEN");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }

    /**
     * {@code bulk-produce BOOTSTRAP SEGMENT_BYTES MIB TOPIC:CODEC...}: creates each topic (one
     * partition, replication factor 1, {@code segment.bytes} SEGMENT_BYTES, no retention), then
     * produces MIB MiB of 1 KiB incompressible values to each, fast (acks=1, 1 MiB batches,
     * non-idempotent), and prints {@code ACKED TOPIC LAST_OFFSET RECORDS} per topic once every
     * send is acknowledged: the highest offset the leader acknowledged and how many records.
     */
    static void bulkProduce(String[] a) throws Exception {
        String bootstrap = a[0];
        String segmentBytes = a[1];
        long target = Long.parseLong(a[2]) << 20;
        List<NewTopic> topics = new ArrayList<>();
        for (int i = 3; i < a.length; i++) {
            topics.add(new NewTopic(a[i].split(":")[0], 1, (short) 1)
                    .configs(Map.of("segment.bytes", segmentBytes, "retention.ms", "-1")));
        }
        try (Admin admin = admin(bootstrap)) {
            admin.createTopics(topics).all().get();
        }
        // Random bytes: lz4 cannot shrink them, so the bytes on disk are the bytes sent.
        byte[] pool = new byte[4 << 20];
        new Random(7).nextBytes(pool);
        int size = 1024;
        for (int i = 3; i < a.length; i++) {
            String[] w = a[i].split(":");
            Properties p = new Properties();
            p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, w[1]);
            p.put(ProducerConfig.ACKS_CONFIG, "1");
            p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
            p.put(ProducerConfig.LINGER_MS_CONFIG, "20");
            p.put(ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(1 << 20));
            p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, Long.toString(64L << 20));
            p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, Integer.toString(4 << 20));
            java.util.concurrent.atomic.AtomicLong last = new java.util.concurrent.atomic.AtomicLong(-1);
            java.util.concurrent.atomic.AtomicReference<Exception> failed = new java.util.concurrent.atomic.AtomicReference<>();
            long records = 0;
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
                for (long sent = 0; sent < target; sent += size, records++) {
                    int from = (int) ((records * 4099) % (pool.length - size));
                    byte[] v = java.util.Arrays.copyOfRange(pool, from, from + size);
                    producer.send(new ProducerRecord<>(w[0], 0, BASE_TS + records, null, v), (md, e) -> {
                        if (e != null) failed.compareAndSet(null, e);
                        else last.accumulateAndGet(md.offset(), Math::max);
                    });
                }
                producer.flush();
            }
            if (failed.get() != null) throw failed.get();
            System.out.println("ACKED " + w[0] + " " + last.get() + " " + records);
        }
    }
}
