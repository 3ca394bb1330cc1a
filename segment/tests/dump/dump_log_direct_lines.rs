//! The batch and record lines a text sink takes already rendered ([`Sink::text_lines`],
//! what the `dump-log` binary prints) are the lines [`text::event_line`] renders for the
//! [`Event::Batch`] and [`Event::Record`] events a library sink gets, on every `.log` fixture (Kafka's own
//! files, our writer's, the decoders' and the parity fixtures), with and without
//! `--print-data-log`, `--skip-record-metadata` and each decoder. The binary's lines are
//! compared with Kafka's tool by the golden-file tests and `k6-dump`.

use std::path::{Path, PathBuf};

use segment::dump::{self, text, Decoder, DumpOptions, Event, Sink};

/// Renders every event as the binary does; with `direct`, takes record lines rendered.
struct TextSink {
    out: String,
    skip: bool,
    direct: bool,
    /// [`Event::Batch`] and [`Event::Record`] events.
    records: usize,
    /// Lines taken rendered.
    lines: usize,
}

impl Sink for TextSink {
    fn event(&mut self, event: Event) {
        if matches!(event, Event::Record(_) | Event::Batch(_)) {
            self.records += 1;
        }
        if let Some(text::Line::Out(s)) = text::event_line(&event, self.skip) {
            self.out.push_str(&s);
            self.out.push('\n');
        }
    }

    fn text_lines(&mut self) -> Option<(&mut String, bool)> {
        if !self.direct {
            return None;
        }
        self.lines += 1;
        Some((&mut self.out, self.skip))
    }
}

fn logs(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            logs(&p, found);
        } else if p.extension().is_some_and(|e| e == "log") {
            found.push(p);
        }
    }
}

fn decoder_of(path: &Path) -> Option<Decoder> {
    let dir = path.parent()?.file_name()?.to_str()?;
    Some(match dir {
        "offsets-0" => Decoder::Offsets,
        "metadata-0" => Decoder::ClusterMetadata,
        "txn-state-0" => Decoder::TransactionLog,
        "share-state-0" => Decoder::ShareGroupState,
        "remote-log-metadata-0" => Decoder::RemoteLogMetadata,
        _ => return None,
    })
}

#[test]
fn direct_text_lines_are_the_event_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut found = Vec::new();
    logs(&root.join("dump"), &mut found);
    logs(&root.join("data"), &mut found);
    assert!(found.len() > 40, "{} .log fixtures", found.len());
    let mut records = 0;
    for path in &found {
        let decoders = [None, decoder_of(path)];
        for decoder in decoders
            .iter()
            .copied()
            .filter(|d| d.is_some())
            .chain([None])
        {
            for print_data_log in [false, true] {
                for skip in [false, true] {
                    let opts = DumpOptions {
                        deep_iteration: true,
                        print_data_log,
                        skip_record_metadata: skip,
                        decoder,
                        ..DumpOptions::default()
                    };
                    let run = |direct| {
                        let mut sink = TextSink {
                            out: String::new(),
                            skip,
                            direct,
                            records: 0,
                            lines: 0,
                        };
                        dump::run(std::slice::from_ref(path), &opts, &mut sink);
                        sink
                    };
                    let (events, direct) = (run(false), run(true));
                    assert_eq!(events.lines, 0);
                    assert_eq!(direct.records, 0, "{path:?} {opts:?}");
                    assert_eq!(events.records, direct.lines, "{path:?} {opts:?}");
                    assert_eq!(events.out, direct.out, "{path:?} {opts:?}");
                    records += events.records;
                }
            }
        }
    }
    assert!(
        records > 10_000,
        "{records} batch and record lines compared"
    );
}
