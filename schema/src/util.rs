//! Small helpers shared by the table modules.

use std::io::Read;

use rusqlite::types::Type;
use rusqlite::Row;

use crate::StoreError;

/// Serializes a JSON value for a TEXT column.
pub(crate) fn json_text(v: &serde_json::Value) -> String {
    // Serializing a `Value` cannot fail (its map keys are strings).
    v.to_string()
}

fn bad_json(idx: usize, e: serde_json::Error) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(idx, Type::Text, Box::new(e))
}

/// Reads a NOT NULL JSON TEXT column.
pub(crate) fn json_col(row: &Row<'_>, idx: usize) -> rusqlite::Result<serde_json::Value> {
    let s: String = row.get(idx)?;
    serde_json::from_str(&s).map_err(|e| bad_json(idx, e))
}

/// Reads a nullable JSON TEXT column.
pub(crate) fn json_col_opt(
    row: &Row<'_>,
    idx: usize,
) -> rusqlite::Result<Option<serde_json::Value>> {
    let s: Option<String> = row.get(idx)?;
    s.map(|s| serde_json::from_str(&s).map_err(|e| bad_json(idx, e)))
        .transpose()
}

/// An error for a TEXT column holding a value outside its enum.
pub(crate) fn bad_enum(idx: usize, what: &str, found: &str) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        idx,
        Type::Text,
        format!("unknown {what} {found:?}").into(),
    )
}

/// 16 random bytes from the kernel as 32 lowercase hex digits.
pub(crate) fn random_hex_token() -> Result<String, StoreError> {
    let mut buf = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .map_err(|source| StoreError::Random { source })?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

pub(crate) fn require_non_empty(what: &str, value: &str) -> Result<(), StoreError> {
    if value.trim().is_empty() {
        return Err(StoreError::Invalid(format!("{what} must not be empty")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_tokens_are_32_hex_digits_and_differ() {
        let a = random_hex_token().unwrap();
        let b = random_hex_token().unwrap();
        assert_eq!(a.len(), 32);
        assert!(a
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_ne!(a, b);
    }
}
