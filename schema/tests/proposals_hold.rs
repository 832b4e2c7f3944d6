//! The current proposal holds still while the placement is unchanged (`BALLAST_PROPOSAL_HOLD`).

mod common;

use ballast_schema::{same_basis, Hold, NewProposal, SavedProposal};
use common::fresh_store;
use serde_json::json;

fn proposal(id: &str, fingerprint: &str, digest: &str, moves: u64) -> NewProposal {
    NewProposal {
        id: id.into(),
        fingerprint: fingerprint.into(),
        moves_digest: digest.into(),
        basis: String::new(),
        recommended: true,
        application_allowed: false,
        moves,
        estimated_bytes: 100 * moves,
        balance_hold: false,
        plan: json!({"moves": moves}),
        decision: json!({"applicationAllowed": false, "at": id}),
        detail: json!({}),
    }
}

const HOLD: i64 = 60_000;

#[test]
fn a_plan_of_the_same_placement_and_basis_within_the_hold_keeps_the_current_proposals_id_and_moves_with_the_newest_figures(
) {
    let (_dir, store) = fresh_store();
    let first = store
        .save_proposal_held(&proposal("p-1", "f", "d88", 88), 1_000, 200, HOLD)
        .unwrap();
    assert_eq!(first, SavedProposal::Inserted { id: "p-1".into() });
    // Five seconds later the loads moved a little: the plan has 101 other moves, same
    // placement. The observer re-checks the held proposal with its own moves' figures on
    // this reading (here: what `p-2` carries).
    let mut again = proposal("p-2", "f", "d101", 101);
    again.detail = json!({"shares": "of the newest reading"});
    let again = store.save_proposal_held(&again, 6_000, 200, HOLD).unwrap();
    assert_eq!(again, SavedProposal::Rechecked { id: "p-1".into() });
    let current = store.current_proposal().unwrap().expect("current");
    assert_eq!(current.id, "p-1");
    assert_eq!(current.moves, 88, "the moves the operator saw");
    assert_eq!(current.moves_digest, "d88");
    assert_eq!(current.checked_at_ms, 6_000, "checked again");
    assert_eq!(
        current.decision["at"], "p-2",
        "the decision is the latest reading's"
    );
    assert_eq!(current.detail["shares"], "of the newest reading");
    assert_eq!(current.plan, json!({"moves": 101}), "the figures given");
    assert_eq!(current.estimated_bytes, 10_100);
    assert_eq!(
        store.proposals(10, 0).unwrap().total,
        1,
        "no new proposal minted"
    );
}

#[test]
fn a_changed_placement_or_the_hold_passing_makes_a_new_proposal() {
    let (_dir, store) = fresh_store();
    store
        .save_proposal_held(&proposal("p-1", "f", "d1", 10), 1_000, 200, HOLD)
        .unwrap();
    let moved = store
        .save_proposal_held(&proposal("p-2", "g", "d2", 9), 2_000, 200, HOLD)
        .unwrap();
    assert_eq!(moved, SavedProposal::Inserted { id: "p-2".into() });
    let late = store
        .save_proposal_held(&proposal("p-3", "g", "d3", 8), 2_000 + HOLD, 200, HOLD)
        .unwrap();
    assert_eq!(late, SavedProposal::Inserted { id: "p-3".into() });
    // The same moves are a re-check whatever the hold.
    let same = store
        .save_proposal_held(&proposal("p-4", "g", "d3", 8), 10 * HOLD, 200, HOLD)
        .unwrap();
    assert_eq!(same, SavedProposal::Rechecked { id: "p-3".into() });
}

#[test]
fn a_load_whose_status_changed_replaces_the_held_proposal_at_once() {
    let (_dir, store) = fresh_store();
    let mut first = proposal("p-1", "f", "d1", 10);
    first.basis = "producerMsgRate=measuring".into();
    store.save_proposal_held(&first, 1_000, 200, HOLD).unwrap();
    // The rates are measured now: same placement, same moves even, within the hold.
    let mut measured = proposal("p-2", "f", "d1", 10);
    measured.basis = "producerMsgRate=triggered".into();
    assert_eq!(
        store
            .save_proposal_held(&measured, 2_000, 200, HOLD)
            .unwrap(),
        SavedProposal::Inserted { id: "p-2".into() }
    );
    assert_eq!(
        store.current_proposal().unwrap().expect("current").id,
        "p-2"
    );
}

#[test]
fn the_hold_says_what_saving_would_do_to_the_current_proposal() {
    let (_dir, store) = fresh_store();
    assert_eq!(
        store
            .proposal_hold("f", "d1", "b", 500, HOLD, &same_basis)
            .unwrap(),
        Hold::New,
        "nothing to hold before the first proposal"
    );
    let mut first = proposal("p-1", "f", "d1", 10);
    first.basis = "b".into();
    store.save_proposal_held(&first, 1_000, 200, HOLD).unwrap();
    assert_eq!(
        store
            .proposal_hold("f", "d1", "b", 2_000, HOLD, &same_basis)
            .unwrap(),
        Hold::Same
    );
    assert_eq!(
        store
            .proposal_hold("f", "d2", "b", 2_000, HOLD, &same_basis)
            .unwrap(),
        Hold::Held
    );
    assert_eq!(
        store
            .proposal_hold("f", "d1", "b", 10 * HOLD, HOLD, &same_basis)
            .unwrap(),
        Hold::Same
    );
    assert_eq!(
        store
            .proposal_hold("f", "d2", "b", 10 * HOLD, HOLD, &same_basis)
            .unwrap(),
        Hold::New
    );
    assert_eq!(
        store
            .proposal_hold("g", "d1", "b", 2_000, HOLD, &same_basis)
            .unwrap(),
        Hold::New
    );
    assert_eq!(
        store
            .proposal_hold("f", "d1", "c", 2_000, HOLD, &same_basis)
            .unwrap(),
        Hold::New
    );
    // Asking changes nothing.
    let current = store.current_proposal().unwrap().expect("current");
    assert_eq!((current.id.as_str(), current.checked_at_ms), ("p-1", 1_000));
}

#[test]
fn a_detail_given_as_json_text_is_stored_as_that_json_and_text_that_is_not_json_is_refused() {
    let (_dir, store) = fresh_store();
    let mut p = proposal("p-1", "f", "d1", 10);
    p.detail = serde_json::Value::Null;
    let text = r#"{"shares":[],"topicBreaches":[],"topicSpreadAtLimit":{"t@1":{"brokerId":1,"cap":2,"replicas":2,"topic":"t"}}}"#;
    assert!(store
        .save_proposal_with_detail(&p, "{not json", 1_000, 200, HOLD)
        .is_err());
    assert!(
        store.current_proposal().unwrap().is_none(),
        "nothing stored"
    );
    store
        .save_proposal_with_detail(&p, text, 1_000, 200, HOLD)
        .unwrap();
    let current = store.current_proposal().unwrap().expect("current");
    assert_eq!(
        current.detail,
        serde_json::from_str::<serde_json::Value>(text).unwrap()
    );
}

#[test]
fn the_current_proposals_moves_are_read_without_its_detail() {
    let (_dir, store) = fresh_store();
    assert_eq!(store.current_proposal_moves().unwrap(), None);
    let mut p = proposal("p-1", "f", "d1", 2);
    p.plan = json!({"moves": [{"topic": "t", "partition": 0}, {"topic": "t", "partition": 1}]});
    store.save_proposal_held(&p, 1_000, 200, HOLD).unwrap();
    let text = store.current_proposal_moves().unwrap().expect("moves");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&text).unwrap(),
        p.plan["moves"]
    );
}
