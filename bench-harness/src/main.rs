//! `bench-harness`: see `bench-harness --help` and the crate README.
#![forbid(unsafe_code)]

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Duration;

use bench_harness::Cli;
use clap::Parser;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some(spec) = &cli.pollution_arm {
        // A child arm of the memory-pressure workload: its result is one JSON line.
        return match bench_harness::pollution::arm_main(spec) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("bench-harness arm: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if cli.pollution_only {
        return pollution_only(&cli);
    }
    let bar = if cli.quiet || !std::io::stdout().is_terminal() {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::with_draw_target(Some(1), ProgressDrawTarget::stderr());
        b.set_style(
            ProgressStyle::with_template("{spinner} {msg:<22} [{bar:40}] {percent:>3}% {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        b.enable_steady_tick(Duration::from_millis(120));
        b
    };
    let outcome = bench_harness::run(&cli, &mut |phase, done, total| {
        bar.set_message(phase.to_string());
        bar.set_length(total.max(1));
        bar.set_position(done);
    });
    bar.finish_and_clear();
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            eprintln!("bench-harness: {e}");
            return ExitCode::FAILURE;
        }
    };
    print!("{}", outcome.render(&cli));
    for f in &outcome.report_files {
        println!("Wrote {}.", f.display());
    }
    if let Some(path) = &cli.json {
        let rows = outcome.rows();
        let written = serde_json::to_string_pretty(&rows)
            .map_err(std::io::Error::other)
            .and_then(|s| std::fs::write(path, s + "\n"));
        if let Err(e) = written {
            eprintln!("bench-harness: cannot write {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        println!("Wrote {} result rows to {}.", rows.len(), path.display());
    }
    ExitCode::SUCCESS
}

/// `--pollution-only`: the memory-pressure workload alone, its table on stdout, and with
/// `--report-dir` its plot.
fn pollution_only(cli: &Cli) -> ExitCode {
    if let Err(e) = cli.validate() {
        eprintln!("bench-harness: {e}");
        return ExitCode::FAILURE;
    }
    let quiet = cli.quiet || !std::io::stderr().is_terminal();
    let outcome = bench_harness::pollution::run(&cli.pollution_config(), &mut |phase, d, t| {
        if !quiet {
            eprint!("\r{phase} {d}/{t}   ");
        }
    });
    if !quiet {
        eprintln!();
    }
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            eprintln!("bench-harness: {e}");
            return ExitCode::FAILURE;
        }
    };
    print!("{}", bench_harness::report::render_pollution(&outcome));
    if let (Some(dir), None) = (&cli.report_dir, &outcome.skipped) {
        let path = dir.join(bench_harness::bench_report::POLLUTION_SVG);
        let written = std::fs::create_dir_all(dir)
            .map_err(|e| e.to_string())
            .and_then(|()| {
                bench_harness::bench_report::write_pollution_plot(&outcome, &path)
                    .map_err(|e| e.to_string())
            });
        match written {
            Ok(()) => println!("Wrote {}.", path.display()),
            Err(e) => {
                eprintln!("bench-harness: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    if let Some(path) = &cli.json {
        let written = serde_json::to_string_pretty(&outcome)
            .map_err(std::io::Error::other)
            .and_then(|s| std::fs::write(path, s + "\n"));
        if let Err(e) = written {
            eprintln!("bench-harness: cannot write {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
