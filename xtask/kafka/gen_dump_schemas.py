#!/usr/bin/env python3
"""Writes segment/src/dump/decode/schemas.rs: the record schemas `dump-log`'s decoders read.

The schemas are format facts (field names, types, versions, tags, defaults) of the records
Kafka 4.4 writes to `__consumer_offsets`, `__transaction_state`, `__share_group_state`,
`__cluster_metadata` and `__remote_log_metadata`, and of the KRaft control records. This script reads the message
definitions that Kafka's jars carry (`common/message/*.json`, `common/metadata/*.json`; kafka-storage's `message/*.json`) and
writes them down as the small static table of `segment/src/dump/decode/schema.rs`; it keeps
nothing but those facts (no descriptions, no code).

Usage: python3 xtask/kafka/gen_dump_schemas.py DIR_WITH_SCHEMA_JSON > segment/src/dump/decode/schemas.rs

Extract the JSON files into one directory first, from the Kafka 4.4.0 jars that
`mvn -f xtask/kafka/pom.xml dependency:build-classpath` puts in the local Maven repository:

    for j in kafka-group-coordinator kafka-transaction-coordinator kafka-share-coordinator \
             kafka-clients kafka-metadata kafka-storage; do
      unzip -o -j -d DIR ~/.m2/repository/org/apache/kafka/$j/4.4.0/$j-4.4.0.jar \
        'common/message/*.json' 'common/metadata/*.json' 'message/*.json'
    done

(Request/response schemas in the same folders are ignored: only the names below and the
`metadata` records are read.)
"""
import json
import os
import re
import sys

MAX = 0x7FFF

# (file stem, Rust static name) per table; the tables themselves are built in decode/*.rs.
WANTED = [
    # __consumer_offsets (group coordinator)
    "LegacyOffsetCommitKey", "LegacyOffsetCommitValue", "OffsetCommitKey", "OffsetCommitValue",
    "GroupMetadataKey", "GroupMetadataValue",
    "ConsumerGroupMetadataKey", "ConsumerGroupMetadataValue",
    "ConsumerGroupPartitionMetadataKey", "ConsumerGroupPartitionMetadataValue",
    "ConsumerGroupMemberMetadataKey", "ConsumerGroupMemberMetadataValue",
    "ConsumerGroupTargetAssignmentMetadataKey", "ConsumerGroupTargetAssignmentMetadataValue",
    "ConsumerGroupTargetAssignmentMemberKey", "ConsumerGroupTargetAssignmentMemberValue",
    "ConsumerGroupCurrentMemberAssignmentKey", "ConsumerGroupCurrentMemberAssignmentValue",
    "ShareGroupMemberMetadataKey", "ShareGroupMemberMetadataValue",
    "ShareGroupMetadataKey", "ShareGroupMetadataValue",
    "ShareGroupTargetAssignmentMetadataKey", "ShareGroupTargetAssignmentMetadataValue",
    "ShareGroupTargetAssignmentMemberKey", "ShareGroupTargetAssignmentMemberValue",
    "ShareGroupCurrentMemberAssignmentKey", "ShareGroupCurrentMemberAssignmentValue",
    "ShareGroupStatePartitionMetadataKey", "ShareGroupStatePartitionMetadataValue",
    "ConsumerGroupRegularExpressionKey", "ConsumerGroupRegularExpressionValue",
    "StreamsGroupMetadataKey", "StreamsGroupMetadataValue",
    "StreamsGroupMemberMetadataKey", "StreamsGroupMemberMetadataValue",
    "StreamsGroupTargetAssignmentMetadataKey", "StreamsGroupTargetAssignmentMetadataValue",
    "StreamsGroupTargetAssignmentMemberKey", "StreamsGroupTargetAssignmentMemberValue",
    "StreamsGroupCurrentMemberAssignmentKey", "StreamsGroupCurrentMemberAssignmentValue",
    "StreamsGroupTopologyKey", "StreamsGroupTopologyValue",
    "ConsumerProtocolSubscription", "ConsumerProtocolAssignment",
    # __transaction_state
    "TransactionLogKey", "TransactionLogValue",
    # __share_group_state
    "ShareSnapshotKey", "ShareSnapshotValue", "ShareUpdateKey", "ShareUpdateValue",
    # __remote_log_metadata (TopicBasedRemoteLogMetadataManager; kafka-storage's message/*.json)
    "RemoteLogSegmentMetadataRecord", "RemoteLogSegmentMetadataUpdateRecord",
    "RemotePartitionDeleteMetadataRecord", "RemoteLogSegmentMetadataSnapshotRecord",
    # KRaft control records
    "LeaderChangeMessage", "SnapshotHeaderRecord", "SnapshotFooterRecord",
    "KRaftVersionRecord", "VotersRecord",
]


def load(path):
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"^\s*//.*$", "", text, flags=re.M)
    return json.loads(text)


def versions(s):
    """'0+' -> (0, MAX); '1-3' -> (1, 3); '2' -> (2, 2); 'none'/None -> empty (1, 0)."""
    if s is None or s == "none" or s == "":
        return (1, 0)
    s = s.strip()
    if s.endswith("+"):
        return (int(s[:-1]), MAX)
    if "-" in s:
        a, b = s.split("-")
        return (int(a), int(b))
    return (int(s), int(s))


def v(t):
    lo, hi = t
    return f"V({lo}, {'MAX' if hi == MAX else hi})"


def camel(name):
    return name[0].lower() + name[1:]


PRIM = {
    "bool": "Ty::Bool", "int8": "Ty::Int8", "int16": "Ty::Int16", "uint16": "Ty::Uint16",
    "int32": "Ty::Int32", "uint32": "Ty::Uint32", "int64": "Ty::Int64",
    "float64": "Ty::Float64", "string": "Ty::Str", "bytes": "Ty::Bytes", "uuid": "Ty::Uuid",
}


def default_of(f):
    d = f.get("default")
    if d is None and "default" in f:
        return "Dflt::Null"
    if d is None:
        return "Dflt::Type"
    d = str(d).strip()
    if d == "null":
        return "Dflt::Null"
    if d in ("true", "false"):
        return f"Dflt::Bool({d})"
    if re.fullmatch(r"-?(0x)?[0-9a-fA-F]+", d) and f["type"] not in ("string",):
        return f"Dflt::Int({int(d, 0)})"
    return f"Dflt::Str({json.dumps(d)})"


def ty(f, structs, indent):
    t = f["type"]
    if t.startswith("[]"):
        inner = t[2:]
        if inner in PRIM:
            return f"Ty::Array(&{PRIM[inner]})"
        return f"Ty::Array(&Ty::Struct({fields(struct_fields(f, inner, structs), structs, indent)}))"
    if t in PRIM:
        return PRIM[t]
    return f"Ty::Struct({fields(struct_fields(f, t, structs), structs, indent)})"


def struct_fields(f, name, structs):
    if "fields" in f:
        return f["fields"]
    return structs[name]


def fields(fs, structs, indent):
    pad = " " * indent
    out = ["&["]
    for f in fs:
        tag = "None"
        if "tag" in f:
            tag = f"Some(({f['tag']}, {v(versions(f.get('taggedVersions')))}))"
        out.append(
            f"{pad}    Field {{ name: {json.dumps(camel(f['name']))}, ty: {ty(f, structs, indent + 4)}, "
            f"versions: {v(versions(f.get('versions', f.get('taggedVersions', '0+'))))}, nullable: {v(versions(f.get('nullableVersions')))}, "
            f"tag: {tag}, default: {default_of(f)} }},"
        )
    out.append(f"{pad}]")
    return "\n".join(out)


def const_name(stem):
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", stem).upper()


def main():
    d = sys.argv[1]
    print("//! The record schemas of `dump-log`'s decoders (Kafka 4.4): field names, types,")
    print("//! versions, tags and defaults, in the form of [`super::schema`]. Written by")
    print("//! `xtask/kafka/gen_dump_schemas.py` from the message definitions in Kafka's jars;")
    print("//! regenerate rather than edit.")
    print()
    print("use super::schema::{Dflt, Field, Msg, Ty, V, MAX};")
    stems = list(WANTED)
    meta = sorted(
        os.path.splitext(n)[0] for n in os.listdir(d)
        if n.endswith(".json") and load(os.path.join(d, n)).get("type") == "metadata"
        and os.path.splitext(n)[0] not in WANTED
    )
    for stem in stems + meta:
        m = load(os.path.join(d, stem + ".json"))
        structs = {s["name"]: s["fields"] for s in m.get("commonStructs", [])}
        name = m["name"]
        api = m.get("apiKey", -1)
        print()
        print(f"/// `{name}`.")
        print(f"pub(crate) static {const_name(stem)}: Msg = Msg {{")
        print(f"    name: {json.dumps(name)},")
        print(f"    api_key: {api},")
        print(f"    valid: {v(versions(m.get('validVersions')))},")
        print(f"    flexible: {v(versions(m.get('flexibleVersions')))},")
        print(f"    fields: {fields(m['fields'], structs, 4)},")
        print("};")
    print()
    print("/// The metadata record schemas (`__cluster_metadata`), in api-key order.")
    print("pub(crate) static METADATA: &[&Msg] = &[")
    ms = sorted(meta, key=lambda s: load(os.path.join(d, s + ".json"))["apiKey"])
    for stem in ms:
        print(f"    &{const_name(stem)},")
    print("];")


if __name__ == "__main__":
    main()
