//! Points in time and lengths of time as the API gives them: a
//! [`Timestamp`] (milliseconds since the Unix epoch, convertible to and
//! from [`SystemTime`]) and [`Duration`]s, both serialized as the
//! millisecond numbers the spec's JSON fixes.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// A point in time, to the millisecond: a session's creation, a turn's, a
/// run's start. Serialized as the number of milliseconds since the Unix
/// epoch (the spec's `createdAt`, `startedAt`); converts to and from
/// [`SystemTime`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Timestamp(u64);

impl Timestamp {
    /// The Unix epoch.
    pub const EPOCH: Timestamp = Timestamp(0);

    /// The time `ms` milliseconds after the Unix epoch.
    pub const fn from_millis(ms: u64) -> Self {
        Timestamp(ms)
    }

    /// Milliseconds since the Unix epoch.
    pub const fn as_millis(self) -> u64 {
        self.0
    }

    /// Now, by the system's clock.
    pub fn now() -> Self {
        Timestamp::from(SystemTime::now())
    }

    /// As a [`SystemTime`].
    pub fn to_system_time(self) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(self.0)
    }

    /// How long after `earlier` this is (zero when it is not later).
    pub fn since(self, earlier: Timestamp) -> Duration {
        Duration::from_millis(self.0.saturating_sub(earlier.0))
    }
}

impl std::ops::Add<Duration> for Timestamp {
    type Output = Timestamp;

    /// The time `duration` later (saturating).
    fn add(self, duration: Duration) -> Timestamp {
        let ms = duration.as_millis().min(u128::from(u64::MAX)) as u64;
        Timestamp(self.0.saturating_add(ms))
    }
}

impl From<SystemTime> for Timestamp {
    /// The time to the millisecond (a time before the epoch is the epoch).
    fn from(time: SystemTime) -> Self {
        let ms = time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
        Timestamp(ms.min(u128::from(u64::MAX)) as u64)
    }
}

impl From<Timestamp> for SystemTime {
    fn from(time: Timestamp) -> Self {
        time.to_system_time()
    }
}

/// Serde for a [`Duration`] field written as whole milliseconds (the
/// spec's `durationMs`): `#[serde(with = "zidane_provider::time::millis")]`.
pub mod millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes `duration` as whole milliseconds.
    pub fn serialize<S: Serializer>(duration: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(duration.as_millis().min(u128::from(u64::MAX)) as u64)
    }

    /// Reads whole milliseconds.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_millis)
    }
}

#[cfg(test)]
mod tests;
