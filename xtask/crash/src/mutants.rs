//! The mutants of `--mutant`: names for `segment`'s `crash-mutants` hooks.

pub use segment::fs::mutant::Mutant;

/// Selects `m` for the whole process (`None`: the real build).
pub fn select(m: Option<Mutant>) {
    segment::fs::mutant::select(m);
}
