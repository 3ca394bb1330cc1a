//! The crash-safe replacement of segments by `.swap` files (Kafka's `replaceSegments`):
//! step 2 of the loader, which deletes what an unfinished replacement left and completes
//! a finished one, and the loader's split of a legacy segment whose offsets overflow.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::{Log, SwapReplacement};
use crate::diag as tracing;
use crate::error::{Result, SegmentError};
use crate::format::BatchFormat;
use crate::names::{self, CLEANED_FILE_SUFFIX, DELETED_FILE_SUFFIX, SWAP_FILE_SUFFIX};
use crate::segment::LogSegment;

impl<F: BatchFormat> Log<F> {
    /// Step 2 of [`open`](Self::open), Kafka's `removeTempFilesAndCollectSwapFiles` and the
    /// swap passes of `LogLoader.load`: `.cleaned` files (and `.swap` files at or above the
    /// lowest of them) are deleted, and so are, stricter than Kafka, the `.swap` files of a
    /// split whose other pieces are still `.cleaned`
    /// ([`crate::loader_plan::unfinished_split_swaps`],
    /// `docs/kafka-behaviour.md#split-partial-swap`; the split segment is kept and split
    /// again), `.deleted` files are deleted, and the remaining
    /// `.swap` files are completed: the segments they replace are deleted and the swaps
    /// renamed. Stricter than Kafka (`docs/kafka-behaviour.md#swap-refusal`): the swaps
    /// are checked first ([`crate::loader_plan::plan_swaps`]) and refused with
    /// [`SegmentError::SwapRefused`] before anything else is touched; what a completed
    /// swap replaced is reported in [`LogStats::swap_replacement`]. No index of a swap is
    /// opened (a mapping would create a preallocated `.index.swap` that the renames
    /// would miss).
    ///
    /// [`LogStats::swap_replacement`]: super::LogStats::swap_replacement
    ///
    /// Returns the base offsets of index `.swap` files renamed without a `.log.swap` of
    /// their base: a crash may have kept the index's `.cleaned` → `.swap` rename and lost
    /// the `.log`'s, so the renamed index may belong to a cleaned `.log` that never
    /// arrived; the caller rebuilds those segments' indexes (stricter than Kafka, which
    /// trusts them: `docs/kafka-behaviour.md#swap-refusal`).
    ///
    /// `listing` is the directory's listing ([`Self::list_dir`]) taken just before.
    pub(super) fn remove_temp_files_and_swap(&self, listing: &[PathBuf]) -> Result<Vec<i64>> {
        let mut swaps = Vec::new();
        let mut cleaned = Vec::new();
        let mut deleted = Vec::new();
        for p in listing.iter().cloned() {
            let name = names::file_name(&p).to_string();
            if name.ends_with(DELETED_FILE_SUFFIX) {
                if !name.ends_with(".checkpoint.deleted") {
                    deleted.push(p);
                }
            } else if name.ends_with(CLEANED_FILE_SUFFIX) {
                cleaned.push(p);
            } else if name.ends_with(SWAP_FILE_SUFFIX) {
                swaps.push(p);
            }
        }
        let cleaned_bases: Vec<i64> = cleaned
            .iter()
            .filter_map(|p| names::offset_from_file(p).ok())
            .collect();
        let min_cleaned = cleaned_bases.iter().copied().min().unwrap_or(i64::MAX);
        // A `.swap` at or above the lowest `.cleaned` belongs to an unfinished split or
        // clean (the `.cleaned` → `.swap` renames go from the highest base down): delete
        // it, and fail the open if that is impossible — keeping it would make the next
        // open treat it as complete once the `.cleaned` files are gone.
        let (kept, unfinished): (Vec<PathBuf>, Vec<PathBuf>) = swaps
            .into_iter()
            .partition(|p| names::offset_from_file(p).map_or(true, |o| o < min_cleaned));
        // Stricter than Kafka: a kept `.swap` beside a `.cleaned` piece inside the same
        // live segment is an unfinished split too, whose renames reached the disk out of
        // order (docs/kafka-behaviour.md#split-partial-swap): delete it, keep the segment.
        let rolled_back = if cleaned_bases.is_empty() {
            Vec::new()
        } else {
            let all = self.list_dir()?;
            let bases_of = |suffix: &str| -> Vec<i64> {
                all.iter()
                    .filter(|p| names::file_name(p).ends_with(&format!(".log{suffix}")))
                    .filter_map(|p| names::canonical_offset_from_file(p).ok())
                    .collect()
            };
            let kept_bases: Vec<i64> = kept
                .iter()
                .filter_map(|p| names::offset_from_file(p).ok())
                .collect();
            crate::loader_plan::unfinished_split_swaps(
                &bases_of(""),
                &bases_of(DELETED_FILE_SUFFIX),
                &kept_bases,
                &cleaned_bases,
            )
        };
        let mut complete = Vec::new();
        for p in kept {
            if names::offset_from_file(&p).is_ok_and(|o| rolled_back.contains(&o)) {
                tracing::warn!(file = %p.display(), "deleting the swap file of a split whose other pieces are still .cleaned (its renames reached the disk out of order); the split segment is kept");
                self.remove_if_exists(&p)?;
            } else {
                complete.push(p);
            }
        }
        for p in unfinished {
            tracing::info!(file = %p.display(), "deleting the swap file of an unfinished operation");
            self.remove_if_exists(&p)?;
        }
        let swaps = complete;
        if !cleaned.is_empty() {
            crate::fs::fsync_dir_with(&*self.fs, &self.dir)?;
        }
        for p in &cleaned {
            self.remove_if_exists(p)?;
        }
        let log_swaps = swaps
            .iter()
            .filter(|p| names::file_name(p).ends_with(".log.swap"))
            .map(|p| Ok((names::canonical_offset_from_file(p)?, p.clone())))
            .collect::<Result<Vec<_>>>()?;
        // Before anything is replaced: are the swaps sound, and what do they replace?
        // The `.deleted` segments a crash in the middle of a replacement left count as
        // replaced, so they are read before they are deleted.
        let plan = if log_swaps.is_empty() {
            None
        } else {
            let segment_logs = |files: &[PathBuf], suffix: &str| -> Vec<(i64, PathBuf)> {
                files
                    .iter()
                    .filter(|p| names::file_name(p).ends_with(&format!(".log{suffix}")))
                    .filter_map(|p| Some((names::canonical_offset_from_file(p).ok()?, p.clone())))
                    .collect()
            };
            let all = self.list_dir()?;
            let live: Vec<(i64, PathBuf)> = segment_logs(&all, "");
            let deleted_logs = segment_logs(&deleted, DELETED_FILE_SUFFIX);
            Some(crate::loader_plan::plan_swaps::<F>(
                &self.fs,
                &self.dir,
                &log_swaps,
                &live,
                &deleted_logs,
            )?)
        };
        for p in &deleted {
            self.remove_if_exists(p)?;
        }
        if swaps.is_empty() {
            return Ok(Vec::new());
        }
        let log_swap_bases: Vec<i64> = log_swaps.iter().map(|(b, _)| *b).collect();
        let mut orphan_index_swaps: Vec<i64> = swaps
            .iter()
            .filter(|p| !names::file_name(p).ends_with(".log.swap"))
            .filter_map(|p| names::offset_from_file(p).ok())
            .filter(|b| !log_swap_bases.contains(b))
            .collect();
        orphan_index_swaps.sort_unstable();
        orphan_index_swaps.dedup();
        // Index `.swap` files without a `.log.swap` (a crash between renaming a piece's
        // `.log` and its indexes to their final names) are still renamed below, as Kafka
        // renames every swap file.
        if let Some(plan) = &plan {
            // Kafka deletes the files with a base in [min swap base, max swap next
            // offset); the files of a segment at a swap's own base go too (the rename
            // replaces its `.log`; its indexes would not match the new one).
            for p in self.list_dir()? {
                let name = names::file_name(&p);
                if name.ends_with(SWAP_FILE_SUFFIX)
                    || !(names::is_log_file(&p) || names::is_index_file(&p))
                {
                    continue;
                }
                if let Ok(o) = names::offset_from_file(&p) {
                    if (o >= plan.min_base && o < plan.max_next) || plan.swap_bases.contains(&o) {
                        self.remove_if_exists(&p)?;
                    }
                }
            }
        }
        // The replaced files are durably gone before any swap is renamed, and the swaps
        // are renamed from the lowest base up, the directory fsynced after each base's
        // files: a crash then leaves the lower swaps renamed and the higher ones `.swap`,
        // never a renamed swap inside the range of the swaps left, which the next open
        // would delete as a replaced segment (Kafka's loader does;
        // docs/kafka-behaviour.md#split-partial-swap).
        crate::fs::fsync_dir_with(&*self.fs, &self.dir)?;
        let mut by_base: Vec<(i64, &PathBuf)> = swaps
            .iter()
            .map(|p| (names::offset_from_file(p).unwrap_or(i64::MAX), p))
            .collect();
        by_base.sort();
        for (i, (base, p)) in by_base.iter().enumerate() {
            let to = names::replace_suffix(p, SWAP_FILE_SUFFIX, "")?;
            self.fs
                .rename(p, &to)
                .map_err(|e| SegmentError::io("rename", p, e))?;
            if by_base.get(i + 1).is_none_or(|(next, _)| next != base) {
                crate::fs::fsync_dir_with(&*self.fs, &self.dir)?;
            }
        }
        if let Some(plan) = plan {
            let report = SwapReplacement::new(plan);
            tracing::warn!(dir = %self.dir.display(), swaps = ?report.swap_base_offsets, replaced = ?report.replaced_base_offsets, already_deleted = ?report.deleted_base_offsets, removed = ?report.removed_offsets, "completed the swap files of an interrupted replacement");
            *self.stats.swap.lock() = Some(report);
        }
        Ok(orphan_index_swaps)
    }

    /// Kafka's `splitOverflowedSegment` + `replaceSegments`: copies the batches of `seg`
    /// into new `.cleaned` segments, each starting at the base offset of its first batch
    /// and holding the batches representable relative to it; any bytes after the last
    /// complete, well-framed batch (a torn or corrupt tail) are copied verbatim to the end
    /// of the last piece, so the pieces together hold exactly the old bytes and recovery
    /// treats that tail as it would have. The pieces are trimmed, flushed and given the
    /// old `.log`'s mtime and made durable (a directory fsync); then renamed `.cleaned` →
    /// `.swap` (highest base first), those renames made durable (a directory fsync: the loader's rollback rule,
    /// `docs/kafka-behaviour.md#split-partial-swap`, relies on no `.cleaned` piece being
    /// left once the old segment starts to go), the old segment is deleted, and the
    /// pieces renamed `.swap` → final, lowest first, a directory fsync after each. Returns the base
    /// offsets to recover (all pieces: their transaction indexes are rebuilt, and the last
    /// one may end in an invalid tail).
    pub(super) fn split_overflowed_segment(&self, seg: &Arc<LogSegment<F>>) -> Result<Vec<i64>> {
        use crate::scan::Scanner;
        let src = seg.log();
        let size = src.size_in_bytes();
        tracing::warn!(segment = %src.path().display(), size, "splitting a segment with relative offset overflow");
        let mut pieces: Vec<LogSegment<F>> = Vec::new();
        let mut recheck = Vec::new();
        let built = (|| -> Result<()> {
            let mut position = 0u64;
            while position < size {
                let first = Scanner::<F>::new(src, position)
                    .next_batch()?
                    .map(|(info, _)| info.base_offset);
                let Some(base) = first else { break };
                for kind in names::FileKind::ALL {
                    let p = names::segment_file(&self.dir, base, kind, CLEANED_FILE_SUFFIX);
                    crate::fs::remove_if_exists_with(&*self.fs, &p)?;
                }
                let piece = self.open_segment(base, false, CLEANED_FILE_SUFFIX)?;
                let n = piece.append_from_file(src, position);
                pieces.push(piece);
                let n = n?;
                if n == 0 {
                    return Err(SegmentError::IllegalState {
                        path: src.path(),
                        reason: format!(
                            "failed to split the segment: nothing could be copied from position {position}"
                        ),
                    });
                }
                position += n;
            }
            if position < size {
                let Some(last) = pieces.last() else {
                    return Err(SegmentError::IllegalState {
                        path: src.path(),
                        reason: "overflowed segment without a complete batch".into(),
                    });
                };
                tracing::warn!(segment = %src.path().display(), position, size, "copying an invalid tail verbatim; recovery will truncate it");
                last.log().append(&src.read(position, size - position)?)?;
            }
            let mtime = seg.last_modified()?;
            let mut total = 0;
            for p in &pieces {
                p.on_become_inactive_segment()?;
                p.flush()?;
                p.set_last_modified(mtime)?;
                total += p.size();
            }
            if total != size {
                return Err(SegmentError::IllegalState {
                    path: src.path(),
                    reason: format!(
                        "inconsistent segment sizes after split: before {size}, after {total}"
                    ),
                });
            }
            Ok(())
        })();
        if let Err(e) = built {
            for p in &pieces {
                p.close_handlers();
                let _ = p.delete_if_exists();
            }
            return Err(e);
        }
        // Crash-safe replacement (Kafka's `replaceSegments`): see `remove_temp_files_and_swap`.
        // Every piece's `.cleaned` files exist on disk before any is renamed: a rename
        // that survives a crash then leaves the pieces not renamed as `.cleaned` files,
        // the evidence of an unfinished split (docs/kafka-behaviour.md#split-partial-swap).
        crate::fs::fsync_dir_with(&*self.fs, &self.dir)?;
        for p in pieces.iter().rev() {
            p.change_file_suffixes(CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX)?;
        }
        // Every piece is `.swap` on disk before the old segment starts to go: a `.cleaned`
        // piece beside a `.swap` one then proves the old segment whole, and the loader
        // rolls such a split back (docs/kafka-behaviour.md#split-partial-swap).
        if !crate::fs::mutated!(SplitSwapNoDirFsync) {
            crate::fs::fsync_dir_with(&*self.fs, &self.dir)?;
        }
        self.segments.remove(seg.base_offset());
        seg.close_handlers();
        seg.change_file_suffixes("", DELETED_FILE_SUFFIX)?;
        seg.delete_if_exists()?;
        self.stats.segments_deleted.fetch_add(1, Ordering::Relaxed);
        // From the lowest piece up, each piece's renames durable before the next piece's
        // (the first fsync also makes the old segment's deletion durable): a crash leaves
        // the lower pieces renamed and the higher ones `.swap`, so the next open's swap
        // range, from the lowest `.swap` left, never covers a renamed piece
        // (docs/kafka-behaviour.md#split-partial-swap).
        for p in &pieces {
            p.change_file_suffixes(SWAP_FILE_SUFFIX, "")?;
            if !crate::fs::mutated!(SplitRenameNoDirFsync) {
                crate::fs::fsync_dir_with(&*self.fs, &self.dir)?;
            }
        }
        if crate::fs::mutated!(SplitRenameNoDirFsync) {
            crate::fs::fsync_dir_with(&*self.fs, &self.dir)?;
        }
        let bases: Vec<i64> = pieces.iter().map(|p| p.base_offset()).collect();
        // Recover every piece (once): the transaction index and producer state are not
        // copied by the split, and the last piece may end in an invalid tail.
        recheck.extend(&bases);
        tracing::info!(
            ?bases,
            "replaced the overflowed segment with split segments"
        );
        for p in pieces {
            self.segments.add(Arc::new(p));
        }
        Ok(recheck)
    }
}
