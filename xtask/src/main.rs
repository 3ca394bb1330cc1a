//! Workspace automation: `cargo xtask <ci|test|lint|docs|package|examples|loom|bench>`.
//!
//! `cargo xtask ci` is the single command that checks everything CI checks; `.ci/run`
//! calls it. Every step prints what it runs and stops the run on the first failure.

use std::env;
use std::path::{Path, PathBuf};
use std::process::{exit, Command};

mod fuzz;
mod mutants;

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  ci        everything CI runs: lint, test, docs, package, examples, the object-store check
            (xtask/object-store-check), loom, kafka, fuzz smoke, main job
  lint      cargo fmt --check and cargo clippy --workspace --all-targets -D warnings
  test      cargo test --workspace (all unit, integration and doc tests)
  docs      cargo doc --workspace --no-deps with RUSTDOCFLAGS=-D warnings
  package   cargo package --workspace --no-verify --offline (every publishable crate)
  portability  cargo check of the library crates for Windows and macOS (targets installed
            with rustup; a missing target is skipped with a line)
  lean      build and run xtask/lean-embedder (segment with default-features = false and its
            own BatchFormat); fail if its build has more than 30 crates or any C code
  examples  run every example under examples/ and <crate>/examples/
  loom      loom models (must pass) and the weakened-ordering run (must fail)
  kafka     Apache Kafka 4.4.0 as a test oracle: a real broker and Kafka's own classes read
            what we write and we read what they write (needs java and mvn; --help)
  vs-kafka  the same storage work timed on Kafka 4.4.0's OffsetIndex/TimeIndex/LogSegment (a
            JVM) and on ours, same files, interleaved rounds: ours/Kafka ratios, answers
            checked (not part of ci: timings on a shared machine are noise; --quick, --help)
  fuzz      cargo-fuzz targets seeded from the fixtures (--smoke: ~30 s each, as CI runs;
            default 10,000,000 executions per target; see `cargo xtask fuzz --help`)
  crash     crash-state enumerator: every state a power cut may leave at each fsync of
            seeded workloads, recovered and checked (--smoke: 10,000 states, as CI runs;
            --mutants: each weakened build must be caught; see `cargo xtask crash --help`)
  lin       linearizability of segment::Log: concurrent histories checked against a model
            of the log (--smoke: 40 histories; --long; --mutants: each weakened build must
            be caught; see `cargo xtask lin --help`)
  bench     the bench-harness main job with its size sweep: report.md, SVG plots and JSON in
            bench-report/ of the target dir ($CARGO_TARGET_DIR if set, else target/);
            --criterion: run cargo bench --workspace first
";

fn main() {
    let args: Vec<String> = env::args().skip(1).collect();
    let Some(cmd) = args.first() else {
        eprint!("{USAGE}");
        exit(2);
    };
    let rest = &args[1..];
    let result = match cmd.as_str() {
        "ci" => ci(),
        "lint" => lint(),
        "test" => test(),
        "docs" => docs(),
        "package" => package(),
        "lean" => lean(),
        "portability" => portability(),
        "examples" => examples(),
        "loom" => loom(),
        "bench" => bench(rest),
        "kafka" => kafka_oracle::run(rest),
        "vs-kafka" => kafka_oracle::vs::run(rest),
        "fuzz" => fuzz::fuzz(rest),
        "crash" | "lin" => mutants::exec(cmd, rest),
        "-h" | "--help" | "help" => {
            print!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unknown command `{other}`\n{USAGE}")),
    };
    if let Err(e) = result {
        eprintln!("xtask: {e}");
        exit(1);
    }
}

type Res = Result<(), String>;

/// Whether this run is CI's: `CI=true` or `CI=1`, the same rule for every step (the Kafka
/// step and the field-data tests included), so that a missing tool fails CI rather than
/// skipping.
pub(crate) fn is_ci() -> bool {
    env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace root")
        .to_path_buf()
}

/// The root target directory: `$CARGO_TARGET_DIR` (relative to the root if relative),
/// else `target/`.
fn target_dir() -> PathBuf {
    env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|t| if t.is_absolute() { t } else { root().join(t) })
        .unwrap_or_else(|| root().join("target"))
}

fn cargo() -> Command {
    let mut c = Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root());
    c
}

fn run(mut cmd: Command) -> Res {
    eprintln!("\n==> {cmd:?}");
    let status = cmd
        .status()
        .map_err(|e| format!("cannot start {cmd:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{cmd:?} failed with {status}"))
    }
}

fn ci() -> Res {
    // The optional field data (see xtask/field-data): its tests run when it is present,
    // are skipped outside CI, and fail under CI=true.
    let field = env::var_os("KAFKA_DATA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/kafka-data"));
    if !field.is_dir() {
        let ci = is_ci();
        eprintln!(
            "note: the field data {} is missing: its tests {}",
            field.display(),
            if ci {
                "fail (CI=true requires it)"
            } else {
                "are skipped (the in-repository data still runs)"
            }
        );
    }
    // Each step's wall time, printed at the end (where CI's time goes).
    let mut times: Vec<(&str, f64)> = Vec::new();
    let mut step = |name: &'static str, f: &mut dyn FnMut() -> Res| -> Res {
        let t = std::time::Instant::now();
        let r = f();
        times.push((name, t.elapsed().as_secs_f64()));
        r
    };
    step("lint", &mut lint)?;
    let (mut passed, mut failed) = (0, 0);
    step("test", &mut || {
        (passed, failed) = test_counted()?;
        Ok(())
    })?;
    step("docs", &mut docs)?;
    step("package", &mut package)?;
    step("lean", &mut lean)?;
    step("portability", &mut portability)?;
    step("examples", &mut examples)?;
    step("object-store-check", &mut object_store_check)?;
    step("loom", &mut loom)?;
    // The scenarios and every sabotage, in one pool of jobs: every sabotage must make the
    // scenario it targets fail (the oracle can fail).
    step("kafka", &mut || {
        kafka_oracle::run(&["--with-sabotages".to_string()])
    })?;
    step("fuzz", &mut || fuzz::fuzz(&["--smoke".to_string()]))?;
    // Crash states, then every mutant must be caught (the checker can fail).
    step("crash", &mut || {
        mutants::run("crash", &["--smoke".to_string()])?;
        mutants::run("crash", &["--mutants".to_string()])
    })?;
    // Every lin mutant must be caught (the checker can fail); the smoke itself is the
    // test `segment/tests/log/linearizability.rs` (docs/testing.md#linearizability).
    step("lin", &mut || {
        mutants::run("lin", &["--mutants".to_string()])
    })?;
    // The main job, exactly as the README runs it (quiet: no progress bar in logs).
    step("bench-harness", &mut || {
        let mut c = cargo();
        c.args(["run", "--release", "-p", "bench-harness", "--", "--quiet"]);
        run(c)
    })?;
    let total: f64 = times.iter().map(|(_, s)| s).sum();
    let line: Vec<String> = times.iter().map(|(n, s)| format!("{n} {s:.0}")).collect();
    println!("ci: step seconds: {} (total {total:.0})", line.join(", "));
    println!("ci: {passed} passed, {failed} failed");
    Ok(())
}

fn lint() -> Res {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or("xtask has no parent directory")?;
    let broken = xtask_lint::anchors::check(root)?;
    if !broken.is_empty() {
        for b in &broken {
            eprintln!("{}:{}: {}", b.file.display(), b.line, b.what);
        }
        return Err(format!("{} broken document citation(s)", broken.len()));
    }
    eprintln!("==> document citations: all resolve");
    let missing = xtask_lint::codemap::check(root)?;
    if !missing.is_empty() {
        for m in &missing {
            eprintln!("{}: {m}", xtask_lint::codemap::DOC);
        }
        return Err(format!(
            "{} crate(s), module(s) or test binaries missing from the code map",
            missing.len()
        ));
    }
    eprintln!("==> code map: every module and crate named");
    let layered = xtask_lint::layers::check(root)?;
    if !layered.is_empty() {
        for l in &layered {
            eprintln!("{}: {l}", xtask_lint::layers::SRC);
        }
        return Err(format!(
            "{} import-graph problem(s) in segment/src",
            layered.len()
        ));
    }
    eprintln!("==> segment/src: no import cycle, no import up a layer");
    xtask_lint::isolation::check(root)?;
    eprintln!(
        "==> crash-mutants: in no workspace build of segment; {} agrees with Cargo.lock",
        xtask_lint::isolation::MUTANTS_LOCK
    );
    let mut c = cargo();
    c.args(["fmt", "--all", "--check"]);
    run(c)?;
    // The object-store check is outside the root workspace (its own lock file): its
    // format is checked here; its clippy build would compile its server and client
    // crates a second time, so it is left to `cargo xtask ci`'s test build.
    let mut c = cargo();
    c.args(["fmt", "--check", "--manifest-path"]);
    c.arg(root.join("xtask/object-store-check/Cargo.toml"));
    run(c)?;
    let mut c = cargo();
    c.args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]);
    run(c)?;
    mutants::lint()
}

fn test() -> Res {
    test_counted().map(|_| ())
}

/// Runs the workspace tests, echoing their output, and returns the summed
/// `(passed, failed)` counts of every `test result:` line.
fn test_counted() -> Result<(u64, u64), String> {
    use std::io::{BufRead, BufReader};
    let mut c = cargo();
    c.args(["test", "--workspace"]);
    c.stdout(std::process::Stdio::piped());
    eprintln!("\n==> {c:?}");
    let mut child = c
        .spawn()
        .map_err(|e| format!("cannot start cargo test: {e}"))?;
    let (mut passed, mut failed) = (0u64, 0u64);
    for line in BufReader::new(child.stdout.take().expect("piped")).lines() {
        let line = line.map_err(|e| e.to_string())?;
        println!("{line}");
        if let Some(rest) = line.strip_prefix("test result: ") {
            for part in rest.split(';') {
                let mut words = part.split_whitespace().rev();
                let (Some(kind), Some(n)) = (words.next(), words.next()) else {
                    continue;
                };
                let n: u64 = n.trim_end_matches('.').parse().unwrap_or(0);
                match kind {
                    "passed" => passed += n,
                    "failed" => failed += n,
                    _ => {}
                }
            }
        }
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    eprintln!("tests: {passed} passed, {failed} failed");
    if status.success() {
        Ok((passed, failed))
    } else {
        Err(format!(
            "cargo test failed with {status} ({passed} passed, {failed} failed)"
        ))
    }
}

fn docs() -> Res {
    let mut c = cargo();
    c.args(["doc", "--workspace", "--no-deps"]);
    c.env("RUSTDOCFLAGS", "-D warnings");
    run(c)
}

fn package() -> Res {
    let mut c = cargo();
    c.args([
        "package",
        "--workspace",
        "--no-verify",
        "--allow-dirty",
        "--offline",
        "--exclude",
        "xtask",
        "--exclude",
        "lean-embedder",
        // Like xtask: a path dependency without a version (vs-kafka-ours).
        "--exclude",
        "kafka-oracle",
    ]);
    run(c)
}

/// Targets the library crates must compile for besides the host (Linux): Kafka runs on
/// them and embedders build there.
const PORTABILITY_TARGETS: [&str; 2] = ["x86_64-pc-windows-msvc", "x86_64-apple-darwin"];

/// `cargo check` of index-core, index-offset, index-time, index-txn, the lean embedder and
/// segment (pure-Rust features: zstd needs a C cross-compiler) for every installed target
/// of [`PORTABILITY_TARGETS`]. A target that is not installed (`rustup target add` needs
/// the network) is skipped with a line.
fn portability() -> Res {
    let installed = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    for target in PORTABILITY_TARGETS {
        if !installed.lines().any(|l| l.trim() == target) {
            eprintln!("portability: {target} skipped (not installed: rustup target add {target})");
            continue;
        }
        let mut c = cargo();
        c.args(["check", "--quiet", "--target", target]);
        for p in [
            "index-core",
            "index-offset",
            "index-time",
            "index-txn",
            "lean-embedder",
        ] {
            c.args(["-p", p]);
        }
        run(c)?;
        let mut c = cargo();
        c.args([
            "check",
            "--quiet",
            "--target",
            target,
            "-p",
            "segment",
            "--no-default-features",
            "--features",
            "gzip,snappy,lz4,tracing,cli",
        ]);
        run(c)?;
    }
    Ok(())
}

/// The most crates an embedder of `segment` with `default-features = false` may compile
/// (its own crate, the workspace crates, their dependencies, build-dependencies and proc
/// macros).
const LEAN_MAX_CRATES: usize = 30;

/// Builds and runs `xtask/lean-embedder` (a storage engine using `segment` with its own
/// `BatchFormat` and `default-features = false`), then checks its dependency tree: at most
/// [`LEAN_MAX_CRATES`] crates, and no C code (no `cc`, `cmake`, `pkg-config` or `*-sys`
/// crate: those exist to build or link C libraries).
fn lean() -> Res {
    let mut c = cargo();
    c.args(["run", "--quiet", "-p", "lean-embedder"]);
    run(c)?;
    let mut c = cargo();
    c.args([
        "tree",
        "-p",
        "lean-embedder",
        "-e",
        "normal,build",
        "--prefix",
        "none",
        "--offline",
    ]);
    eprintln!("\n==> {c:?}");
    let out = c.output().map_err(|e| format!("cannot start {c:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo tree failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let crates = lean_crates(&String::from_utf8_lossy(&out.stdout));
    let c_code: Vec<&String> = crates
        .iter()
        .filter(|name| {
            let name = name.split(' ').next().unwrap_or("");
            matches!(name, "cc" | "cmake" | "pkg-config") || name.ends_with("-sys")
        })
        .collect();
    eprintln!(
        "lean embedder: {} crates (limit {LEAN_MAX_CRATES}): {}",
        crates.len(),
        crates
            .iter()
            .map(|c| c.split(' ').next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join(" ")
    );
    if !c_code.is_empty() {
        return Err(format!(
            "the lean embedder builds C code through {c_code:?}: keep C behind a default feature"
        ));
    }
    if crates.len() > LEAN_MAX_CRATES {
        return Err(format!(
            "the lean embedder compiles {} crates, more than {LEAN_MAX_CRATES}: a new normal \
             dependency of segment or the index crates must go behind a feature",
            crates.len()
        ));
    }
    Ok(())
}

/// The distinct `name vX.Y.Z` packages of `cargo tree --prefix none` output.
fn lean_crates(tree: &str) -> Vec<String> {
    let mut crates: Vec<String> = tree
        .lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            Some(format!("{} {}", words.next()?, words.next()?))
        })
        .collect();
    crates.sort();
    crates.dedup();
    crates
}

/// segment's `object-store` feature against an S3 server started in-process
/// (`xtask/object-store-check`, outside the root workspace so that no other build gets
/// the feature or the server's crates), in the root target directory.
fn object_store_check() -> Res {
    let root = root();
    let mut c = cargo();
    c.arg("test").arg("--manifest-path");
    c.arg(root.join("xtask/object-store-check/Cargo.toml"));
    c.arg("--target-dir").arg(target_dir());
    run(c)
}

/// Runs every `examples/*.rs` of every workspace member (found on disk, so a new example
/// is picked up without editing this file).
fn examples() -> Res {
    let root = root();
    let mut found = Vec::new();
    for member in std::fs::read_dir(&root).map_err(|e| e.to_string())? {
        let member = member.map_err(|e| e.to_string())?.path();
        let dir = member.join("examples");
        if !member.join("Cargo.toml").is_file() || !dir.is_dir() {
            continue;
        }
        let package = member.file_name().unwrap().to_string_lossy().to_string();
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .map_err(|e| e.to_string())?
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let p = e.path();
                (p.extension()? == "rs")
                    .then(|| p.file_stem().unwrap().to_string_lossy().to_string())
            })
            .collect();
        names.sort();
        for n in names {
            found.push((package.clone(), n));
        }
    }
    for (package, name) in &found {
        let mut c = cargo();
        c.args(["run", "--quiet", "-p", package, "--example", name]);
        run(c)?;
    }
    eprintln!("ran {} examples", found.len());
    Ok(())
}

fn loom() -> Res {
    if !root().join("index-core/tests/loom.rs").is_file() {
        eprintln!("no loom models yet (index-core/tests/loom.rs)");
        return Ok(());
    }
    // Under the caller's target directory (CARGO_TARGET_DIR, else `target/`): the loom
    // builds use other RUSTFLAGS, so they get their own subdirectories of it.
    let target = target_dir().join("loom");
    let mut c = cargo();
    c.args(["test", "-p", "index-core", "--release", "--test", "loom"]);
    c.env("RUSTFLAGS", "--cfg loom")
        .env("CARGO_TARGET_DIR", &target);
    run(c)?;
    // The same models with Release/Acquire weakened to Relaxed must fail, and fail because
    // loom saw the race: this proves the models can see the ordering they protect. The
    // run's output is captured (its failing test summary is expected, not a CI failure)
    // and only the verdict and loom's message are printed.
    let mut c = cargo();
    c.args(["test", "-p", "index-core", "--release", "--test", "loom"]);
    c.env("RUSTFLAGS", "--cfg loom --cfg loom_weak_ordering")
        .env("CARGO_TARGET_DIR", target.join("weak"));
    eprintln!("\n==> {c:?}\n    (weakened publication ordering: this run MUST fail)");
    let out = c.output().map_err(|e| format!("cannot start {c:?}: {e}"))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // Model names only: the captured "... FAILED" lines are expected here.
    let caught: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("test ")?.strip_suffix(" ... FAILED"))
        .collect();
    let violation = text.lines().find(|l| l.contains("Causality violation"));
    match (out.status.success(), violation) {
        (false, Some(v)) => {
            eprintln!(
                "loom: weakened ordering caught by {} model(s): {}\n      {}",
                caught.len(),
                caught.join(", "),
                v.trim()
            );
            Ok(())
        }
        (false, None) => Err(format!(
            "the weakened-ordering loom run failed for another reason than a detected race:\n{text}"
        )),
        (true, _) => Err("loom models passed with a weakened ordering: they check nothing".into()),
    }
}

/// `cargo xtask bench [--criterion] [harness options...]`: runs the bench-harness main
/// job in release mode with `--json <target>/bench-report/harness.json --report-dir
/// <target>/bench-report` (`<target>` = `$CARGO_TARGET_DIR` if set, else `target/`), which
/// writes `report.md`, `sweep.json` and the SVG plots there.
/// With `--criterion`, `cargo bench --workspace` runs first, so that the report lists the
/// criterion results too. Other arguments go to the harness.
fn bench(rest: &[String]) -> Res {
    let target = target_dir();
    let report = target.join("bench-report");
    std::fs::create_dir_all(&report).map_err(|e| format!("{}: {e}", report.display()))?;
    let criterion = rest.iter().any(|a| a == "--criterion");
    let rest: Vec<&String> = rest.iter().filter(|a| *a != "--criterion").collect();
    if criterion {
        let mut c = cargo();
        c.args(["bench", "--workspace"]);
        run(c)?;
    }
    let mut c = cargo();
    c.args(["run", "--release", "-p", "bench-harness", "--"]);
    c.arg("--json").arg(report.join("harness.json"));
    c.arg("--report-dir").arg(&report);
    c.arg("--criterion-dir").arg(target.join("criterion"));
    c.args(rest);
    run(c)?;
    eprintln!("bench report: {}", report.join("report.md").display());
    Ok(())
}
