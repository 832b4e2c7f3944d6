//! ISO 8601 timestamps: the parser lives in `ballast-model` (snapshot validation uses it too).

pub use ballast_model::time::parse_rfc3339_ms;
