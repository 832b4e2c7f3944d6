//! The probes (`/api/v1/health`, `/api/v1/ready`) answer without waiting on the database pool or
//! on other requests: they read through a connection of their own (not the pool the other
//! requests share), at most one read at a time, and when that read does not finish within
//! [`PROBE_WAIT`] (the database is busy, the machine is saturated) they answer from the last
//! read, saying when it was taken (`detailsAsOf`).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ballast_schema::{Heartbeat, Observation, OpenOptions, ProcessRecord, Store, StoreError};

use crate::{ApiError, AppState};

/// How long a probe waits for a fresh read before it answers from the last one.
pub const PROBE_WAIT: Duration = Duration::from_millis(25);

/// What the probes read: every process, every heartbeat, the broker view's freshness.
#[derive(Debug, Clone)]
pub struct ProbeData {
    pub processes: Vec<ProcessRecord>,
    pub heartbeats: Vec<Heartbeat>,
    pub brokers: Option<Observation>,
    /// When it was read (the service's clock).
    pub read_at_ms: i64,
}

/// The probes' own connection and their last read.
pub struct Probes {
    store: Store,
    reading: Arc<tokio::sync::Mutex<()>>,
    last: Mutex<Option<Arc<ProbeData>>>,
}

impl Probes {
    /// A connection of the probes' own to `store`'s database (the shared pool when it cannot be
    /// opened).
    pub fn new(store: &Store) -> Probes {
        let own = Store::open_with(
            store.path(),
            OpenOptions {
                busy_timeout: Duration::from_secs(1),
                pool_size: 1,
            },
        )
        .unwrap_or_else(|_| store.clone());
        Probes {
            store: own,
            reading: Arc::new(tokio::sync::Mutex::new(())),
            last: Mutex::new(None),
        }
    }

    fn remember(&self, data: Arc<ProbeData>) {
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Some(data);
    }

    fn last(&self) -> Option<Arc<ProbeData>> {
        self.last.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

fn read(store: &Store, now_ms: i64) -> Result<ProbeData, StoreError> {
    Ok(ProbeData {
        processes: store.processes()?,
        heartbeats: store.heartbeats()?,
        brokers: store.observation("brokers")?,
        read_at_ms: now_ms,
    })
}

/// A fresh read when one finishes within [`PROBE_WAIT`], else the last (the first read is
/// waited for).
pub async fn data(state: &AppState) -> Result<Arc<ProbeData>, ApiError> {
    let probes = &state.probes;
    let fallback = probes.last();
    let Ok(guard) = probes.reading.clone().try_lock_owned() else {
        // A read is under way: answer from the last one.
        if let Some(last) = fallback {
            return Ok(last);
        }
        let _ = probes.reading.lock().await;
        return probes.last().ok_or_else(unavailable);
    };
    let now = state.clock.now_ms();
    let own = probes.clone();
    // The read is remembered before the lock is let go, so a probe that waited for the lock
    // finds it.
    let task = tokio::task::spawn_blocking(move || {
        let data = read(&own.store, now).map(Arc::new);
        if let Ok(data) = &data {
            own.remember(data.clone());
        }
        drop(guard);
        data
    });
    let result = match fallback {
        Some(last) => match tokio::time::timeout(PROBE_WAIT, task).await {
            Ok(done) => done,
            // Still reading: the read finishes on its own and a later probe uses it.
            Err(_) => return Ok(last),
        },
        None => task.await,
    };
    match result {
        Ok(Ok(data)) => Ok(data),
        _ => probes.last().ok_or_else(unavailable),
    }
}

fn unavailable() -> ApiError {
    ApiError::busy(
        "database unavailable",
        "the probes could not read the database",
        1,
    )
}
