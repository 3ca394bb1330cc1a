//! `cargo xtask lin`: the linearizability checker of `segment::Log` (`xtask/lin-check`):
//! concurrent histories recorded and checked against a sequential model of the log with
//! the Wing–Gong/Porcupine search (`docs/kafka-behaviour.md#concurrent-reads`,
//! `docs/kafka-behaviour.md#fetch-isolation`).
//!
//! `--smoke` (the default) runs [`lin_check::Config::smoke`], `--long` the long run;
//! both fail on any anomaly. `--mutant NAME` runs against a build weakened at one point
//! (`segment`'s hidden `crash-mutants` hooks, `segment::fs::mutant`) and must report
//! anomalies; `--mutants` runs each and prints `lin mutants: N of N caught`.
//!
//! The `lin` binary of `xtask/crash`, outside the root workspace so that no other build
//! of `segment` gets the `crash-mutants` feature; `cargo xtask lin ARGS` runs it with
//! `cargo run --release --manifest-path xtask/crash/Cargo.toml --bin lin -- ARGS`.

use std::time::Duration;

use lin_check::{Config, Family};
use segment::fs::mutant::Mutant;

const HELP: &str = "\
usage: cargo xtask lin [--smoke | --long] [--histories N] [--seed N] [--ops N]
                       [--family auto|manual|both] [--no-memo] [--first] [--no-truncate]
                       [--mutant NAME | --mutants] [--seconds N] [--dir PATH]

  --smoke         1,000 histories (default; what CI runs)
  --long          20,000 histories
  --histories N   that many histories
  --seed N        the first history's seed
  --ops N         operations per thread and phase
  --family F      the high watermark: follows the log end (auto), the caller's (manual),
                  or alternating (both, the default)
  --no-memo       the search without its memo (to measure what the memo buys)
  --first         stop at the first anomaly
  --no-truncate   no truncate_to (isolates the append window from the truncation one)
  --seconds N     stop after N seconds
  --dir PATH      the logs' directory (default: /dev/shm if it exists, else the
                  system's temporary directory; on disk, where fsyncs take real time,
                  histories cost ~50x more and the windows around an fsync are wider)
  --mutant NAME   run against a weakened build; must report anomalies:
                  lin-hw-unclamped, lin-read-past-bound, lin-aborted-drop,
                  lin-truncate-keeps-hw, lin-publish-before-state (issue 37's append
                  race), lin-truncate-late-state (issue 37's truncation race)
  --mutants       every lin mutant (up to 1,000 histories each, stopping at the first
                  anomaly); fails unless each is caught
";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Err(e) = run(&args) {
        eprintln!("xtask: {e}");
        std::process::exit(1);
    }
}

/// Runs `cargo xtask lin` with `args`.
fn run(args: &[String]) -> Result<(), String> {
    let mut cfg = Config::smoke();
    let mut mutant = None;
    let mut all = false;
    let mut dir: Option<std::path::PathBuf> = None;
    let mut it = args.iter();
    let num = |v: Option<&String>, what: &str| -> Result<u64, String> {
        v.ok_or_else(|| format!("{what} needs a value\n{HELP}"))?
            .parse::<u64>()
            .map_err(|e| format!("{what}: {e}"))
    };
    while let Some(a) = it.next() {
        match a.as_str() {
            "--smoke" => cfg = Config::smoke(),
            "--long" => cfg = Config::long(),
            "--histories" => cfg.histories = num(it.next(), "--histories")?,
            "--seed" => cfg.seed = num(it.next(), "--seed")?,
            "--ops" => cfg.ops = num(it.next(), "--ops")? as usize,
            "--seconds" => {
                cfg.time_limit = Some(Duration::from_secs(num(it.next(), "--seconds")?));
            }
            "--family" => {
                cfg.family = match it.next().map(String::as_str) {
                    Some("auto") => Family::Auto,
                    Some("manual") => Family::Manual,
                    Some("both") => Family::Both,
                    other => return Err(format!("--family: unknown {other:?}\n{HELP}")),
                }
            }
            "--no-memo" => cfg.memo = false,
            "--first" => cfg.stop_at_first = true,
            "--no-truncate" => cfg.truncate = false,
            "--dir" => {
                dir = Some(
                    it.next()
                        .ok_or_else(|| format!("--dir needs a path\n{HELP}"))?
                        .into(),
                );
            }
            "--mutant" => {
                let m = it
                    .next()
                    .ok_or_else(|| format!("--mutant needs a name\n{HELP}"))?;
                mutant = Some(
                    Mutant::LIN
                        .into_iter()
                        .find(|x| x.name() == m)
                        .ok_or_else(|| format!("unknown lin mutant `{m}`\n{HELP}"))?,
                );
            }
            "--mutants" => all = true,
            "-h" | "--help" => {
                print!("{HELP}");
                return Ok(());
            }
            other => return Err(format!("unknown argument `{other}`\n{HELP}")),
        }
    }
    let shm = std::path::Path::new("/dev/shm");
    let root = match &dir {
        Some(d) => tempfile::tempdir_in(d),
        None if shm.is_dir() => tempfile::tempdir_in(shm),
        None => tempfile::tempdir(),
    }
    .map_err(|e| e.to_string())?;
    if all {
        let mut caught = 0;
        for m in Mutant::LIN {
            // Up to 1,000 histories, stopping at the first anomaly: the race mutants are
            // found within tens to a few hundred, the others within a few.
            let c = Config {
                histories: 1000,
                stop_at_first: true,
                ..cfg.clone()
            };
            segment::fs::mutant::select(Some(m));
            let r = lin_check::run(&c, root.path());
            segment::fs::mutant::select(None);
            let r = r?;
            println!("mutant {}: {}", m.name(), r.line());
            for (name, (_, h, o)) in &r.by_cause {
                println!("  caught at a {name}, after {h} histories, {o} operations");
            }
            if r.anomalies > 0 {
                caught += 1;
            }
        }
        let n = Mutant::LIN.len();
        println!("lin mutants: {caught} of {n} caught");
        return if caught == n {
            Ok(())
        } else {
            Err("a lin mutant was not caught: the checker cannot see it".into())
        };
    }
    segment::fs::mutant::select(mutant);
    let r = lin_check::run(&cfg, root.path());
    segment::fs::mutant::select(None);
    let r = r?;
    println!("{}", r.line());
    for (name, (k, h, o)) in &r.by_cause {
        println!("  {k} anomalies at a {name}; the first after {h} histories, {o} operations");
    }
    if let Some(first) = &r.first {
        println!("{first}");
    }
    match (mutant, r.anomalies) {
        (None, 0) | (Some(_), 1..) => Ok(()),
        (None, k) => Err(format!("{k} histories are not linearizable")),
        (Some(m), 0) => Err(format!("mutant {} was not caught", m.name())),
    }
}
