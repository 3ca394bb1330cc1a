//! A three-node KRaft cluster on loopback: three JVMs, each with at most 384 MiB of heap.
//!
//! Node 2 is broker and controller in one JVM, the quorum's only voter; nodes 1 and 3 are
//! brokers only (`process.roles=broker`). One voter keeps start-up quick on a small machine,
//! and putting it on node 2 lets node 1 (the leader of `k5-cluster`'s partition) be stopped
//! and killed with `kill -9` while the controller runs on. Every node is a [`Broker`], whose
//! guard kills its JVM on every exit path (drop, panic, Ctrl-C); the broker-only nodes also
//! halt when xtask's end of their stdin closes (the helper's `Launcher`).

use std::path::Path;

use super::broker::{Broker, Jvm, Node, Quorum};

/// The node that runs the controller.
pub const CONTROLLER: u32 = 2;

/// `-Xmx` of every node.
pub const HEAP: &str = "384m";

/// Lines added to every node's server.properties: quick heartbeats and a short session, so
/// that the controller fences a killed broker after 4 s (Kafka's default is 9 s).
const EXTRA: &[&str] = &[
    "broker.heartbeat.interval.ms=500",
    "broker.session.timeout.ms=4000",
];

/// The three nodes, `nodes[i]` being node `i + 1`.
pub struct Cluster {
    pub nodes: Vec<Broker>,
}

impl Cluster {
    /// Writes the three configurations and formats the three storages (the controller's
    /// first, for its port; then the two brokers' in parallel). Nothing is started.
    pub fn create(jvm: &Jvm, home: &Path) -> Result<Cluster, String> {
        let controller = Broker::create_node(
            jvm,
            &home.join(format!("node-{CONTROLLER}")),
            Node {
                id: CONTROLLER,
                quorum: Quorum::Own,
                heap: HEAP,
            },
            EXTRA,
        )?;
        let quorum = Quorum::Join {
            id: CONTROLLER,
            port: controller.controller_port,
        };
        let others: Vec<Result<Broker, String>> = std::thread::scope(|s| {
            let handles: Vec<_> = [1u32, 3]
                .into_iter()
                .map(|id| {
                    s.spawn(move || {
                        Broker::create_node(
                            jvm,
                            &home.join(format!("node-{id}")),
                            Node {
                                id,
                                quorum,
                                heap: HEAP,
                            },
                            EXTRA,
                        )
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err("formatting a node panicked".into()))
                })
                .collect()
        });
        let mut it = others.into_iter();
        let (one, three) = (it.next().expect("two")?, it.next().expect("two")?);
        let c = Cluster {
            nodes: vec![one, controller, three],
        };
        let mut ports: Vec<u16> = c.nodes.iter().map(|b| b.port).collect();
        ports.push(c.nodes[1].controller_port);
        ports.sort_unstable();
        ports.dedup();
        if ports.len() != 4 {
            return Err(format!(
                "two nodes drew the same free port: {:?}",
                c.nodes
                    .iter()
                    .map(|b| (b.port, b.controller_port))
                    .collect::<Vec<_>>()
            ));
        }
        Ok(c)
    }

    /// Node `id`.
    pub fn node(&mut self, id: u32) -> &mut Broker {
        &mut self.nodes[id as usize - 1]
    }

    /// `127.0.0.1:port,..` of the nodes `ids`.
    pub fn bootstrap(&self, ids: &[u32]) -> String {
        ids.iter()
            .map(|&id| self.nodes[id as usize - 1].bootstrap())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Starts the nodes `ids`: the controller first when it is one of them, then the others
    /// in parallel; each waited for until it logged that it started and its port answers.
    pub fn start(&mut self, ids: &[u32]) -> Result<(), String> {
        if ids.contains(&CONTROLLER) {
            self.node(CONTROLLER).start()?;
        }
        let results: Vec<Result<(), String>> = std::thread::scope(|s| {
            let handles: Vec<_> = self
                .nodes
                .iter_mut()
                .filter(|b| b.node.id != CONTROLLER && ids.contains(&b.node.id))
                .map(|b| s.spawn(move || b.start()))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err("starting a node panicked".into()))
                })
                .collect()
        });
        results.into_iter().collect()
    }

    /// Controlled shutdown of every running node: the brokers first, the controller last
    /// (a broker's controlled shutdown needs it). Every node is stopped even when one fails;
    /// the first failure is returned.
    pub fn stop_all(&mut self) -> Result<(), String> {
        let mut first = Ok(());
        for id in [1, 3, CONTROLLER] {
            let r = self.node(id).stop().map_err(|e| format!("node {id}: {e}"));
            if first.is_ok() {
                first = r;
            }
        }
        first
    }
}
