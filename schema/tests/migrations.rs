//! Migrations: idempotence, fresh == stepwise == the checked-in schema, version refusal.

mod common;

use std::path::Path;

use ballast_schema::{OpenOptions, Store, StoreError, LATEST_VERSION};
use common::{db_path, dump, schema_text, set_user_version};

const SNAPSHOT: &str = "tests/snapshots/schema.sql";

#[test]
fn migrations_are_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);

    let first = Store::migrate(&path).unwrap();
    assert_eq!(first.from, 0);
    assert_eq!(first.to, LATEST_VERSION);
    assert_eq!(first.applied.len(), LATEST_VERSION as usize);
    assert_eq!(first.applied[0], "0001_init");
    let schema_after_first = schema_text(&path);
    let dump_after_first = dump(&path);

    let second = Store::migrate(&path).unwrap();
    assert_eq!(second.from, LATEST_VERSION);
    assert_eq!(second.to, LATEST_VERSION);
    assert!(second.applied.is_empty(), "{second:?}");
    assert_eq!(schema_text(&path), schema_after_first);
    assert_eq!(dump(&path), dump_after_first);
}

#[test]
fn migrations_are_recorded_in_user_version_and_schema_migrations() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    Store::migrate(&path).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let v: u32 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(v, LATEST_VERSION);
    let rows: Vec<(u32, String, i64)> = conn
        .prepare("SELECT version, name, applied_at_ms FROM schema_migrations ORDER BY version")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows.len(), LATEST_VERSION as usize);
    assert_eq!((rows[0].0, rows[0].1.as_str()), (1, "0001_init"));
    // Informational wall-clock timestamp filled in by SQLite: after 2020, in milliseconds.
    assert!(rows[0].2 > 1_577_836_800_000, "{}", rows[0].2);
}

#[test]
fn fresh_database_equals_migrated_database() {
    // Migrating a new file at once ...
    let dir = tempfile::tempdir().unwrap();
    let at_once = dir.path().join("at_once.db");
    Store::migrate(&at_once).unwrap();

    // ... equals stepping through every version with a reopen in between (an upgrade path) ...
    let stepwise = dir.path().join("stepwise.db");
    for v in 1..=LATEST_VERSION {
        let report = Store::migrate_to(&stepwise, v, OpenOptions::default()).unwrap();
        assert_eq!(report.to, v);
    }
    assert_eq!(dump(&stepwise), dump(&at_once));

    // ... and equals the reviewed, checked-in schema (run with UPDATE_EXPECT=1 to rewrite it
    // after adding a migration).
    let actual = schema_text(&at_once);
    let snapshot = Path::new(env!("CARGO_MANIFEST_DIR")).join(SNAPSHOT);
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&snapshot, &actual).unwrap();
    }
    let expected = std::fs::read_to_string(&snapshot).unwrap_or_default();
    assert!(
        actual == expected,
        "schema differs from {SNAPSHOT}; rerun with UPDATE_EXPECT=1 and review the diff\n{actual}"
    );
}

#[test]
fn newer_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    Store::migrate(&path).unwrap();
    let newer = LATEST_VERSION + 6;
    set_user_version(&path, i64::from(newer));
    let before = dump(&path);

    let err = Store::migrate(&path).unwrap_err();
    assert!(
        matches!(err, StoreError::SchemaTooNew { found, supported, .. }
            if found == newer && supported == LATEST_VERSION),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "database {} has schema version {newer} but this ballast knows up to {LATEST_VERSION}: \
             it was written by a newer ballast; upgrade ballast or restore a backup",
            path.display()
        )
    );

    let err = Store::open(&path).unwrap_err();
    assert!(
        matches!(err, StoreError::SchemaTooNew { found, .. } if found == newer),
        "{err:?}"
    );
    assert_eq!(dump(&path), before, "a refused database is left untouched");
}

#[test]
fn older_database_is_refused_by_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    // An existing SQLite file that was never migrated (version 0).
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE unrelated (x INTEGER)")
        .unwrap();

    let err = Store::open(&path).unwrap_err();
    assert!(
        matches!(err, StoreError::SchemaTooOld { found: 0, expected, .. } if expected == LATEST_VERSION),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("run `ballast run` (the supervisor migrates) first"),
        "{msg}"
    );
    assert_eq!(common::dump(&path).lines().next(), Some("user_version 0"));

    // The supervisor's migrate brings it up to date; then open succeeds.
    let report = Store::migrate(&path).unwrap();
    assert_eq!((report.from, report.to), (0, LATEST_VERSION));
    let store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), LATEST_VERSION);
    store.check_schema_version().unwrap();
}

#[test]
fn missing_database_is_refused_by_open_and_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data").join("ballast.db");
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Missing { .. }), "{err:?}");
    assert!(err.to_string().contains("does not exist"), "{err}");
    assert!(!path.exists());
    assert!(!path.parent().unwrap().exists());
}

#[test]
fn migrate_creates_the_parent_directory_and_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a").join("b").join("ballast.db");
    Store::migrate(&path).unwrap();
    assert!(path.is_file());
    let store = Store::open(&path).unwrap();
    assert_eq!(store.path(), path.as_path());
    assert_eq!(store.connection_settings().unwrap().journal_mode, "wal");
}

#[test]
fn a_worker_notices_when_the_database_is_upgraded_under_it() {
    let (dir, store) = common::fresh_store();
    store.check_schema_version().unwrap();
    set_user_version(&db_path(&dir), i64::from(LATEST_VERSION + 1));
    let err = store.check_schema_version().unwrap_err();
    assert!(matches!(err, StoreError::SchemaTooNew { .. }), "{err:?}");
}

#[test]
fn errors_are_lowercase_and_do_not_repeat_their_source() {
    let dir = tempfile::tempdir().unwrap();
    // A directory where the file should be: SQLite cannot open it.
    let path = dir.path().join("ballast.db");
    std::fs::create_dir(&path).unwrap();
    let err = Store::migrate(&path).unwrap_err();
    assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
    let msg = err.to_string();
    assert_eq!(msg, format!("could not open database {}", path.display()));
    let source = std::error::Error::source(&err)
        .expect("has a source")
        .to_string();
    assert!(!msg.contains(&source), "{msg} repeats {source}");
}
