package oracle;

/**
 * Entry point of the Kafka oracle used by {@code cargo xtask kafka}: each subcommand drives a
 * broker or Kafka's own storage classes and writes what Kafka answered to a JSON file that
 * xtask compares with this workspace's answers.
 *
 * <pre>
 *   k1-produce BOOTSTRAP              run the K1 workload against a broker
 *   answers    BOOTSTRAP OUT.json T.. record offsets, offsetsForTimes and consumed records
 *   k3         IN.txt OUT.txt         answer index queries with OffsetIndex/TimeIndex/TransactionIndex
 *   k4-epochs  IN.txt OUT.txt         run leader-epoch histories on LeaderEpochFileCache
 *   k4-leader  IN.txt OUT.txt         run leader appends, reads and ListOffsets on UnifiedLog
 *   k8-local-retention IN.txt OUT.txt local retention of UnifiedLog with remote storage
 *   append     BOOTSTRAP TOPIC N      produce N records, print the offset of each
 *   txn-open   BOOTSTRAP TOPIC N      leave a transaction open (for kill -9)
 *   bulk-produce BOOTSTRAP SEG MIB T:C.. MIB MiB per topic, fast (k1-recovery-time)
 *   cluster-*  ...                    the k5-cluster topic, reassignment and failover (Cluster)
 *   compact-*  ...                    k7-broker-compaction's topics, producer and readers (Compaction)
 * </pre>
 */
public final class Oracle {
    private Oracle() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            System.err.println("usage: oracle <k1-produce|answers|k3|k4-epochs|k4-leader|txn-open> ...");
            System.exit(2);
        }
        String[] rest = java.util.Arrays.copyOfRange(args, 1, args.length);
        switch (args[0]) {
            case "k1-produce" -> Workload.produce(rest);
            case "txn-open" -> Workload.openTransaction(rest);
            case "answers" -> Answers.run(rest);
            case "append" -> Workload.append(rest);
            case "bulk-produce" -> Workload.bulkProduce(rest);
            case "create-topics" -> Workload.createTopics(rest);
            case "cluster-create" -> Cluster.create(rest);
            case "cluster-state" -> Cluster.printState(rest);
            case "cluster-reassign" -> Cluster.reassign(rest);
            case "cluster-await-leader" -> Cluster.awaitLeader(rest);
            case "cluster-snapshots" -> Cluster.snapshots(rest);
            case "compact-create" -> Compaction.create(rest);
            case "compact-produce" -> Compaction.produce(rest);
            case "compact-read" -> Compaction.read(rest);
            case "k3" -> IndexOracle.run(rest);
            case "k4-epochs" -> EpochOracle.run(rest);
            case "k4-leader" -> LeaderOracle.run(rest);
            case "k8-local-retention" -> TierOracle.run(rest);
            case "tier-create" -> Tiered.create(rest);
            case "tier-alter" -> Tiered.alter(rest);
            case "tier-produce" -> Tiered.produce(rest);
            case "tier-offsets" -> Tiered.offsets(rest);
            default -> {
                System.err.println("unknown subcommand " + args[0]);
                System.exit(2);
            }
        }
    }
}
