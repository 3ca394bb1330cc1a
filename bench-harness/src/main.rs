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
