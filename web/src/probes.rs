//! The probes (`/api/v1/health`, `/api/v1/ready`) answer without waiting on the database pool or
//! on other requests: they read through a connection of their own (not the pool the other
//! requests share), at most one read at a time. A probe within [`PROBE_REUSE`] of the last read
//! answers from it without reading (a liveness checker polling every few seconds gets a fresh
//! read each time; a thousand probes a second under load cost four reads); otherwise it reads,
//! and when that read does not finish within [`PROBE_WAIT`] (the database is busy, the machine
//! is saturated) it answers from the last read. Every answer says when its read was taken
//! (`detailsAsOf`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ballast_schema::{Heartbeat, Observation, OpenOptions, ProcessRecord, Store, StoreError};

use crate::{ApiError, AppState};

/// How long a probe waits for a fresh read before it answers from the last one.
pub const PROBE_WAIT: Duration = Duration::from_millis(25);

/// How long a read answers the probes that follow it without another read.
pub const PROBE_REUSE: Duration = Duration::from_millis(250);

/// What the probes read: every process, every heartbeat, the broker view's freshness.
#[derive(Debug, Clone)]
pub struct ProbeData {
    pub processes: Vec<ProcessRecord>,
    pub heartbeats: Vec<Heartbeat>,
    pub brokers: Option<Observation>,
    /// When it was read (the service's clock).
    pub read_at_ms: i64,
}

/// The last read and when it finished (a monotonic instant: the reuse window is wall time on
/// this machine, whatever the service's clock says).
struct Last {
    at: Instant,
    data: Arc<ProbeData>,
}

/// The probes' own connection and their last read.
pub struct Probes {
    store: Store,
    reading: Arc<tokio::sync::Mutex<()>>,
    last: Mutex<Option<Last>>,
    reuse: Duration,
    reads: AtomicU64,
}

impl Probes {
    /// A connection of the probes' own to `store`'s database (the shared pool when it cannot be
    /// opened).
    pub fn new(store: &Store) -> Probes {
        Probes::with_reuse(store, PROBE_REUSE)
    }

    /// As [`Probes::new`], a read answering the probes within `reuse` of it.
    pub fn with_reuse(store: &Store, reuse: Duration) -> Probes {
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
            reuse,
            reads: AtomicU64::new(0),
        }
    }

    /// How many reads of the database the probes have made.
    pub fn reads(&self) -> u64 {
        self.reads.load(Ordering::Relaxed)
    }

    fn remember(&self, data: Arc<ProbeData>) {
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Some(Last {
            at: Instant::now(),
            data,
        });
    }

    /// The last read, and whether it is within the reuse window.
    fn last(&self) -> Option<(Arc<ProbeData>, bool)> {
        let last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        last.as_ref()
            .map(|l| (l.data.clone(), l.at.elapsed() < self.reuse))
    }

    /// The last read within the reuse window; else a fresh read when one finishes within
    /// [`PROBE_WAIT`], else the last (the first read is waited for). `None` when nothing could be
    /// read.
    pub async fn data(self: &Arc<Self>, now_ms: i64) -> Option<Arc<ProbeData>> {
        let fallback = match self.last() {
            Some((recent, true)) => return Some(recent),
            last => last.map(|(data, _)| data),
        };
        let Ok(guard) = self.reading.clone().try_lock_owned() else {
            // A read is under way: answer from the last one.
            if fallback.is_some() {
                return fallback;
            }
            let _ = self.reading.lock().await;
            return self.last().map(|(data, _)| data);
        };
        let own = self.clone();
        // The read is remembered before the lock is let go, so a probe that waited for the lock
        // finds it.
        let task = tokio::task::spawn_blocking(move || {
            own.reads.fetch_add(1, Ordering::Relaxed);
            let data = read(&own.store, now_ms).map(Arc::new);
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
                Err(_) => return Some(last),
            },
            None => task.await,
        };
        match result {
            Ok(Ok(data)) => Some(data),
            _ => self.last().map(|(data, _)| data),
        }
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

/// The probes' data for a request (see [`Probes::data`]).
pub async fn data(state: &AppState) -> Result<Arc<ProbeData>, ApiError> {
    state
        .probes
        .data(state.clock.now_ms())
        .await
        .ok_or_else(unavailable)
}

fn unavailable() -> ApiError {
    ApiError::busy(
        "database unavailable",
        "the probes could not read the database",
        1,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(dir: &tempfile::TempDir) -> Store {
        let db = dir.path().join("ballast.db");
        Store::migrate(&db).expect("migrate");
        Store::open(&db).expect("open")
    }

    fn beat(store: &Store, name: &str) {
        store
            .heartbeat(name, 7, 1_000, &serde_json::json!({}))
            .expect("heartbeat");
    }

    #[tokio::test]
    async fn probes_within_the_reuse_window_answer_from_the_last_read_without_reading() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = store(&dir);
        let probes = Arc::new(Probes::with_reuse(&store, Duration::from_secs(3600)));
        let first = probes.data(1).await.expect("first read");
        assert!(first.heartbeats.is_empty());
        beat(&store, "observer");
        let many: Vec<_> = (0..50)
            .map(|i| {
                let probes = probes.clone();
                tokio::spawn(async move { probes.data(2 + i).await })
            })
            .collect();
        for probe in many {
            let data = probe.await.expect("probe").expect("data");
            assert_eq!(data.read_at_ms, 1);
            assert!(data.heartbeats.is_empty());
        }
        assert_eq!(probes.reads(), 1);
    }

    #[tokio::test]
    async fn a_probe_after_the_reuse_window_reads_again() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = store(&dir);
        let probes = Arc::new(Probes::with_reuse(&store, Duration::ZERO));
        assert!(probes.data(1).await.expect("read").heartbeats.is_empty());
        beat(&store, "observer");
        let data = probes.data(2).await.expect("read");
        assert_eq!(data.read_at_ms, 2);
        assert_eq!(data.heartbeats.len(), 1);
        assert_eq!(probes.reads(), 2);
    }
}
