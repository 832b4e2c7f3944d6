//! Pending MCP mutations: one decision wins, expiry, finishing.

mod common;

use ballast_schema::{ApprovalState, Decision, NewApproval, StoreError};
use common::fresh_store;
use serde_json::json;

const T0: i64 = 1_800_000_000_000;

fn new_approval(ttl_ms: i64) -> NewApproval {
    NewApproval {
        tool: "apply_proposal".into(),
        arguments: json!({"proposalId": "p-1"}),
        requested_by: Some("agent-1".into()),
        ttl_ms,
    }
}

#[test]
fn created_approvals_are_pending_with_a_random_token() {
    let (_dir, store) = fresh_store();
    let a = store.create_approval(&new_approval(60_000), T0).unwrap();
    let b = store.create_approval(&new_approval(60_000), T0).unwrap();
    assert_ne!(a.id, b.id);
    assert_eq!(a.id.len(), 32);
    assert!(a.id.chars().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(a.state, ApprovalState::Pending);
    assert_eq!(a.expires_at_ms, T0 + 60_000);
    assert_eq!(store.approval(&a.id).unwrap(), Some(a.clone()));
    assert_eq!(store.approval("nope").unwrap(), None);

    let json = serde_json::to_value(&a).unwrap();
    assert_eq!(json["state"], "pending");
    assert_eq!(json["requestedBy"], "agent-1");
    assert_eq!(json["arguments"]["proposalId"], "p-1");
}

#[test]
fn only_one_decision_wins() {
    let (_dir, store) = fresh_store();
    let a = store.create_approval(&new_approval(60_000), T0).unwrap();

    // Concurrent deciders: exactly one succeeds.
    let results: Vec<Result<_, StoreError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let store = store.clone();
                let id = a.id.clone();
                let decision = if i % 2 == 0 {
                    Decision::Approve
                } else {
                    Decision::Reject
                };
                s.spawn(move || store.decide_approval(&id, decision, &format!("user-{i}"), T0 + 1))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let winners: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(winners.len(), 1, "{results:?}");
    for r in &results {
        if let Err(e) = r {
            assert!(
                matches!(e, StoreError::Conflict(m) if m.contains("already")),
                "{e:?}"
            );
        }
    }
    let stored = store.approval(&a.id).unwrap().unwrap();
    assert_eq!(&stored, winners[0]);
    assert_eq!(stored.decided_at_ms, Some(T0 + 1));
    assert!(matches!(
        stored.state,
        ApprovalState::Approved | ApprovalState::Rejected
    ));

    // A later decision is refused and changes nothing.
    let err = store
        .decide_approval(&a.id, Decision::Reject, "late", T0 + 2)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("approval {} is already {}", a.id, stored.state)
    );
    assert_eq!(store.approval(&a.id).unwrap().unwrap(), stored);
    assert!(store.pending_approvals(T0 + 2).unwrap().is_empty());
}

#[test]
fn an_expired_approval_cannot_be_approved() {
    let (_dir, store) = fresh_store();
    let a = store.create_approval(&new_approval(1_000), T0).unwrap();
    // Expired from expires_at_ms on.
    let err = store
        .decide_approval(&a.id, Decision::Approve, "approver", T0 + 1_000)
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::Conflict(m) if m.contains("expired")),
        "{err:?}"
    );
    let stored = store.approval(&a.id).unwrap().unwrap();
    assert_eq!(stored.state, ApprovalState::Expired, "marked expired");
    assert_eq!(stored.decided_by, None);

    // Still refused afterwards, even with a clock that went backwards.
    let err = store
        .decide_approval(&a.id, Decision::Approve, "approver", T0 + 10)
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");
}

#[test]
fn pending_approvals_leave_out_expired_ones_and_expire_marks_them() {
    let (_dir, store) = fresh_store();
    let short = store.create_approval(&new_approval(1_000), T0).unwrap();
    let long = store.create_approval(&new_approval(5_000), T0 + 1).unwrap();
    let decided = store.create_approval(&new_approval(5_000), T0 + 2).unwrap();
    store
        .decide_approval(&decided.id, Decision::Reject, "approver", T0 + 3)
        .unwrap();

    let ids = |v: Vec<ballast_schema::Approval>| v.into_iter().map(|a| a.id).collect::<Vec<_>>();
    assert_eq!(
        ids(store.pending_approvals(T0 + 999).unwrap()),
        vec![short.id.clone(), long.id.clone()]
    );
    assert_eq!(
        ids(store.pending_approvals(T0 + 1_000).unwrap()),
        vec![long.id.clone()]
    );

    assert_eq!(store.expire_approvals(T0 + 1_000).unwrap(), 1);
    assert_eq!(store.expire_approvals(T0 + 1_000).unwrap(), 0);
    assert_eq!(
        store.approval(&short.id).unwrap().unwrap().state,
        ApprovalState::Expired
    );
    assert_eq!(
        store.approval(&decided.id).unwrap().unwrap().state,
        ApprovalState::Rejected,
        "decided approvals never expire"
    );
}

#[test]
fn finishing_requires_an_approved_approval() {
    let (_dir, store) = fresh_store();
    let a = store.create_approval(&new_approval(60_000), T0).unwrap();
    let err = store.finish_approval(&a.id, true, &json!({})).unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");

    store
        .decide_approval(&a.id, Decision::Approve, "approver", T0 + 1)
        .unwrap();
    store
        .finish_approval(&a.id, true, &json!({"status": "completed"}))
        .unwrap();
    let done = store.approval(&a.id).unwrap().unwrap();
    assert_eq!(done.state, ApprovalState::Executed);
    assert_eq!(done.result, Some(json!({"status": "completed"})));
    assert_eq!(done.decided_by.as_deref(), Some("approver"));
    assert!(
        store.finish_approval(&a.id, false, &json!({})).is_err(),
        "only once"
    );

    let b = store.create_approval(&new_approval(60_000), T0).unwrap();
    store
        .decide_approval(&b.id, Decision::Approve, "approver", T0 + 1)
        .unwrap();
    store
        .finish_approval(&b.id, false, &json!({"error": "boom"}))
        .unwrap();
    assert_eq!(
        store.approval(&b.id).unwrap().unwrap().state,
        ApprovalState::Failed
    );

    let err = store
        .finish_approval("missing", true, &json!({}))
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound(_)), "{err:?}");
    let err = store
        .decide_approval("missing", Decision::Approve, "x", T0)
        .unwrap_err();
    assert_eq!(err.to_string(), "approval missing not found");
}

#[test]
fn bad_approval_input_is_refused() {
    let (_dir, store) = fresh_store();
    let err = store.create_approval(&new_approval(0), T0).unwrap_err();
    assert!(matches!(err, StoreError::Invalid(_)), "{err:?}");
    let mut empty_tool = new_approval(1_000);
    empty_tool.tool = String::new();
    assert!(matches!(
        store.create_approval(&empty_tool, T0).unwrap_err(),
        StoreError::Invalid(_)
    ));
}
