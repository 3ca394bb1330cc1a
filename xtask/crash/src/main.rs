//! The `crash` binary: `cargo xtask crash ARGS` runs it (see the library's docs) with
//! `cargo run --release --manifest-path xtask/crash/Cargo.toml --bin crash -- ARGS`.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Err(e) = xtask_crash::run(&args) {
        eprintln!("xtask: {e}");
        std::process::exit(1);
    }
}
