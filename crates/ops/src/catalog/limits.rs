//! The MCP result limits and envelope (spec "MCP result limits", "MCP result envelope"): `limit`
//! omitted or 0 selects the default, a value above the maximum is clamped to it, a `fixed` list
//! takes no `limit`; the answer says `count`, `total`, `truncated`, and a `hint` naming a narrower
//! parameter or tool only when rows were dropped.

use serde_json::{json, Map, Value};

/// A list's row limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub default: usize,
    /// `None`: fixed (no `limit` parameter).
    pub max: Option<usize>,
}

impl Limit {
    pub const fn new(default: usize, max: usize) -> Limit {
        Limit {
            default,
            max: Some(max),
        }
    }

    pub const fn fixed(rows: usize) -> Limit {
        Limit {
            default: rows,
            max: None,
        }
    }

    /// The rows to return for a requested `limit`.
    pub fn rows(&self, requested: Option<u64>) -> usize {
        match (requested, self.max) {
            (_, None) | (None | Some(0), _) => self.default,
            (Some(n), Some(max)) => usize::try_from(n).unwrap_or(usize::MAX).min(max),
        }
    }
}

/// `rows` (already in the stated order) cut to the limit under `key`, with the envelope keys.
pub fn limited(
    key: &str,
    rows: Vec<Value>,
    limit: Limit,
    requested: Option<u64>,
    hint: &str,
) -> Map<String, Value> {
    let total = rows.len();
    let keep = limit.rows(requested);
    let rows: Vec<Value> = rows.into_iter().take(keep).collect();
    let mut out = Map::new();
    envelope(&mut out, rows.len(), total as u64, rows.len() < total, hint);
    out.insert(key.into(), Value::Array(rows));
    out
}

/// Sets the envelope keys on an answer: `count` rows of `total`, `truncated`, and `hint` only
/// when rows were dropped.
pub fn envelope(
    obj: &mut Map<String, Value>,
    count: usize,
    total: u64,
    truncated: bool,
    hint: &str,
) {
    obj.insert("count".into(), json!(count));
    obj.insert("total".into(), json!(total));
    obj.insert("truncated".into(), json!(truncated));
    if truncated {
        obj.insert("hint".into(), json!(hint));
    } else {
        obj.remove("hint");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_zero_or_omitted_is_the_default_and_larger_values_are_clamped() {
        let l = Limit::new(100, 500);
        assert_eq!(l.rows(None), 100);
        assert_eq!(l.rows(Some(0)), 100);
        assert_eq!(l.rows(Some(7)), 7);
        assert_eq!(l.rows(Some(10_000)), 500);
        assert_eq!(
            Limit::fixed(20).rows(Some(5)),
            20,
            "fixed lists take no limit"
        );
    }

    #[test]
    fn the_envelope_says_count_total_truncated_and_a_hint_only_when_cut() {
        let rows: Vec<Value> = (0..5).map(|i| json!(i)).collect();
        let cut = limited(
            "topics",
            rows.clone(),
            Limit::new(2, 10),
            None,
            "use search_topics",
        );
        assert_eq!(cut["count"], 2);
        assert_eq!(cut["total"], 5);
        assert_eq!(cut["truncated"], true);
        assert_eq!(cut["hint"], "use search_topics");
        let whole = limited("topics", rows, Limit::new(10, 10), None, "x");
        assert_eq!(whole["truncated"], false);
        assert!(whole.get("hint").is_none());
    }
}
