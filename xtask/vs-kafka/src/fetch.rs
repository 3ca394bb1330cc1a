//! The fetch rows of `cargo xtask vs-kafka --only segments` (issue 41, goal 7), our side:
//! the bytes of a fetch delivered by copy (`LogSegment::read_min_one_message` into a new
//! `Vec`), and zero-copy (`LogSegment::read_region` then `sendfile(2)`) into a pipe and
//! into a loopback TCP socket, each drained by a thread that discards what it reads. Kafka's
//! side (`oracle.VsBench`) does the same with `LogSegment.read` then
//! `FileRecords.readInto` (copy) or `FileRecords.writeTo` (`FileChannel.transferTo`, its
//! `sendfile`).
//!
//! Every fetch reads up to `max_bytes` from the batch holding its target offset, not past
//! the segment's end, with min-one-message (a fetch's form). The answer hashes each
//! fetch's byte count and, by copy, its first 8 bytes; the drain's byte count must equal
//! the bytes sent.

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::thread::JoinHandle;
use std::time::Instant;

use segment::LogSegment;

use super::{e, fold, FOLD_START};

/// Where a fetch's bytes go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// Copied into a new `Vec` (`LogSegment::read_min_one_message`).
    Copy,
    /// `sendfile(2)` into a pipe.
    Pipe,
    /// `sendfile(2)` into a connected loopback TCP socket.
    Socket,
}

impl Delivery {
    /// `copy`, `pipe` or `socket`.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "copy" => Ok(Delivery::Copy),
            "pipe" => Ok(Delivery::Pipe),
            "socket" => Ok(Delivery::Socket),
            m => Err(format!("no delivery {m}")),
        }
    }
}

/// A thread that reads `from` until end of file, counting the bytes.
fn drain(mut from: impl Read + Send + 'static) -> JoinHandle<std::io::Result<u64>> {
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 16];
        let mut n = 0u64;
        loop {
            match from.read(&mut buf) {
                Ok(0) => return Ok(n),
                Ok(k) => n += k as u64,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    })
}

/// One fetch of up to `max_bytes` at each of the first `count` targets from `seg`,
/// delivered as `how` says, timed (the pipe or socket and its drain are set up before the
/// clock starts, and the drain is joined after it stops). Returns the nanoseconds, the
/// bytes delivered and the hash of the answers.
///
/// # Errors
/// A read or `sendfile` failure, a target beyond the segment, or a drain that did not
/// receive every byte sent.
pub fn fetch(
    seg: &LogSegment,
    targets: &[i64],
    max_bytes: u64,
    how: Delivery,
    count: usize,
) -> Result<(u128, u64, u64), String> {
    let targets = &targets[..count.min(targets.len())];
    let size = seg.size();
    let mut h = FOLD_START;
    let mut bytes = 0u64;
    match how {
        Delivery::Copy => {
            let start = Instant::now();
            for &t in targets {
                let f = seg
                    .read_min_one_message(t, max_bytes, size)
                    .map_err(e("read"))?
                    .ok_or_else(|| format!("offset {t} beyond the segment"))?;
                let r = &f.records;
                let head = r
                    .get(..8)
                    .map_or(-1, |b| i64::from_be_bytes(b.try_into().expect("8 bytes")));
                h = fold(h, r.len() as i64, head);
                bytes += r.len() as u64;
            }
            Ok((start.elapsed().as_nanos(), bytes, h))
        }
        Delivery::Pipe | Delivery::Socket => {
            let (ns, drained) = if how == Delivery::Pipe {
                let (reader, writer) = std::io::pipe().map_err(e("pipe"))?;
                let d = drain(reader);
                let ns = send_all(seg, targets, max_bytes, size, &writer, &mut h, &mut bytes)?;
                drop(writer);
                (ns, d)
            } else {
                let listener = TcpListener::bind("127.0.0.1:0").map_err(e("bind"))?;
                let addr = listener.local_addr().map_err(e("local_addr"))?;
                let client = TcpStream::connect(addr).map_err(e("connect"))?;
                let (server, _) = listener.accept().map_err(e("accept"))?;
                server.set_nodelay(true).map_err(e("nodelay"))?;
                let d = drain(client);
                let ns = send_all(seg, targets, max_bytes, size, &server, &mut h, &mut bytes)?;
                server
                    .shutdown(std::net::Shutdown::Write)
                    .map_err(e("shutdown"))?;
                (ns, d)
            };
            let got = drained
                .join()
                .map_err(|_| "the drain panicked".to_string())?
                .map_err(e("drain"))?;
            if got != bytes {
                return Err(format!("sent {bytes} bytes, the drain read {got}"));
            }
            Ok((ns, bytes, h))
        }
    }
}

/// The timed loop of the zero-copy deliveries: a region per target, sent whole.
fn send_all(
    seg: &LogSegment,
    targets: &[i64],
    max_bytes: u64,
    size: u64,
    out: &impl AsFd,
    h: &mut u64,
    bytes: &mut u64,
) -> Result<u128, String> {
    let start = Instant::now();
    for &t in targets {
        let f = seg
            .read_region(t, max_bytes, Some(size), true)
            .map_err(e("read_region"))?
            .ok_or_else(|| format!("offset {t} beyond the segment"))?;
        let n = f.region.sendfile_to(out).map_err(e("sendfile"))?;
        *h = fold(*h, n as i64, 0);
        *bytes += n;
    }
    Ok(start.elapsed().as_nanos())
}
