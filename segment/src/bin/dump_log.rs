//! `dump-log`: print and verify Kafka log segments, indexes and snapshots, in the spirit of
//! Kafka's `kafka-dump-log.sh` (DumpLogSegments). All logic lives in `segment::dump`.
//!
//! Exit status: 0 = no problem; 1 = an index disagrees with its log, a batch is corrupt,
//! a sanity check failed, or a rebuild truncated/failed; 2 = a file could not be read,
//! standard output could not be written (closed, full disk, I/O error), or a usage error
//! (including flags that contradict each other); 141 = the reader of standard output went
//! away (broken pipe): nothing more is printed, and the run, cut short, claims no verdict
//! (`docs/kafka-behaviour.md#dump-log-operator-deviations`).
//!
//! Names and record contents are escaped in text output (see `segment::dump::text`).
//!
//! `dump-log doctor DIR` is a subcommand of its own (`dump_log/doctor.rs`), with its own
//! flags and exit codes.

#[path = "dump_log/doctor.rs"]
mod doctor;

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, IsTerminal, Write};
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::{ArgGroup, Parser};
use indicatif::{ProgressBar, ProgressStyle};
use segment::dump::{
    self, text, Decoder, DumpOptions, Event, FileType, RebuildOptions, Sink, Summary,
    DEFAULT_MAX_BYTES, DEFAULT_MAX_MESSAGE_SIZE,
};

/// Progress bars are shown for inputs of at least this many bytes.
const PROGRESS_MIN_BYTES: u64 = 16 << 20;

/// Exit status when standard output's reader is gone (`EPIPE`): what a shell reports for
/// a tool killed by `SIGPIPE` (128 + 13), so `set -o pipefail` scripts see `dump-log | head`
/// exactly as they see `cat | head`. Not 0: the files after the cut were never checked,
/// and 0 means "no problem found".
const EXIT_BROKEN_PIPE: i32 = 141;

/// Exit status of a usage error or an output that cannot be written.
const EXIT_OPERATIONAL: i32 = 2;

#[derive(Parser, Debug)]
#[command(
    name = "dump-log",
    version,
    after_help = "Pre-flight check of a broker's log directory: dump-log doctor DIR (see dump-log doctor --help).",
    about = "Dump and verify Kafka log segments (.log, .index, .timeindex, .txnindex, .snapshot, KRaft .checkpoint)",
    long_about = "Dump and verify Kafka partition files, in the spirit of Kafka's kafka-dump-log.sh.\n\n\
        Inputs are files (positionally or as --files a,b) or partition directories (every segment \
        file in offset order). Files are only read, never written.\n\n\
        Flags that contradict each other or that would be ignored are refused (exit status 2).\n\n\
        Exit status: 0 no problem; 1 an index disagrees with its log, a batch is corrupt, a sanity \
        check failed, or a rebuild failed/truncated; 2 a file could not be read, standard output \
        could not be written, or bad usage; 141 standard output's reader went away (broken pipe).",
    group(ArgGroup::new("records").args([
        "deep_iteration",
        "print_data_log",
        "offsets_decoder",
        "transaction_log_decoder",
        "cluster_metadata_decoder",
        "share_group_state_decoder",
        "remote_log_metadata_decoder",
    ]).multiple(true))
)]
struct Cli {
    /// Files or partition directories to dump.
    paths: Vec<PathBuf>,

    /// Comma-separated list of files to dump (Kafka's --files); may be repeated.
    #[arg(long, value_name = "FILE[,FILE...]")]
    files: Vec<String>,

    /// Print record keys and values (implies --deep-iteration).
    #[arg(long)]
    print_data_log: bool,

    /// Iterate the records inside each batch.
    #[arg(long)]
    deep_iteration: bool,

    /// Verify indexes against their logs without printing their entries (.log,
    /// .txnindex and .snapshot files are still dumped in full, as Kafka dumps them).
    #[arg(long)]
    verify_index_only: bool,

    /// Only run the index sanity checks (Kafka's sanityCheck) on .index and .timeindex
    /// files (other files are dumped in full, as Kafka dumps them). Not with
    /// --verify-index-only (the sanity check does not verify entries).
    #[arg(long, conflicts_with = "verify_index_only")]
    index_sanity_check: bool,

    /// The largest batch: bytes read at each offset-index position to find its first
    /// batch, the largest batch a .log dump reads, and the most one batch may decompress
    /// to (memory stays bounded by it).
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_MESSAGE_SIZE)]
    max_message_size: u64,

    /// Only read the first BYTES of each .log.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_BYTES)]
    max_bytes: u64,

    /// With deep iteration, print only keys/values, not record metadata. Needs
    /// --deep-iteration or --print-data-log; text output only (not with --json).
    #[arg(long, requires = "records", conflicts_with = "json")]
    skip_record_metadata: bool,

    /// Report follower (chunk-shaped) offset-index entries and record-level time-index
    /// offsets as errors, exactly as Kafka's tool does; with deep iteration, report a
    /// file whose first record is not offset 0 as Kafka does (`-1 is followed by N`);
    /// list the files of the report in Kafka's order; leave our notes out of it. The exit status keeps its meaning. Not
    /// with --index-sanity-check, which does not verify entries.
    #[arg(long, conflicts_with = "index_sanity_check")]
    kafka_strict: bool,

    /// Decode record keys and values as __consumer_offsets records (group metadata,
    /// offset commits, consumer, share and streams group records), as Kafka's
    /// --offsets-decoder prints them. Implies --print-data-log.
    #[arg(long, group = "decoders")]
    offsets_decoder: bool,

    /// Decode record keys and values as __transaction_state records (Kafka's
    /// --transaction-log-decoder). Implies --print-data-log.
    #[arg(long, group = "decoders")]
    transaction_log_decoder: bool,

    /// Decode record values as KRaft metadata records of __cluster_metadata (Kafka's
    /// --cluster-metadata-decoder). Implies --print-data-log.
    #[arg(long, group = "decoders")]
    cluster_metadata_decoder: bool,

    /// Decode record keys and values as __share_group_state records (Kafka's
    /// --share-group-state-decoder). Implies --print-data-log.
    #[arg(long, group = "decoders")]
    share_group_state_decoder: bool,

    /// Decode record values as __remote_log_metadata records (tiered storage's
    /// TopicBasedRemoteLogMetadataManager), printed as Kafka's
    /// --remote-log-metadata-decoder prints them. Implies --print-data-log.
    #[arg(long, group = "decoders")]
    remote_log_metadata_decoder: bool,

    /// Print JSON lines (one object per event, "type" field; a final "summary" object)
    /// instead of text. A usage error is one {"type": "error", "exit_code": 2} object.
    #[arg(long)]
    json: bool,

    /// Instead of dumping: write the .index/.timeindex/.txnindex that recovery would build
    /// for each given .log (or each .log of a given directory) into DIR, and compare them
    /// with the broker's files. The dump's flags do not apply and are refused.
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with_all = [
            "print_data_log",
            "deep_iteration",
            "verify_index_only",
            "index_sanity_check",
            "max_message_size",
            "max_bytes",
            "skip_record_metadata",
            "kafka_strict",
            "offsets_decoder",
            "transaction_log_decoder",
            "cluster_metadata_decoder",
            "share_group_state_decoder",
            "remote_log_metadata_decoder",
        ]
    )]
    rebuild_indexes_to: Option<PathBuf>,

    /// With --rebuild-indexes-to: write even into a directory that already holds a
    /// partition's files, or where an output is the same file as an input (symlink or
    /// hard link). Without it, those are refused (exit status 2).
    #[arg(long, requires = "rebuild_indexes_to")]
    force: bool,

    /// index.interval.bytes for --rebuild-indexes-to (only with it).
    #[arg(
        long,
        value_name = "BYTES",
        default_value_t = 4096,
        requires = "rebuild_indexes_to"
    )]
    index_interval_bytes: u64,

    /// Never show a progress bar.
    #[arg(long)]
    no_progress: bool,
}

/// Standard output, written through a duplicate of its descriptor so that every error
/// reaches us: Rust's `io::stdout()` reports a closed descriptor (`EBADF`) as success, and
/// `println!` panics on any other error.
struct Out {
    w: io::BufWriter<File>,
}

impl Out {
    /// Duplicates descriptor 1.
    ///
    /// # Errors
    /// `EBADF` when standard output is closed. Rust's runtime reopens a closed descriptor
    /// 0, 1 or 2 on `/dev/null` read-write before `main`, so that is what a closed standard
    /// output looks like here: on Linux (where `/proc/self/fdinfo` tells the access mode)
    /// a standard output that is `/dev/null` opened read-write is taken for a closed one.
    /// A shell's `> /dev/null` opens it write-only and is accepted.
    fn open() -> io::Result<Out> {
        let file = File::from(io::stdout().as_fd().try_clone_to_owned()?);
        if reopened_closed_stdout(&file) {
            return Err(io::Error::from_raw_os_error(9)); // EBADF
        }
        Ok(Out {
            w: io::BufWriter::new(file),
        })
    }

    /// Reacts to a write error the way Unix tools do: quiet exit [`EXIT_BROKEN_PIPE`] when
    /// the reader is gone, one line on stderr and [`EXIT_OPERATIONAL`] otherwise.
    fn fail(e: &io::Error) -> ! {
        if e.kind() == io::ErrorKind::BrokenPipe {
            std::process::exit(EXIT_BROKEN_PIPE);
        }
        eprintln!("dump-log: cannot write to standard output: {e}");
        std::process::exit(EXIT_OPERATIONAL);
    }

    /// Writes `text` (which carries its own newlines).
    fn put(&mut self, text: &str) {
        if let Err(e) = self.w.write_all(text.as_bytes()) {
            Self::fail(&e);
        }
    }

    /// Writes everything buffered.
    fn flush(&mut self) {
        if let Err(e) = self.w.flush() {
            Self::fail(&e);
        }
    }
}

/// Whether `stdout` (a duplicate of descriptor 1) is the `/dev/null` that Rust's runtime
/// opened read-write in place of a closed descriptor 1 (Linux; `false` elsewhere).
fn reopened_closed_stdout(stdout: &File) -> bool {
    use std::os::unix::fs::MetadataExt;
    let (Ok(ours), Ok(null)) = (stdout.metadata(), std::fs::metadata("/dev/null")) else {
        return false;
    };
    if (ours.dev(), ours.ino()) != (null.dev(), null.ino()) {
        return false;
    }
    let Ok(info) = std::fs::read_to_string("/proc/self/fdinfo/1") else {
        return false;
    };
    info.lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())
        // O_ACCMODE = 3, O_RDWR = 2.
        .is_some_and(|flags| flags & 3 == 2)
}

/// Whether the arguments ask for JSON output: `--json` before any `--` (read before the
/// command line is parsed, so that a usage error can answer in JSON too).
fn json_requested(args: &[OsString]) -> bool {
    args.iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .any(|a| a == "--json")
}

/// Reports a usage or path error: one line on stderr, and with `--json` also one JSON
/// object on standard output, `{"type": "error", "exit_code": 2, "error": "…"}`, so that
/// a script that parses the output always gets an object. Returns [`EXIT_OPERATIONAL`].
fn operational_error(out: &mut Out, json: bool, tool: &str, msg: &str) -> i32 {
    eprintln!("{tool}: {}", text::escape(msg));
    if json {
        put_error_object(out, msg);
    }
    EXIT_OPERATIONAL
}

/// Writes `{"type": "error", "exit_code": 2, "error": msg}` and a newline to `out`.
fn put_error_object(out: &mut Out, msg: &str) {
    let v = serde_json::json!({
        "type": "error",
        "exit_code": EXIT_OPERATIONAL,
        "error": msg,
    });
    out.put(&text::json_inert(&v.to_string()));
    out.put("\n");
    out.flush();
}

/// Parses `args` (the first one is the program's name). Help and version requests
/// print and exit 0 as clap does; a usage error exits with clap's message and status
/// 2, with `--json` also as [`operational_error`]'s object (its first line as `error`).
fn parse_args<C: Parser>(args: Vec<OsString>, out: &mut Out) -> Result<C, i32> {
    use clap::error::ErrorKind;
    let json = json_requested(&args);
    match C::try_parse_from(args) {
        Ok(c) => Ok(c),
        Err(e)
            if !json || matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) =>
        {
            e.exit()
        }
        Err(e) => {
            let rendered = e.render().to_string();
            let first = rendered
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("invalid arguments");
            let msg = first.strip_prefix("error: ").unwrap_or(first);
            let _ = e.print();
            put_error_object(out, msg);
            Err(EXIT_OPERATIONAL)
        }
    }
}

struct CliSink {
    json: bool,
    skip_record_metadata: bool,
    /// `--kafka-strict`: the text report leaves out our notes, which Kafka's tool never
    /// prints (docs/kafka-behaviour.md#dump-log-extra-findings), and lists files in
    /// Kafka's order ([`text::Report::kafka_order`]).
    kafka_strict: bool,
    out: Out,
    report: text::Report,
    bar: Option<ProgressBar>,
    /// Bytes processed and time of the last bar update (updates are throttled: redrawing
    /// on every batch made a 24 MB dump 15x slower).
    done: u64,
    last_draw: Instant,
    /// Standard output is the terminal the bar is drawn on: lines must suspend the bar.
    stdout_tty: bool,
    /// Batch and record lines rendered straight from the batches ([`Sink::text_lines`]), not yet
    /// written to `out`.
    pending: String,
}

/// How many bytes of lines [`CliSink::pending`] holds before they are written.
const PENDING_BYTES: usize = 1 << 18;

impl CliSink {
    /// Writes the lines held in [`CliSink::pending`] (before anything else is
    /// written, so that lines keep their order).
    fn flush_pending(&mut self) {
        if !self.pending.is_empty() {
            self.out.put(&self.pending);
            self.pending.clear();
        }
    }

    fn write_out(&mut self, line: &str) {
        match &self.bar {
            Some(bar) if self.stdout_tty => {
                let out = &mut self.out;
                bar.suspend(|| {
                    out.put(line);
                    out.put("\n");
                    out.flush();
                });
            }
            _ => {
                self.out.put(line);
                self.out.put("\n");
            }
        }
    }

    fn write_err(&mut self, line: &str) {
        self.out.flush();
        match &self.bar {
            Some(bar) => bar.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }
}

impl Sink for CliSink {
    fn event(&mut self, event: Event) {
        self.flush_pending();
        if self.json {
            match serde_json::to_string(&event) {
                Ok(s) => self.write_out(&text::json_inert(&s)),
                Err(e) => self.write_err(&format!("dump-log: cannot encode event: {e}")),
            }
            return;
        }
        match text::event_line(&event, self.skip_record_metadata) {
            Some(text::Line::Out(s)) => self.write_out(&s),
            Some(text::Line::Err(s)) => self.write_err(&s),
            None => {}
        }
        if !(self.kafka_strict && matches!(event, Event::Note(_))) {
            self.report.add(&event);
        }
    }

    /// Text output, unless a bar is drawn on the terminal the lines go to (each line
    /// then suspends the bar, through [`Event::Record`]).
    fn text_lines(&mut self) -> Option<(&mut String, bool)> {
        if self.json || (self.bar.is_some() && self.stdout_tty) {
            return None;
        }
        if self.pending.len() >= PENDING_BYTES {
            self.flush_pending();
        }
        Some((&mut self.pending, self.skip_record_metadata))
    }

    fn progress(&mut self, bytes: u64) {
        self.done += bytes;
        if let Some(bar) = &self.bar {
            if self.last_draw.elapsed() >= Duration::from_millis(100) {
                bar.set_position(self.done);
                self.last_draw = Instant::now();
            }
        }
    }
}

fn progress_bar(total: u64, enabled: bool) -> Option<ProgressBar> {
    if !enabled || total < PROGRESS_MIN_BYTES {
        return None;
    }
    let bar = ProgressBar::with_draw_target(Some(total), indicatif::ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} ({eta})",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    Some(bar)
}

fn main() {
    // First, before anything can take descriptor 1: a closed standard output is an error,
    // not a silent run that prints nothing and exits 0.
    let mut out = match Out::open() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("dump-log: standard output is closed ({e}); redirect it to a file or pipe (> /dev/null to discard it)");
            std::process::exit(EXIT_OPERATIONAL);
        }
    };
    if std::env::args_os().nth(1).is_some_and(|a| a == "doctor") {
        std::process::exit(doctor::main(out));
    }
    let cli: Cli = match parse_args(std::env::args_os().collect(), &mut out) {
        Ok(c) => c,
        Err(code) => std::process::exit(code),
    };
    let mut inputs: Vec<PathBuf> = cli.paths.clone();
    for f in &cli.files {
        inputs.extend(dump::split_files_arg(f));
    }
    if inputs.is_empty() {
        std::process::exit(operational_error(
            &mut out,
            cli.json,
            "dump-log",
            "no input files (give paths or --files a,b); see --help",
        ));
    }
    let code = match &cli.rebuild_indexes_to {
        Some(dir) => run_rebuild(&cli, &inputs, dir, out),
        None => run_dump(&cli, &inputs, out),
    };
    std::process::exit(code);
}

fn run_dump(cli: &Cli, inputs: &[PathBuf], out: Out) -> i32 {
    let opts = DumpOptions {
        print_data_log: cli.print_data_log,
        deep_iteration: cli.deep_iteration,
        verify_index_only: cli.verify_index_only,
        index_sanity_check: cli.index_sanity_check,
        max_message_size: cli.max_message_size,
        max_bytes: cli.max_bytes,
        skip_record_metadata: cli.skip_record_metadata,
        kafka_strict: cli.kafka_strict,
        decoder: if cli.offsets_decoder {
            Some(Decoder::Offsets)
        } else if cli.transaction_log_decoder {
            Some(Decoder::TransactionLog)
        } else if cli.cluster_metadata_decoder {
            Some(Decoder::ClusterMetadata)
        } else if cli.share_group_state_decoder {
            Some(Decoder::ShareGroupState)
        } else if cli.remote_log_metadata_decoder {
            Some(Decoder::RemoteLogMetadata)
        } else {
            None
        },
    };
    // Progress on stderr only when it is a terminal; not while a terminal stdout is
    // flooded with entries (the bar would be redrawn for every line). The index modes
    // print entries too: every `.log` is dumped in full, as Kafka dumps it.
    let files = dump::expand_inputs(inputs).unwrap_or_default();
    let total: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    let show =
        !cli.no_progress && io::stderr().is_terminal() && (!io::stdout().is_terminal() || cli.json);
    let mut sink = CliSink {
        json: cli.json,
        skip_record_metadata: cli.skip_record_metadata,
        kafka_strict: cli.kafka_strict,
        out,
        report: if cli.kafka_strict {
            text::Report::kafka_order()
        } else {
            text::Report::new()
        },
        bar: progress_bar(total, show),
        done: 0,
        last_draw: Instant::now(),
        stdout_tty: io::stdout().is_terminal(),
        pending: String::new(),
    };
    for input in inputs {
        if !input.exists() {
            sink.event(Event::Problem(dump::Problem::Unreadable {
                path: input.clone(),
                reason: "no such file or directory".into(),
            }));
        }
    }
    let existing: Vec<PathBuf> = inputs.iter().filter(|p| p.exists()).cloned().collect();
    let missing = inputs.len() - existing.len();
    let mut summary: Summary = dump::run(&existing, &opts, &mut sink);
    summary.failures += missing;
    summary.operational_errors += missing;
    // Every file ignored: nothing was checked, which is no "no problem" (Kafka's tool
    // exits 0 there, which --kafka-strict keeps).
    let nothing_checked =
        !cli.kafka_strict && summary.files > 0 && summary.ignored == summary.files;
    if nothing_checked {
        summary.failures += 1;
        summary.operational_errors += 1;
    }
    if let Some(bar) = sink.bar.take() {
        bar.finish_and_clear();
    }
    if cli.json {
        let mut v = serde_json::to_value(&summary).unwrap_or_default();
        if let Some(m) = v.as_object_mut() {
            m.insert("type".into(), "summary".into());
            m.insert("exit_code".into(), summary.exit_code().into());
            if nothing_checked {
                m.insert("error".into(), dump::NOTHING_CHECKED.into());
            }
        }
        sink.write_out(&v.to_string());
    }
    // A dump whose output did not reach its reader did not succeed, whatever it found.
    sink.flush_pending();
    sink.out.flush();
    if !cli.json {
        let report = sink.report.render();
        if !report.is_empty() {
            eprint!("{report}");
        }
    }
    if nothing_checked {
        eprintln!("dump-log: {}", dump::NOTHING_CHECKED);
    }
    summary.exit_code()
}

fn run_rebuild(cli: &Cli, inputs: &[PathBuf], dir: &std::path::Path, mut out: Out) -> i32 {
    let files = match dump::expand_inputs(inputs) {
        Ok(f) => f,
        Err(e) => return operational_error(&mut out, cli.json, "dump-log", &e.to_string()),
    };
    let mut logs = Vec::new();
    for f in files {
        match FileType::of(&f) {
            FileType::Log => logs.push(f),
            _ if inputs.contains(&f) => {
                eprintln!(
                    "dump-log: --rebuild-indexes-to takes .log files or directories; ignoring {}",
                    text::escape_path(&f)
                );
            }
            _ => {}
        }
    }
    if logs.is_empty() {
        return operational_error(&mut out, cli.json, "dump-log", "no .log file to rebuild");
    }
    for log in &logs {
        if let Err(e) = dump::ensure_regular_file(log) {
            let msg = format!("{}: {e}", log.display());
            return operational_error(&mut out, cli.json, "dump-log", &msg);
        }
    }
    let opts = RebuildOptions {
        out_dir: dir.to_path_buf(),
        index_interval_bytes: cli.index_interval_bytes,
        force: cli.force,
    };
    let reports = match dump::rebuild(&logs, &opts) {
        Ok(r) => r,
        Err(e) => return operational_error(&mut out, cli.json, "dump-log", &e),
    };
    let mut code = 0;
    for r in &reports {
        if cli.json {
            let mut v = serde_json::to_value(r).unwrap_or_default();
            if let Some(m) = v.as_object_mut() {
                m.insert("type".into(), "rebuild".into());
            }
            out.put(&text::json_inert(&v.to_string()));
            out.put("\n");
        } else {
            out.put(&r.render());
        }
        if r.is_failure() {
            code = 1;
        }
    }
    out.flush();
    code
}
