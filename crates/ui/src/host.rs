//! What the dashboard needs from the process that serves it, and nothing more: the API router to
//! call in-process, who the request is, the cookie and origin rules of its login layer, the
//! clock, a few settings, and the two store reads the API does not serve. The web process
//! implements [`Host`]; this crate never sees its state, its store or its operations.

use std::future::Future;
use std::pin::Pin;

use axum::http::request::Parts;
use axum::http::HeaderMap;
use axum::Router;

use crate::Problem;

/// A boxed future, so [`Host`] stays object-safe.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// The web process, as the dashboard sees it.
pub trait Host: Send + Sync + 'static {
    /// The API router as this request calls it: the API's routes with their 404/405 fallbacks,
    /// the licence gate and the scope check, and the request's identity attached to every call,
    /// so the API refuses, licenses and audits exactly as over HTTP.
    fn api(&self, request: &Parts) -> Router;

    /// Who the request is (`None`: nobody authenticated, e.g. authentication off).
    fn viewer(&self, request: &Parts) -> Option<Viewer>;

    /// Whether a form post comes from a page of ballast's own origin (`BALLAST_PUBLIC_URL`).
    fn same_origin(&self, headers: &HeaderMap) -> bool;

    /// The value of the cookie `name` (the flash cookie), as the login layer reads cookies.
    fn cookie(&self, headers: &HeaderMap, name: &str) -> Option<String>;

    /// Now, in Unix milliseconds (the process's injected clock).
    fn now_ms(&self) -> i64;

    /// The settings the pages show or use.
    fn settings(&self) -> &Settings;

    /// The self-healing skip reasons and what each means, in the spec's order.
    fn skip_reasons(&self) -> &'static [(&'static str, &'static str)];

    /// The brokers in maintenance (no API read serves the list).
    fn maintenance(&self) -> BoxFuture<Result<Vec<Maintenance>, Problem>>;

    /// One audit event as recorded, `None` when there is no such event (the API lists events
    /// but serves none by id).
    fn audit_event(&self, id: i64) -> BoxFuture<Result<Option<AuditEvent>, Problem>>;
}

/// The settings the pages need.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The binary's version, in every page's footer.
    pub version: &'static str,
    /// Whether the chat assistant is enabled: the header's Ask button and the chat panel.
    pub chat: bool,
    /// `BALLAST_BALANCE_THRESHOLD` in percent: bars turn amber beyond it, red beyond twice it.
    pub threshold_percent: f64,
}

/// The request's identity, as the header's user menu and the token page show it.
#[derive(Debug, Clone, PartialEq)]
pub struct Viewer {
    /// The name audit events record.
    pub user_id: String,
    pub name: Option<String>,
    pub email: Option<String>,
    /// `read` or `write`.
    pub scope: &'static str,
    /// Whether the scope allows changes.
    pub write: bool,
    /// Whether it is a login session (not a token or an open request's user): only a session
    /// shows the user menu and can log out.
    pub session: bool,
}

/// A broker in maintenance.
#[derive(Debug, Clone, PartialEq)]
pub struct Maintenance {
    pub broker_id: i32,
    pub entered_at_ms: i64,
    pub requested_by: Option<String>,
    pub operation_id: Option<String>,
    pub reason: Option<String>,
}

/// An audit event as recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditEvent {
    pub id: i64,
    pub at_ms: i64,
    pub action: String,
    pub method: String,
    pub user_id: Option<String>,
    pub requested_by: Option<String>,
    pub status: u16,
    pub target: Option<String>,
    pub summary: serde_json::Value,
    pub before: Option<serde_json::Value>,
    pub after: Option<serde_json::Value>,
    pub forced: bool,
    pub related_event_id: Option<i64>,
    pub details: Option<String>,
}
