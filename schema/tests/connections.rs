//! Connection behaviour under contention from another connection (as another process would be).

mod common;

use std::time::{Duration, Instant};

use ballast_schema::{OpenOptions, Store};
use common::db_path;

const T0: i64 = 1_800_000_000_000;

/// Holds the write lock from a foreign connection for `hold`, on another thread.
fn hold_write_lock(path: std::path::PathBuf, hold: Duration) -> std::thread::JoinHandle<()> {
    let (locked_tx, locked_rx) = std::sync::mpsc::channel();
    let handle = std::thread::spawn(move || {
        let mut conn = rusqlite::Connection::open(&path).unwrap();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .unwrap();
        locked_tx.send(()).unwrap();
        std::thread::sleep(hold);
        tx.commit().unwrap();
    });
    locked_rx.recv().unwrap();
    handle
}

#[test]
fn a_write_waits_for_another_writer_within_the_busy_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    Store::migrate(&path).unwrap();
    let store = Store::open(&path).unwrap();

    let holder = hold_write_lock(path.clone(), Duration::from_millis(200));
    let started = Instant::now();
    store.put_setting("k", "v", T0).unwrap();
    assert!(started.elapsed() >= Duration::from_millis(150), "it waited");
    holder.join().unwrap();
    assert_eq!(store.setting("k").unwrap().as_deref(), Some("v"));
}

#[test]
fn a_write_blocked_past_the_busy_timeout_reports_busy() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    Store::migrate(&path).unwrap();
    let store = Store::open_with(
        &path,
        OpenOptions {
            busy_timeout: Duration::from_millis(50),
            pool_size: 1,
        },
    )
    .unwrap();

    let holder = hold_write_lock(path.clone(), Duration::from_millis(600));
    let err = store
        .acquire_slot("x", "apply", None, T0, 1_000)
        .unwrap_err();
    assert!(err.is_busy(), "{err:?}");
    // Readers are not blocked by a writer in WAL mode.
    assert_eq!(store.slot(T0).unwrap(), None);
    holder.join().unwrap();
    assert!(store
        .acquire_slot("x", "apply", None, T0, 1_000)
        .unwrap()
        .is_some());
}

#[test]
fn a_zero_pool_size_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    Store::migrate(&path).unwrap();
    let err = Store::open_with(
        &path,
        OpenOptions {
            pool_size: 0,
            ..OpenOptions::default()
        },
    )
    .unwrap_err();
    assert!(
        matches!(err, ballast_schema::StoreError::Invalid(_)),
        "{err:?}"
    );
}
