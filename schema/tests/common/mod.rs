//! Helpers shared by the integration tests. Tests of this crate may use rusqlite directly; no
//! other crate may.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use ballast_schema::Store;
use rusqlite::Connection;
use tempfile::TempDir;

/// A migrated database in a fresh temporary directory.
pub fn fresh_store() -> (TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    Store::migrate(&path).unwrap();
    let store = Store::open(&path).unwrap();
    (dir, store)
}

pub fn db_path(dir: &TempDir) -> PathBuf {
    dir.path().join("ballast.db")
}

/// Sets `PRAGMA user_version` behind the store's back.
pub fn set_user_version(path: &Path, v: i64) {
    let conn = Connection::open(path).unwrap();
    conn.pragma_update(None, "user_version", v).unwrap();
}

/// The schema objects of a database (type, name, table, sql), ordered, one per line.
pub fn schema_text(path: &Path) -> String {
    let conn = Connection::open(path).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL
             ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 ELSE 2 END, tbl_name, name",
        )
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok(format!(
                "-- {} {} on {}\n{};\n",
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?
            ))
        })
        .unwrap();
    rows.map(Result::unwrap).collect::<Vec<_>>().join("\n")
}

/// Schema, user_version and every row of every table (except the wall-clock
/// `schema_migrations.applied_at_ms`), as text.
pub fn dump(path: &Path) -> String {
    let conn = Connection::open(path).unwrap();
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    let mut out = format!("user_version {version}\n{}\n", schema_text(path));
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap();
    let tables: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for table in tables {
        let mut stmt = conn.prepare(&format!("SELECT * FROM \"{table}\"")).unwrap();
        let names: Vec<String> = stmt.column_names().iter().map(|s| s.to_string()).collect();
        let mut rows = stmt.query([]).unwrap();
        while let Some(row) = rows.next().unwrap() {
            let mut cells = Vec::new();
            for (i, name) in names.iter().enumerate() {
                if table == "schema_migrations" && name == "applied_at_ms" {
                    continue;
                }
                let v: rusqlite::types::Value = row.get(i).unwrap();
                cells.push(format!("{name}={v:?}"));
            }
            out.push_str(&format!("{table}: {}\n", cells.join(" ")));
        }
    }
    out
}

/// Wall-clock unix milliseconds (tests only; the crate itself never reads the clock).
pub fn wall_ms() -> i64 {
    (wall_us() / 1000) as i64
}

/// Wall-clock unix microseconds.
pub fn wall_us() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_micros()
}
