//! [`Throttler`]: the cleaner's I/O throttle, `log.cleaner.io.max.bytes.per.second`
//! shared by all cleaner threads (Kafka's `Throttler` with a 300 ms check interval;
//! `docs/kafka-behaviour.md#cleaner-throttle`).

use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// Kafka's check interval of the cleaner's throttler, ms.
pub const THROTTLE_CHECK_INTERVAL_MS: u64 = 300;

/// How long (ms) Kafka's `Throttler.maybeThrottle` sleeps at the end of a check
/// interval: `observed` units in `elapsed_ns` against `desired_per_sec`. `None` when the
/// interval is not over (`elapsed_ns ≤ check_interval_ns`) or nothing was observed (the
/// period goes on); `Some(0)` when the rate is within the desired one (a new period
/// starts, no sleep); else `Some(round(observed / (desired / 1000) − elapsed_ms))`,
/// at least 1.
pub fn throttle_sleep_ms(
    observed: f64,
    elapsed_ns: u64,
    check_interval_ns: u64,
    desired_per_sec: f64,
) -> Option<u64> {
    if elapsed_ns <= check_interval_ns || observed <= 0.0 {
        return None;
    }
    let rate = observed * 1e9 / elapsed_ns as f64;
    if rate <= desired_per_sec {
        return Some(0);
    }
    let elapsed_ms = (elapsed_ns / 1_000_000) as f64;
    let sleep = (observed / (desired_per_sec / 1000.0) - elapsed_ms).round();
    // In range: a finite positive f64 saturates in the cast.
    Some(if sleep > 0.0 { sleep as u64 } else { 0 })
}

/// A rate limit shared by threads: [`maybe_throttle`](Self::maybe_throttle) adds what a
/// thread read or wrote and, at the end of a check interval, sleeps (holding the
/// throttler, so every thread waits, as Kafka's `synchronized` one) long enough for the
/// period's rate to come down to the desired rate.
#[derive(Debug)]
pub struct Throttler {
    desired_per_sec: f64,
    check_interval_ns: u64,
    period: Mutex<(Instant, f64)>,
}

impl Throttler {
    /// A throttler of `desired_per_sec` units per second, checked every
    /// `check_interval_ms`. `f64::MAX` (Kafka's default) never sleeps.
    pub fn new(desired_per_sec: f64, check_interval_ms: u64) -> Self {
        Throttler {
            desired_per_sec,
            check_interval_ns: check_interval_ms.saturating_mul(1_000_000),
            period: Mutex::new((Instant::now(), 0.0)),
        }
    }

    /// Adds `observed` units; at the end of a check interval sleeps as
    /// [`throttle_sleep_ms`] says and starts a new period. Returns the sleep.
    pub fn maybe_throttle(&self, observed: f64) -> Duration {
        if self.desired_per_sec >= f64::MAX {
            return Duration::ZERO;
        }
        let mut period = self.period.lock();
        period.1 += observed;
        let elapsed = u64::try_from(period.0.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let Some(ms) = throttle_sleep_ms(
            period.1,
            elapsed,
            self.check_interval_ns,
            self.desired_per_sec,
        ) else {
            return Duration::ZERO;
        };
        let slept = Duration::from_millis(ms);
        if ms > 0 {
            std::thread::sleep(slept);
        }
        *period = (Instant::now(), 0.0);
        slept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kafka_sleeps_until_the_period_is_at_the_desired_rate() {
        // Inside the interval, or nothing observed: the period goes on.
        assert_eq!(
            throttle_sleep_ms(1e6, 300_000_000, 300_000_000, 1000.0),
            None
        );
        assert_eq!(
            throttle_sleep_ms(0.0, 400_000_000, 300_000_000, 1000.0),
            None
        );
        // 400 bytes in 400 ms at 1000/s: within, a new period.
        assert_eq!(
            throttle_sleep_ms(400.0, 400_000_000, 300_000_000, 1000.0),
            Some(0)
        );
        // 2000 bytes in 400 ms at 1000/s: 2000 ms needed, 400 spent.
        assert_eq!(
            throttle_sleep_ms(2000.0, 400_000_000, 300_000_000, 1000.0),
            Some(1600)
        );
        // Java's Math.round on x.5 rounds up; elapsed ms truncated.
        assert_eq!(
            throttle_sleep_ms(1000.5, 400_999_999, 300_000_000, 1000.0),
            Some(601)
        );
    }

    #[test]
    fn a_shared_throttler_holds_threads_to_the_rate() {
        let t = std::sync::Arc::new(Throttler::new(200_000.0, 20));
        let start = Instant::now();
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let t = t.clone();
                std::thread::spawn(move || {
                    for _ in 0..20 {
                        t.maybe_throttle(2_000.0);
                        std::thread::sleep(Duration::from_millis(1));
                    }
                })
            })
            .collect();
        for th in threads {
            th.join().unwrap();
        }
        // 80 000 bytes at 200 000/s: at least about 0.4 s minus the last open period.
        assert!(
            start.elapsed() >= Duration::from_millis(300),
            "{:?}",
            start.elapsed()
        );
        assert_eq!(
            Throttler::new(f64::MAX, 1).maybe_throttle(1e12),
            Duration::ZERO
        );
    }
}
