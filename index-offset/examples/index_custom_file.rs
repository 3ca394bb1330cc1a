//! Uses `index-offset` on its own to index a file that has nothing to do with Kafka: a
//! plain text journal of newline-terminated lines, where the "offset" is the line number.
//!
//! Every ~256 bytes of journal the example records `(line number, byte position)` in an
//! offset index, exactly as a Kafka segment does every `index.interval.bytes`. Finding
//! line N is then: look up the largest indexed line <= N, seek to its position, and scan
//! forward — reading at most ~256 bytes instead of the whole file.
//!
//! Run: `cargo run -p index-offset --example index_custom_file`

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};

use index_offset::{OffsetIndex, PageProbe};

const INDEX_INTERVAL_BYTES: u64 = 256;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let journal_path = dir.path().join("journal.txt");
    let index_path = dir.path().join("00000000000000000000.index");

    // Write 10,000 lines and index them sparsely.
    let mut journal = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&journal_path)?;
    let index = OffsetIndex::open(&index_path, 0, 64 * 1024)?;
    let (mut position, mut since_last_entry) = (0u64, INDEX_INTERVAL_BYTES);
    for line_no in 0..10_000i64 {
        let line = format!(
            "line {line_no}: temperature={}.{}C\n",
            15 + line_no % 10,
            line_no % 7
        );
        if since_last_entry >= INDEX_INTERVAL_BYTES {
            index.append(line_no, u32::try_from(position)?)?;
            since_last_entry = 0;
        }
        journal.write_all(line.as_bytes())?;
        position += line.len() as u64;
        since_last_entry += line.len() as u64;
    }
    journal.sync_all()?;
    println!(
        "wrote 10000 lines ({position} bytes) and {} index entries ({} bytes of index)",
        index.entries(),
        index.size_in_bytes()
    );

    // Close (trims the preallocated 64 KiB to the used bytes), reopen read-only, look up.
    index.close()?;
    println!(
        "closed: index file is {} bytes",
        std::fs::metadata(&index_path)?.len()
    );
    let index = OffsetIndex::open_read_only(&index_path, 0)?;
    for wanted in [0i64, 1234, 9999] {
        let mut probe = PageProbe::new(4096);
        let hint = index.lookup_with_probe(wanted, &mut probe)?;
        let mut reader = BufReader::new(File::open(&journal_path)?);
        reader.seek(SeekFrom::Start(hint.position as u64))?;
        let (mut line_no, mut scanned, mut text) = (hint.offset, 0usize, String::new());
        loop {
            text.clear();
            scanned += reader.read_line(&mut text)?;
            if line_no == wanted {
                break;
            }
            line_no += 1;
        }
        println!(
            "line {wanted}: index hint (line {}, byte {}), scanned {scanned} bytes, {} index page(s) touched -> {}",
            hint.offset,
            hint.position,
            probe.distinct_pages(),
            text.trim_end()
        );
        assert!(text.starts_with(&format!("line {wanted}:")));
    }
    Ok(())
}
