//! The observer's loop honours a sample requested through the database
//! (`POST /api/v1/cluster/refresh-metadata` → `Store::request_sample`), with a short injected poll
//! and an interval far too long to be the reason for a sample.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ballast_observer::pacing::{sample_loop, Pacing};
use ballast_schema::Store;

fn store() -> (Store, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("ballast.db");
    Store::migrate(&db).expect("migrate");
    (Store::open(&db).expect("open"), dir)
}

const PACING: Pacing = Pacing {
    interval: Duration::from_secs(3600),
    request_poll: Duration::from_millis(20),
};

/// Waits until `count` reaches `n` (at most 5 s).
async fn reaches(count: &AtomicUsize, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while count.load(Ordering::SeqCst) < n {
        assert!(Instant::now() < deadline, "tick {n} never came");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_requested_sample_runs_at_the_next_poll_and_the_request_is_cleared_after_it() {
    let (store, _dir) = store();
    let ticks = Arc::new(AtomicUsize::new(0));
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let looping = {
        let store = store.clone();
        let ticks = ticks.clone();
        tokio::spawn(async move {
            sample_loop(
                &store,
                PACING,
                async move {
                    let _ = stop_rx.await;
                },
                || {
                    let ticks = ticks.clone();
                    async move {
                        ticks.fetch_add(1, Ordering::SeqCst);
                    }
                },
            )
            .await;
        })
    };
    reaches(&ticks, 1).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(ticks.load(Ordering::SeqCst), 1, "nothing before the hour");

    let asked = Instant::now();
    store.request_sample(1_000).expect("request");
    reaches(&ticks, 2).await;
    assert!(
        asked.elapsed() < Duration::from_secs(2),
        "{:?}",
        asked.elapsed()
    );
    // Cleared after the sample (a little later than the tick itself).
    let deadline = Instant::now() + Duration::from_secs(2);
    while store.sample_request().expect("read").is_some() {
        assert!(Instant::now() < deadline, "the request was never cleared");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(ticks.load(Ordering::SeqCst), 2, "one sample per request");

    stop_tx.send(()).expect("stop");
    tokio::time::timeout(Duration::from_secs(2), looping)
        .await
        .expect("the loop ends when stopped")
        .expect("no panic");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sample_requested_while_a_sample_runs_triggers_one_more_sample() {
    let (store, _dir) = store();
    let ticks = Arc::new(AtomicUsize::new(0));
    let looping = {
        let store = store.clone();
        let ticks = ticks.clone();
        tokio::spawn(async move {
            let inner = store.clone();
            sample_loop(&store, PACING, std::future::pending::<()>(), || {
                let ticks = ticks.clone();
                let store = inner.clone();
                async move {
                    let n = ticks.fetch_add(1, Ordering::SeqCst) + 1;
                    if n == 2 {
                        // A request arrives while the requested sample runs.
                        store.request_sample(2_000).expect("request");
                    }
                }
            })
            .await;
        })
    };
    reaches(&ticks, 1).await;
    store.request_sample(1_000).expect("request");
    reaches(&ticks, 3).await;
    let deadline = Instant::now() + Duration::from_secs(2);
    while store.sample_request().expect("read").is_some() {
        assert!(Instant::now() < deadline, "the request was never cleared");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(ticks.load(Ordering::SeqCst), 3);
    looping.abort();
}
