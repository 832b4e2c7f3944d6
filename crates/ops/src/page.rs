//! Pages of a list as the REST API and the agents' tools take them.

/// A list `limit`: 0 or absent selects `default`, more than `max` is clamped (as the MCP tools).
pub fn row_limit(limit: Option<u32>, default: usize, max: usize) -> usize {
    match limit {
        None | Some(0) => default,
        Some(n) => (n as usize).min(max),
    }
}
