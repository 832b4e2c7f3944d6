//! The spec's response envelopes, shared by every route.
//!
//! - success: `{"success": true, "data": {...}}`
//! - failure: `{"success": false, "error": "description", "details": "underlying error text"}`
//! - license failure: `{"data": null, "error": {"code": "LICENSE_INVALID" | "LICENSE_EXPIRED", "message": "..."}}`

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use serde_json::json;

/// A successful answer: `{"success": true, "data": T}` with status 200.
#[derive(Debug)]
pub struct ApiOk<T>(pub T);

impl<T: Serialize> IntoResponse for ApiOk<T> {
    fn into_response(self) -> Response {
        Json(json!({ "success": true, "data": self.0 })).into_response()
    }
}

/// A failure in the general envelope. `error` says what failed; `details` carries the cause.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub status: StatusCode,
    pub error: String,
    pub details: String,
    /// Sent as `Retry-After` (seconds): a 503 the caller may simply repeat.
    pub retry_after_s: Option<u64>,
}

impl ApiError {
    pub fn new(status: StatusCode, error: impl Into<String>, details: impl Into<String>) -> Self {
        Self {
            status,
            error: error.into(),
            details: details.into(),
            retry_after_s: None,
        }
    }

    /// 503 with `Retry-After`: the database or the resource is busy, or the audit log cannot be
    /// written; nothing was changed.
    pub fn busy(error: impl Into<String>, details: impl Into<String>, retry_after_s: u64) -> Self {
        Self {
            retry_after_s: Some(retry_after_s.max(1)),
            ..Self::unavailable(error, details)
        }
    }

    pub fn bad_request(error: impl Into<String>, details: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, error, details)
    }

    pub fn not_found(error: impl Into<String>, details: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, error, details)
    }

    pub fn unavailable(error: impl Into<String>, details: impl Into<String>) -> Self {
        Self::new(StatusCode::SERVICE_UNAVAILABLE, error, details)
    }

    pub fn internal(error: impl Into<String>, details: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, error, details)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({ "success": false, "error": self.error, "details": self.details });
        let mut response = (self.status, Json(body)).into_response();
        if let Some(s) = self.retry_after_s {
            response
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, s.into());
        }
        response
    }
}

/// Why a licensed endpoint refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum LicenseCode {
    #[serde(rename = "LICENSE_INVALID")]
    Invalid,
    #[serde(rename = "LICENSE_EXPIRED")]
    Expired,
}

impl LicenseCode {
    /// The code as the envelope spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            LicenseCode::Invalid => "LICENSE_INVALID",
            LicenseCode::Expired => "LICENSE_EXPIRED",
        }
    }
}

/// The license failure envelope, always status 403.
#[derive(Debug, Clone, PartialEq)]
pub struct LicenseError {
    pub code: LicenseCode,
    pub message: String,
}

impl IntoResponse for LicenseError {
    fn into_response(self) -> Response {
        let body = json!({ "data": null, "error": { "code": self.code, "message": self.message } });
        (StatusCode::FORBIDDEN, Json(body)).into_response()
    }
}

/// An operation's failure in the envelope: its kind's status, and `Retry-After` when the caller
/// may simply repeat.
impl From<ballast_ops::OpError> for ApiError {
    fn from(e: ballast_ops::OpError) -> Self {
        ApiError {
            status: StatusCode::from_u16(e.kind.status())
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            error: e.error,
            details: e.details,
            retry_after_s: e.retry_after_s,
        }
    }
}

impl From<ballast_ops::Unavailable> for ApiError {
    fn from(u: ballast_ops::Unavailable) -> Self {
        ApiError::busy(u.error, u.details, u.retry_after_s)
    }
}

pub type ApiResult<T> = Result<ApiOk<T>, ApiError>;

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::to_bytes;

    async fn body_of(response: Response) -> (StatusCode, serde_json::Value) {
        let status = response.status();
        let bytes = to_bytes(response.into_body(), 1 << 20).await.expect("body");
        (status, serde_json::from_slice(&bytes).expect("json"))
    }

    #[tokio::test]
    async fn success_envelope_has_success_true_and_data() {
        let (status, body) = body_of(ApiOk(json!({"a": 1})).into_response()).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body, json!({"success": true, "data": {"a": 1}}));
    }

    #[tokio::test]
    async fn failure_envelope_has_success_false_error_and_details() {
        let err = ApiError::bad_request("invalid query", "summary: expected true or false");
        let (status, body) = body_of(err.into_response()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(
            body,
            json!({"success": false, "error": "invalid query", "details": "summary: expected true or false"})
        );
    }

    #[tokio::test]
    async fn license_envelope_has_null_data_and_coded_error() {
        let err = LicenseError {
            code: LicenseCode::Expired,
            message: "license expired at 2026-01-01T00:00:00Z".into(),
        };
        let (status, body) = body_of(err.into_response()).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        assert_eq!(
            body,
            json!({"data": null, "error": {"code": "LICENSE_EXPIRED", "message": "license expired at 2026-01-01T00:00:00Z"}})
        );
    }
}
