//! The one place handlers write audit events.
//!
//! - Who: [`Actor`] reads the request's HTTP method and the acting identity that
//!   [`crate::auth`] established: the logged-in person or the token's owner; with authentication
//!   off, what the request says in `X-Ballast-User`, or `anonymous`. It is recorded as both
//!   `userId` and `requestedBy`.
//! - Retry: a write that finds the database busy (another process holds the write lock past the
//!   busy timeout) or no pooled connection is tried again after a short pause; each retried
//!   attempt counts `ballast_audit_events_failure_total{error_type="busy"|"pool"}`. An event that
//!   still cannot be written (or is refused outright) counts `error_type="dropped"` once and is
//!   logged; the change it describes has already happened, so the handler still answers with its
//!   result and says the event was lost (`auditEventId: null`, `auditError`).

use std::time::Duration;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use ballast_schema::{NewAuditEvent, StoreError};
use tracing::{error, warn};

use crate::{ApiError, AppState};

pub use crate::auth::ANONYMOUS;
use crate::auth::{parse_user, USER_HEADER};

/// The `error_type` values of `ballast_audit_events_failure_total`.
pub const FAILURE_TYPES: [&str; 3] = ["busy", "pool", "dropped"];

/// Pauses between attempts: four attempts in all. Each attempt itself waits up to the store's
/// busy timeout for the write lock.
const RETRY_DELAYS: [Duration; 3] = [
    Duration::from_millis(50),
    Duration::from_millis(200),
    Duration::from_millis(1000),
];

pub use ballast_ops::{Actor, Audited};

/// The acting side of a request over HTTP: its method and the acting identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpActor(pub Actor);

impl<S: Send + Sync> FromRequestParts<S> for HttpActor {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        // The identity the auth layers put in; a router built without them (unit tests of a
        // handler) falls back to the header, as with authentication off.
        let user = match parts.extensions.get::<crate::auth::Identity>() {
            Some(identity) => identity.user_id.clone(),
            None => match parts.headers.get(USER_HEADER) {
                None => ANONYMOUS.to_string(),
                Some(raw) => parse_user(raw.to_str().ok())?,
            },
        };
        Ok(HttpActor(Actor {
            method: parts.method.as_str().to_string(),
            user,
            requested_by: None,
        }))
    }
}

/// An event by `identity` with `method`, for handlers outside the usual request shape (the
/// login callback, token management).
pub fn identity_event(
    identity: &crate::auth::Identity,
    method: &str,
    now_ms: i64,
    action: &str,
    target: impl Into<String>,
) -> NewAuditEvent {
    identity_actor(identity, method).event(now_ms, action, target)
}

/// `identity` acting through `method`, asking for itself.
pub fn identity_actor(identity: &crate::auth::Identity, method: &str) -> Actor {
    Actor {
        method: method.to_string(),
        user: identity.user_id.clone(),
        requested_by: None,
    }
}

/// Writes `event`, retrying while the database is busy. Never fails the request: a lost event is
/// counted, logged and reported in [`Audited::audit_error`].
pub async fn record(state: &AppState, event: NewAuditEvent) -> Audited {
    let store = state.store.clone();
    let metrics = state.metrics.clone();
    let action = event.action.clone();
    let target = event.target.clone().unwrap_or_default();
    let written = tokio::task::spawn_blocking(move || {
        write_with_retry(
            || store.insert_audit(&event),
            classify,
            &RETRY_DELAYS,
            |error_type| {
                warn!(error_type, "audit write failed, retrying");
                metrics.audit_failure(error_type);
            },
            std::thread::sleep,
        )
    })
    .await;
    let failure = match written {
        Ok(Ok(id)) => {
            return Audited {
                audit_event_id: Some(id),
                audit_error: None,
            }
        }
        Ok(Err(e)) => ballast_runtime::error_chain(&e),
        Err(join) => join.to_string(),
    };
    state.metrics.audit_failure("dropped");
    error!(action, target, error = failure, "audit event dropped");
    Audited {
        audit_event_id: None,
        audit_error: Some(format!(
            "the change was made but its audit event was lost: {failure}"
        )),
    }
}

/// The `error_type` of a store failure worth another attempt; None for one that is not.
fn classify(e: &StoreError) -> Option<&'static str> {
    if e.is_busy() {
        Some("busy")
    } else if matches!(e, StoreError::Pool(_)) {
        Some("pool")
    } else {
        None
    }
}

/// Runs `attempt` until it succeeds, it fails with an error `classify` does not retry, or the
/// `delays` are used up; `retried` is told the type of every failed attempt that is tried again.
fn write_with_retry<T, E>(
    mut attempt: impl FnMut() -> Result<T, E>,
    classify: impl Fn(&E) -> Option<&'static str>,
    delays: &[Duration],
    mut retried: impl FnMut(&'static str),
    sleep: impl Fn(Duration),
) -> Result<T, E> {
    let mut delays = delays.iter();
    loop {
        match attempt() {
            Ok(v) => return Ok(v),
            Err(e) => match (classify(&e), delays.next()) {
                (Some(error_type), Some(delay)) => {
                    retried(error_type);
                    sleep(*delay);
                }
                _ => return Err(e),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    #[derive(Debug, Clone, PartialEq)]
    enum Fake {
        Busy,
        Broken,
    }

    fn fake_classify(e: &Fake) -> Option<&'static str> {
        (*e == Fake::Busy).then_some("busy")
    }

    fn run(outcomes: Vec<Result<i64, Fake>>) -> (Result<i64, Fake>, Vec<&'static str>, usize) {
        let outcomes = RefCell::new(outcomes.into_iter());
        let counted = RefCell::new(Vec::new());
        let sleeps = RefCell::new(0);
        let result = write_with_retry(
            || outcomes.borrow_mut().next().unwrap_or(Err(Fake::Broken)),
            fake_classify,
            &RETRY_DELAYS,
            |t| counted.borrow_mut().push(t),
            |_| *sleeps.borrow_mut() += 1,
        );
        (result, counted.into_inner(), sleeps.into_inner())
    }

    #[test]
    fn a_busy_database_is_retried_and_each_retried_attempt_counted() {
        let (result, counted, sleeps) = run(vec![Err(Fake::Busy), Err(Fake::Busy), Ok(7)]);
        assert_eq!(result, Ok(7));
        assert_eq!(counted, ["busy", "busy"]);
        assert_eq!(sleeps, 2);
    }

    #[test]
    fn retries_stop_after_the_last_delay_and_an_other_error_is_not_retried() {
        let (result, counted, _) = run(vec![Err(Fake::Busy); 10]);
        assert_eq!(result, Err(Fake::Busy));
        assert_eq!(
            counted.len(),
            RETRY_DELAYS.len(),
            "the final attempt is not a retry"
        );
        let (result, counted, sleeps) = run(vec![Err(Fake::Broken)]);
        assert_eq!(result, Err(Fake::Broken));
        assert!(counted.is_empty());
        assert_eq!(sleeps, 0);
    }

    #[test]
    fn the_user_header_is_trimmed_and_must_be_plain_text() {
        assert_eq!(parse_user(Some("  alice ")).unwrap(), "alice");
        assert!(parse_user(Some("")).is_err());
        assert!(parse_user(Some("a\tb")).is_err());
        assert!(parse_user(None).is_err());
        assert!(parse_user(Some(&"x".repeat(201))).is_err());
    }
}
