//! Rebuilding a [`LogSegment`] from its `.log`: Kafka's `recover` and `truncateTo`, and
//! the loader's load-time checks (`sanityCheck`, the cheap index check, the active
//! segment's index resize).

use index_core::peek::{self, Ends, PeekError};
use index_core::IndexEntry;
use index_offset::RawOffsetEntry;
use index_time::{RawTimeEntry, TimestampOffset};

use super::LogSegment;
use crate::diag as tracing;
use crate::error::{Result, SegmentError};
use crate::format::BatchFormat;
use crate::fs::FsOp;
use crate::producer::{LeaderEpochCache, ProducerStateManager};
use crate::scan::{self, ScanStop, Scanner};

/// Bytes at the start of a `.log` that [`LogSegment::open_index_files`] asks the kernel
/// to read ahead: the page holding the first batch's header, which the load-time check
/// reads, and the rest of a whole-batch scan's first window (the tail scan of a segment
/// with no offset index entry starts there).
pub(crate) const LOAD_CHECK_HEAD: u64 = 16 << 10;

/// Bytes at the end of a `.log` that [`LogSegment::open_index_files`] asks the kernel to
/// read ahead: where the load-time check's tail scan runs (from the last offset index
/// entry, `index.interval.bytes` (4 KiB by default) plus one batch before the end, in a
/// well-indexed segment). A longer tail is read when the scan gets there.
pub(crate) const LOAD_CHECK_TAIL: u64 = 64 << 10;

/// The page size the read-ahead hints assume: an index's last entry is advised apart
/// from its first only when it lies this far or more from the start.
pub(crate) const ADVICE_PAGE: u64 = 4096;

/// One index file opened for reading by the load-time check
/// ([`LogSegment::open_index_files`]).
#[derive(Debug)]
pub(crate) struct IndexFile {
    /// Where the file is: named in the check's error reasons.
    pub(crate) path: std::path::PathBuf,
    /// The file, opened for reading; closed when this is dropped.
    pub(crate) file: std::fs::File,
    /// The file's length in bytes when it was opened (its metadata).
    pub(crate) len: u64,
}

/// One index file of [`IndexFiles`]: `Ok(None)` if it does not exist, `Err(reason)` if it
/// could not be opened or measured.
type OpenedIndex = std::result::Result<Option<IndexFile>, String>;

/// A segment's `.index` and `.timeindex` opened for the load-time check
/// ([`LogSegment::open_index_files`]).
#[derive(Debug)]
pub(crate) struct IndexFiles {
    offset: OpenedIndex,
    time: OpenedIndex,
}

/// The first and last entries of a segment's `.index` and `.timeindex` (`None`: missing
/// or empty), read once at load ([`LogSegment::read_index_ends`]) for both load-time
/// checks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IndexEnds {
    pub(crate) offset: Option<Ends<RawOffsetEntry>>,
    pub(crate) time: Option<Ends<RawTimeEntry>>,
}

/// The ranges `(position, length)` of a `.log` of `size` bytes that the load-time checks
/// read: its first [`LOAD_CHECK_HEAD`] bytes and its last [`LOAD_CHECK_TAIL`] (none for an
/// empty file; one range when they meet).
fn log_advice(size: u64) -> impl Iterator<Item = (u64, u64)> {
    let head = (size > 0).then(|| (0, size.min(LOAD_CHECK_HEAD)));
    let tail = (size > LOAD_CHECK_HEAD).then(|| {
        let from = size.saturating_sub(LOAD_CHECK_TAIL).max(LOAD_CHECK_HEAD);
        (from, size - from)
    });
    head.into_iter().chain(tail)
}

/// Asks the kernel to read ahead the pages of an index file of `len` bytes (entries of
/// `entry` bytes) that the load-time checks read: the first entry's page, and the last
/// entry's when it is another one. A hint: failures are ignored.
fn advise_index(f: &std::fs::File, len: u64, entry: u64) {
    if len == 0 {
        return;
    }
    let _ = index_core::sys::advise_range_will_need(f, 0, entry);
    let last = (len - len % entry).saturating_sub(entry);
    if last >= ADVICE_PAGE {
        let _ = index_core::sys::advise_range_will_need(f, last, entry);
    }
}

/// Recovery's running state for the offset and time indexes it rebuilds, batch by batch
/// ([`LogSegment::recover_with`], and the rebuild of a deferred index check in
/// `deferred.rs`, so that both write the same entries for the same batches).
pub(super) struct IndexRebuild {
    /// The largest timestamp so far and the offset of its record.
    pub(super) max: TimestampOffset,
    /// Bytes of the batches added so far (the `.log`'s valid prefix).
    pub(super) valid_bytes: u64,
    /// Where the last index entry points.
    last_index_entry: u64,
    index_interval_bytes: u64,
}

impl IndexRebuild {
    pub(super) fn new(base_offset: i64, index_interval_bytes: u64) -> Self {
        IndexRebuild {
            max: TimestampOffset {
                timestamp: -1,
                offset: base_offset,
            },
            valid_bytes: 0,
            last_index_entry: 0,
            index_interval_bytes,
        }
    }

    /// Adds the batch `info`, which starts at [`valid_bytes`](Self::valid_bytes): an
    /// entry in each index once more than `index.interval.bytes` lie between the last
    /// entry and the batch (Kafka's `recover`).
    pub(super) fn add(
        &mut self,
        oi: &index_offset::OffsetIndex,
        ti: &index_time::TimeIndex,
        info: &crate::format::BatchInfo,
    ) -> Result<()> {
        if info.max_timestamp > self.max.timestamp {
            self.max = TimestampOffset {
                timestamp: info.max_timestamp,
                offset: info.offset_of_max_timestamp,
            };
        }
        if self.valid_bytes - self.last_index_entry > self.index_interval_bytes {
            // Recovery indexes batch by batch, an append once per call: a segment
            // written by multi-batch appends can need more entries here than its
            // indexes hold. A full index stays sparse (lookups scan on from its last
            // entry) instead of failing the open, where Kafka's `recover` throws
            // (`docs/kafka-behaviour.md#recovery-full-index`).
            if !oi.is_full() {
                oi.append(info.last_offset, self.valid_bytes as u32)?;
            }
            if !ti.is_full() {
                ti.maybe_append(self.max.timestamp, self.max.offset)?;
            }
            self.last_index_entry = self.valid_bytes;
        }
        self.valid_bytes += info.size_in_bytes as u64;
        Ok(())
    }
}

impl<F: BatchFormat> LogSegment<F> {
    /// Maps both indexes (bypassing a deferred check: the caller rebuilds them) and
    /// empties them, each through the file-system seam.
    pub(super) fn reset_indexes(
        &self,
    ) -> Result<(
        std::sync::Arc<index_offset::OffsetIndex>,
        std::sync::Arc<index_time::TimeIndex>,
    )> {
        let oi = self.offset_index.get()?;
        let ti = self.time_index.get()?;
        self.before(FsOp::IndexResize, &oi.path())?;
        oi.reset()?;
        self.after(FsOp::IndexResize, &oi.path());
        self.before(FsOp::IndexResize, &ti.path())?;
        ti.reset()?;
        self.after(FsOp::IndexResize, &ti.path());
        Ok((oi, ti))
    }

    /// Ends a rebuild of both indexes: the time index's final entry, then both trimmed to
    /// their entries. Returns the largest timestamp and its offset.
    pub(super) fn finish_index_rebuild(
        &self,
        oi: &index_offset::OffsetIndex,
        ti: &index_time::TimeIndex,
        rebuilt: &IndexRebuild,
    ) -> Result<TimestampOffset> {
        let max = rebuilt.max;
        self.trim_index(oi)?;
        ti.maybe_append_final(max.timestamp, max.offset)?;
        self.trim_index(ti)?;
        Ok(max)
    }

    /// Whether recovery keeps the batch `info` (`bytes`, after a batch whose last offset
    /// is `prev_last`): `Some` with its transaction marker if it is a control batch of a
    /// producer, `None` where recovery stops (the batch and all after it are invalid).
    ///
    /// # Errors
    /// [`SegmentError::OffsetOverflow`] if its last offset is not representable relative
    /// to the base; a format error that is not a corruption.
    pub(super) fn recovery_verdict(
        &self,
        info: &crate::format::BatchInfo,
        bytes: &[u8],
        prev_last: Option<i64>,
    ) -> Result<Option<Option<crate::record::EndTransactionMarker>>> {
        if let Err(e) = F::validate(bytes, info.position) {
            if e.is_corruption() {
                tracing::warn!(path = %self.log.path().display(), error = %e, "invalid batch found during recovery");
                return Ok(None);
            }
            return Err(self.fmt_err(e));
        }
        // Offsets that go backwards (or below the segment's base) cannot have been
        // appended (`Log::append` refuses them): keeping such a batch would make the
        // segment's next offset, read from its last batch, fall below offsets it
        // holds, and they would be handed out again. Treat it as corrupt.
        if info.base_offset < self.base_offset
            || info.last_offset < info.base_offset
            || prev_last.is_some_and(|p| info.base_offset <= p)
        {
            tracing::warn!(path = %self.log.path().display(), position = info.position, base_offset = info.base_offset, last_offset = info.last_offset, ?prev_last, "batch whose offsets go backwards found during recovery");
            return Ok(None);
        }
        if info.last_offset == i64::MAX {
            // Nothing can follow it: the next offset is not representable. Such a batch
            // cannot have been appended (`Log::append` refuses it): treat it as corrupt.
            tracing::warn!(path = %self.log.path().display(), position = info.position, "batch with last offset i64::MAX found during recovery");
            return Ok(None);
        }
        if !self.can_convert_to_relative_offset(info.last_offset) {
            return Err(self.overflow(info.last_offset));
        }
        let kafka_v2 = F::KAFKA_PRODUCER_STATE && info.magic >= 2;
        // Kafka's `updateProducerState` parses a control record only in a batch with a
        // producer id (docs/kafka-behaviour.md#control-batch-without-producer).
        if kafka_v2 && info.is_control && info.producer_id >= 0 {
            match F::end_txn_marker(bytes, info.position) {
                Ok(m) => Ok(Some(m)),
                Err(e) if e.is_corruption() => {
                    tracing::warn!(path = %self.log.path().display(), error = %e, "invalid control record during recovery");
                    Ok(None)
                }
                Err(e) => Err(self.fmt_err(e)),
            }
        } else {
            Ok(Some(None))
        }
    }
}

impl<F: BatchFormat> LogSegment<F> {
    /// Kafka's `recover` (docs/kafka-behaviour.md#segment-recover): validates every batch, rebuilds the offset, time and
    /// transaction indexes per batch, truncates the `.log` after the last valid batch and
    /// returns the number of bytes truncated.
    ///
    /// Producer state (`producer_state`) is updated per v2 batch; aborted transactions
    /// completed by markers in this segment are appended to the transaction index with the
    /// LSO of the moment. The leader-epoch cache, if given, gets `(epoch, base offset)` for
    /// every batch whose epoch is above its latest.
    ///
    /// A torn tail, a corrupt batch (framing, checksum), an invalid control record or a
    /// batch whose offsets go backwards (its base offset not above the previous batch's
    /// last offset, below the segment's base offset, or above its own last offset) stops
    /// the scan and is truncated, so the next offset never falls below an offset the
    /// segment keeps (Kafka only notices backward offsets when they reach the offset
    /// index, and then empties the whole segment). Deviation: an invalid control record is excluded from
    /// the valid bytes (Kafka counts the batch, then stops).
    ///
    /// # Errors
    /// [`SegmentError::OffsetOverflow`] if a batch's last offset is not representable (the
    /// loader must split the segment); unsupported batches ([`SegmentError::Format`] that
    /// is not a corruption); index and I/O errors.
    pub fn recover(
        &self,
        producer_state: &mut ProducerStateManager,
        epoch_cache: Option<&mut LeaderEpochCache>,
    ) -> Result<u64> {
        self.recover_with(producer_state, epoch_cache, &mut || Ok(()))
    }

    /// [`recover`](Self::recover), calling `before_truncate` once it knows that the `.log`
    /// must be truncated, just before truncating it. The loader deletes the segments after
    /// this one there, so that their deletion is durable before the truncation can be
    /// (`docs/kafka-behaviour.md#crash-persistence-model`).
    ///
    /// # Errors
    /// As [`recover`](Self::recover), and the error of `before_truncate` (nothing is
    /// truncated then).
    pub fn recover_with(
        &self,
        producer_state: &mut ProducerStateManager,
        mut epoch_cache: Option<&mut LeaderEpochCache>,
        before_truncate: &mut dyn FnMut() -> Result<()>,
    ) -> Result<u64> {
        let mut st = self.state.lock();
        // The indexes are rebuilt here: a check deferred to their first load
        // (`deferred.rs`) has nothing left to check.
        self.index_check.clear();
        let (oi, ti) = self.reset_indexes()?;
        self.before(FsOp::TxnWrite, &self.txn_index.path())?;
        self.txn_index.reset()?;
        self.after(FsOp::TxnWrite, &self.txn_index.path());
        let mut rebuilt = IndexRebuild::new(self.base_offset, self.index_interval_bytes);
        let mut prev_last: Option<i64> = None;
        // Mapped, not copied: the copy was most of a recovery's time in the page cache
        // (docs/kafka-behaviour.md#recovery-mapped-scan).
        let mut sc = Scanner::<F>::mapped(&self.log, 0)?;
        loop {
            let Some((info, bytes)) = sc.next_batch()? else {
                if let Some(ScanStop::Corrupt { error, .. }) = sc.stop() {
                    tracing::warn!(path = %self.log.path().display(), %error, "corrupt batch found during recovery");
                }
                break;
            };
            let Some(marker) = self.recovery_verdict(&info, bytes, prev_last)? else {
                break;
            };
            rebuilt.add(&oi, &ti, &info)?;
            prev_last = Some(info.last_offset);
            if F::KAFKA_PRODUCER_STATE && info.magic >= 2 {
                if let Some(cache) = epoch_cache.as_deref_mut() {
                    if info.partition_leader_epoch >= 0 {
                        cache.assign_if_newer(info.partition_leader_epoch, info.base_offset);
                    }
                }
                if let Some(done) = producer_state.update(&info, marker.as_ref()) {
                    if done.is_aborted {
                        let lso = producer_state.last_stable_offset(&done);
                        self.append_aborted_txn(&ProducerStateManager::aborted_entry(&done, lso))?;
                    }
                    producer_state.complete_txn(&done);
                }
            }
        }
        // The scanner holds the `.log`'s writer lock while it maps the file.
        drop(sc);
        let valid_bytes = rebuilt.valid_bytes;
        let truncated = self.log.size_in_bytes() - valid_bytes;
        if truncated > 0 {
            tracing::warn!(path = %self.log.path().display(), truncated, valid_bytes, "truncating invalid bytes at the end of the segment");
            before_truncate()?;
        }
        self.log.truncate_to(valid_bytes)?;
        let max = self.finish_index_rebuild(&oi, &ti, &rebuilt)?;
        st.max_timestamp_and_offset = Some(max);
        st.bytes_since_last_index_entry = 0;
        Ok(truncated)
    }

    /// Kafka's `readLargestTimestamp`: the larger of the time index's last entry and the
    /// max batch timestamp after the position of that entry's offset.
    fn read_largest_timestamp(&self) -> Result<TimestampOffset> {
        let last = self.time_index()?.last_entry()?;
        let pos = self.offset_index()?.lookup(last.offset)?.position as u64;
        let (ts, off) = scan::largest_timestamp_after::<F>(&self.log, pos)?;
        Ok(if ts > last.timestamp {
            TimestampOffset {
                timestamp: ts,
                offset: off,
            }
        } else {
            last
        })
    }

    /// Kafka's `truncateTo` (docs/kafka-behaviour.md#segment-truncate): removes every batch from the one holding (or
    /// following) `offset` onwards, truncates all three indexes, re-grows the offset and
    /// time indexes to the max index size (the segment becomes appendable again), and
    /// recomputes the largest timestamp from what remains. Returns the bytes removed.
    ///
    /// # Errors
    /// Index, transaction index, format and I/O errors.
    pub fn truncate_to(&self, offset: i64) -> Result<u64> {
        let mapping = self.translate_offset(offset, 0)?;
        let mut st = self.state.lock();
        let oi = self.offset_index()?;
        let ti = self.time_index()?;
        oi.truncate_to(offset)?;
        ti.truncate_to(offset)?;
        self.before(FsOp::TxnWrite, &self.txn_index.path())?;
        self.txn_index.truncate_to(offset)?;
        self.after(FsOp::TxnWrite, &self.txn_index.path());
        self.before(FsOp::IndexResize, &oi.path())?;
        oi.resize(self.max_index_size)?;
        self.after(FsOp::IndexResize, &oi.path());
        self.before(FsOp::IndexResize, &ti.path())?;
        ti.resize(self.max_index_size)?;
        self.after(FsOp::IndexResize, &ti.path());
        let bytes = match mapping {
            None => 0,
            Some(m) => self.log.truncate_to(m.position)?,
        };
        if self.log.size_in_bytes() == 0 {
            st.created = self.clock.milliseconds();
            st.rolling_based_timestamp = None;
        }
        st.bytes_since_last_index_entry = 0;
        if self.load_max(&mut st)?.timestamp >= 0 {
            st.max_timestamp_and_offset = Some(self.read_largest_timestamp()?);
        }
        Ok(bytes)
    }

    /// Resizes both indexes to `size` bytes (the loader does this for the active
    /// segment, docs/kafka-behaviour.md#log-loading step 7).
    ///
    /// # Errors
    /// Index errors; a refusal of the seam.
    pub fn resize_indexes(&self, size: usize) -> Result<()> {
        let oi = self.offset_index()?;
        self.before(FsOp::IndexResize, &oi.path())?;
        oi.resize(size)?;
        self.after(FsOp::IndexResize, &oi.path());
        let ti = self.time_index()?;
        self.before(FsOp::IndexResize, &ti.path())?;
        ti.resize(size)?;
        self.after(FsOp::IndexResize, &ti.path());
        Ok(())
    }

    /// Kafka's load-time `sanityCheck(timeIndexFileNewlyCreated)`: a missing `.index` file
    /// is [`SegmentError::MissingIndex`] (the loader then recovers the segment); a time
    /// index that did not exist before opening is created and resized to 0; then the
    /// transaction index is checked.
    ///
    /// # Errors
    /// [`SegmentError::MissingIndex`]; [`SegmentError::TxnIndex`] with a corruption;
    /// index errors.
    pub fn sanity_check(&self, time_index_file_newly_created: bool) -> Result<()> {
        self.sanity_check_listed(
            time_index_file_newly_created,
            self.offset_index.file().exists(),
            true,
        )
    }

    /// [`Self::sanity_check`] by the loader, which listed the directory: whether the
    /// `.index` exists is `index_listed`, read from the listing instead of asked of the
    /// file system again (a `stat` a segment, which waits for the inode on a cold open),
    /// and with `txn_index_listed` false the `.txnindex` is known absent (the directory
    /// is locked, nothing creates either meanwhile) and is not probed (an empty index
    /// passes the check).
    pub(crate) fn sanity_check_listed(
        &self,
        time_index_file_newly_created: bool,
        index_listed: bool,
        txn_index_listed: bool,
    ) -> Result<()> {
        if !index_listed {
            return Err(SegmentError::MissingIndex {
                path: self.offset_index.file(),
                base_offset: self.base_offset,
            });
        }
        if time_index_file_newly_created {
            let ti = self.time_index()?;
            self.before(FsOp::IndexResize, &ti.path())?;
            ti.resize(0)?;
            self.after(FsOp::IndexResize, &ti.path());
        }
        if txn_index_listed {
            self.txn_index.sanity_check()?;
        }
        Ok(())
    }

    /// Opens the segment's `.index` and `.timeindex` for reading (through the
    /// file-system seam) and reads their lengths, for [`Self::read_index_ends`]. With
    /// `advise`, also asks the kernel to start reading the pages the load-time checks
    /// read (each index's first and last entries, the `.log`'s first
    /// [`LOAD_CHECK_HEAD`] and last [`LOAD_CHECK_TAIL`] bytes) without waiting for them
    /// (`posix_fadvise(WILLNEED)`): the loader does this some segments ahead of the one
    /// it checks, so that with a cold page cache the disk serves many segments' reads at
    /// once (docs/performance.md#vs-kafka-opens). The advice is a hint: its failure is
    /// ignored.
    pub(crate) fn open_index_files(&self, advise: bool) -> IndexFiles {
        let open = |path: std::path::PathBuf, entry: u64| -> OpenedIndex {
            let f = match self.fs.open_file(&path, crate::fs::OpenMode::Read) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(format!("{}: {e}", path.display())),
            };
            let len = f
                .metadata()
                .map_err(|e| format!("{}: {e}", path.display()))?
                .len();
            if advise {
                advise_index(&f, len, entry);
            }
            Ok(Some(IndexFile { path, file: f, len }))
        };
        let files = IndexFiles {
            offset: open(self.offset_index.file(), RawOffsetEntry::SIZE as u64),
            time: open(self.time_index.file(), RawTimeEntry::SIZE as u64),
        };
        self.advise_log(advise);
        files
    }

    /// With `advise`, asks the kernel to start reading the pages of the `.log` the
    /// load-time check reads (its first [`LOAD_CHECK_HEAD`] and last [`LOAD_CHECK_TAIL`]
    /// bytes), as [`Self::open_index_files`] does; a hint, failures ignored.
    pub(crate) fn advise_log(&self, advise: bool) {
        if advise {
            for (from, len) in log_advice(self.log.size_in_bytes()) {
                self.log.advise_will_need(from, len);
            }
        }
    }

    /// The first and last entries of the two index files opened by
    /// [`Self::open_index_files`] (two positioned reads each; the files are closed).
    ///
    /// # Errors
    /// `Err(reason)` on a length that is not whole entries or an I/O error.
    pub(crate) fn read_index_ends(
        &self,
        files: IndexFiles,
    ) -> std::result::Result<IndexEnds, String> {
        fn ends<E: IndexEntry>(f: OpenedIndex) -> std::result::Result<Option<Ends<E>>, String> {
            use crate::pio::FileExt;
            let Some(f) = f? else {
                return Ok(None);
            };
            peek::peek_ends::<E>(f.len, |b, at| f.file.read_exact_at(b, at)).map_err(|e| match e {
                PeekError::NotWholeEntries { len, entry_size } => format!(
                    "{}: length {len} is not a multiple of {entry_size}",
                    f.path.display()
                ),
                e => format!("{}: {e}", f.path.display()),
            })
        }
        Ok(IndexEnds {
            offset: ends(files.offset)?,
            time: ends(files.time)?,
        })
    }

    /// A stricter, cheap check of the index files **without mapping them** (a few
    /// positioned reads): whole-entry lengths, and for each index its first and last
    /// entries must be ordered (offset index: last offset > first offset when there are
    /// ≥ 2 entries, both ≥ base; time index: last timestamp ≥ first and strictly greater
    /// with ≥ 2 entries, last offset ≥ first). Catches untrimmed zero-padded indexes
    /// (field case B1, field case B3) that Kafka's load path trusts. Missing files pass.
    ///
    /// Returns `Err(reason)` describing the first problem found.
    pub fn quick_index_check(&self) -> std::result::Result<(), String> {
        let ends = self.read_index_ends(self.open_index_files(false))?;
        self.quick_check_ends(&ends)
    }

    /// [`Self::quick_index_check`] on index ends already read ([`Self::read_index_ends`]):
    /// the loader reads them once for this check and for
    /// [`segment_check`](crate::loader_plan::segment_check).
    pub(crate) fn quick_check_ends(&self, ends: &IndexEnds) -> std::result::Result<(), String> {
        let oi = || self.offset_index.file();
        if let Some(Ends {
            entries: n,
            first,
            last,
        }) = ends.offset
        {
            let (r0, r1) = (first.relative_offset.get(), last.relative_offset.get());
            if r0 < 0 || r1 < 0 {
                return Err(format!("{}: negative relative offset", oi().display()));
            }
            if n >= 2 && r1 <= r0 {
                return Err(format!(
                    "{}: {n} entries but the last offset {} is not above the first {}",
                    oi().display(),
                    self.base_offset + r1 as i64,
                    self.base_offset + r0 as i64
                ));
            }
        }
        let ti = || self.time_index.file();
        if let Some(Ends {
            entries: n,
            first,
            last,
        }) = ends.time
        {
            let (t0, t1) = (first.timestamp.get(), last.timestamp.get());
            let (o0, o1) = (first.relative_offset.get(), last.relative_offset.get());
            if o0 < 0 || o1 < 0 {
                return Err(format!("{}: negative relative offset", ti().display()));
            }
            if n >= 2 && (t1 <= t0 || o1 < o0) {
                return Err(format!(
                    "{}: {n} entries but the last entry ({t1}, {}) does not follow the first ({t0}, {})",
                    ti().display(),
                    self.base_offset + o1 as i64,
                    self.base_offset + o0 as i64
                ));
            }
        }
        Ok(())
    }
}
