//! Overload is graceful: each route serves at most `BALLAST_HTTP_ROUTE_CONCURRENCY` requests at
//! once; more wait in that route's line for at most `BALLAST_HTTP_QUEUE_WAIT` (and at most
//! [`MAX_WAITING`] wait), beyond which the answer is 503 in the envelope with `Retry-After`, never
//! a pool timeout. A client that leaves while waiting or being served frees its place at once
//! (its request's work is dropped with it). A request holds its place until its answer's body is
//! done, so an answer that streams (an MCP call's event) counts while its work goes on. The
//! probes, and the long-lived streams, are not bounded.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{MatchedPath, Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::{ApiError, AppState};

/// Requests that may wait in one route's line.
pub const MAX_WAITING: usize = 256;
/// `Retry-After` of a 503 for a full line, in seconds.
pub const RETRY_AFTER_S: u64 = 1;

/// The lines, one per route.
pub struct Limits {
    per_route: usize,
    wait: Duration,
    routes: Mutex<HashMap<(Method, String), Arc<Line>>>,
}

struct Line {
    serving: Arc<Semaphore>,
    waiting: AtomicUsize,
}

/// Counts a waiting request for as long as it lives.
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Limits {
    pub fn new(per_route: usize, wait: Duration) -> Limits {
        Limits {
            per_route: per_route.max(1),
            wait,
            routes: Mutex::new(HashMap::new()),
        }
    }

    fn line(&self, method: &Method, route: &str) -> Arc<Line> {
        let mut routes = self.routes.lock().unwrap_or_else(|e| e.into_inner());
        routes
            .entry((method.clone(), route.to_string()))
            .or_insert_with(|| {
                Arc::new(Line {
                    serving: Arc::new(Semaphore::new(self.per_route)),
                    waiting: AtomicUsize::new(0),
                })
            })
            .clone()
    }

    /// Runs `serve` when the line of `method route` lets it, or answers 503.
    pub async fn run<F>(&self, method: &Method, route: &str, serve: F) -> Response
    where
        F: std::future::Future<Output = Response>,
    {
        let line = self.line(method, route);
        let permit = match line.serving.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                if line.waiting.fetch_add(1, Ordering::SeqCst) >= MAX_WAITING || self.wait.is_zero()
                {
                    line.waiting.fetch_sub(1, Ordering::SeqCst);
                    return overloaded(method, route, self.per_route, self.wait).into_response();
                }
                let _waiting = Waiting(&line.waiting);
                match tokio::time::timeout(self.wait, line.serving.clone().acquire_owned()).await {
                    Ok(Ok(permit)) => permit,
                    _ => {
                        return overloaded(method, route, self.per_route, self.wait).into_response()
                    }
                }
            }
        };
        // The place is held until the answer's body is done: an answer that streams (an MCP
        // call's server-sent event, written when the tool's work ends) is still being served
        // after its head is returned.
        serve.await.map(|body| {
            Body::new(Held {
                body,
                _permit: permit,
            })
        })
    }
}

/// A body that holds its route's place until it is done or dropped (the client left).
struct Held {
    body: Body,
    _permit: OwnedSemaphorePermit,
}

impl http_body::Body for Held {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

fn overloaded(method: &Method, route: &str, per_route: usize, wait: Duration) -> ApiError {
    ApiError::busy(
        "overloaded",
        format!(
            "{method} {route} is serving {per_route} requests with more waiting (BALLAST_HTTP_ROUTE_CONCURRENCY); this one waited {} without a turn (BALLAST_HTTP_QUEUE_WAIT). Nothing was done; try again",
            ballast_config::format_duration(wait)
        ),
        RETRY_AFTER_S,
    )
}

/// Routes never bounded: the probes, and streams that stay open (server-sent events).
fn unbounded(method: &Method, route: &str) -> bool {
    matches!(route, "/api/v1/health" | "/api/v1/ready")
        || route.ends_with("/messages/tail")
        || route.starts_with("/api/v1/chat/")
        || (route == "/api/v1/mcp" && method == Method::GET)
}

/// The layer.
pub async fn bound(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let Some(route) = req
        .extensions()
        .get::<MatchedPath>()
        .map(|m| m.as_str().to_string())
    else {
        return next.run(req).await;
    };
    let method = req.method().clone();
    if unbounded(&method, &route) {
        return next.run(req).await;
    }
    let limits = state.limits.clone();
    limits.run(&method, &route, next.run(req)).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::StatusCode;

    #[tokio::test]
    async fn beyond_its_bound_a_route_answers_503_with_retry_after_and_a_client_that_leaves_frees_its_place(
    ) {
        let limits = Arc::new(Limits::new(1, Duration::from_millis(50)));
        let gate = Arc::new(tokio::sync::Notify::new());
        // One request is being served and holds the route's only place.
        let held = {
            let (limits, gate) = (limits.clone(), gate.clone());
            tokio::spawn(async move {
                limits
                    .run(&Method::GET, "/r", async move {
                        gate.notified().await;
                        StatusCode::OK.into_response()
                    })
                    .await
            })
        };
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(5)).await;
        // The next waits its turn, then is refused: 503, Retry-After, the envelope.
        let refused = limits
            .run(&Method::GET, "/r", async { StatusCode::OK.into_response() })
            .await;
        assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(refused.headers()["retry-after"], "1");
        let body = axum::body::to_bytes(refused.into_body(), 1 << 16)
            .await
            .unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["success"], false);
        assert_eq!(body["error"], "overloaded");
        // Another route has its own line.
        let other = limits
            .run(&Method::GET, "/other", async {
                StatusCode::OK.into_response()
            })
            .await;
        assert_eq!(other.status(), StatusCode::OK);
        // The client being served leaves: its place is free at once.
        held.abort();
        let _ = held.await;
        let served = limits
            .run(&Method::GET, "/r", async { StatusCode::OK.into_response() })
            .await;
        assert_eq!(served.status(), StatusCode::OK);
        assert_eq!(
            limits
                .line(&Method::GET, "/r")
                .waiting
                .load(Ordering::SeqCst),
            0
        );
    }

    #[tokio::test]
    async fn a_request_that_waits_within_the_bound_is_served_when_a_place_frees() {
        let limits = Arc::new(Limits::new(1, Duration::from_secs(5)));
        let gate = Arc::new(tokio::sync::Notify::new());
        let held = {
            let (limits, gate) = (limits.clone(), gate.clone());
            tokio::spawn(async move {
                limits
                    .run(&Method::GET, "/r", async move {
                        gate.notified().await;
                        StatusCode::OK.into_response()
                    })
                    .await
            })
        };
        tokio::time::sleep(Duration::from_millis(5)).await;
        let waiter = {
            let limits = limits.clone();
            tokio::spawn(async move {
                limits
                    .run(&Method::GET, "/r", async { StatusCode::OK.into_response() })
                    .await
            })
        };
        tokio::time::sleep(Duration::from_millis(5)).await;
        gate.notify_one();
        assert_eq!(held.await.unwrap().status(), StatusCode::OK);
        assert_eq!(waiter.await.unwrap().status(), StatusCode::OK);
    }

    #[tokio::test]
    async fn an_answer_that_streams_holds_its_routes_place_until_its_body_is_done() {
        use futures_util::StreamExt;
        let limits = Arc::new(Limits::new(1, Duration::from_millis(50)));
        // The head is answered at once; the body is an event written when the work ends (as
        // an MCP call's is).
        let (send, events) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(1);
        let streaming = limits
            .run(&Method::POST, "/r", async move {
                let events = futures_util::stream::unfold(events, |mut rx| async move {
                    rx.recv().await.map(|event| (event, rx))
                });
                Body::from_stream(events.boxed()).into_response()
            })
            .await;
        assert_eq!(streaming.status(), StatusCode::OK);
        // While its body is not done, the route's place is taken.
        let refused = limits
            .run(&Method::POST, "/r", async {
                StatusCode::OK.into_response()
            })
            .await;
        assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
        // The work ends: the event is written, the body is done, the place is free.
        send.send(Ok(Bytes::from_static(b"data: {}\n\n")))
            .await
            .unwrap();
        drop(send);
        let body = axum::body::to_bytes(streaming.into_body(), 1 << 16)
            .await
            .unwrap();
        assert_eq!(&body[..], b"data: {}\n\n");
        let served = limits
            .run(&Method::POST, "/r", async {
                StatusCode::OK.into_response()
            })
            .await;
        assert_eq!(served.status(), StatusCode::OK);
    }

    #[tokio::test]
    async fn a_client_that_leaves_while_an_answer_streams_frees_its_place() {
        let limits = Arc::new(Limits::new(1, Duration::from_millis(50)));
        let pending = futures_util::stream::pending::<Result<Bytes, std::io::Error>>();
        let streaming = limits
            .run(&Method::POST, "/r", async move {
                Body::from_stream(pending).into_response()
            })
            .await;
        drop(streaming);
        let served = limits
            .run(&Method::POST, "/r", async {
                StatusCode::OK.into_response()
            })
            .await;
        assert_eq!(served.status(), StatusCode::OK);
    }
}
