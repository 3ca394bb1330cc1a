//! The parsers of `dump-log`: file-kind dispatch from names (`FileType::of`, Kafka's
//! offset prefix, KRaft snapshot names, `--files a,b` splitting), and the index, log,
//! transaction-index and producer-snapshot readers with every option combination, each
//! event rendered as text and JSON; `.log` inputs also go through `--rebuild-indexes-to`.
//!
//! Input: byte 0 = option flags, byte 1 = file kind (its value / 6 picks a record decoder,
//! none or one of the five), bytes 2..4 = `--max-message-size`,
//! then a file name up to the first NUL, then byte n = length of the `.log` part, the
//! `.log` part, and the rest as the companion file (index, txnindex or snapshot).
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use segment::dump::{self, text, Collect, Decoder, DumpOptions, FileType, RebuildOptions};

fn scratch() -> &'static tempfile::TempDir {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let shm = Path::new("/dev/shm");
        if shm.is_dir() {
            tempfile::tempdir_in(shm).expect("scratch dir")
        } else {
            tempfile::tempdir().expect("scratch dir")
        }
    })
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 5 {
        return;
    }
    let flags = data[0];
    let kind = data[1] % 6;
    let max_message_size = u64::from(u16::from_be_bytes([data[2], data[3]])) + 1;
    let rest = &data[4..];
    let (name, rest) = match rest.iter().position(|&b| b == 0) {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &[][..]),
    };
    // Name parsing on arbitrary text.
    let name = String::from_utf8_lossy(name);
    let _ = FileType::of(Path::new(name.as_ref()));
    let _ = dump::parse_kraft_snapshot_name(&name);
    let _ = segment::names::offset_from_file_name(&name);
    let _ = dump::split_files_arg(&name);

    let Some((&log_len, rest)) = rest.split_first() else {
        return;
    };
    let split = usize::from(log_len).min(rest.len());
    let split = if log_len == 255 {
        rest.len()
    } else {
        split * 16 % (rest.len() + 1)
    };
    let (log_part, other) = rest.split_at(split);

    let dir = scratch().path().join("p");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let stem = "00000000000000000000";
    let log = dir.join(format!("{stem}.log"));
    std::fs::write(&log, log_part).unwrap();
    let companion = match kind {
        0 => dir.join(format!("{stem}.index")),
        1 => dir.join(format!("{stem}.timeindex")),
        2 => dir.join(format!("{stem}.txnindex")),
        3 => dir.join(format!("{stem}.snapshot")),
        4 => dir.join(format!("{stem}-0000000001.checkpoint")),
        _ => dir.join(format!("{stem}.log")),
    };
    if kind != 5 {
        std::fs::write(&companion, other).unwrap();
    }
    let opts = DumpOptions {
        print_data_log: flags & 1 != 0,
        deep_iteration: flags & 2 != 0,
        verify_index_only: flags & 4 != 0,
        index_sanity_check: flags & 8 != 0,
        kafka_strict: flags & 16 != 0,
        skip_record_metadata: flags & 32 != 0,
        max_message_size,
        max_bytes: if flags & 64 != 0 {
            u64::from(log_len)
        } else {
            dump::DEFAULT_MAX_BYTES
        },
        decoder: match (data[1] / 6) % 6 {
            1 => Some(Decoder::Offsets),
            2 => Some(Decoder::TransactionLog),
            3 => Some(Decoder::ClusterMetadata),
            4 => Some(Decoder::ShareGroupState),
            5 => Some(Decoder::RemoteLogMetadata),
            _ => None,
        },
    };
    let mut sink = Collect::default();
    let summary = dump::run(&[dir.clone()], &opts, &mut sink);
    let _ = summary.exit_code();
    let mut report = text::Report::new();
    for event in &sink.0 {
        let _ = text::event_line(event, opts.skip_record_metadata);
        let _ = serde_json::to_string(event);
        report.add(event);
    }
    let _ = report.render();
    if flags & 128 != 0 {
        let out = scratch().path().join("rebuilt");
        let _ = std::fs::remove_dir_all(&out);
        if let Ok(reports) = dump::rebuild(
            &[log.clone()],
            &RebuildOptions {
                out_dir: out,
                index_interval_bytes: u64::from(log_len) + 1,
                force: false,
            },
        ) {
            for r in &reports {
                let _ = r.render();
            }
        }
    }
});
