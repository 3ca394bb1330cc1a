//! `vs-kafka-ours`: the Rust side of `cargo xtask vs-kafka` (see the library's docs for the
//! protocol). Exits at `quit` or when xtask's end of its standard input closes.

fn main() {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    if let Err(e) = vs_kafka_ours::serve(stdin.lock(), stdout.lock()) {
        eprintln!("vs-kafka-ours: {e}");
        std::process::exit(1);
    }
}
