//! Issue 11, finding 8: `dump-log --rebuild-indexes-to DIR` never overwrites a broker's
//! files. Without `--force` it refuses when an output is the same file as a source (the
//! `.log` given through a symlink or a hard link) or when DIR already holds a
//! partition's files; with `--force` it replaces the links at DIR instead of writing
//! through them.

use std::path::Path;
use std::process::Command;

use segment::record::BatchBuilder;

const LOG: &str = "00000000000000000000.log";
const INDEX: &str = "00000000000000000000.index";
const TIMEINDEX: &str = "00000000000000000000.timeindex";
/// The broker's index bytes: not what a rebuild writes, so an overwrite shows.
const BROKER_INDEX: &[u8] = &[0xAB; 16];

fn broker_partition(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let mut log = Vec::new();
    for b in 0..50 {
        log.extend(
            BatchBuilder::new(b)
                .record(1_000 + b, None, Some(&[b as u8; 200]))
                .build()
                .unwrap(),
        );
    }
    std::fs::write(dir.join(LOG), log).unwrap();
    std::fs::write(dir.join(INDEX), BROKER_INDEX).unwrap();
    std::fs::write(dir.join(TIMEINDEX), BROKER_INDEX).unwrap();
}

fn rebuild(out: &Path, log: &Path, force: bool) -> (i32, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_dump-log"));
    c.arg("--rebuild-indexes-to").arg(out).arg(log);
    if force {
        c.arg("--force");
    }
    let o = c.output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

fn assert_untouched(broker: &Path) {
    assert_eq!(std::fs::read(broker.join(INDEX)).unwrap(), BROKER_INDEX);
    assert_eq!(std::fs::read(broker.join(TIMEINDEX)).unwrap(), BROKER_INDEX);
}

#[test]
fn a_log_given_through_a_symlink_does_not_open_the_broker_dir_for_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let broker = tmp.path().join("broker/topic-0");
    broker_partition(&broker);
    let links = tmp.path().join("links");
    std::fs::create_dir(&links).unwrap();
    std::os::unix::fs::symlink(broker.join(LOG), links.join(LOG)).unwrap();
    let (code, out) = rebuild(&broker, &links.join(LOG), false);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("refusing to write into"), "{out}");
    assert_untouched(&broker);
}

#[test]
fn an_output_hard_linked_to_the_brokers_index_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let broker = tmp.path().join("broker/topic-0");
    broker_partition(&broker);
    let out = tmp.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::hard_link(broker.join(INDEX), out.join(INDEX)).unwrap();
    let (code, text) = rebuild(&out, &broker.join(LOG), false);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("same file as"), "{text}");
    assert_untouched(&broker);
    // A symlink at the output path is the same file too.
    std::fs::remove_file(out.join(INDEX)).unwrap();
    std::os::unix::fs::symlink(broker.join(TIMEINDEX), out.join(TIMEINDEX)).unwrap();
    let (code, text) = rebuild(&out, &broker.join(LOG), false);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("same file as"), "{text}");
    assert_untouched(&broker);
}

#[test]
fn another_partitions_directory_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let broker = tmp.path().join("broker/topic-0");
    let other = tmp.path().join("broker/topic-1");
    broker_partition(&broker);
    broker_partition(&other);
    let (code, text) = rebuild(&other, &broker.join(LOG), false);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("already holds a partition's files"), "{text}");
    assert_untouched(&other);
    assert_untouched(&broker);
}

#[test]
fn force_replaces_links_instead_of_writing_through_them() {
    let tmp = tempfile::tempdir().unwrap();
    let broker = tmp.path().join("broker/topic-0");
    broker_partition(&broker);
    let out = tmp.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::hard_link(broker.join(INDEX), out.join(INDEX)).unwrap();
    let (code, text) = rebuild(&out, &broker.join(LOG), true);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("wrote"), "{text}");
    assert_untouched(&broker);
    assert_ne!(std::fs::read(out.join(INDEX)).unwrap(), BROKER_INDEX);
}

#[test]
fn a_fresh_directory_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let broker = tmp.path().join("broker/topic-0");
    broker_partition(&broker);
    let out = tmp.path().join("fresh");
    let (code, text) = rebuild(&out, &broker.join(LOG), false);
    assert_eq!(code, 0, "{text}");
    assert!(
        out.join(INDEX).is_file() && out.join(TIMEINDEX).is_file(),
        "{text}"
    );
    assert_untouched(&broker);
}

/// Issue 19: the dump's flags do nothing in rebuild mode, and the rebuild's flags do
/// nothing without it. Each such combination is refused by the command line (exit status
/// 2, both flags named) before any file is read or written.
#[test]
fn dump_flags_are_refused_with_rebuild_indexes_to() {
    let tmp = tempfile::tempdir().unwrap();
    let broker = tmp.path().join("broker/topic-0");
    broker_partition(&broker);
    let out = tmp.path().join("out");
    for flags in [
        &["--print-data-log"][..],
        &["--deep-iteration"],
        &["--verify-index-only"],
        &["--index-sanity-check"],
        &["--max-message-size", "100"],
        &["--max-bytes", "100"],
        &["--skip-record-metadata", "--deep-iteration"],
        &["--kafka-strict"],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_dump-log"))
            .arg("--rebuild-indexes-to")
            .arg(&out)
            .args(flags)
            .arg(broker.join(LOG))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{flags:?} accepted: {err}");
        assert!(err.contains("--rebuild-indexes-to"), "{flags:?}: {err}");
        assert!(err.contains(flags[0]), "{flags:?}: {err}");
        assert!(o.stdout.is_empty(), "{flags:?}");
        assert!(
            !out.exists(),
            "{flags:?}: the refused run wrote {}",
            out.display()
        );
    }
    assert_untouched(&broker);
    // The flags that do apply are accepted.
    let o = Command::new(env!("CARGO_BIN_EXE_dump-log"))
        .args(["--json", "--no-progress", "--index-interval-bytes", "4096"])
        .arg("--rebuild-indexes-to")
        .arg(&out)
        .arg(broker.join(LOG))
        .output()
        .unwrap();
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.join(INDEX).exists());
}

#[test]
fn rebuild_flags_are_refused_without_rebuild_indexes_to() {
    let tmp = tempfile::tempdir().unwrap();
    broker_partition(tmp.path());
    for flags in [&["--force"][..], &["--index-interval-bytes", "100"]] {
        let o = Command::new(env!("CARGO_BIN_EXE_dump-log"))
            .args(flags)
            .arg(tmp.path().join(LOG))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{flags:?} accepted: {err}");
        assert!(err.contains("--rebuild-indexes-to"), "{flags:?}: {err}");
        assert!(err.contains(flags[0]), "{flags:?}: {err}");
        assert!(o.stdout.is_empty(), "{flags:?}: dumped anyway");
    }
}

/// Issue 19: the broker's index compared with the rebuilt one is read whole, so one
/// larger than any index Kafka writes (a 100 GiB sparse file) is named as such, not
/// read ("out of memory" before).
#[test]
fn a_100_gib_broker_index_is_not_read_for_the_comparison() {
    let tmp = tempfile::tempdir().unwrap();
    let broker = tmp.path().join("broker/topic-0");
    broker_partition(&broker);
    let index = broker.join(INDEX);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&index)
        .unwrap()
        .set_len(100 << 30)
        .unwrap();
    let (code, out) = rebuild(&tmp.path().join("out"), &broker.join(LOG), false);
    assert_eq!(code, 1, "{out}");
    assert!(!out.to_lowercase().contains("out of memory"), "{out}");
    assert!(
        out.contains(&format!(
            "{}: the file is 107374182400 bytes, larger than any index Kafka writes",
            index.display()
        )),
        "{out}"
    );
}
