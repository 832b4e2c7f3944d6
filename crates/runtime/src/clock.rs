use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The one source of "now" for a process. Rules that depend on time take `now` from here (or a
/// test clock) and pass it down; libraries never read the clock themselves.
pub trait Clock: Send + Sync {
    /// Unix time in milliseconds.
    fn now_ms(&self) -> i64;
}

#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
            Err(_) => 0,
        }
    }
}

/// ISO 8601 UTC with milliseconds, e.g. `2026-11-21T10:00:00.000Z`.
pub fn format_rfc3339_ms(unix_ms: i64) -> String {
    let t = UNIX_EPOCH + Duration::from_millis(u64::try_from(unix_ms).unwrap_or(0));
    humantime::format_rfc3339_millis(t).to_string()
}

/// A duration in whole milliseconds, as the store's `*_ms` columns and `now_ms` arguments count
/// (saturating: a duration too long for `i64` is `i64::MAX`).
pub fn millis(d: std::time::Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_iso_8601_utc() {
        assert_eq!(format_rfc3339_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            format_rfc3339_ms(1_795_255_200_123),
            "2026-11-21T10:00:00.123Z"
        );
    }
}
