//! The crate's one lock helper.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `m`; a lock a panicking holder left poisoned is taken as it is
/// (every guarded value here stays consistent between statements).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
