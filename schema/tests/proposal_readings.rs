//! `proposal_readings`: what the four-reading and fresh-measurement rules are decided on.

mod common;

use ballast_schema::ProposalReading;
use common::{db_path, fresh_store};

#[test]
fn a_reading_keeps_the_brokers_its_plan_helped() {
    let (_dir, store) = fresh_store();
    let reading = ProposalReading {
        at_ms: 1_000,
        tripped: vec![1, 4],
        helped: vec![4],
    };
    let kept = store.record_proposal_reading(&reading, 100).unwrap();
    assert_eq!(kept, vec![reading]);
}

#[test]
fn readings_stored_before_helped_was_kept_read_as_nothing_helped() {
    let (dir, store) = fresh_store();
    let conn = rusqlite::Connection::open(db_path(&dir)).unwrap();
    conn.execute(
        "INSERT INTO proposal_readings (at_ms, tripped) VALUES (500, '[2, 3]')",
        [],
    )
    .unwrap();
    let readings = store.proposal_readings().unwrap();
    assert_eq!(
        readings,
        vec![ProposalReading {
            at_ms: 500,
            tripped: vec![2, 3],
            helped: Vec::new(),
        }]
    );
}
