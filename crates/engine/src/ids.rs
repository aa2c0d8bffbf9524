//! Identifiers: time-ordered so they sort by creation, random enough to never
//! collide between engines.

use std::time::{SystemTime, UNIX_EPOCH};

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default()
}

/// A UUIDv7-shaped session id: 48 bits of milliseconds, then random bits.
pub fn session_id() -> String {
    let ms = now_ms();
    let r: u128 = rand::random();
    let hex = format!("{:012x}{:020x}", ms & 0xffff_ffff_ffff, r >> 48);
    format!(
        "{}-{}-7{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[13..16],
        &hex[16..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn session_ids_are_unique_and_shaped() {
        let a = super::session_id();
        let b = super::session_id();
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(a.matches('-').count(), 4);
    }
}
