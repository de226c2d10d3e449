//! FNV-1a over UTF-16 code units, and per-message hashes.

use zidane_provider::{Message, Role};

const OFFSET: u32 = 0x811C_9DC5;
const PRIME: u32 = 0x0100_0193;

/// FNV-1a 32-bit over the string's UTF-16 code units, each full code unit
/// mixed in (not only its low byte), so hosts in other languages that hash
/// the same way get the same number.
///
/// ```
/// use zidane::agent::fnv1a32;
/// # mod zidane { pub mod agent { pub use zidane_cache_telemetry::fnv1a32; } }
///
/// assert_eq!(fnv1a32(""), 0x811c9dc5);
/// assert_eq!(fnv1a32("a"), 0xe40c292c);
/// ```
pub fn fnv1a32(s: &str) -> u32 {
    fold(OFFSET, s)
}

fn fold(mut h: u32, s: &str) -> u32 {
    for unit in s.encode_utf16() {
        h ^= u32::from(unit);
        h = h.wrapping_mul(PRIME);
    }
    h
}

fn fold_unit(h: u32, unit: u16) -> u32 {
    (h ^ u32::from(unit)).wrapping_mul(PRIME)
}

/// The hash of one message: its role, then each block's JSON, folded into
/// one rolling FNV. Computed once per message and remembered until the
/// message changes, so a turn only pays for the messages that are new.
pub fn hash_message(message: &Message) -> u32 {
    message.fingerprint(|m| {
        let mut h = fold(
            OFFSET,
            match m.role() {
                Role::User => "user",
                Role::Assistant => "assistant",
            },
        );
        for block in m.content() {
            // A unit that cannot occur in JSON text separates the blocks.
            h = fold_unit(h, 0xFFFF);
            let json = serde_json::to_string(block).unwrap_or_default();
            h = fold(h, &json);
        }
        h
    })
}

/// One hash per message, in order: compared positionally, an append (every
/// healthy turn) is told apart from a rewrite (a cache break).
pub fn hash_messages(messages: &[Message]) -> Vec<u32> {
    messages.iter().map(hash_message).collect()
}
