//! The record schemas of `dump-log`'s decoders (Kafka 4.4): field names, types,
//! versions, tags and defaults, in the form of [`super::schema`]. Written by
//! `xtask/kafka/gen_dump_schemas.py` from the message definitions in Kafka's jars;
//! regenerate rather than edit.

use super::schema::{Dflt, Field, Msg, Ty, V, MAX};

/// `LegacyOffsetCommitKey`.
pub(crate) static LEGACY_OFFSET_COMMIT_KEY: Msg = Msg {
    name: "LegacyOffsetCommitKey",
    api_key: 0,
    valid: V(0, 0),
    flexible: V(1, 0),
    fields: &[
        Field { name: "group", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "topic", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "partition", ty: Ty::Int32, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `LegacyOffsetCommitValue`.
pub(crate) static LEGACY_OFFSET_COMMIT_VALUE: Msg = Msg {
    name: "LegacyOffsetCommitValue",
    api_key: 0,
    valid: V(0, 0),
    flexible: V(1, 0),
    fields: &[
        Field { name: "offset", ty: Ty::Int64, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "metadata", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "commitTimestamp", ty: Ty::Int64, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `OffsetCommitKey`.
pub(crate) static OFFSET_COMMIT_KEY: Msg = Msg {
    name: "OffsetCommitKey",
    api_key: 1,
    valid: V(0, 0),
    flexible: V(1, 0),
    fields: &[
        Field { name: "group", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "topic", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "partition", ty: Ty::Int32, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `OffsetCommitValue`.
pub(crate) static OFFSET_COMMIT_VALUE: Msg = Msg {
    name: "OffsetCommitValue",
    api_key: 1,
    valid: V(0, 4),
    flexible: V(4, MAX),
    fields: &[
        Field { name: "offset", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "leaderEpoch", ty: Ty::Int32, versions: V(3, MAX), nullable: V(1, 0), tag: None, default: Dflt::Int(-1) },
        Field { name: "metadata", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "commitTimestamp", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "expireTimestamp", ty: Ty::Int64, versions: V(1, 1), nullable: V(1, 0), tag: None, default: Dflt::Int(-1) },
        Field { name: "topicId", ty: Ty::Uuid, versions: V(4, MAX), nullable: V(1, 0), tag: Some((0, V(4, MAX))), default: Dflt::Type },
    ],
};

/// `GroupMetadataKey`.
pub(crate) static GROUP_METADATA_KEY: Msg = Msg {
    name: "GroupMetadataKey",
    api_key: 2,
    valid: V(0, 0),
    flexible: V(1, 0),
    fields: &[
        Field { name: "group", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `GroupMetadataValue`.
pub(crate) static GROUP_METADATA_VALUE: Msg = Msg {
    name: "GroupMetadataValue",
    api_key: 2,
    valid: V(0, 4),
    flexible: V(4, MAX),
    fields: &[
        Field { name: "protocolType", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "generation", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "protocol", ty: Ty::Str, versions: V(0, MAX), nullable: V(0, MAX), tag: None, default: Dflt::Type },
        Field { name: "leader", ty: Ty::Str, versions: V(0, MAX), nullable: V(0, MAX), tag: None, default: Dflt::Type },
        Field { name: "currentStateTimestamp", ty: Ty::Int64, versions: V(2, MAX), nullable: V(1, 0), tag: None, default: Dflt::Int(-1) },
        Field { name: "members", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "memberId", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "groupInstanceId", ty: Ty::Str, versions: V(3, MAX), nullable: V(3, MAX), tag: None, default: Dflt::Null },
            Field { name: "clientId", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "clientHost", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "rebalanceTimeout", ty: Ty::Int32, versions: V(1, MAX), nullable: V(1, 0), tag: None, default: Dflt::Int(-1) },
            Field { name: "sessionTimeout", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "subscription", ty: Ty::Bytes, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "assignment", ty: Ty::Bytes, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ConsumerGroupMetadataKey`.
pub(crate) static CONSUMER_GROUP_METADATA_KEY: Msg = Msg {
    name: "ConsumerGroupMetadataKey",
    api_key: 3,
    valid: V(0, 0),
    flexible: V(1, 0),
    fields: &[
        Field { name: "groupId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ConsumerGroupMetadataValue`.
pub(crate) static CONSUMER_GROUP_METADATA_VALUE: Msg = Msg {
    name: "ConsumerGroupMetadataValue",
    api_key: 3,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "epoch", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "metadataHash", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: Some((0, V(0, MAX))), default: Dflt::Int(0) },
    ],
};

/// `ConsumerGroupPartitionMetadataKey`.
pub(crate) static CONSUMER_GROUP_PARTITION_METADATA_KEY: Msg = Msg {
    name: "ConsumerGroupPartitionMetadataKey",
    api_key: 4,
    valid: V(0, 0),
    flexible: V(1, 0),
    fields: &[
        Field { name: "groupId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ConsumerGroupPartitionMetadataValue`.
pub(crate) static CONSUMER_GROUP_PARTITION_METADATA_VALUE: Msg = Msg {
    name: "ConsumerGroupPartitionMetadataValue",
    api_key: 4,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "topics", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "topicId", ty: Ty::Uuid, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "topicName", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "numPartitions", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "partitionMetadata", ty: Ty::Array(&Ty::Struct(&[
                Field { name: "partition", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
                Field { name: "racks", ty: Ty::Array(&Ty::Str), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ConsumerGroupMemberMetadataKey`.
pub(crate) static CONSUMER_GROUP_MEMBER_METADATA_KEY: Msg = Msg {
    name: "ConsumerGroupMemberMetadataKey",
    api_key: 5,
    valid: V(0, 0),
    flexible: V(1, 0),
    fields: &[
        Field { name: "groupId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "memberId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ConsumerGroupMemberMetadataValue`.
pub(crate) static CONSUMER_GROUP_MEMBER_METADATA_VALUE: Msg = Msg {
    name: "ConsumerGroupMemberMetadataValue",
    api_key: 5,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "instanceId", ty: Ty::Str, versions: V(0, MAX), nullable: V(0, MAX), tag: None, default: Dflt::Type },
        Field { name: "rackId", ty: Ty::Str, versions: V(0, MAX), nullable: V(0, MAX), tag: None, default: Dflt::Type },
        Field { name: "clientId", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "clientHost", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "subscribedTopicNames", ty: Ty::Array(&Ty::Str), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "subscribedTopicRegex", ty: Ty::Str, versions: V(0, MAX), nullable: V(0, MAX), tag: None, default: Dflt::Type },
        Field { name: "rebalanceTimeoutMs", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Int(-1) },
        Field { name: "serverAssignor", ty: Ty::Str, versions: V(0, MAX), nullable: V(0, MAX), tag: None, default: Dflt::Type },
        Field { name: "classicMemberMetadata", ty: Ty::Struct(&[
            Field { name: "sessionTimeoutMs", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "supportedProtocols", ty: Ty::Array(&Ty::Struct(&[
                Field { name: "name", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
                Field { name: "metadata", ty: Ty::Bytes, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ]), versions: V(0, MAX), nullable: V(0, MAX), tag: Some((0, V(0, MAX))), default: Dflt::Null },
    ],
};

/// `ConsumerGroupTargetAssignmentMetadataKey`.
pub(crate) static CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY: Msg = Msg {
    name: "ConsumerGroupTargetAssignmentMetadataKey",
    api_key: 6,
    valid: V(0, 0),
    flexible: V(1, 0),
    fields: &[
        Field { name: "groupId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ConsumerGroupTargetAssignmentMetadataValue`.
pub(crate) static CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE: Msg = Msg {
    name: "ConsumerGroupTargetAssignmentMetadataValue",
    api_key: 6,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "assignmentEpoch", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "assignmentTimestamp", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: Some((0, V(0, MAX))), default: Dflt::Int(0) },
    ],
};

/// `ConsumerGroupTargetAssignmentMemberKey`.
pub(crate) static CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY: Msg = Msg {
    name: "ConsumerGroupTargetAssignmentMemberKey",
    api_key: 7,
    valid: V(0, 0),
    flexible: V(1, 0),
    fields: &[
        Field { name: "groupId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "memberId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ConsumerGroupTargetAssignmentMemberValue`.
pub(crate) static CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE: Msg = Msg {
    name: "ConsumerGroupTargetAssignmentMemberValue",
    api_key: 7,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "topicPartitions", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "topicId", ty: Ty::Uuid, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "partitions", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ConsumerGroupCurrentMemberAssignmentKey`.
pub(crate) static CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY: Msg = Msg {
    name: "ConsumerGroupCurrentMemberAssignmentKey",
    api_key: 8,
    valid: V(0, 0),
    flexible: V(1, 0),
    fields: &[
        Field { name: "groupId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "memberId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ConsumerGroupCurrentMemberAssignmentValue`.
pub(crate) static CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE: Msg = Msg {
    name: "ConsumerGroupCurrentMemberAssignmentValue",
    api_key: 8,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "memberEpoch", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "previousMemberEpoch", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "state", ty: Ty::Int8, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "assignedPartitions", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "topicId", ty: Ty::Uuid, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "partitions", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "assignmentEpochs", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(0, MAX), tag: Some((0, V(0, MAX))), default: Dflt::Null },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "partitionsPendingRevocation", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "topicId", ty: Ty::Uuid, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "partitions", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "assignmentEpochs", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(0, MAX), tag: Some((0, V(0, MAX))), default: Dflt::Null },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ShareGroupMemberMetadataKey`.
pub(crate) static SHARE_GROUP_MEMBER_METADATA_KEY: Msg = Msg {
    name: "ShareGroupMemberMetadataKey",
    api_key: 10,
    valid: V(0, 0),
    flexible: V(1, 0),
    fields: &[
        Field { name: "groupId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "memberId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ShareGroupMemberMetadataValue`.
pub(crate) static SHARE_GROUP_MEMBER_METADATA_VALUE: Msg = Msg {
    name: "ShareGroupMemberMetadataValue",
    api_key: 10,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "rackId", ty: Ty::Str, versions: V(0, MAX), nullable: V(0, MAX), tag: None, default: Dflt::Type },
        Field { name: "clientId", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "clientHost", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "subscribedTopicNames", ty: Ty::Array(&Ty::Str), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ShareGroupMetadataKey`.
pub(crate) static SHARE_GROUP_METADATA_KEY: Msg = Msg {
    name: "ShareGroupMetadataKey",
    api_key: 11,
    valid: V(0, 0),
    flexible: V(1, 0),
    fields: &[
        Field { name: "groupId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ShareGroupMetadataValue`.
pub(crate) static SHARE_GROUP_METADATA_VALUE: Msg = Msg {
    name: "ShareGroupMetadataValue",
    api_key: 11,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "epoch", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "metadataHash", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ShareGroupTargetAssignmentMetadataKey`.
pub(crate) static SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY: Msg = Msg {
    name: "ShareGroupTargetAssignmentMetadataKey",
    api_key: 12,
    valid: V(0, 0),
    flexible: V(1, 0),
    fields: &[
        Field { name: "groupId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ShareGroupTargetAssignmentMetadataValue`.
pub(crate) static SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE: Msg = Msg {
    name: "ShareGroupTargetAssignmentMetadataValue",
    api_key: 12,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "assignmentEpoch", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "assignmentTimestamp", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: Some((0, V(0, MAX))), default: Dflt::Int(0) },
    ],
};

/// `ShareGroupTargetAssignmentMemberKey`.
pub(crate) static SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY: Msg = Msg {
    name: "ShareGroupTargetAssignmentMemberKey",
    api_key: 13,
    valid: V(0, 0),
    flexible: V(1, 0),
    fields: &[
        Field { name: "groupId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "memberId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ShareGroupTargetAssignmentMemberValue`.
pub(crate) static SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE: Msg = Msg {
    name: "ShareGroupTargetAssignmentMemberValue",
    api_key: 13,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "topicPartitions", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "topicId", ty: Ty::Uuid, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "partitions", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ShareGroupCurrentMemberAssignmentKey`.
pub(crate) static SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY: Msg = Msg {
    name: "ShareGroupCurrentMemberAssignmentKey",
    api_key: 14,
    valid: V(0, 0),
    flexible: V(1, 0),
    fields: &[
        Field { name: "groupId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "memberId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ShareGroupCurrentMemberAssignmentValue`.
pub(crate) static SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE: Msg = Msg {
    name: "ShareGroupCurrentMemberAssignmentValue",
    api_key: 14,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "memberEpoch", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "previousMemberEpoch", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "state", ty: Ty::Int8, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "assignedPartitions", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "topicId", ty: Ty::Uuid, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "partitions", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ShareGroupStatePartitionMetadataKey`.
pub(crate) static SHARE_GROUP_STATE_PARTITION_METADATA_KEY: Msg = Msg {
    name: "ShareGroupStatePartitionMetadataKey",
    api_key: 15,
    valid: V(0, 0),
    flexible: V(1, 0),
    fields: &[
        Field { name: "groupId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ShareGroupStatePartitionMetadataValue`.
pub(crate) static SHARE_GROUP_STATE_PARTITION_METADATA_VALUE: Msg = Msg {
    name: "ShareGroupStatePartitionMetadataValue",
    api_key: 15,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "initializingTopics", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "topicId", ty: Ty::Uuid, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "topicName", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "partitions", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "initializedTopics", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "topicId", ty: Ty::Uuid, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "topicName", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "partitions", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "deletingTopics", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "topicId", ty: Ty::Uuid, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "topicName", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ConsumerGroupRegularExpressionKey`.
pub(crate) static CONSUMER_GROUP_REGULAR_EXPRESSION_KEY: Msg = Msg {
    name: "ConsumerGroupRegularExpressionKey",
    api_key: 16,
    valid: V(0, 0),
    flexible: V(1, 0),
    fields: &[
        Field { name: "groupId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "regularExpression", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ConsumerGroupRegularExpressionValue`.
pub(crate) static CONSUMER_GROUP_REGULAR_EXPRESSION_VALUE: Msg = Msg {
    name: "ConsumerGroupRegularExpressionValue",
    api_key: 16,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "topics", ty: Ty::Array(&Ty::Str), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "version", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "timestamp", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `StreamsGroupMetadataKey`.
pub(crate) static STREAMS_GROUP_METADATA_KEY: Msg = Msg {
    name: "StreamsGroupMetadataKey",
    api_key: 17,
    valid: V(0, 0),
    flexible: V(1, 0),
    fields: &[
        Field { name: "groupId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `StreamsGroupMetadataValue`.
pub(crate) static STREAMS_GROUP_METADATA_VALUE: Msg = Msg {
    name: "StreamsGroupMetadataValue",
    api_key: 17,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "epoch", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "metadataHash", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "validatedTopologyEpoch", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: Some((0, V(0, MAX))), default: Dflt::Int(-1) },
        Field { name: "lastAssignmentConfigs", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "key", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "value", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ])), versions: V(0, MAX), nullable: V(0, MAX), tag: Some((1, V(0, MAX))), default: Dflt::Null },
        Field { name: "storedDescriptionTopologyEpoch", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: Some((2, V(0, MAX))), default: Dflt::Int(-1) },
        Field { name: "failedDescriptionTopologyEpoch", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: Some((3, V(0, MAX))), default: Dflt::Int(-1) },
    ],
};

/// `StreamsGroupMemberMetadataKey`.
pub(crate) static STREAMS_GROUP_MEMBER_METADATA_KEY: Msg = Msg {
    name: "StreamsGroupMemberMetadataKey",
    api_key: 19,
    valid: V(0, 0),
    flexible: V(1, 0),
    fields: &[
        Field { name: "groupId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "memberId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `StreamsGroupMemberMetadataValue`.
pub(crate) static STREAMS_GROUP_MEMBER_METADATA_VALUE: Msg = Msg {
    name: "StreamsGroupMemberMetadataValue",
    api_key: 19,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "instanceId", ty: Ty::Str, versions: V(0, MAX), nullable: V(0, MAX), tag: None, default: Dflt::Type },
        Field { name: "rackId", ty: Ty::Str, versions: V(0, MAX), nullable: V(0, MAX), tag: None, default: Dflt::Type },
        Field { name: "clientId", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "clientHost", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "rebalanceTimeoutMs", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Int(-1) },
        Field { name: "topologyEpoch", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "processId", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "userEndpoint", ty: Ty::Struct(&[
            Field { name: "host", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "port", ty: Ty::Uint16, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ]), versions: V(0, MAX), nullable: V(0, MAX), tag: None, default: Dflt::Null },
        Field { name: "clientTags", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "key", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "value", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `StreamsGroupTargetAssignmentMetadataKey`.
pub(crate) static STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_KEY: Msg = Msg {
    name: "StreamsGroupTargetAssignmentMetadataKey",
    api_key: 20,
    valid: V(0, 0),
    flexible: V(1, 0),
    fields: &[
        Field { name: "groupId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `StreamsGroupTargetAssignmentMetadataValue`.
pub(crate) static STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE: Msg = Msg {
    name: "StreamsGroupTargetAssignmentMetadataValue",
    api_key: 20,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "assignmentEpoch", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "assignmentTimestamp", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: Some((0, V(0, MAX))), default: Dflt::Int(0) },
    ],
};

/// `StreamsGroupTargetAssignmentMemberKey`.
pub(crate) static STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY: Msg = Msg {
    name: "StreamsGroupTargetAssignmentMemberKey",
    api_key: 21,
    valid: V(0, 0),
    flexible: V(1, 0),
    fields: &[
        Field { name: "groupId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "memberId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `StreamsGroupTargetAssignmentMemberValue`.
pub(crate) static STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE: Msg = Msg {
    name: "StreamsGroupTargetAssignmentMemberValue",
    api_key: 21,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "activeTasks", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "subtopologyId", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "partitions", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "standbyTasks", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "subtopologyId", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "partitions", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "warmupTasks", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "subtopologyId", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "partitions", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `StreamsGroupCurrentMemberAssignmentKey`.
pub(crate) static STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY: Msg = Msg {
    name: "StreamsGroupCurrentMemberAssignmentKey",
    api_key: 22,
    valid: V(0, 0),
    flexible: V(1, 0),
    fields: &[
        Field { name: "groupId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "memberId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `StreamsGroupCurrentMemberAssignmentValue`.
pub(crate) static STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE: Msg = Msg {
    name: "StreamsGroupCurrentMemberAssignmentValue",
    api_key: 22,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "memberEpoch", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "previousMemberEpoch", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "state", ty: Ty::Int8, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "activeTasks", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "subtopologyId", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "partitions", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "assignmentEpochs", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(0, MAX), tag: Some((0, V(0, MAX))), default: Dflt::Null },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "standbyTasks", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "subtopologyId", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "partitions", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "assignmentEpochs", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(0, MAX), tag: Some((0, V(0, MAX))), default: Dflt::Null },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "warmupTasks", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "subtopologyId", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "partitions", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "assignmentEpochs", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(0, MAX), tag: Some((0, V(0, MAX))), default: Dflt::Null },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "activeTasksPendingRevocation", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "subtopologyId", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "partitions", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "assignmentEpochs", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(0, MAX), tag: Some((0, V(0, MAX))), default: Dflt::Null },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "standbyTasksPendingRevocation", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "subtopologyId", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "partitions", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "assignmentEpochs", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(0, MAX), tag: Some((0, V(0, MAX))), default: Dflt::Null },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "warmupTasksPendingRevocation", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "subtopologyId", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "partitions", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "assignmentEpochs", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(0, MAX), tag: Some((0, V(0, MAX))), default: Dflt::Null },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `StreamsGroupTopologyKey`.
pub(crate) static STREAMS_GROUP_TOPOLOGY_KEY: Msg = Msg {
    name: "StreamsGroupTopologyKey",
    api_key: 23,
    valid: V(0, 0),
    flexible: V(1, 0),
    fields: &[
        Field { name: "groupId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `StreamsGroupTopologyValue`.
pub(crate) static STREAMS_GROUP_TOPOLOGY_VALUE: Msg = Msg {
    name: "StreamsGroupTopologyValue",
    api_key: 23,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "epoch", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "subtopologies", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "subtopologyId", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "sourceTopics", ty: Ty::Array(&Ty::Str), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "sourceTopicRegex", ty: Ty::Array(&Ty::Str), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "stateChangelogTopics", ty: Ty::Array(&Ty::Struct(&[
                Field { name: "name", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
                Field { name: "partitions", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
                Field { name: "replicationFactor", ty: Ty::Int16, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
                Field { name: "topicConfigs", ty: Ty::Array(&Ty::Struct(&[
                    Field { name: "key", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
                    Field { name: "value", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
                ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "repartitionSinkTopics", ty: Ty::Array(&Ty::Str), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "repartitionSourceTopics", ty: Ty::Array(&Ty::Struct(&[
                Field { name: "name", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
                Field { name: "partitions", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
                Field { name: "replicationFactor", ty: Ty::Int16, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
                Field { name: "topicConfigs", ty: Ty::Array(&Ty::Struct(&[
                    Field { name: "key", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
                    Field { name: "value", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
                ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "copartitionGroups", ty: Ty::Array(&Ty::Struct(&[
                Field { name: "sourceTopics", ty: Ty::Array(&Ty::Int16), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
                Field { name: "sourceTopicRegex", ty: Ty::Array(&Ty::Int16), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
                Field { name: "repartitionSourceTopics", ty: Ty::Array(&Ty::Int16), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ConsumerProtocolSubscription`.
pub(crate) static CONSUMER_PROTOCOL_SUBSCRIPTION: Msg = Msg {
    name: "ConsumerProtocolSubscription",
    api_key: -1,
    valid: V(0, 3),
    flexible: V(1, 0),
    fields: &[
        Field { name: "topics", ty: Ty::Array(&Ty::Str), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "userData", ty: Ty::Bytes, versions: V(0, MAX), nullable: V(0, MAX), tag: None, default: Dflt::Null },
        Field { name: "ownedPartitions", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "topic", ty: Ty::Str, versions: V(1, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "partitions", ty: Ty::Array(&Ty::Int32), versions: V(1, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ])), versions: V(1, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "generationId", ty: Ty::Int32, versions: V(2, MAX), nullable: V(1, 0), tag: None, default: Dflt::Int(-1) },
        Field { name: "rackId", ty: Ty::Str, versions: V(3, MAX), nullable: V(3, MAX), tag: None, default: Dflt::Null },
    ],
};

/// `ConsumerProtocolAssignment`.
pub(crate) static CONSUMER_PROTOCOL_ASSIGNMENT: Msg = Msg {
    name: "ConsumerProtocolAssignment",
    api_key: -1,
    valid: V(0, 3),
    flexible: V(1, 0),
    fields: &[
        Field { name: "assignedPartitions", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "topic", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "partitions", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "userData", ty: Ty::Bytes, versions: V(0, MAX), nullable: V(0, MAX), tag: None, default: Dflt::Null },
    ],
};

/// `TransactionLogKey`.
pub(crate) static TRANSACTION_LOG_KEY: Msg = Msg {
    name: "TransactionLogKey",
    api_key: 0,
    valid: V(0, 0),
    flexible: V(1, 0),
    fields: &[
        Field { name: "transactionalId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `TransactionLogValue`.
pub(crate) static TRANSACTION_LOG_VALUE: Msg = Msg {
    name: "TransactionLogValue",
    api_key: 0,
    valid: V(0, 1),
    flexible: V(1, MAX),
    fields: &[
        Field { name: "producerId", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "previousProducerId", ty: Ty::Int64, versions: V(1, MAX), nullable: V(1, 0), tag: Some((0, V(1, MAX))), default: Dflt::Int(-1) },
        Field { name: "nextProducerId", ty: Ty::Int64, versions: V(1, MAX), nullable: V(1, 0), tag: Some((1, V(1, MAX))), default: Dflt::Int(-1) },
        Field { name: "producerEpoch", ty: Ty::Int16, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "nextProducerEpoch", ty: Ty::Int16, versions: V(1, MAX), nullable: V(1, 0), tag: Some((3, V(1, MAX))), default: Dflt::Int(-1) },
        Field { name: "transactionTimeoutMs", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "transactionStatus", ty: Ty::Int8, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "transactionPartitions", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "topic", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "partitionIds", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ])), versions: V(0, MAX), nullable: V(0, MAX), tag: None, default: Dflt::Type },
        Field { name: "transactionLastUpdateTimestampMs", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "transactionStartTimestampMs", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "clientTransactionVersion", ty: Ty::Int16, versions: V(1, MAX), nullable: V(1, 0), tag: Some((2, V(1, MAX))), default: Dflt::Int(0) },
    ],
};

/// `ShareSnapshotKey`.
pub(crate) static SHARE_SNAPSHOT_KEY: Msg = Msg {
    name: "ShareSnapshotKey",
    api_key: 0,
    valid: V(0, 0),
    flexible: V(1, 0),
    fields: &[
        Field { name: "groupId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "topicId", ty: Ty::Uuid, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "partition", ty: Ty::Int32, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ShareSnapshotValue`.
pub(crate) static SHARE_SNAPSHOT_VALUE: Msg = Msg {
    name: "ShareSnapshotValue",
    api_key: 0,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "snapshotEpoch", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "stateEpoch", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "leaderEpoch", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "startOffset", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "deliveryCompleteCount", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: Some((0, V(0, MAX))), default: Dflt::Int(-1) },
        Field { name: "createTimestamp", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "writeTimestamp", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "stateBatches", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "firstOffset", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "lastOffset", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "deliveryState", ty: Ty::Int8, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "deliveryCount", ty: Ty::Int16, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ShareUpdateKey`.
pub(crate) static SHARE_UPDATE_KEY: Msg = Msg {
    name: "ShareUpdateKey",
    api_key: 1,
    valid: V(0, 0),
    flexible: V(1, 0),
    fields: &[
        Field { name: "groupId", ty: Ty::Str, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "topicId", ty: Ty::Uuid, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "partition", ty: Ty::Int32, versions: V(0, 0), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ShareUpdateValue`.
pub(crate) static SHARE_UPDATE_VALUE: Msg = Msg {
    name: "ShareUpdateValue",
    api_key: 1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "snapshotEpoch", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "leaderEpoch", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "startOffset", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "deliveryCompleteCount", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: Some((0, V(0, MAX))), default: Dflt::Int(-1) },
        Field { name: "stateBatches", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "firstOffset", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "lastOffset", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "deliveryState", ty: Ty::Int8, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "deliveryCount", ty: Ty::Int16, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `RemoteLogSegmentMetadataRecord`.
pub(crate) static REMOTE_LOG_SEGMENT_METADATA_RECORD: Msg = Msg {
    name: "RemoteLogSegmentMetadataRecord",
    api_key: 0,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "remoteLogSegmentId", ty: Ty::Struct(&[
            Field { name: "topicIdPartition", ty: Ty::Struct(&[
                Field { name: "name", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
                Field { name: "id", ty: Ty::Uuid, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
                Field { name: "partition", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            ]), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "id", ty: Ty::Uuid, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ]), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "startOffset", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "endOffset", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "brokerId", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "maxTimestampMs", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "eventTimestampMs", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "segmentLeaderEpochs", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "leaderEpoch", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "offset", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "segmentSizeInBytes", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "customMetadata", ty: Ty::Bytes, versions: V(0, MAX), nullable: V(0, MAX), tag: None, default: Dflt::Null },
        Field { name: "remoteLogSegmentState", ty: Ty::Int8, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "txnIndexEmpty", ty: Ty::Bool, versions: V(0, MAX), nullable: V(1, 0), tag: Some((0, V(0, MAX))), default: Dflt::Type },
    ],
};

/// `RemoteLogSegmentMetadataUpdateRecord`.
pub(crate) static REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD: Msg = Msg {
    name: "RemoteLogSegmentMetadataUpdateRecord",
    api_key: 1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "remoteLogSegmentId", ty: Ty::Struct(&[
            Field { name: "topicIdPartition", ty: Ty::Struct(&[
                Field { name: "name", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
                Field { name: "id", ty: Ty::Uuid, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
                Field { name: "partition", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            ]), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "id", ty: Ty::Uuid, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ]), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "brokerId", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "eventTimestampMs", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "customMetadata", ty: Ty::Bytes, versions: V(0, MAX), nullable: V(0, MAX), tag: None, default: Dflt::Null },
        Field { name: "remoteLogSegmentState", ty: Ty::Int8, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `RemotePartitionDeleteMetadataRecord`.
pub(crate) static REMOTE_PARTITION_DELETE_METADATA_RECORD: Msg = Msg {
    name: "RemotePartitionDeleteMetadataRecord",
    api_key: 2,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "topicIdPartition", ty: Ty::Struct(&[
            Field { name: "name", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "id", ty: Ty::Uuid, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "partition", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ]), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "brokerId", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "eventTimestampMs", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "remotePartitionDeleteState", ty: Ty::Int8, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `RemoteLogSegmentMetadataSnapshotRecord`.
pub(crate) static REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT_RECORD: Msg = Msg {
    name: "RemoteLogSegmentMetadataSnapshotRecord",
    api_key: 3,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "segmentId", ty: Ty::Uuid, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "startOffset", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "endOffset", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "brokerId", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "maxTimestampMs", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "eventTimestampMs", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "segmentLeaderEpochs", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "leaderEpoch", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "offset", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "segmentSizeInBytes", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "customMetadata", ty: Ty::Bytes, versions: V(0, MAX), nullable: V(0, MAX), tag: None, default: Dflt::Null },
        Field { name: "remoteLogSegmentState", ty: Ty::Int8, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "txnIndexEmpty", ty: Ty::Bool, versions: V(0, MAX), nullable: V(1, 0), tag: Some((0, V(0, MAX))), default: Dflt::Type },
    ],
};

/// `LeaderChangeMessage`.
pub(crate) static LEADER_CHANGE_MESSAGE: Msg = Msg {
    name: "LeaderChangeMessage",
    api_key: -1,
    valid: V(0, 1),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "version", ty: Ty::Int16, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "leaderId", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "voters", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "voterId", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "voterDirectoryId", ty: Ty::Uuid, versions: V(1, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "grantingVoters", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "voterId", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "voterDirectoryId", ty: Ty::Uuid, versions: V(1, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `SnapshotHeaderRecord`.
pub(crate) static SNAPSHOT_HEADER_RECORD: Msg = Msg {
    name: "SnapshotHeaderRecord",
    api_key: -1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "version", ty: Ty::Int16, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "lastContainedLogTimestamp", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `SnapshotFooterRecord`.
pub(crate) static SNAPSHOT_FOOTER_RECORD: Msg = Msg {
    name: "SnapshotFooterRecord",
    api_key: -1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "version", ty: Ty::Int16, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `KRaftVersionRecord`.
pub(crate) static K_RAFT_VERSION_RECORD: Msg = Msg {
    name: "KRaftVersionRecord",
    api_key: -1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "version", ty: Ty::Int16, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "kRaftVersion", ty: Ty::Int16, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `VotersRecord`.
pub(crate) static VOTERS_RECORD: Msg = Msg {
    name: "VotersRecord",
    api_key: -1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "version", ty: Ty::Int16, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "voters", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "voterId", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "voterDirectoryId", ty: Ty::Uuid, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "endpoints", ty: Ty::Array(&Ty::Struct(&[
                Field { name: "name", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
                Field { name: "host", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
                Field { name: "port", ty: Ty::Uint16, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "kRaftVersionFeature", ty: Ty::Struct(&[
                Field { name: "minSupportedVersion", ty: Ty::Int16, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
                Field { name: "maxSupportedVersion", ty: Ty::Int16, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            ]), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `AbortTransactionRecord`.
pub(crate) static ABORT_TRANSACTION_RECORD: Msg = Msg {
    name: "AbortTransactionRecord",
    api_key: 25,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "reason", ty: Ty::Str, versions: V(0, MAX), nullable: V(0, MAX), tag: Some((0, V(0, MAX))), default: Dflt::Null },
    ],
};

/// `AccessControlEntryRecord`.
pub(crate) static ACCESS_CONTROL_ENTRY_RECORD: Msg = Msg {
    name: "AccessControlEntryRecord",
    api_key: 18,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "id", ty: Ty::Uuid, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "resourceType", ty: Ty::Int8, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "resourceName", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "patternType", ty: Ty::Int8, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "principal", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "host", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "operation", ty: Ty::Int8, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "permissionType", ty: Ty::Int8, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `BeginTransactionRecord`.
pub(crate) static BEGIN_TRANSACTION_RECORD: Msg = Msg {
    name: "BeginTransactionRecord",
    api_key: 23,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "name", ty: Ty::Str, versions: V(0, MAX), nullable: V(0, MAX), tag: Some((0, V(0, MAX))), default: Dflt::Null },
    ],
};

/// `BrokerRegistrationChangeRecord`.
pub(crate) static BROKER_REGISTRATION_CHANGE_RECORD: Msg = Msg {
    name: "BrokerRegistrationChangeRecord",
    api_key: 17,
    valid: V(0, 3),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "brokerId", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "brokerEpoch", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "fenced", ty: Ty::Int8, versions: V(0, MAX), nullable: V(1, 0), tag: Some((0, V(0, MAX))), default: Dflt::Type },
        Field { name: "inControlledShutdown", ty: Ty::Int8, versions: V(1, MAX), nullable: V(1, 0), tag: Some((1, V(1, MAX))), default: Dflt::Type },
        Field { name: "logDirs", ty: Ty::Array(&Ty::Uuid), versions: V(2, MAX), nullable: V(1, 0), tag: Some((2, V(2, MAX))), default: Dflt::Type },
        Field { name: "cordonedLogDirs", ty: Ty::Array(&Ty::Uuid), versions: V(3, MAX), nullable: V(3, MAX), tag: Some((3, V(3, MAX))), default: Dflt::Null },
    ],
};

/// `ClearElrRecord`.
pub(crate) static CLEAR_ELR_RECORD: Msg = Msg {
    name: "ClearElrRecord",
    api_key: 28,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "topicName", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ClientQuotaRecord`.
pub(crate) static CLIENT_QUOTA_RECORD: Msg = Msg {
    name: "ClientQuotaRecord",
    api_key: 14,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "entity", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "entityType", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "entityName", ty: Ty::Str, versions: V(0, MAX), nullable: V(0, MAX), tag: None, default: Dflt::Type },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "key", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "value", ty: Ty::Float64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "remove", ty: Ty::Bool, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ConfigRecord`.
pub(crate) static CONFIG_RECORD: Msg = Msg {
    name: "ConfigRecord",
    api_key: 4,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "resourceType", ty: Ty::Int8, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "resourceName", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "name", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "value", ty: Ty::Str, versions: V(0, MAX), nullable: V(0, MAX), tag: None, default: Dflt::Type },
    ],
};

/// `DelegationTokenRecord`.
pub(crate) static DELEGATION_TOKEN_RECORD: Msg = Msg {
    name: "DelegationTokenRecord",
    api_key: 10,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "owner", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "requester", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "renewers", ty: Ty::Array(&Ty::Str), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "issueTimestamp", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "maxTimestamp", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "expirationTimestamp", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "tokenId", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `EndTransactionRecord`.
pub(crate) static END_TRANSACTION_RECORD: Msg = Msg {
    name: "EndTransactionRecord",
    api_key: 24,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
    ],
};

/// `FeatureLevelRecord`.
pub(crate) static FEATURE_LEVEL_RECORD: Msg = Msg {
    name: "FeatureLevelRecord",
    api_key: 12,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "name", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "featureLevel", ty: Ty::Int16, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `FenceBrokerRecord`.
pub(crate) static FENCE_BROKER_RECORD: Msg = Msg {
    name: "FenceBrokerRecord",
    api_key: 7,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "id", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "epoch", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `NoOpRecord`.
pub(crate) static NO_OP_RECORD: Msg = Msg {
    name: "NoOpRecord",
    api_key: 20,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
    ],
};

/// `PartitionChangeRecord`.
pub(crate) static PARTITION_CHANGE_RECORD: Msg = Msg {
    name: "PartitionChangeRecord",
    api_key: 5,
    valid: V(0, 2),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "partitionId", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Int(-1) },
        Field { name: "topicId", ty: Ty::Uuid, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "isr", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(0, MAX), tag: Some((0, V(0, MAX))), default: Dflt::Null },
        Field { name: "leader", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: Some((1, V(0, MAX))), default: Dflt::Int(-2) },
        Field { name: "replicas", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(0, MAX), tag: Some((2, V(0, MAX))), default: Dflt::Null },
        Field { name: "removingReplicas", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(0, MAX), tag: Some((3, V(0, MAX))), default: Dflt::Null },
        Field { name: "addingReplicas", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(0, MAX), tag: Some((4, V(0, MAX))), default: Dflt::Null },
        Field { name: "leaderRecoveryState", ty: Ty::Int8, versions: V(0, MAX), nullable: V(1, 0), tag: Some((5, V(0, MAX))), default: Dflt::Int(-1) },
        Field { name: "directories", ty: Ty::Array(&Ty::Uuid), versions: V(1, MAX), nullable: V(1, MAX), tag: Some((8, V(1, MAX))), default: Dflt::Null },
        Field { name: "eligibleLeaderReplicas", ty: Ty::Array(&Ty::Int32), versions: V(2, MAX), nullable: V(2, MAX), tag: Some((6, V(2, MAX))), default: Dflt::Null },
        Field { name: "lastKnownElr", ty: Ty::Array(&Ty::Int32), versions: V(2, MAX), nullable: V(2, MAX), tag: Some((7, V(2, MAX))), default: Dflt::Null },
    ],
};

/// `PartitionRecord`.
pub(crate) static PARTITION_RECORD: Msg = Msg {
    name: "PartitionRecord",
    api_key: 3,
    valid: V(0, 2),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "partitionId", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Int(-1) },
        Field { name: "topicId", ty: Ty::Uuid, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "replicas", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "isr", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "removingReplicas", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "addingReplicas", ty: Ty::Array(&Ty::Int32), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "leader", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Int(-1) },
        Field { name: "leaderRecoveryState", ty: Ty::Int8, versions: V(0, MAX), nullable: V(1, 0), tag: Some((0, V(0, MAX))), default: Dflt::Int(0) },
        Field { name: "leaderEpoch", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Int(-1) },
        Field { name: "partitionEpoch", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Int(-1) },
        Field { name: "directories", ty: Ty::Array(&Ty::Uuid), versions: V(1, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "eligibleLeaderReplicas", ty: Ty::Array(&Ty::Int32), versions: V(2, MAX), nullable: V(2, MAX), tag: Some((1, V(2, MAX))), default: Dflt::Null },
        Field { name: "lastKnownElr", ty: Ty::Array(&Ty::Int32), versions: V(2, MAX), nullable: V(2, MAX), tag: Some((2, V(2, MAX))), default: Dflt::Null },
    ],
};

/// `ProducerIdsRecord`.
pub(crate) static PRODUCER_IDS_RECORD: Msg = Msg {
    name: "ProducerIdsRecord",
    api_key: 15,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "brokerId", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "brokerEpoch", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Int(-1) },
        Field { name: "nextProducerId", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `RegisterBrokerRecord`.
pub(crate) static REGISTER_BROKER_RECORD: Msg = Msg {
    name: "RegisterBrokerRecord",
    api_key: 0,
    valid: V(0, 4),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "brokerId", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "isMigratingZkBroker", ty: Ty::Bool, versions: V(2, MAX), nullable: V(1, 0), tag: None, default: Dflt::Bool(false) },
        Field { name: "incarnationId", ty: Ty::Uuid, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "brokerEpoch", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "endPoints", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "name", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "host", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "port", ty: Ty::Uint16, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "securityProtocol", ty: Ty::Int16, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "features", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "name", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "minSupportedVersion", ty: Ty::Int16, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "maxSupportedVersion", ty: Ty::Int16, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "rack", ty: Ty::Str, versions: V(0, MAX), nullable: V(0, MAX), tag: None, default: Dflt::Type },
        Field { name: "fenced", ty: Ty::Bool, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Bool(true) },
        Field { name: "inControlledShutdown", ty: Ty::Bool, versions: V(1, MAX), nullable: V(1, 0), tag: None, default: Dflt::Bool(false) },
        Field { name: "logDirs", ty: Ty::Array(&Ty::Uuid), versions: V(3, MAX), nullable: V(1, 0), tag: Some((0, V(3, MAX))), default: Dflt::Type },
        Field { name: "cordonedLogDirs", ty: Ty::Array(&Ty::Uuid), versions: V(4, MAX), nullable: V(4, MAX), tag: Some((1, V(4, MAX))), default: Dflt::Null },
    ],
};

/// `RegisterControllerRecord`.
pub(crate) static REGISTER_CONTROLLER_RECORD: Msg = Msg {
    name: "RegisterControllerRecord",
    api_key: 27,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "controllerId", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "incarnationId", ty: Ty::Uuid, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "zkMigrationReady", ty: Ty::Bool, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "endPoints", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "name", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "host", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "port", ty: Ty::Uint16, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "securityProtocol", ty: Ty::Int16, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "features", ty: Ty::Array(&Ty::Struct(&[
            Field { name: "name", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "minSupportedVersion", ty: Ty::Int16, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
            Field { name: "maxSupportedVersion", ty: Ty::Int16, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        ])), versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `RemoveAccessControlEntryRecord`.
pub(crate) static REMOVE_ACCESS_CONTROL_ENTRY_RECORD: Msg = Msg {
    name: "RemoveAccessControlEntryRecord",
    api_key: 19,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "id", ty: Ty::Uuid, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `RemoveDelegationTokenRecord`.
pub(crate) static REMOVE_DELEGATION_TOKEN_RECORD: Msg = Msg {
    name: "RemoveDelegationTokenRecord",
    api_key: 26,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "tokenId", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `RemoveTopicRecord`.
pub(crate) static REMOVE_TOPIC_RECORD: Msg = Msg {
    name: "RemoveTopicRecord",
    api_key: 9,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "topicId", ty: Ty::Uuid, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `RemoveUserScramCredentialRecord`.
pub(crate) static REMOVE_USER_SCRAM_CREDENTIAL_RECORD: Msg = Msg {
    name: "RemoveUserScramCredentialRecord",
    api_key: 22,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "name", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "mechanism", ty: Ty::Int8, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `TopicRecord`.
pub(crate) static TOPIC_RECORD: Msg = Msg {
    name: "TopicRecord",
    api_key: 2,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "name", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "topicId", ty: Ty::Uuid, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `UnfenceBrokerRecord`.
pub(crate) static UNFENCE_BROKER_RECORD: Msg = Msg {
    name: "UnfenceBrokerRecord",
    api_key: 8,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "id", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "epoch", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `UnregisterBrokerRecord`.
pub(crate) static UNREGISTER_BROKER_RECORD: Msg = Msg {
    name: "UnregisterBrokerRecord",
    api_key: 1,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "brokerId", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "brokerEpoch", ty: Ty::Int64, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `UnregisterControllerRecord`.
pub(crate) static UNREGISTER_CONTROLLER_RECORD: Msg = Msg {
    name: "UnregisterControllerRecord",
    api_key: 29,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "controllerId", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `UserScramCredentialRecord`.
pub(crate) static USER_SCRAM_CREDENTIAL_RECORD: Msg = Msg {
    name: "UserScramCredentialRecord",
    api_key: 11,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "name", ty: Ty::Str, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "mechanism", ty: Ty::Int8, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "salt", ty: Ty::Bytes, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "storedKey", ty: Ty::Bytes, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "serverKey", ty: Ty::Bytes, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
        Field { name: "iterations", ty: Ty::Int32, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// `ZkMigrationStateRecord`.
pub(crate) static ZK_MIGRATION_RECORD: Msg = Msg {
    name: "ZkMigrationStateRecord",
    api_key: 21,
    valid: V(0, 0),
    flexible: V(0, MAX),
    fields: &[
        Field { name: "zkMigrationState", ty: Ty::Int8, versions: V(0, MAX), nullable: V(1, 0), tag: None, default: Dflt::Type },
    ],
};

/// The metadata record schemas (`__cluster_metadata`), in api-key order.
pub(crate) static METADATA: &[&Msg] = &[
    &REGISTER_BROKER_RECORD,
    &UNREGISTER_BROKER_RECORD,
    &TOPIC_RECORD,
    &PARTITION_RECORD,
    &CONFIG_RECORD,
    &PARTITION_CHANGE_RECORD,
    &FENCE_BROKER_RECORD,
    &UNFENCE_BROKER_RECORD,
    &REMOVE_TOPIC_RECORD,
    &DELEGATION_TOKEN_RECORD,
    &USER_SCRAM_CREDENTIAL_RECORD,
    &FEATURE_LEVEL_RECORD,
    &CLIENT_QUOTA_RECORD,
    &PRODUCER_IDS_RECORD,
    &BROKER_REGISTRATION_CHANGE_RECORD,
    &ACCESS_CONTROL_ENTRY_RECORD,
    &REMOVE_ACCESS_CONTROL_ENTRY_RECORD,
    &NO_OP_RECORD,
    &ZK_MIGRATION_RECORD,
    &REMOVE_USER_SCRAM_CREDENTIAL_RECORD,
    &BEGIN_TRANSACTION_RECORD,
    &END_TRANSACTION_RECORD,
    &ABORT_TRANSACTION_RECORD,
    &REMOVE_DELEGATION_TOKEN_RECORD,
    &REGISTER_CONTROLLER_RECORD,
    &CLEAR_ELR_RECORD,
    &UNREGISTER_CONTROLLER_RECORD,
];
