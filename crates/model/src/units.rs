//! Quantities as people read them, shared by every door that writes words (the dashboard, the
//! decision's `nextAction`, `ballast plan --table`).

/// Bytes in binary units: `512 B`, `1.50 KiB`, `11.6 GiB`, `240 GiB` (three significant figures).
pub fn bytes(v: f64) -> String {
    if !v.is_finite() {
        return "—".to_string();
    }
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = v.abs();
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    let sign = if v < 0.0 { "-" } else { "" };
    if unit == 0 {
        format!("{sign}{value:.0} B")
    } else if value < 10.0 {
        format!("{sign}{value:.2} {}", UNITS[unit])
    } else if value < 100.0 {
        format!("{sign}{value:.1} {}", UNITS[unit])
    } else {
        format!("{sign}{value:.0} {}", UNITS[unit])
    }
}

/// The next action of an applicable balancing proposal: `apply: 6 partition moves, 2.21 GiB to
/// copy` (the decision writes it; a held proposal's recheck writes it for the moves it keeps).
pub fn apply_action(moves: usize, bytes: u64) -> String {
    format!(
        "apply: {moves} partition moves, {} to copy",
        self::bytes(bytes as f64)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_read_in_binary_units_with_three_figures() {
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(bytes(1536.0), "1.50 KiB");
        assert_eq!(bytes(12403935021.0), "11.6 GiB");
        assert_eq!(bytes(-2048.0), "-2.00 KiB");
        assert_eq!(bytes(f64::NAN), "—");
    }
}
