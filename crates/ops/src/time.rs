//! Instants as a change's input names them: Unix milliseconds or RFC 3339.

/// An instant given as Unix milliseconds (`1767225600000`) or RFC 3339 (`2026-01-01T00:00:00Z`,
/// `2026-01-01T01:00:00.5+01:00`, or a bare date `2026-01-01` for its midnight UTC).
pub fn parse_instant_ms(text: &str) -> Result<i64, String> {
    let t = text.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return t
            .parse::<i64>()
            .map_err(|_| format!("{t:?} is out of range"));
    }
    let expected = || {
        format!(
            "{t:?} is neither Unix milliseconds nor an RFC 3339 time (e.g. 2026-01-01T00:00:00Z)"
        )
    };
    let upper = t.to_ascii_uppercase();
    let (base, offset_minutes) = if upper.len() == 10 {
        (format!("{upper}T00:00:00"), 0)
    } else if let Some(base) = upper.strip_suffix('Z') {
        (base.to_string(), 0)
    } else {
        let split = upper.len().checked_sub(6).ok_or_else(expected)?;
        let (base, offset) = (upper.get(..split).ok_or_else(expected)?, &upper[split..]);
        let sign = match offset.as_bytes().first() {
            Some(b'+') => 1,
            Some(b'-') => -1,
            _ => return Err(expected()),
        };
        let (h, m) = offset[1..].split_once(':').ok_or_else(expected)?;
        let (h, m) = (
            h.parse::<i64>().map_err(|_| expected())?,
            m.parse::<i64>().map_err(|_| expected())?,
        );
        if h > 23 || m > 59 {
            return Err(expected());
        }
        (base.to_string(), sign * (h * 60 + m))
    };
    let utc = humantime::parse_rfc3339(&format!("{base}Z")).map_err(|_| expected())?;
    let ms = utc
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|_| format!("{t:?} is before 1970"))?
        .as_millis();
    let ms = i64::try_from(ms).map_err(|_| format!("{t:?} is out of range"))?;
    Ok(ms - offset_minutes * 60_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_are_milliseconds_or_rfc_3339_with_any_offset() {
        assert_eq!(parse_instant_ms("1767225600000"), Ok(1_767_225_600_000));
        assert_eq!(
            parse_instant_ms("2026-01-01T00:00:00Z"),
            Ok(1_767_225_600_000)
        );
        assert_eq!(parse_instant_ms("2026-01-01"), Ok(1_767_225_600_000));
        assert_eq!(
            parse_instant_ms("2026-01-01t00:00:00.250z"),
            Ok(1_767_225_600_250)
        );
        assert_eq!(
            parse_instant_ms("2026-01-01T01:30:00+01:30"),
            Ok(1_767_225_600_000)
        );
        assert_eq!(
            parse_instant_ms("2025-12-31T19:00:00-05:00"),
            Ok(1_767_225_600_000)
        );
        for bad in [
            "",
            "yesterday",
            "2026-13-01T00:00:00Z",
            "2026-01-01T00:00:00",
            "-5",
            "2026-01-01T00:00:00+1:00",
        ] {
            assert!(parse_instant_ms(bad).is_err(), "{bad}");
        }
    }
}
