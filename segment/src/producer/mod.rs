//! Producer state (Kafka's `ProducerStateManager`, `ProducerStateEntry`,
//! `ProducerAppendInfo` for the replication origin) with its snapshot files, and the
//! leader-epoch cache (Kafka's `LeaderEpochFileCache`).
//!
//! The producer state is what a partition knows about each producer id: its epoch, the
//! sequence numbers and offsets of its last batches, the coordinator epoch of its last
//! transaction marker, and the first offset of its ongoing transaction. From the ongoing
//! transactions follow the first unstable offset and the last stable offset written into
//! each aborted transaction's `.txnindex` entry.
//!
//! Snapshots (`<offset>.snapshot`, format in [`snapshot`]) let recovery start from
//! the latest snapshot at or below the point it recovers from instead of from the log
//! start, so that a transaction that began before that point is still known when its
//! marker is replayed.
//!
//! Files:
//! * `mod.rs` — these docs, the constants, and the re-exports of the items below.
//! * `entry.rs` — per-producer entries: [`ProducerStateEntry`] and its [`BatchMetadata`].
//! * `state.rs` — [`ProducerStateManager`]: ongoing transactions, snapshots; [`CompletedTxn`].
//! * `epochs.rs` — [`LeaderEpochCache`] and reading the `leader-epoch-checkpoint` file.
//! * `snapshot.rs` — [`snapshot`]: the `<offset>.snapshot` and `leader-epoch-checkpoint` bytes.
//! * `append.rs` — Kafka's `ProducerAppendInfo` checks of a leader append (epoch, sequence,
//!   transaction, coordinator epoch) and duplicate detection, by [`AppendOrigin`].

pub(crate) mod append;
mod entry;
mod epochs;
pub mod snapshot;
mod state;

pub use append::AppendOrigin;
pub use entry::{BatchMetadata, ProducerStateEntry};
pub use epochs::{
    read_leader_epoch_checkpoint, read_leader_epoch_checkpoint_with, LeaderEpochCache,
};
pub use state::{CompletedTxn, ProducerStateManager};

/// Kafka's default `producer.id.expiration.ms` (1 day), a topic setting kept in `config`.
pub use crate::config::DEFAULT_PRODUCER_ID_EXPIRATION_MS;
/// Batches kept per producer for duplicate detection (Kafka's `NUM_BATCHES_TO_RETAIN`).
pub const NUM_BATCHES_TO_RETAIN: usize = 5;
