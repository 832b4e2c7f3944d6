//! The dashboard's only way to data and actions: the app's own API, called in-process.
//!
//! A UI handler gets the API router from its [`Host`] (with the license gate, so a licensed route
//! answers 403 here exactly as over HTTP) and sends it an ordinary request with
//! `tower::ServiceExt::oneshot`. What the API validates, refuses (409 reasons, 403 license) or
//! audits is therefore what the dashboard shows; no endpoint logic is repeated here. The acting
//! identity (the logged-in person, or `X-Ballast-User` with authentication off) goes with every
//! call, and the in-process router checks its scope as over HTTP, so audit records name the same
//! user and a read-only person is refused the same way.

use axum::body::Body;
use axum::http::request::Parts;
use axum::http::{header, HeaderValue, Method, Request, StatusCode};
use axum::Router;
use serde_json::Value;
use tower::ServiceExt;

use crate::host::{Host, Viewer};
use crate::url::enc;

/// Largest API answer the dashboard reads (a whole-cluster `/partitions` of a big cluster fits).
const MAX_ANSWER: usize = 256 * 1024 * 1024;

/// The API's header naming the acting user of an open request (authentication off).
const USER_HEADER: &str = "x-ballast-user";

/// A refusal or failure of an API call, as the envelope said it.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub status: u16,
    /// `LICENSE_INVALID` / `LICENSE_EXPIRED` for the license envelope.
    pub code: Option<String>,
    pub error: String,
    pub details: String,
}

impl Problem {
    pub fn new(status: u16, error: impl Into<String>, details: impl Into<String>) -> Problem {
        Problem {
            status,
            code: None,
            error: error.into(),
            details: details.into(),
        }
    }

    /// Whether the refusal is the license gate's.
    pub fn is_license(&self) -> bool {
        self.code.is_some()
    }

    /// One line for a flash message: what failed and why.
    pub fn message(&self) -> String {
        let head = match &self.code {
            Some(code) => format!("{} {code}: {}", self.status, self.error),
            None => format!("{}: {}", self.status, self.error),
        };
        if self.details.is_empty() {
            head
        } else {
            format!("{head} — {}", self.details)
        }
    }

    /// What an operator can do about it, when the status says.
    pub fn hint(&self) -> &'static str {
        match (self.status, self.is_license()) {
            (403, true) => {
                "This is a management action: it needs a valid license (see License). Monitoring works without one."
            }
            (409, _) => {
                "Refused by a safety check. Soft reasons can be overridden with force; hard ones (cluster health, a running operation) cannot."
            }
            (503, _) => {
                "The data or the cluster is not available right now (the observer may not have read the cluster yet). Try again shortly."
            }
            (404, _) => "Not found: it may have been removed, or the name is misspelt.",
            (400, _) => "The request was refused as invalid; the details name the field.",
            _ => "",
        }
    }

    /// Reads a failure envelope (general or license) with its status.
    fn from_envelope(status: StatusCode, body: &Value) -> Problem {
        let status = status.as_u16();
        match &body["error"] {
            Value::Object(e) => Problem {
                status,
                code: e.get("code").and_then(Value::as_str).map(str::to_string),
                error: e
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("refused")
                    .to_string(),
                details: String::new(),
            },
            Value::String(error) => Problem::new(
                status,
                error.clone(),
                body["details"].as_str().unwrap_or_default(),
            ),
            _ => Problem::new(status, "unexpected answer", body.to_string()),
        }
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

/// The result of an API call: the envelope's `data`, or what refused it.
pub type Answer = Result<Value, Problem>;

/// The app's API for one dashboard request.
#[derive(Clone)]
pub struct Api {
    /// The host's API router, the request's identity attached ([`Host::api`]).
    router: Router,
    user: Option<HeaderValue>,
    identity: Option<Viewer>,
}

impl Api {
    /// The API as the request `parts` calls it: its identity, and its `X-Ballast-User`.
    pub fn new(host: &dyn Host, parts: &Parts) -> Api {
        Api {
            router: host.api(parts),
            user: parts.headers.get(USER_HEADER).cloned(),
            identity: host.viewer(parts),
        }
    }

    /// Who the dashboard acts as.
    pub fn identity(&self) -> Option<&Viewer> {
        self.identity.as_ref()
    }

    pub async fn get(&self, uri: &str) -> Answer {
        self.call(Method::GET, uri, None).await
    }

    pub async fn post(&self, uri: &str, body: Option<&Value>) -> Answer {
        self.call(Method::POST, uri, body).await
    }

    pub async fn put(&self, uri: &str, body: &Value) -> Answer {
        self.call(Method::PUT, uri, Some(body)).await
    }

    pub async fn delete(&self, uri: &str) -> Answer {
        self.call(Method::DELETE, uri, None).await
    }

    /// Sends one request to the API and reads its envelope.
    pub async fn call(&self, method: Method, uri: &str, body: Option<&Value>) -> Answer {
        let mut builder = Request::builder().method(method).uri(uri);
        if let Some(user) = &self.user {
            builder = builder.header(USER_HEADER, user.clone());
        }
        let request = match body {
            Some(b) => builder
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(b.to_string())),
            None => builder.body(Body::empty()),
        };
        let request = match request {
            Ok(r) => r,
            Err(e) => return Err(Problem::new(400, "invalid request", e.to_string())),
        };
        let response = match self.router.clone().oneshot(request).await {
            Ok(r) => r,
            Err(never) => match never {},
        };
        let status = response.status();
        let bytes = match axum::body::to_bytes(response.into_body(), MAX_ANSWER).await {
            Ok(b) => b,
            Err(e) => {
                return Err(Problem::new(
                    status.as_u16(),
                    "the answer could not be read",
                    e.to_string(),
                ))
            }
        };
        let body: Value = match serde_json::from_slice(&bytes) {
            Ok(v) => v,
            Err(e) => {
                return Err(Problem::new(
                    status.as_u16(),
                    "the answer is not JSON",
                    e.to_string(),
                ))
            }
        };
        if status.is_success() && body["success"] == Value::Bool(true) {
            Ok(body.get("data").cloned().unwrap_or(Value::Null))
        } else {
            Err(Problem::from_envelope(status, &body))
        }
    }
}

/// A query string from the pairs whose value is not empty (`?a=1&b=x`, or `""`).
pub fn query(pairs: &[(&str, &str)]) -> String {
    let parts: Vec<String> = pairs
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("?{}", parts.join("&"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_leaves_out_empty_values() {
        assert_eq!(query(&[("a", ""), ("b", "x y")]), "?b=x%20y");
        assert_eq!(query(&[("a", "")]), "");
    }

    #[test]
    fn license_refusal_reads_its_code() {
        let body = serde_json::json!({"data": null, "error": {"code": "LICENSE_INVALID", "message": "no license"}});
        let p = Problem::from_envelope(StatusCode::FORBIDDEN, &body);
        assert!(p.is_license());
        assert_eq!(p.message(), "403 LICENSE_INVALID: no license");
    }
}
