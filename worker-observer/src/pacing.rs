//! When the observer samples: every `BALLAST_SAMPLE_INTERVAL`, and sooner when a sample was
//! requested through the database (`POST /api/v1/cluster/refresh-metadata` calls
//! [`Store::request_sample`]). Between samples the loop sleeps in steps of at most
//! `BALLAST_SAMPLE_REQUEST_POLL` and reads the request row after each; the row is cleared once the
//! sample it triggered has run, unless a newer request arrived meanwhile (that one triggers the
//! next sample).

use std::future::Future;
use std::time::Duration;

use ballast_schema::{SampleRequest, Store};
use tokio::time::Instant;
use tracing::{debug, warn};

/// The observer's timing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pacing {
    /// Between two scheduled samples (`BALLAST_SAMPLE_INTERVAL`).
    pub interval: Duration,
    /// How often a requested sample is looked for (`BALLAST_SAMPLE_REQUEST_POLL`).
    pub request_poll: Duration,
}

impl Pacing {
    pub fn from_timing(timing: &ballast_config::Timing) -> Pacing {
        Pacing {
            interval: timing.sample_interval,
            request_poll: timing.sample_request_poll,
        }
    }
}

async fn pending(store: &Store) -> Option<SampleRequest> {
    let store = store.clone();
    match tokio::task::spawn_blocking(move || store.sample_request()).await {
        Ok(Ok(request)) => request,
        Ok(Err(e)) => {
            warn!(error = %ballast_runtime::error_chain(&e), "sample request not read");
            None
        }
        Err(e) => {
            warn!(error = %e, "sample request not read");
            None
        }
    }
}

async fn clear(store: &Store, seen: SampleRequest) {
    let store = store.clone();
    match tokio::task::spawn_blocking(move || store.clear_sample_request(&seen)).await {
        Ok(Ok(cleared)) => debug!(seq = seen.seq, cleared, "requested sample taken"),
        Ok(Err(e)) => {
            warn!(error = %ballast_runtime::error_chain(&e), "sample request not cleared")
        }
        Err(e) => warn!(error = %e, "sample request not cleared"),
    }
}

/// Runs `tick` at once, then every `pacing.interval` (measured from the start of the previous
/// tick), until `stop` completes. A sample requested through `store` runs `tick` at the next poll
/// instead; the request is cleared after that tick. A scheduled tick also satisfies a request
/// pending when it starts. `stop` is not awaited during a tick.
pub async fn sample_loop<S, F, Fut>(store: &Store, pacing: Pacing, stop: S, mut tick: F)
where
    S: Future<Output = ()>,
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    tokio::pin!(stop);
    let poll = pacing.request_poll.max(Duration::from_millis(1));
    let mut next = Instant::now();
    loop {
        let mut request = None;
        loop {
            let now = Instant::now();
            if now >= next {
                break;
            }
            tokio::select! {
                _ = &mut stop => return,
                _ = tokio::time::sleep((next - now).min(poll)) => {}
            }
            request = pending(store).await;
            if request.is_some() {
                break;
            }
        }
        tokio::select! {
            biased;
            _ = &mut stop => return,
            _ = std::future::ready(()) => {}
        }
        if request.is_none() {
            request = pending(store).await;
        }
        next = Instant::now() + pacing.interval;
        tick().await;
        if let Some(seen) = request {
            clear(store, seen).await;
        }
    }
}
