//! The `ratios` section printed after the benchmarks of `index-offset` and `index-time`
//! (the same file is in both crates' `benches/support/`), and written as JSON to
//! `<criterion dir>/ratios/<kind>.json` for `cargo xtask bench`.
//!
//! Each ratio divides two of criterion's median times per iteration, read back from
//! `<criterion dir>/<group>/<function>[/<parameter>]/new/estimates.json`, where the
//! criterion directory is `$CRITERION_HOME`, else `$CARGO_TARGET_DIR/criterion`, else
//! `criterion/` next to the bench executable's `release/` directory. A benchmark that
//! was filtered out of this run (or never ran) is reported as missing.

use std::path::PathBuf;

/// Where criterion keeps its results.
fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(target).join("criterion");
    }
    // <target>/release/deps/<bench>-<hash>
    std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.parent()?.join("criterion")))
        .unwrap_or_else(|| PathBuf::from("target/criterion"))
}

/// Median time per iteration in nanoseconds of benchmark `id` (`group/function[/param]`).
fn median_ns(id: &str) -> Option<f64> {
    let path = criterion_dir().join(id).join("new/estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let median = &text[text.find("\"median\"")?..];
    let value = &median[median.find("\"point_estimate\":")? + "\"point_estimate\":".len()..];
    let end = value.find([',', '}'])?;
    value[..end].trim().parse().ok()
}

struct Ratio {
    name: String,
    numerator: String,
    denominator: String,
    goal: Option<f64>,
    value: Option<(f64, f64)>,
}

/// Prints the ratios of the `kind` ("offset" or "time") benchmarks for each index size
/// and writes them to `<criterion dir>/ratios/<kind>.json`.
pub fn report(kind: &str, sizes: &[&str]) {
    let mut ratios = Vec::new();
    let mut add = |name: String, num: String, den: String, goal: Option<f64>| {
        let value = median_ns(&num).zip(median_ns(&den));
        ratios.push(Ratio {
            name,
            numerator: num,
            denominator: den,
            goal,
            value,
        });
    };
    for (what, group, goals) in [
        (
            "lookup hot-tail",
            "lookup-hot-tail",
            [None, Some(1.5), Some(1.2)],
        ),
        ("search hot-tail", "search-hot-tail", [None, None, None]),
        ("lookup uniform", "lookup-uniform", [None, None, None]),
    ] {
        for size in sizes {
            for (strategy, goal) in ["binary", "warm-cold", "page-directory"].iter().zip(goals) {
                let den_group = if group == "search-hot-tail" {
                    "lookup-hot-tail"
                } else {
                    group
                };
                add(
                    format!("{kind} {what} {size}: {strategy} / partition_point"),
                    format!("{kind}-{group}/{strategy}/{size}"),
                    format!("{kind}-{den_group}/partition_point/{size}"),
                    goal,
                );
            }
        }
    }
    for (base, goal) in [
        ("plain-mmap-copy", Some(2.0)),
        ("raw-index-file", None),
        ("vec-copy", None),
    ] {
        add(
            format!("{kind} append: {kind}-index / {base}"),
            format!("{kind}-append/{kind}-index"),
            format!("{kind}-append/{base}"),
            goal,
        );
    }
    for strategy in ["warm-cold", "page-directory"] {
        add(
            format!("{kind} readers {strategy}: with appender / idle"),
            format!("{kind}-readers/{strategy}/appending"),
            format!("{kind}-readers/{strategy}/idle"),
            None,
        );
    }

    println!("\nratios ({kind}): median time per iteration, numerator / denominator");
    let mut json = String::from("[\n");
    for (i, r) in ratios.iter().enumerate() {
        let goal = r
            .goal
            .map_or(String::new(), |g| format!(" goal <= {g:.1}x"));
        let (line, value) = match r.value {
            Some((num, den)) => {
                let ratio = num / den;
                let verdict = match r.goal {
                    Some(g) if ratio <= g => " MET",
                    Some(_) => " MISSED",
                    None => "",
                };
                (
                    format!("{ratio:6.2}x  ({num:.1} ns / {den:.1} ns){goal}{verdict}"),
                    format!("{ratio:.4}"),
                )
            }
            None => (
                format!("   n/a  (missing results){goal}"),
                "null".to_string(),
            ),
        };
        println!("  {:<58} {line}", r.name);
        json.push_str(&format!(
            "  {{\"name\": \"{}\", \"numerator\": \"{}\", \"denominator\": \"{}\", \"ratio\": {value}, \"goal\": {}}}{}\n",
            r.name,
            r.numerator,
            r.denominator,
            r.goal.map_or("null".to_string(), |g| g.to_string()),
            if i + 1 < ratios.len() { "," } else { "" }
        ));
    }
    json.push_str("]\n");
    let dir = criterion_dir().join("ratios");
    let path = dir.join(format!("{kind}.json"));
    if std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(&path, json))
        .is_ok()
    {
        println!("ratios written to {}", path.display());
    }
}
