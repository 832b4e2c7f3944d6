//! Pages of a list as the REST API and the agents' tools take them.

/// A list `limit`: 0 or absent selects `default`, more than `max` is clamped (as the MCP tools).
pub fn row_limit(limit: Option<u32>, default: usize, max: usize) -> usize {
    match limit {
        None | Some(0) => default,
        Some(n) => (n as usize).min(max),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_default_on_zero_and_clamp_at_the_maximum() {
        assert_eq!(row_limit(None, 20, 50), 20);
        assert_eq!(row_limit(Some(0), 20, 50), 20);
        assert_eq!(row_limit(Some(7), 20, 50), 7);
        assert_eq!(row_limit(Some(5000), 20, 50), 50);
    }
}
