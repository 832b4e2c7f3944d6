//! Query and path parameters checked against the OpenAPI document before a handler runs: the
//! document is the one rule set (type, integer range and format, enum, length), so a value the
//! description forbids is refused with 400 and never reaches an operation, and a limit written
//! into a parameter's schema is enforced where it is written.
//!
//! Handlers still parse their parameters themselves (and may refuse more: combinations the
//! document cannot express). A `pattern` is the written form of a handler's own parser (an
//! instant, Kafka's name rules, a field list), which refuses what it does not match; it is not
//! evaluated here (no regular-expression engine in the binary). Enum values are compared ignoring
//! case, as the handlers parse them.

use std::collections::HashMap;
use std::sync::LazyLock;

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::ApiError;

/// The agent channel's routes (`crate::agents`).
const AGENT_CHANNEL: &str = "/api/v1/agent/";

/// Where a parameter is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum In {
    Query,
    /// The path segment at this index (split on `/`).
    Path(usize),
}

#[derive(Debug)]
struct Param {
    name: String,
    at: In,
    schema: Value,
}

/// (method, path template with `{}` for parameters) → the parameters the document declares.
static RULES: LazyLock<HashMap<(String, String), Vec<Param>>> =
    LazyLock::new(|| rules_of(crate::openapi::document()));

fn rules_of(doc: &Value) -> HashMap<(String, String), Vec<Param>> {
    let mut out = HashMap::new();
    let Some(paths) = doc["paths"].as_object() else {
        return out;
    };
    for (path, item) in paths {
        let segments: Vec<&str> = path.split('/').collect();
        let Some(item) = item.as_object() else {
            continue;
        };
        for (method, op) in item {
            let Some(params) = op.get("parameters").and_then(Value::as_array) else {
                continue;
            };
            let mut list = Vec::new();
            for p in params {
                let (Some(name), Some(schema)) = (p["name"].as_str(), p.get("schema")) else {
                    continue;
                };
                let at = match p["in"].as_str() {
                    Some("query") => In::Query,
                    Some("path") => {
                        let wanted = format!("{{{name}}}");
                        match segments.iter().position(|s| *s == wanted) {
                            Some(i) => In::Path(i),
                            None => continue,
                        }
                    }
                    _ => continue,
                };
                list.push(Param {
                    name: name.to_string(),
                    at,
                    schema: schema.clone(),
                });
            }
            if !list.is_empty() {
                out.insert(
                    (
                        method.to_ascii_uppercase(),
                        crate::middleware::template(path),
                    ),
                    list,
                );
            }
        }
    }
    out
}

/// Refuses (400, nothing runs) a request whose query or path parameter breaks its schema in the
/// OpenAPI document.
pub async fn check_parameters(req: Request, next: Next) -> Response {
    if let Some(route) = req
        .extensions()
        .get::<MatchedPath>()
        // The agent channel proves its caller in the handler (the agent token): a stranger gets
        // its 401 before anything is said about the input. Its handlers parse their own input.
        .filter(|r| !r.as_str().starts_with(AGENT_CHANNEL))
    {
        let key = (
            req.method().as_str().to_string(),
            crate::middleware::template(route.as_str()),
        );
        if let Some(params) = RULES.get(&key) {
            if let Err(e) = check_request(params, req.uri().path(), req.uri().query()) {
                return e.into_response();
            }
        }
    }
    next.run(req).await
}

fn check_request(params: &[Param], path: &str, query: Option<&str>) -> Result<(), ApiError> {
    let segments: Vec<&str> = path.split('/').collect();
    let pairs: Vec<(String, String)> = match query {
        Some(q) => serde_urlencoded::from_str(q)
            .map_err(|e| ApiError::bad_request("invalid query", e.to_string()))?,
        None => Vec::new(),
    };
    for p in params {
        match p.at {
            In::Path(i) => {
                let Some(raw) = segments.get(i) else { continue };
                let value = percent_decode(raw).ok_or_else(|| {
                    ApiError::bad_request("invalid path", format!("{}: not UTF-8", p.name))
                })?;
                check_value(&value, &p.schema).map_err(|e| {
                    ApiError::bad_request("invalid path", format!("{}: {e}", p.name))
                })?;
            }
            In::Query => {
                for (_, value) in pairs.iter().filter(|(k, _)| *k == p.name) {
                    check_value(value, &p.schema).map_err(|e| {
                        ApiError::bad_request("invalid query", format!("{}: {e}", p.name))
                    })?;
                }
            }
        }
    }
    Ok(())
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// The schema's type names (`"integer"` or `["integer", "null"]`), `null` left out.
fn types(schema: &Value) -> Vec<&str> {
    match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .collect(),
        _ => Vec::new(),
    }
}

/// Whether one parameter value (as text) fits its schema; `Err` says why not.
fn check_value(value: &str, schema: &Value) -> Result<(), String> {
    if let Some(alternatives) = schema["oneOf"].as_array().or(schema["anyOf"].as_array()) {
        let mut last = String::new();
        for s in alternatives {
            if types(s).is_empty() && s["type"] == "null" {
                continue;
            }
            match check_value(value, s) {
                Ok(()) => return Ok(()),
                Err(e) => last = e,
            }
        }
        return if last.is_empty() { Ok(()) } else { Err(last) };
    }
    let types = types(schema);
    if types.contains(&"integer") {
        let n: i128 = value
            .parse()
            .map_err(|_| format!("expected an integer, got {value:?}"))?;
        let (lo, hi) = match schema["format"].as_str() {
            Some("int32") => (i128::from(i32::MIN), i128::from(i32::MAX)),
            _ => (i128::from(i64::MIN), i128::from(i64::MAX)),
        };
        let lo = schema["minimum"]
            .as_i64()
            .map_or(lo, |m| lo.max(i128::from(m)));
        let hi = schema["maximum"]
            .as_i64()
            .map_or(hi, |m| hi.min(i128::from(m)));
        if n < lo || n > hi {
            return Err(format!("expected {lo} to {hi}, got {value}"));
        }
        return Ok(());
    }
    if types.contains(&"number") {
        let n: f64 = value
            .parse()
            .map_err(|_| format!("expected a number, got {value:?}"))?;
        if !n.is_finite() {
            return Err(format!("expected a finite number, got {value:?}"));
        }
        if schema["minimum"].as_f64().is_some_and(|m| n < m)
            || schema["maximum"].as_f64().is_some_and(|m| n > m)
        {
            return Err(format!("{value} is out of range"));
        }
        return Ok(());
    }
    if types.contains(&"boolean") {
        return match value {
            "true" | "false" => Ok(()),
            _ => Err(format!("expected true or false, got {value:?}")),
        };
    }
    if types.contains(&"string") {
        if let Some(allowed) = schema["enum"].as_array() {
            let fits = allowed
                .iter()
                .filter_map(Value::as_str)
                .any(|a| a.eq_ignore_ascii_case(value));
            if !fits {
                let names: Vec<&str> = allowed.iter().filter_map(Value::as_str).collect();
                return Err(format!(
                    "unknown value {value:?}; expected one of {}",
                    names.join(", ")
                ));
            }
        }
        let chars = value.chars().count() as u64;
        if schema["minLength"].as_u64().is_some_and(|m| chars < m) {
            return Err("must not be empty or shorter than its minimum length".into());
        }
        if schema["maxLength"].as_u64().is_some_and(|m| chars > m) {
            return Err(format!("longer than {} characters", schema["maxLength"]));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_query_value_the_document_forbids_is_refused_and_one_it_allows_passes() {
        let int32 = json!({"type": "integer", "format": "int32", "minimum": 0});
        assert!(check_value("2147483647", &int32).is_ok());
        assert!(check_value("2147483648", &int32).is_err());
        assert!(check_value("-1", &int32).is_err());
        assert!(check_value("", &int32).is_err());
        let ranged = json!({"type": ["integer", "null"], "minimum": 1, "maximum": 300});
        assert!(check_value("300", &ranged).is_ok());
        assert!(check_value("0", &ranged).is_err());
        let sort = json!({"type": "string", "enum": ["lag", "partition"]});
        assert!(check_value("LAG", &sort).is_ok());
        assert!(check_value("size", &sort).is_err());
        let named = json!({"type": "string", "minLength": 1, "maxLength": 3});
        assert!(check_value("abc", &named).is_ok());
        assert!(check_value("", &named).is_err());
        assert!(check_value("abcd", &named).is_err());
        assert!(check_value("maybe", &json!({"type": "boolean"})).is_err());
    }

    #[test]
    fn path_parameters_are_checked_by_their_position_after_percent_decoding() {
        let doc = json!({"paths": {"/t/{topic}/p/{partition}": {"get": {"parameters": [
            {"name": "topic", "in": "path", "schema": {"type": "string", "maxLength": 3}},
            {"name": "partition", "in": "path", "schema": {"type": "integer", "format": "int32", "minimum": 0}},
            {"name": "limit", "in": "query", "schema": {"type": "integer", "format": "int32", "minimum": 0}}
        ]}}}});
        let rules = rules_of(&doc);
        let params = &rules[&("GET".to_string(), "/t/{}/p/{}".to_string())];
        assert!(check_request(params, "/t/abc/p/3", Some("limit=5")).is_ok());
        assert!(check_request(params, "/t/abc/p/-3", None).is_err());
        assert!(check_request(params, "/t/a%2Eb/p/3", None).is_ok());
        assert!(check_request(params, "/t/a%2Ebc/p/3", None).is_err());
        assert!(check_request(params, "/t/abc/p/3", Some("limit=2147483648")).is_err());
    }
}
