//! Parsers for the value formats of settings. Each returns the problem text of a
//! [`crate::ConfigError`] (lowercase, quoting the bad value) on failure.

use std::fmt;
use std::net::Ipv6Addr;
use std::str::FromStr;
use std::time::Duration;

const DURATION_FORMS: &str = "500ms, 30s, 5m, 12h or 7d";

/// Parses a duration: a whole number followed directly by `ms`, `s`, `m`, `h` or `d`
/// (`500ms`, `30s`, `5m`, `12h`, `7d`, `0s`). Fractions, signs, spaces and bare numbers are
/// refused.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let bad = || format!("must be a duration such as {DURATION_FORMS}, got {s:?}");
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (digits, unit) = s.split_at(split);
    if digits.is_empty() {
        return Err(bad());
    }
    let amount: u64 = digits
        .parse()
        .map_err(|_| format!("is too long a duration, got {s}"))?;
    let seconds_per_unit = match unit {
        "ms" => return Ok(Duration::from_millis(amount)),
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(bad()),
    };
    amount
        .checked_mul(seconds_per_unit)
        .map(Duration::from_secs)
        .ok_or_else(|| format!("is too long a duration, got {s}"))
}

/// Formats a duration in the largest unit that states it exactly: `30m`, `500ms`, `12h`, `7d`,
/// `0s`. The inverse of [`parse_duration`]; parts below a millisecond are dropped.
pub fn format_duration(d: Duration) -> String {
    let millis = d.as_millis();
    if millis == 0 {
        return "0s".to_string();
    }
    if !millis.is_multiple_of(1000) {
        return format!("{millis}ms");
    }
    let secs = millis / 1000;
    for (unit, size) in [("d", 86_400), ("h", 3600), ("m", 60)] {
        if secs.is_multiple_of(size) {
            return format!("{}{unit}", secs / size);
        }
    }
    format!("{secs}s")
}

/// `true`/`false`, `1`/`0`, `yes`/`no`, in any case.
pub fn parse_bool(s: &str) -> Result<bool, String> {
    match s.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" => Ok(true),
        "false" | "0" | "no" => Ok(false),
        _ => Err(format!("must be true or false, got {s:?}")),
    }
}

/// A non-negative whole number that fits `T`.
pub(crate) fn parse_whole<T: TryFrom<u64>>(s: &str) -> Result<T, String> {
    let n: u64 = s
        .parse()
        .map_err(|_| format!("must be a whole number, got {s:?}"))?;
    T::try_from(n).map_err(|_| format!("is too large, got {n}"))
}

/// Splits `1.5MB/s` into its number and its unit.
fn number_and_unit(s: &str) -> Result<(f64, &str), String> {
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("must start with a number, got {s:?}"))?;
    Ok((number, unit))
}

const RATE_UNITS: &[(&str, f64)] = &[
    ("B/s", 1.0),
    ("KB/s", 1e3),
    ("MB/s", 1e6),
    ("GB/s", 1e9),
    ("KiB/s", 1024.0),
    ("MiB/s", 1024.0 * 1024.0),
    ("GiB/s", 1024.0 * 1024.0 * 1024.0),
];

const SIZE_UNITS: &[(&str, f64)] = &[
    ("B", 1.0),
    ("KB", 1e3),
    ("MB", 1e6),
    ("GB", 1e9),
    ("TB", 1e12),
    ("KiB", 1024.0),
    ("MiB", 1024.0 * 1024.0),
    ("GiB", 1024.0 * 1024.0 * 1024.0),
    ("TiB", 1024.0 * 1024.0 * 1024.0 * 1024.0),
];

fn unit_names(units: &[(&str, f64)]) -> String {
    let names: Vec<&str> = units.iter().map(|(name, _)| *name).collect();
    names.join(", ")
}

fn scaled(s: &str, units: &[(&str, f64)]) -> Result<f64, String> {
    if s == "0" {
        return Ok(0.0);
    }
    let (number, unit) = number_and_unit(s)?;
    let Some((_, factor)) = units.iter().find(|(name, _)| *name == unit) else {
        return Err(format!(
            "unit must be one of {}, got {s:?}",
            unit_names(units)
        ));
    };
    Ok(number * factor)
}

/// A byte rate such as `2MB/s`, `1.5GiB/s` or `500KB/s`, in bytes per second.
pub(crate) fn parse_byte_rate(s: &str) -> Result<f64, String> {
    scaled(s, RATE_UNITS)
}

/// A size such as `2GiB`, `500MB` or `1.5TB`, in bytes (rounded).
pub(crate) fn parse_byte_size(s: &str) -> Result<u64, String> {
    let bytes = scaled(s, SIZE_UNITS)?;
    if bytes >= u64::MAX as f64 {
        return Err(format!("is too large, got {s}"));
    }
    Ok(bytes.round() as u64)
}

/// `BALLAST_BALANCE_FLOOR`: the smallest difference from the fair share worth balancing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BalanceFloor {
    /// byte-rate loads (producer and consumer bytes per second)
    pub bytes_per_sec: f64,
    /// the disk load
    pub disk_bytes: u64,
}

impl BalanceFloor {
    /// 2 MB/s for byte rates; no floor for disk.
    pub const DEFAULT: BalanceFloor = BalanceFloor {
        bytes_per_sec: 2_000_000.0,
        disk_bytes: 0,
    };
}

impl Default for BalanceFloor {
    fn default() -> BalanceFloor {
        BalanceFloor::DEFAULT
    }
}

/// `bytes=2MB/s disk=2GiB`, pairs separated by spaces or commas. A key left out keeps its
/// default, so `disk=2GiB` alone still applies the 2 MB/s bytes floor.
pub(crate) fn parse_balance_floor(s: &str) -> Result<BalanceFloor, String> {
    let mut floor = BalanceFloor::DEFAULT;
    let mut seen: Vec<&str> = Vec::new();
    for pair in s
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|pair| !pair.is_empty())
    {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(format!(
                "expected key=value pairs such as bytes=2MB/s disk=2GiB, got {pair:?}"
            ));
        };
        if seen.contains(&key) {
            return Err(format!("{key} is given twice"));
        }
        seen.push(key);
        match key {
            "bytes" => {
                floor.bytes_per_sec = parse_byte_rate(value).map_err(|e| format!("bytes {e}"))?
            }
            "disk" => floor.disk_bytes = parse_byte_size(value).map_err(|e| format!("disk {e}"))?,
            _ => return Err(format!("unknown key {key:?}; the keys are bytes and disk")),
        }
    }
    Ok(floor)
}

/// A broker address `host:port`, IPv6 in brackets (`[::1]:9092`).
pub(crate) fn check_broker_address(s: &str) -> Result<(), String> {
    let bad = || format!("expected host:port, got {s:?}");
    let Some((host, port)) = s.rsplit_once(':') else {
        return Err(bad());
    };
    if let Some(inner) = host.strip_prefix('[') {
        let Some(ip) = inner.strip_suffix(']') else {
            return Err(bad());
        };
        Ipv6Addr::from_str(ip).map_err(|_| format!("{ip:?} is not an IPv6 address in {s:?}"))?;
    } else if host.contains(':') {
        return Err(format!(
            "IPv6 addresses need brackets, as in [::1]:9092, got {s:?}"
        ));
    } else if host.is_empty()
        || !host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
    {
        return Err(format!("host must be a name or an IP address, got {s:?}"));
    }
    match port.parse::<u16>() {
        Ok(port) if port >= 1 => Ok(()),
        _ => Err(format!("port must be between 1 and 65535, got {s:?}")),
    }
}

/// An `http://` or `https://` URL with a host. Returned without a trailing slash.
pub(crate) fn parse_http_url(s: &str) -> Result<String, String> {
    let rest = s
        .strip_prefix("https://")
        .or_else(|| s.strip_prefix("http://"))
        .ok_or_else(|| format!("must be an http:// or https:// URL, got {s:?}"))?;
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if host.is_empty() || s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("must be an http:// or https:// URL, got {s:?}"));
    }
    Ok(s.trim_end_matches('/').to_string())
}

/// A time of day in UTC, minute precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct TimeOfDay {
    pub hour: u8,
    pub minute: u8,
}

impl TimeOfDay {
    pub fn minutes_since_midnight(self) -> u32 {
        u32::from(self.hour) * 60 + u32::from(self.minute)
    }

    /// The UTC time of day at `unix_secs` seconds since 1970-01-01T00:00:00Z.
    pub fn from_unix_secs(unix_secs: i64) -> TimeOfDay {
        let minutes = unix_secs.rem_euclid(86_400) / 60;
        // both fit: minutes < 1440
        TimeOfDay {
            hour: (minutes / 60) as u8,
            minute: (minutes % 60) as u8,
        }
    }
}

impl FromStr for TimeOfDay {
    type Err = String;

    /// `HH:MM`, 00:00 to 23:59.
    fn from_str(s: &str) -> Result<TimeOfDay, String> {
        let bad = || format!("must be a UTC time as HH:MM, got {s:?}");
        let (hour, minute) = s.split_once(':').ok_or_else(bad)?;
        let two_digits = |part: &str| part.len() == 2 && part.chars().all(|c| c.is_ascii_digit());
        if !two_digits(hour) || !two_digits(minute) {
            return Err(bad());
        }
        let hour: u8 = hour.parse().map_err(|_| bad())?;
        let minute: u8 = minute.parse().map_err(|_| bad())?;
        if hour > 23 || minute > 59 {
            return Err(bad());
        }
        Ok(TimeOfDay { hour, minute })
    }
}

impl fmt::Display for TimeOfDay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02}:{:02}", self.hour, self.minute)
    }
}

/// A comma-separated list; entries trimmed, empty entries dropped.
pub(crate) fn parse_list(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_rates_and_sizes() {
        assert_eq!(parse_byte_rate("2MB/s"), Ok(2_000_000.0));
        assert_eq!(parse_byte_rate("1.5MB/s"), Ok(1_500_000.0));
        assert_eq!(parse_byte_rate("1KiB/s"), Ok(1024.0));
        assert_eq!(parse_byte_rate("0"), Ok(0.0));
        assert!(parse_byte_rate("2MB").is_err());
        assert!(parse_byte_rate("2mb/s").is_err());
        assert!(parse_byte_rate("MB/s").is_err());
        assert!(parse_byte_rate("-1MB/s").is_err());
        assert_eq!(parse_byte_size("2GiB"), Ok(2 * 1024 * 1024 * 1024));
        assert_eq!(parse_byte_size("1.5KB"), Ok(1500));
        assert_eq!(parse_byte_size("0B"), Ok(0));
        assert!(parse_byte_size("2GiB/s").is_err());
        assert!(parse_byte_size("1.2.3GB").is_err());
        assert!(parse_byte_size("99999999999TiB").is_err());
    }

    #[test]
    fn broker_addresses() {
        for good in [
            "kafka-1:9092",
            "10.0.0.1:9093",
            "[::1]:9092",
            "a_b.example.com:1",
        ] {
            assert_eq!(check_broker_address(good), Ok(()), "{good}");
        }
        for bad in [
            "kafka",
            ":9092",
            "kafka:",
            "kafka:0",
            "kafka:65536",
            "::1:9092",
            "[::1:9092",
            "[zz]:9092",
            "ka fka:9092",
        ] {
            assert!(check_broker_address(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn urls() {
        assert_eq!(
            parse_http_url("https://license.ballast.dev/"),
            Ok("https://license.ballast.dev".to_string())
        );
        assert!(parse_http_url("http://idp:8080/token").is_ok());
        assert!(parse_http_url("ftp://x").is_err());
        assert!(parse_http_url("https://").is_err());
        assert!(parse_http_url("https:///path").is_err());
        assert!(parse_http_url("https://a b").is_err());
    }

    #[test]
    fn times_of_day() {
        assert_eq!(
            "02:30".parse(),
            Ok(TimeOfDay {
                hour: 2,
                minute: 30
            })
        );
        assert_eq!(
            "23:59".parse::<TimeOfDay>().map(|t| t.to_string()),
            Ok("23:59".to_string())
        );
        for bad in ["24:00", "2:30", "12:60", "1230", "ab:cd", ""] {
            assert!(bad.parse::<TimeOfDay>().is_err(), "{bad}");
        }
        assert_eq!(
            TimeOfDay::from_unix_secs(86_400 + 3 * 3600 + 7 * 60 + 5),
            TimeOfDay { hour: 3, minute: 7 }
        );
        assert_eq!(
            TimeOfDay::from_unix_secs(-60),
            TimeOfDay {
                hour: 23,
                minute: 59
            }
        );
    }

    #[test]
    fn whole_numbers() {
        assert_eq!(parse_whole::<u16>("8080"), Ok(8080));
        assert_eq!(
            parse_whole::<u16>("70000"),
            Err("is too large, got 70000".to_string())
        );
        assert_eq!(
            parse_whole::<u32>("-1"),
            Err("must be a whole number, got \"-1\"".to_string())
        );
        assert!(parse_whole::<u64>("1.5").is_err());
    }
}
