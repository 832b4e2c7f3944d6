//! The current proposal holds still while the placement is unchanged (`BALLAST_PROPOSAL_HOLD`).

mod common;

use ballast_schema::{NewProposal, SavedProposal};
use common::fresh_store;
use serde_json::json;

fn proposal(id: &str, fingerprint: &str, digest: &str, moves: u64) -> NewProposal {
    NewProposal {
        id: id.into(),
        fingerprint: fingerprint.into(),
        moves_digest: digest.into(),
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
fn a_plan_of_the_same_placement_within_the_hold_keeps_the_current_proposal_and_its_moves() {
    let (_dir, store) = fresh_store();
    let first = store
        .save_proposal_held(&proposal("p-1", "f", "d88", 88), 1_000, 200, HOLD)
        .unwrap();
    assert_eq!(first, SavedProposal::Inserted { id: "p-1".into() });
    // Five seconds later the loads moved a little: 101 other moves, same placement.
    let again = store
        .save_proposal_held(&proposal("p-2", "f", "d101", 101), 6_000, 200, HOLD)
        .unwrap();
    assert_eq!(again, SavedProposal::Rechecked { id: "p-1".into() });
    let current = store.current_proposal().unwrap().expect("current");
    assert_eq!(current.id, "p-1");
    assert_eq!(current.moves, 88, "the moves the operator saw");
    assert_eq!(current.checked_at_ms, 6_000, "checked again");
    assert_eq!(
        current.decision["at"], "p-2",
        "the decision is the latest reading's"
    );
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
fn a_held_proposals_next_action_names_the_moves_it_keeps_not_the_new_plans() {
    let (_dir, store) = fresh_store();
    let mut first = proposal("p-1", "f", "d88", 88);
    first.estimated_bytes = 2_370_000_000;
    store.save_proposal_held(&first, 1_000, 200, HOLD).unwrap();
    let mut again = proposal("p-2", "f", "d101", 101);
    again.estimated_bytes = 2_460_000_000;
    again.decision = json!({"applicationAllowed": true,
        "nextAction": ballast_model::units::apply_action(101, 2_460_000_000)});
    store.save_proposal_held(&again, 6_000, 200, HOLD).unwrap();
    let current = store.current_proposal().unwrap().expect("current");
    assert_eq!(current.id, "p-1");
    assert_eq!(
        current.decision["nextAction"],
        "apply: 88 partition moves, 2.21 GiB to copy"
    );
    assert_eq!(current.decision["applicationAllowed"], true);
}

#[test]
fn a_recheck_keeps_the_current_proposal_as_saving_would_and_leaves_a_new_one_to_be_saved() {
    let (_dir, store) = fresh_store();
    // Nothing to re-check before the first proposal.
    assert_eq!(
        store
            .recheck_proposal(&proposal("p-0", "f", "d1", 10), 500, HOLD)
            .unwrap(),
        None
    );
    assert!(store.current_proposal().unwrap().is_none());
    store
        .save_proposal_held(&proposal("p-1", "f", "d1", 10), 1_000, 200, HOLD)
        .unwrap();
    // Same placement, other moves, within the hold: re-checked without its detail.
    let mut again = proposal("p-2", "f", "d2", 12);
    again.detail = serde_json::Value::Null;
    assert_eq!(
        store.recheck_proposal(&again, 6_000, HOLD).unwrap(),
        Some(SavedProposal::Rechecked { id: "p-1".into() })
    );
    let current = store.current_proposal().unwrap().expect("current");
    assert_eq!((current.id.as_str(), current.checked_at_ms), ("p-1", 6_000));
    assert_eq!(current.decision["at"], "p-2");
    assert_eq!(current.detail, json!({}), "the stored detail is kept");
    // A changed placement is not re-checked: nothing changes until it is saved.
    assert_eq!(
        store
            .recheck_proposal(&proposal("p-3", "g", "d3", 8), 7_000, HOLD)
            .unwrap(),
        None
    );
    let current = store.current_proposal().unwrap().expect("current");
    assert_eq!((current.id.as_str(), current.checked_at_ms), ("p-1", 6_000));
    // The same moves after the hold are still re-checked; other moves are not.
    assert!(store
        .recheck_proposal(&proposal("p-4", "f", "d1", 10), 10 * HOLD, HOLD)
        .unwrap()
        .is_some());
    assert_eq!(
        store
            .recheck_proposal(&proposal("p-5", "f", "d5", 10), 10 * HOLD, HOLD)
            .unwrap(),
        None
    );
    assert_eq!(store.proposals(10, 0).unwrap().total, 1);
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
