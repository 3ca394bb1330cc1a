//! The bench harness's simulation tests in one binary, one module per scenario file. The tests
//! that count real page-ins (`getrusage` is process-wide) keep a process each: `cli`,
//! `readme_summary`, `report`, `real_faults` and `warm_section_sweep`.

mod latency;
mod real_data;
mod replay;
mod scenario;
