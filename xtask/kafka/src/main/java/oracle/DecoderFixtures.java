package oracle;

import java.io.File;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.KRaftVersionRecord;
import org.apache.kafka.common.message.LeaderChangeMessage;
import org.apache.kafka.common.message.SnapshotFooterRecord;
import org.apache.kafka.common.message.SnapshotHeaderRecord;
import org.apache.kafka.common.message.VotersRecord;
import org.apache.kafka.common.metadata.MetadataRecordType;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.coordinator.common.runtime.CoordinatorRecord;
import org.apache.kafka.coordinator.common.runtime.CoordinatorRecordSerde;
import org.apache.kafka.coordinator.group.GroupCoordinatorRecordSerde;
import org.apache.kafka.coordinator.group.generated.GroupMetadataValue;
import org.apache.kafka.coordinator.share.ShareCoordinatorRecordSerde;
import org.apache.kafka.coordinator.transaction.TransactionCoordinatorRecordSerde;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.server.common.ApiMessageAndVersion;

/**
 * Writes the `dump-log` decoder fixtures: one `.log` per internal topic, holding every
 * record type Kafka 4.4 knows at every version it can write, serialized by Kafka's own
 * serdes and batched by Kafka's own MemoryRecords builder. Each type appears twice per
 * version when it can: with every field at its default, and with every field set (by
 * reflection over the generated setters: strings, numbers, uuids, bytes, lists of one or
 * two elements, nested structs), so that tagged fields and nested structs are exercised.
 * Group metadata carries real consumer-protocol subscription and assignment bytes. Then a
 * tombstone, a record of an unknown type and broken records (the tool's error lines). The
 * metadata log also gets the KRaft control records.
 *
 * Usage: java -cp CLASSPATH oracle.DecoderFixtures OUT_DIR
 */
public final class DecoderFixtures {
    private static long offset = 0;
    private static long timestamp = 1_700_000_000_000L;

    public static void main(String[] args) throws Exception {
        File out = new File(args[0]);
        coordinator(new File(out, "offsets-0"), new GroupCoordinatorRecordSerde(),
            org.apache.kafka.coordinator.group.generated.CoordinatorRecordType.values().length, DecoderFixtures::groupType);
        coordinator(new File(out, "txn-state-0"), new TransactionCoordinatorRecordSerde(),
            org.apache.kafka.coordinator.transaction.generated.CoordinatorRecordType.values().length, DecoderFixtures::txnType);
        coordinator(new File(out, "share-state-0"), new ShareCoordinatorRecordSerde(),
            org.apache.kafka.coordinator.share.generated.CoordinatorRecordType.values().length, DecoderFixtures::shareType);
        try {
            metadata(new File(out, "metadata-0"));
            remote(new File(out, "remote-log-metadata-0"));
        } catch (Throwable t) {
            t.printStackTrace(System.out);
            System.exit(1);
        }
    }

    /** A record type of one coordinator: its key and value factories and versions. */
    record Kind(short id, java.util.function.Supplier<ApiMessage> key, java.util.function.Supplier<ApiMessage> value,
                short lowest, short highest) {}

    interface KindAt {
        Kind at(int index);
    }

    static Kind groupType(int i) {
        var t = org.apache.kafka.coordinator.group.generated.CoordinatorRecordType.values()[i];
        return new Kind(t.id(), t::newRecordKey, t::newRecordValue, t.lowestSupportedVersion(), t.highestSupportedVersion());
    }

    static Kind txnType(int i) {
        var t = org.apache.kafka.coordinator.transaction.generated.CoordinatorRecordType.values()[i];
        return new Kind(t.id(), t::newRecordKey, t::newRecordValue, t.lowestSupportedVersion(), t.highestSupportedVersion());
    }

    static Kind shareType(int i) {
        var t = org.apache.kafka.coordinator.share.generated.CoordinatorRecordType.values()[i];
        return new Kind(t.id(), t::newRecordKey, t::newRecordValue, t.lowestSupportedVersion(), t.highestSupportedVersion());
    }

    static void coordinator(File dir, CoordinatorRecordSerde serde, int kinds, KindAt at) throws Exception {
        offset = 0;
        List<SimpleRecord> records = new ArrayList<>();
        ApiMessage lastKey = null;
        for (int i = 0; i < kinds; i++) {
            Kind kind = at.at(i);
            for (short v = kind.lowest(); v <= kind.highest(); v++) {
                for (boolean filled : new boolean[] {false, true}) {
                    ApiMessage key = kind.key().get();
                    ApiMessage value = kind.value().get();
                    if (filled) {
                        fill(key, 0);
                        fill(value, 0);
                        if (value instanceof GroupMetadataValue g) {
                            consumerGroup(g);
                        }
                    }
                    CoordinatorRecord r = CoordinatorRecord.record(key, new ApiMessageAndVersion(value, v));
                    try {
                        records.add(new SimpleRecord(timestamp++, serde.serializeKey(r), serde.serializeValue(r)));
                        lastKey = key;
                    } catch (RuntimeException e) {
                        // A filled field this version cannot carry: the default form stands.
                    }
                }
            }
        }
        // A tombstone, and a record of a type no decoder knows.
        records.add(new SimpleRecord(timestamp++, serde.serializeKey(CoordinatorRecord.tombstone(lastKey)), null));
        records.add(new SimpleRecord(timestamp++, new byte[] {0x7f, 0x00, 0, 1, 'x'}, new byte[] {0, 0}));
        // Broken records: a value version no schema has, a value cut short, a key cut short.
        byte[] key = serde.serializeKey(CoordinatorRecord.tombstone(lastKey));
        records.add(new SimpleRecord(timestamp++, key, new byte[] {0, 99}));
        records.add(new SimpleRecord(timestamp++, key, new byte[] {0, 0, 0, 0}));
        records.add(new SimpleRecord(timestamp++, Arrays.copyOf(key, key.length - 1), new byte[] {0, 0}));
        records.add(new SimpleRecord(timestamp++, new byte[] {0}, new byte[] {0, 0}));
        write(dir, records, List.of());
    }

    static void consumerGroup(GroupMetadataValue g) {
        g.setProtocolType("consumer");
        for (GroupMetadataValue.MemberMetadata m : g.members()) {
            var sub = new ConsumerPartitionAssignor.Subscription(List.of("orders", "payments"), null,
                List.of(new TopicPartition("orders", 0)), 3, Optional.of("rack-a"));
            var asg = new ConsumerPartitionAssignor.Assignment(
                List.of(new TopicPartition("orders", 0), new TopicPartition("orders", 1)), ByteBuffer.wrap(new byte[] {9, 8}));
            m.setSubscription(bytes(ConsumerProtocol.serializeSubscription(sub)));
            m.setAssignment(bytes(ConsumerProtocol.serializeAssignment(asg)));
        }
    }

    static byte[] bytes(ByteBuffer b) {
        byte[] a = new byte[b.remaining()];
        b.get(a);
        return a;
    }

    static void metadata(File dir) throws Exception {
        offset = 0;
        List<SimpleRecord> records = new ArrayList<>();
        for (MetadataRecordType t : MetadataRecordType.values()) {
            for (short v = t.lowestSupportedVersion(); v <= t.highestSupportedVersion(); v++) {
                for (boolean filled : new boolean[] {false, true}) {
                    ApiMessage m = t.newMetadataRecord();
                    if (filled) {
                        fill(m, 0);
                    }
                    try {
                        ApiMessageAndVersion amv = new ApiMessageAndVersion(m, v);
                        ObjectSerializationCache cache = new ObjectSerializationCache();
                        int size = MetadataRecordSerde.INSTANCE.recordSize(amv, cache);
                        ByteBuffer buf = ByteBuffer.allocate(size);
                        MetadataRecordSerde.INSTANCE.write(amv, cache, new ByteBufferAccessor(buf));
                        records.add(new SimpleRecord(timestamp++, null, buf.array()));
                    } catch (RuntimeException e) {
                        // As above.
                    }
                }
            }
        }
        // Broken records: garbage after a record, frame versions 0 and 2, an unknown type,
        // a record cut short.
        byte[] last = records.get(records.size() - 1).value().array();
        byte[] longer = Arrays.copyOf(last, last.length + 2);
        records.add(new SimpleRecord(timestamp++, null, longer));
        records.add(new SimpleRecord(timestamp++, null, new byte[] {0, 2, 0}));
        records.add(new SimpleRecord(timestamp++, null, new byte[] {2, 2, 0}));
        records.add(new SimpleRecord(timestamp++, null, new byte[] {1, 99, 0, 0}));
        records.add(new SimpleRecord(timestamp++, null, new byte[] {1, 2, 0, 5}));
        List<MemoryRecords> control = new ArrayList<>();
        ByteBuffer b = ByteBuffer.allocate(4096);
        LeaderChangeMessage lc = new LeaderChangeMessage().setVersion((short) 0).setLeaderId(3)
            .setVoters(List.of(new LeaderChangeMessage.Voter().setVoterId(1), new LeaderChangeMessage.Voter().setVoterId(3)))
            .setGrantingVoters(List.of(new LeaderChangeMessage.Voter().setVoterId(3)));
        SnapshotHeaderRecord sh = new SnapshotHeaderRecord().setVersion((short) 0).setLastContainedLogTimestamp(timestamp);
        SnapshotFooterRecord sf = new SnapshotFooterRecord().setVersion((short) 0);
        KRaftVersionRecord kv = new KRaftVersionRecord().setVersion((short) 0).setKRaftVersion((short) 1);
        VotersRecord vr = new VotersRecord();
        fill(vr, 0);
        vr.setVersion((short) 0);
        control.add(MemoryRecords.withSnapshotHeaderRecord(0, timestamp++, 1, ByteBuffer.allocate(256), sh));
        control.add(MemoryRecords.withLeaderChangeMessage(0, timestamp++, 1, ByteBuffer.allocate(256), lc));
        control.add(MemoryRecords.withKRaftVersionRecord(0, timestamp++, 1, ByteBuffer.allocate(256), kv));
        control.add(MemoryRecords.withVotersRecord(0, timestamp++, 1, ByteBuffer.allocate(1024), vr));
        control.add(MemoryRecords.withSnapshotFooterRecord(0, timestamp++, 1, ByteBuffer.allocate(256), sf));
        write(dir, records, control);
    }

    /** A metadata-framed record (frame version, api key, version, message) of any message. */
    static byte[] frame(ApiMessage m, short v) {
        ApiMessageAndVersion amv = new ApiMessageAndVersion(m, v);
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int size = MetadataRecordSerde.INSTANCE.recordSize(amv, cache);
        ByteBuffer buf = ByteBuffer.allocate(size);
        MetadataRecordSerde.INSTANCE.write(amv, cache, new ByteBufferAccessor(buf));
        return buf.array();
    }

    /**
     * `__remote_log_metadata`: the four metadata objects through Kafka's
     * RemoteLogMetadataSerde (with and without custom metadata, every state), records with
     * every field set, and records Kafka's constructors refuse (unknown states, a negative
     * start offset, no leader epochs).
     */
    static void remote(File dir) throws Exception {
        offset = 0;
        var serde = new org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde();
        var tip = new org.apache.kafka.common.TopicIdPartition(new Uuid(0x0102030405060708L, 0x1112131415161718L),
            new TopicPartition("orders", 3));
        var id = new org.apache.kafka.server.log.remote.storage.RemoteLogSegmentId(tip, new Uuid(0x2122232425262728L, 0x3132333435363738L));
        var cm = java.util.Optional.of(new org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata.CustomMetadata(new byte[] {1, 2, 3}));
        java.util.Map<Integer, Long> epochs = new java.util.HashMap<>();
        epochs.put(4, 200L);
        epochs.put(0, 0L);
        epochs.put(2, 50L);
        List<SimpleRecord> records = new ArrayList<>();
        for (var state : org.apache.kafka.server.log.remote.storage.RemoteLogSegmentState.values()) {
            var m = new org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata(id, 0, 299, timestamp, 1, timestamp + 1,
                4096, state.ordinal() % 2 == 0 ? cm : java.util.Optional.empty(), state, epochs, state.ordinal() % 2 == 1);
            records.add(new SimpleRecord(timestamp++, null, serde.serialize(m)));
            var u = new org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadataUpdate(id, timestamp,
                state.ordinal() % 2 == 1 ? cm : java.util.Optional.empty(), state, 2);
            records.add(new SimpleRecord(timestamp++, null, serde.serialize(u)));
            var snap = new org.apache.kafka.server.log.remote.metadata.storage.RemoteLogSegmentMetadataSnapshot(id.id(), 300, 599,
                timestamp, 1, timestamp + 2, 8192, cm, state, epochs, true);
            records.add(new SimpleRecord(timestamp++, null, serde.serialize(snap)));
        }
        for (var state : org.apache.kafka.server.log.remote.storage.RemotePartitionDeleteState.values()) {
            var d = new org.apache.kafka.server.log.remote.storage.RemotePartitionDeleteMetadata(tip, state, timestamp, 3);
            records.add(new SimpleRecord(timestamp++, null, serde.serialize(d)));
        }
        var g = "org.apache.kafka.server.log.remote.metadata.storage.generated.";
        for (String name : new String[] {"RemoteLogSegmentMetadataRecord", "RemoteLogSegmentMetadataUpdateRecord",
                "RemotePartitionDeleteMetadataRecord", "RemoteLogSegmentMetadataSnapshotRecord"}) {
            ApiMessage m = (ApiMessage) Class.forName(g + name).getDeclaredConstructor().newInstance();
            fill(m, 0);
            records.add(new SimpleRecord(timestamp++, null, frame(m, (short) 0)));
        }
        var bad = new org.apache.kafka.server.log.remote.metadata.storage.generated.RemoteLogSegmentMetadataRecord();
        fill(bad, 0);
        bad.setStartOffset(0).setEndOffset(10).setRemoteLogSegmentState((byte) 9);
        records.add(new SimpleRecord(timestamp++, null, frame(bad, (short) 0)));
        bad.setRemoteLogSegmentState((byte) 1).setStartOffset(-5);
        records.add(new SimpleRecord(timestamp++, null, frame(bad, (short) 0)));
        bad.setStartOffset(20);
        records.add(new SimpleRecord(timestamp++, null, frame(bad, (short) 0)));
        bad.setStartOffset(0).setSegmentLeaderEpochs(new ArrayList<>());
        records.add(new SimpleRecord(timestamp++, null, frame(bad, (short) 0)));
        var badUpdate = new org.apache.kafka.server.log.remote.metadata.storage.generated.RemoteLogSegmentMetadataUpdateRecord();
        fill(badUpdate, 0);
        badUpdate.setRemoteLogSegmentState((byte) 9);
        records.add(new SimpleRecord(timestamp++, null, frame(badUpdate, (short) 0)));
        var badDelete = new org.apache.kafka.server.log.remote.metadata.storage.generated.RemotePartitionDeleteMetadataRecord();
        fill(badDelete, 0);
        badDelete.setRemotePartitionDeleteState((byte) 9);
        records.add(new SimpleRecord(timestamp++, null, frame(badDelete, (short) 0)));
        var badSnap = new org.apache.kafka.server.log.remote.metadata.storage.generated.RemoteLogSegmentMetadataSnapshotRecord();
        fill(badSnap, 0);
        badSnap.setRemoteLogSegmentState((byte) 1).setSegmentLeaderEpochs(new ArrayList<>());
        records.add(new SimpleRecord(timestamp++, null, frame(badSnap, (short) 0)));
        records.add(new SimpleRecord(timestamp++, null, new byte[] {1, 9, 0, 0}));
        records.add(new SimpleRecord(timestamp++, null, (byte[]) null));
        write(dir, records, List.of());
    }

    /** Writes the records in batches of 4, then the control batches, with their offsets. */
    static void write(File dir, List<SimpleRecord> records, List<MemoryRecords> control) throws IOException {
        dir.mkdirs();
        File log = new File(dir, "00000000000000000000.log");
        try (FileChannel ch = FileChannel.open(log.toPath(), StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            for (int i = 0; i < records.size(); i += 4) {
                List<SimpleRecord> chunk = records.subList(i, Math.min(records.size(), i + 4));
                MemoryRecords m = MemoryRecords.withRecords(offset, Compression.NONE, 1, chunk.toArray(new SimpleRecord[0]));
                offset += chunk.size();
                ch.write(m.buffer());
            }
            for (MemoryRecords c : control) {
                ByteBuffer buf = c.buffer().duplicate();
                buf.putLong(0, offset++); // the batch's base offset
                // The CRC covers the attributes onwards, not the base offset: still valid.
                ch.write(buf);
            }
        }
        System.out.println(log + ": " + Files.size(log.toPath()) + " bytes, " + offset + " records");
    }

    /** Sets every field of a generated message (or struct) to a non-default value. */
    static void fill(Object msg, int depth) {
        for (Method m : msg.getClass().getMethods()) {
            if (!m.getName().startsWith("set") || m.getParameterCount() != 1 || Modifier.isStatic(m.getModifiers())
                    || m.getName().equals("setUnknownTaggedFields")) {
                continue;
            }
            Object value = valueFor(m.getParameterTypes()[0], m.getGenericParameterTypes()[0], m.getName(), depth);
            if (value == null) {
                continue;
            }
            try {
                m.invoke(msg, value);
            } catch (ReflectiveOperationException e) {
                // Skip the field.
            }
        }
    }

    static Object valueFor(Class<?> c, Type generic, String name, int depth) {
        int h = Math.abs(name.hashCode() % 1000);
        if (c == int.class) return 100 + h;
        if (c == long.class) return 1_000_000_000_000L + h;
        if (c == short.class) return (short) (h % 7 + 1);
        if (c == byte.class) return (byte) (h % 3 + 1);
        if (c == boolean.class) return true;
        if (c == double.class) return 2.5 + h;
        if (c == String.class) return "v-" + name.substring(3) + "\u00e9\"";
        if (c == Uuid.class) return new Uuid(0x1234_5678_9abc_def0L + h, 0x0fed_cba9_8765_4321L);
        if (c == byte[].class) return new byte[] {1, 2, 3, (byte) h};
        if (depth > 3) return null;
        if (List.class.isAssignableFrom(c) && generic instanceof ParameterizedType p) {
            Type e = p.getActualTypeArguments()[0];
            if (e instanceof Class<?> ec) {
                List<Object> list = new ArrayList<>();
                for (int i = 0; i < 2; i++) {
                    Object x = element(ec, name + i, depth);
                    if (x == null) return null;
                    list.add(x);
                }
                return list;
            }
            return null;
        }
        if (Collection.class.isAssignableFrom(c)) {
            // A generated collection of keyed structs (ImplicitLinkedHashMultiCollection).
            try {
                @SuppressWarnings("unchecked")
                Collection<Object> coll = (Collection<Object>) c.getDeclaredConstructor().newInstance();
                Type sup = c.getGenericSuperclass();
                if (sup instanceof ParameterizedType p && p.getActualTypeArguments()[0] instanceof Class<?> ec) {
                    for (int i = 0; i < 2; i++) {
                        Object x = element(ec, name + i, depth);
                        if (x == null) return null;
                        coll.add(x);
                    }
                }
                return coll;
            } catch (ReflectiveOperationException e) {
                return null;
            }
        }
        if (c.getName().startsWith("org.apache.kafka")) {
            try {
                Object s = c.getDeclaredConstructor().newInstance();
                fill(s, depth + 1);
                return s;
            } catch (ReflectiveOperationException e) {
                return null;
            }
        }
        return null;
    }

    static Object element(Class<?> ec, String name, int depth) {
        if (ec == Integer.class) return 7 + Math.abs(name.hashCode() % 50);
        if (ec == Long.class) return 70L + Math.abs(name.hashCode() % 50);
        if (ec == String.class) return "e-" + name;
        if (ec == Uuid.class) return new Uuid(0x1111L + name.length(), 0x2222L);
        try {
            Object s = ec.getDeclaredConstructor().newInstance();
            fill(s, depth + 1);
            return s;
        } catch (ReflectiveOperationException e) {
            return null;
        }
    }

    private DecoderFixtures() {}
}
