//! Numbers, sizes, rates and times as the dashboard prints them, and lenient readers of the
//! API's JSON (a missing or `null` field prints `—`, never panics).

use serde_json::Value;

/// Shown for an unknown value (`null` in the API: never read, not `0`).
pub const UNKNOWN: &str = "—";

/// The seven loads: the API's name, a short label, a long label.
pub const LOADS: [(&str, &str, &str); 7] = [
    ("leaderCount", "Leaders", "leader count"),
    ("followerCount", "Followers", "follower count"),
    ("diskBytes", "Disk", "disk bytes"),
    ("producerMsgRate", "Prod msg/s", "producer message rate"),
    ("producerByteRate", "Prod B/s", "producer byte rate"),
    ("consumerMsgRate", "Cons msg/s", "consumer message rate"),
    ("consumerByteRate", "Cons B/s", "consumer byte rate"),
];

/// The short label of a load name (the name itself when unknown).
pub fn load_label(name: &str) -> String {
    LOADS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map_or_else(|| name.to_string(), |(_, short, _)| short.to_string())
}

/// A value of load `name` in its unit.
pub fn load_value(name: &str, v: Option<f64>) -> String {
    let Some(v) = v else {
        return UNKNOWN.to_string();
    };
    match name {
        "diskBytes" => bytes(v),
        "producerByteRate" | "consumerByteRate" => byte_rate(v),
        "producerMsgRate" | "consumerMsgRate" => msg_rate(v),
        _ => count(v),
    }
}

/// `1.50 GiB`; binary units (`ballast_model::units::bytes`, the words every door uses).
pub fn bytes(v: f64) -> String {
    ballast_model::units::bytes(v)
}

pub fn byte_rate(v: f64) -> String {
    format!("{}/s", bytes(v))
}

pub fn msg_rate(v: f64) -> String {
    if v.abs() >= 100.0 || v == 0.0 {
        format!("{} msg/s", count(v))
    } else {
        format!("{v:.1} msg/s")
    }
}

/// A whole number with thousands separators (`12,345`); fractions are rounded.
pub fn count(v: f64) -> String {
    if !v.is_finite() {
        return UNKNOWN.to_string();
    }
    let n = v.round() as i64;
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

/// A signed percentage: `+12.3%`, `-4.0%`.
pub fn pct(v: f64) -> String {
    if !v.is_finite() {
        return UNKNOWN.to_string();
    }
    format!("{v:+.1}%")
}

/// An unsigned percentage: `12.3%`.
pub fn pct_plain(v: f64) -> String {
    if !v.is_finite() {
        return UNKNOWN.to_string();
    }
    format!("{v:.1}%")
}

/// A duration in seconds as `2h 5m`, `3m 20s`, `45s`.
pub fn duration_s(secs: f64) -> String {
    if !secs.is_finite() || secs < 0.0 {
        return UNKNOWN.to_string();
    }
    let s = secs.round() as u64;
    let (d, h, m, sec) = (s / 86_400, (s / 3600) % 24, (s / 60) % 60, s % 60);
    if d > 0 {
        format!("{d}d {h}h")
    } else if h > 0 {
        format!("{h}h {m}m")
    } else if m > 0 {
        format!("{m}m {sec}s")
    } else {
        format!("{sec}s")
    }
}

/// An ISO 8601 timestamp of the API as `2026-11-21 16:23:56 UTC`.
pub fn time(iso: &str) -> String {
    if iso.len() >= 19 && iso.as_bytes().get(10) == Some(&b'T') {
        format!("{} {} UTC", &iso[..10], &iso[11..19])
    } else {
        iso.to_string()
    }
}

/// A Unix-ms timestamp as the API writes one: `2026-11-21T10:00:00.123Z` (UTC, milliseconds; a
/// time before 1970 reads as 1970).
pub fn rfc3339_ms(unix_ms: i64) -> String {
    let t = std::time::UNIX_EPOCH
        + std::time::Duration::from_millis(u64::try_from(unix_ms).unwrap_or(0));
    humantime::format_rfc3339_millis(t).to_string()
}

/// A Unix-ms timestamp (UTC) for a chart axis spanning `span_ms`: `16:23:05` within ten
/// minutes, `16:23` within two days, else `11-21 16:23`.
pub fn clock(unix_ms: i64, span_ms: i64) -> String {
    let secs = unix_ms.div_euclid(1000);
    let day = secs.rem_euclid(86_400);
    let (h, m, s) = (day / 3600, (day / 60) % 60, day % 60);
    if span_ms < 600_000 {
        format!("{h:02}:{m:02}:{s:02}")
    } else if span_ms < 2 * 86_400_000 {
        format!("{h:02}:{m:02}")
    } else {
        let date = rfc3339_ms(unix_ms);
        format!("{} {h:02}:{m:02}", date.get(5..10).unwrap_or_default())
    }
}

// ----------------------------------------------------------------------------- JSON readers

/// A number field.
pub fn f(v: &Value, key: &str) -> Option<f64> {
    v[key].as_f64()
}

/// An integer field.
pub fn i(v: &Value, key: &str) -> Option<i64> {
    v[key].as_i64()
}

/// A boolean field (`false` when absent).
pub fn b(v: &Value, key: &str) -> bool {
    v[key].as_bool().unwrap_or(false)
}

/// The items of an array field (none when absent).
pub fn arr<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v[key].as_array().map_or(&[], Vec::as_slice)
}

/// An optional number with a formatter, `—` when absent.
pub fn opt(v: Option<f64>, format: fn(f64) -> String) -> String {
    v.map_or_else(|| UNKNOWN.to_string(), format)
}

/// The first `max` characters of `text`, with `…` when cut.
pub fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let mut out: String = text.chars().take(max).collect();
        out.push('…');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(bytes(0.0), "0 B");
        assert_eq!(bytes(1536.0), "1.50 KiB");
        assert_eq!(bytes(12_527_105_964.0), "11.7 GiB");
        assert_eq!(count(1234567.4), "1,234,567");
        assert_eq!(count(-1000.0), "-1,000");
        assert_eq!(pct(29.166), "+29.2%");
        assert_eq!(pct(-4.0), "-4.0%");
        assert_eq!(duration_s(3725.0), "1h 2m");
        assert_eq!(duration_s(45.0), "45s");
        assert_eq!(time("2026-11-21T16:23:56.859Z"), "2026-11-21 16:23:56 UTC");
        assert_eq!(load_value("diskBytes", None), UNKNOWN);
        assert_eq!(msg_rate(4.26), "4.3 msg/s");
        assert_eq!(clip("abcdef", 3), "abc…");
        assert_eq!(clock(1_795_278_236_859, 3_600_000), "16:23");
        assert_eq!(clock(1_795_278_236_859, 60_000), "16:23:56");
        assert_eq!(clock(1_795_278_236_859, 7 * 86_400_000), "11-21 16:23");
    }

    #[test]
    fn timestamps_are_written_as_the_api_writes_them() {
        assert_eq!(rfc3339_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339_ms(1_795_255_200_123), "2026-11-21T10:00:00.123Z");
    }
}
