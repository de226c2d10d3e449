//! Time and id source for everything a run records.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Where a run gets its timestamps, ids and retry jitter. Replace it to make
/// recorded metadata deterministic (tests, durable replays).
pub trait Clock: Send + Sync {
    /// Now, epoch milliseconds.
    fn now_ms(&self) -> u64;
    /// Now, as a timestamp.
    fn now(&self) -> zidane_provider::Timestamp {
        zidane_provider::Timestamp::from_millis(self.now_ms())
    }
    /// A fresh unique id.
    fn id(&self) -> String;
    /// A number in `[0, 1)` for retry jitter.
    fn jitter(&self) -> f64;
}

/// The wall clock and random ids.
#[derive(Debug)]
pub struct SystemClock {
    state: AtomicU64,
}

impl Default for SystemClock {
    fn default() -> Self {
        let seed = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let addr = std::ptr::from_ref(&seed) as usize as u64;
        SystemClock {
            state: AtomicU64::new(seed ^ addr.rotate_left(32) ^ u64::from(std::process::id())),
        }
    }
}

impl SystemClock {
    fn next(&self) -> u64 {
        // splitmix64: fast, well distributed, not for secrets.
        let mut z = self
            .state
            .fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed)
            .wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
    }

    fn id(&self) -> String {
        let (a, b) = (self.next(), self.next());
        // Formatted as a version-4 UUID.
        let b = (b & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000;
        let a = (a & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000;
        format!(
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xFFFF,
            a & 0xFFFF,
            b >> 48,
            b & 0xFFFF_FFFF_FFFF
        )
    }

    fn jitter(&self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A clock for tests: time starts at `start_ms` and moves only when told,
/// ids count up (`id-1`, `id-2`, ...), jitter is fixed.
#[derive(Debug)]
pub struct FixedClock {
    now: AtomicU64,
    ids: AtomicU64,
    jitter: f64,
}

impl FixedClock {
    /// A clock at `start_ms` with zero jitter.
    pub fn new(start_ms: u64) -> Self {
        FixedClock {
            now: AtomicU64::new(start_ms),
            ids: AtomicU64::new(0),
            jitter: 0.0,
        }
    }

    /// Moves time forward.
    pub fn advance_ms(&self, ms: u64) {
        self.now.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for FixedClock {
    fn now_ms(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }

    fn id(&self) -> String {
        format!("id-{}", self.ids.fetch_add(1, Ordering::SeqCst) + 1)
    }

    fn jitter(&self) -> f64 {
        self.jitter
    }
}
