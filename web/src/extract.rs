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
        axum::Json::<T>::from_request(req, state)
            .await
            .map(|axum::Json(v)| Json(v))
            .map_err(|e| ApiError::bad_request("invalid request body", e.body_text()))
    }
}

/// A JSON body that may be left out: an empty body is `T::default()`; anything else must parse
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
            .map_err(|e| ApiError::bad_request("invalid request body", e.body_text()))?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(OptionalJson(T::default()));
        }
        serde_json::from_slice(&bytes)
            .map(OptionalJson)
            .map_err(|e| ApiError::bad_request("invalid request body", e.to_string()))
    }
}
