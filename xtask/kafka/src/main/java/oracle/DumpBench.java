package oracle;

import java.io.File;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.LeaderChangeMessage;
import org.apache.kafka.common.metadata.NoOpRecord;
import org.apache.kafka.common.metadata.PartitionChangeRecord;
import org.apache.kafka.common.metadata.PartitionRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.coordinator.common.runtime.CoordinatorRecord;
import org.apache.kafka.coordinator.group.GroupCoordinatorRecordSerde;
import org.apache.kafka.coordinator.group.generated.OffsetCommitKey;
import org.apache.kafka.coordinator.group.generated.OffsetCommitValue;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.server.common.ApiMessageAndVersion;

/**
 * The internal-topic inputs of `cargo xtask vs-kafka --only dump`: a `__consumer_offsets`
 * and a `__cluster_metadata` segment of about BYTES bytes, records serialized by Kafka's
 * own serdes and batched by its MemoryRecords builder (uncompressed, as both coordinators
 * write by default).
 *
 * `offsets`: one batch per offset commit of a consumer group (1 to 16 partitions of one
 * topic, OffsetCommitValue version 3, as the group coordinator writes them), 200 groups
 * over 50 topics. `metadata`: what a controller writes while topics come and go and
 * leaders move: a LeaderChangeMessage control batch first, then batches of a TopicRecord
 * with its PartitionRecords, of PartitionChangeRecords (new leader and ISR), and of a
 * NoOpRecord (the controller's periodic no-op), all at their highest version.
 *
 * Usage: java -cp CLASSPATH oracle.DumpBench offsets|metadata DIR BYTES
 * Prints `DIR/00000000000000000000.log BYTES RECORDS`.
 */
public final class DumpBench {
    private static long offset = 0;
    private static long timestamp = 1_700_000_000_000L;
    /** A deterministic generator (xorshift64*), so every run writes the same bytes. */
    private static long seed = 0x9E3779B97F4A7C15L;

    static int next(int bound) {
        seed ^= seed >>> 12;
        seed ^= seed << 25;
        seed ^= seed >>> 27;
        return (int) Long.remainderUnsigned(seed * 0x2545F4914F6CDD1DL, bound);
    }

    public static void main(String[] args) throws Exception {
        String kind = args[0];
        File dir = new File(args[1]);
        long bytes = Long.parseLong(args[2]);
        dir.mkdirs();
        File log = new File(dir, "00000000000000000000.log");
        try (FileChannel ch = FileChannel.open(log.toPath(), StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            if (kind.equals("offsets")) {
                offsets(ch, bytes);
            } else if (kind.equals("metadata")) {
                metadata(ch, bytes);
            } else {
                throw new IllegalArgumentException("offsets or metadata, not " + kind);
            }
        }
        System.out.println(log + " " + log.length() + " " + offset);
    }

    static void batch(FileChannel ch, List<SimpleRecord> records) throws Exception {
        MemoryRecords m = MemoryRecords.withRecords(offset, Compression.NONE, 7, records.toArray(new SimpleRecord[0]));
        offset += records.size();
        ByteBuffer b = m.buffer();
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }

    static void offsets(FileChannel ch, long bytes) throws Exception {
        GroupCoordinatorRecordSerde serde = new GroupCoordinatorRecordSerde();
        long[] committed = new long[200 * 16];
        while (ch.position() < bytes) {
            int group = next(200);
            int topic = group % 50;
            int partitions = 1 + next(16);
            List<SimpleRecord> records = new ArrayList<>();
            timestamp += next(20);
            for (int p = 0; p < partitions; p++) {
                committed[group * 16 + p] += next(5000);
                OffsetCommitKey key = new OffsetCommitKey().setGroup("consumer-group-" + group)
                    .setTopic("orders-topic-" + topic).setPartition(p);
                OffsetCommitValue value = new OffsetCommitValue().setOffset(committed[group * 16 + p])
                    .setLeaderEpoch(next(4)).setMetadata(next(4) == 0 ? "" : "consumer-" + next(10))
                    .setCommitTimestamp(timestamp).setExpireTimestamp(-1);
                CoordinatorRecord r = CoordinatorRecord.record(key, new ApiMessageAndVersion(value, (short) 3));
                records.add(new SimpleRecord(timestamp, serde.serializeKey(r), serde.serializeValue(r)));
            }
            batch(ch, records);
        }
    }

    static byte[] frame(ApiMessage m) {
        ApiMessageAndVersion amv = new ApiMessageAndVersion(m, m.highestSupportedVersion());
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int size = MetadataRecordSerde.INSTANCE.recordSize(amv, cache);
        ByteBuffer buf = ByteBuffer.allocate(size);
        MetadataRecordSerde.INSTANCE.write(amv, cache, new ByteBufferAccessor(buf));
        return buf.array();
    }

    static List<Integer> replicas(int first) {
        return List.of(first % 6, (first + 1) % 6, (first + 2) % 6);
    }

    static void metadata(FileChannel ch, long bytes) throws Exception {
        LeaderChangeMessage lc = new LeaderChangeMessage().setVersion((short) 0).setLeaderId(3)
            .setVoters(List.of(new LeaderChangeMessage.Voter().setVoterId(1), new LeaderChangeMessage.Voter().setVoterId(3)))
            .setGrantingVoters(List.of(new LeaderChangeMessage.Voter().setVoterId(3)));
        ByteBuffer c = MemoryRecords.withLeaderChangeMessage(0, timestamp, 7, ByteBuffer.allocate(256), lc).buffer();
        offset = 1;
        while (c.hasRemaining()) {
            ch.write(c);
        }
        List<Uuid> topics = new ArrayList<>();
        int created = 0;
        while (ch.position() < bytes) {
            timestamp += 1 + next(500);
            List<SimpleRecord> records = new ArrayList<>();
            int what = next(10);
            if (topics.isEmpty() || what == 0) {
                Uuid id = new Uuid(0x1234_5678_0000_0000L + created, 0x0fed_cba9_8765_4321L ^ created);
                topics.add(id);
                records.add(new SimpleRecord(timestamp, null,
                    frame(new TopicRecord().setName("orders-topic-" + created).setTopicId(id))));
                created++;
                int partitions = 1 + next(12);
                for (int p = 0; p < partitions; p++) {
                    int leader = next(6);
                    records.add(new SimpleRecord(timestamp, null, frame(new PartitionRecord().setPartitionId(p)
                        .setTopicId(id).setReplicas(replicas(leader)).setIsr(replicas(leader)).setLeader(leader)
                        .setLeaderEpoch(0).setPartitionEpoch(0)
                        .setDirectories(List.of(Uuid.ONE_UUID, Uuid.ONE_UUID, Uuid.ONE_UUID)))));
                }
            } else if (what < 7) {
                int changes = 1 + next(8);
                for (int i = 0; i < changes; i++) {
                    int leader = next(6);
                    records.add(new SimpleRecord(timestamp, null, frame(new PartitionChangeRecord()
                        .setPartitionId(next(12)).setTopicId(topics.get(next(topics.size())))
                        .setLeader(leader).setIsr(replicas(leader)))));
                }
            } else {
                records.add(new SimpleRecord(timestamp, null, frame(new NoOpRecord())));
            }
            batch(ch, records);
        }
    }

    private DumpBench() {}
}
