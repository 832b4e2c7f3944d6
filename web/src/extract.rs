//! Extractors whose rejections answer in the spec's error envelope (a bad query string is a 400
//! with `error` and `details`, never axum's plain-text rejection).

use axum::extract::{FromRequestParts, Path as AxumPath, Query as AxumQuery};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use crate::ApiError;

/// `Query<T>` with a 400 envelope on malformed input.
#[derive(Debug, Clone)]
pub struct Query<T>(pub T);

impl<T, S> FromRequestParts<S> for Query<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        AxumQuery::<T>::from_request_parts(parts, state)
            .await
            .map(|AxumQuery(v)| Query(v))
            .map_err(|e| ApiError::bad_request("invalid query", e.body_text()))
    }
}

/// `Path<T>` with a 400 envelope on malformed input (e.g. a partition that is not a number).
#[derive(Debug, Clone)]
pub struct Path<T>(pub T);

impl<T, S> FromRequestParts<S> for Path<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        AxumPath::<T>::from_request_parts(parts, state)
            .await
            .map(|AxumPath(v)| Path(v))
            .map_err(|e| ApiError::bad_request("invalid path", e.body_text()))
    }
}

/// `Json<T>` body with a 400 envelope on a missing content type, malformed JSON or wrong fields.
#[derive(Debug, Clone)]
pub struct Json<T>(pub T);

impl<T, S> axum::extract::FromRequest<S> for Json<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, Self::Rejection> {
        let axum::Json(v) = axum::Json::<serde_json::Value>::from_request(req, state)
            .await
            .map_err(|e| body_rejection(e.status(), e.body_text()))?;
        object(v).map(Json)
    }
}

/// A JSON body that may be left out: an empty body (or `null`) is `T::default()`; anything else must parse
/// (400 envelope otherwise).
#[derive(Debug, Clone)]
pub struct OptionalJson<T>(pub T);

impl<T, S> axum::extract::FromRequest<S> for OptionalJson<T>
where
    T: DeserializeOwned + Default + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = axum::body::Bytes::from_request(req, state)
            .await
            .map_err(|e| body_rejection(e.status(), e.body_text()))?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(OptionalJson(T::default()));
        }
        let v: serde_json::Value = serde_json::from_slice(&bytes)
            .map_err(|e| ApiError::bad_request("invalid request body", e.to_string()))?;
        // The document describes an optional body as `null` or the object: `null` is the body
        // left out.
        if v.is_null() {
            return Ok(OptionalJson(T::default()));
        }
        object(v).map(OptionalJson)
    }
}

/// The envelope of a body that could not be read: 413 when it is larger than the limit (2 MB),
/// else 400.
fn body_rejection(status: axum::http::StatusCode, text: String) -> ApiError {
    if status == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::new(status, "request body too large", text)
    } else {
        ApiError::bad_request("invalid request body", text)
    }
}

/// A request body is a JSON object: serde would otherwise fill a struct from an array
/// (`[null, null]` as "every field left out").
fn object<T: DeserializeOwned>(v: serde_json::Value) -> Result<T, ApiError> {
    if !v.is_object() {
        return Err(ApiError::bad_request(
            "invalid request body",
            "the body must be a JSON object",
        ));
    }
    let v = whole_numbers(v);
    serde_path_to_error::deserialize(v).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let details = if path == "." {
            inner.to_string()
        } else {
            format!("{path}: {inner}")
        };
        ApiError::bad_request("invalid request body", details)
    })
}

/// Numbers as JSON Schema has them: `16503.0` is the integer 16503 (a number with a zero
/// fraction), which serde's integer types alone refuse. Exact integers (up to 2^53) written with
/// a fraction become integers; a field of a float type takes them alike.
fn whole_numbers(v: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    const EXACT: f64 = 9_007_199_254_740_992.0;
    match v {
        Value::Number(n) if !n.is_i64() && !n.is_u64() => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() <= EXACT => Value::from(f as i64),
            _ => Value::Number(n),
        },
        Value::Array(items) => Value::Array(items.into_iter().map(whole_numbers).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, whole_numbers(v)))
                .collect(),
        ),
        other => other,
    }
}

/// An instant as Unix milliseconds or RFC 3339 (`ballast_ops::time::parse_instant_ms`).
pub use ballast_ops::time::parse_instant_ms;
