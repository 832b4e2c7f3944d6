//! The audit log: append, read back, page and filter.

mod common;

use ballast_schema::{
    AuditQuery, NewAuditEvent, StoreError, AUDIT_DEFAULT_LIMIT, AUDIT_INTENT, AUDIT_MAX_LIMIT,
};
use common::fresh_store;
use serde_json::json;

const T0: i64 = 1_800_000_000_000;

fn event(at_ms: i64, action: &str, user: &str) -> NewAuditEvent {
    NewAuditEvent {
        at_ms,
        action: action.into(),
        method: "POST".into(),
        user_id: Some(user.into()),
        status: 200,
        summary: json!({"partitions": 1}),
        ..Default::default()
    }
}

#[test]
fn audit_events_round_trip() {
    let (_dir, store) = fresh_store();
    let apply = NewAuditEvent {
        at_ms: T0,
        action: "reassignments.apply".into(),
        method: "MCP".into(),
        user_id: Some("approver".into()),
        requested_by: Some("agent".into()),
        status: 202,
        target: Some("orders-3".into()),
        summary: json!({"moves": 3}),
        before: Some(json!({"replicas": [1, 2, 3]})),
        after: Some(json!({"replicas": [1, 2, 4]})),
        forced: true,
        related_event_id: None,
        details: Some("forced past stale fingerprint".into()),
    };
    let id = store.insert_audit(&apply).unwrap();
    let got = store.audit_event(id).unwrap().unwrap();
    assert_eq!(got.id, id);
    assert_eq!(got.action, apply.action);
    assert_eq!(got.method, "MCP");
    assert_eq!(got.user_id, apply.user_id);
    assert_eq!(got.requested_by, apply.requested_by);
    assert_eq!(got.status, 202);
    assert_eq!(got.target, apply.target);
    assert_eq!(got.summary, apply.summary);
    assert_eq!(got.before, apply.before);
    assert_eq!(got.after, apply.after);
    assert!(got.forced);
    assert_eq!(got.details, apply.details);

    // A later failure points at the apply.
    let failure = NewAuditEvent {
        status: 500,
        related_event_id: Some(id),
        forced: false,
        ..apply.clone()
    };
    let failure_id = store.insert_audit(&failure).unwrap();
    assert!(failure_id > id);
    let got = store.audit_event(failure_id).unwrap().unwrap();
    assert_eq!(got.related_event_id, Some(id));
    assert_eq!(got.status, 500);

    let json = serde_json::to_value(&got).unwrap();
    assert_eq!(json["userId"], "approver");
    assert_eq!(json["requestedBy"], "agent");
    assert_eq!(json["relatedEventId"], id);
    assert_eq!(json["atMs"], T0);

    assert_eq!(store.audit_event(9_999).unwrap(), None);
}

#[test]
fn related_event_must_exist_and_status_must_be_http_like() {
    let (_dir, store) = fresh_store();
    let err = store
        .insert_audit(&NewAuditEvent {
            related_event_id: Some(42),
            ..event(T0, "reassignments.apply", "u")
        })
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound(_)), "{err:?}");
    for status in [0, 99, 600] {
        let err = store
            .insert_audit(&NewAuditEvent {
                status,
                ..event(T0, "x", "u")
            })
            .unwrap_err();
        assert!(matches!(err, StoreError::Invalid(_)), "{err:?}");
    }
    assert_eq!(store.list_audit(&AuditQuery::default()).unwrap().total, 0);
}

#[test]
fn audit_events_are_append_only() {
    let (dir, store) = fresh_store();
    let id = store.insert_audit(&event(T0, "x", "u")).unwrap();
    let conn = rusqlite::Connection::open(common::db_path(&dir)).unwrap();
    let err = conn
        .execute("UPDATE audit_events SET status = 500 WHERE id = ?1", [id])
        .unwrap_err();
    assert!(err.to_string().contains("append-only"), "{err}");
}

#[test]
fn an_intent_is_completed_once_and_then_never_changes() {
    let (dir, store) = fresh_store();
    let id = store
        .insert_audit_intent(&event(T0, "topics.config.update", "u"))
        .unwrap();
    let intent = store.audit_event(id).unwrap().unwrap();
    assert_eq!(intent.status, AUDIT_INTENT);
    assert!(intent.before.is_none() && intent.after.is_none());
    store
        .complete_audit(
            id,
            200,
            Some(&json!({"a": 1})),
            Some(&json!({"a": 2})),
            None,
        )
        .unwrap();
    let done = store.audit_event(id).unwrap().unwrap();
    assert_eq!(
        (done.status, done.before, done.after),
        (200, Some(json!({"a": 1})), Some(json!({"a": 2})))
    );
    assert!(done.details.is_none());
    // Completed: neither completed again, nor withdrawn, nor changed by hand.
    assert!(matches!(
        store.complete_audit(id, 500, None, None, None),
        Err(StoreError::Conflict(_))
    ));
    assert!(!store.withdraw_audit(id).unwrap());
    let conn = rusqlite::Connection::open(common::db_path(&dir)).unwrap();
    assert!(conn
        .execute("DELETE FROM audit_events WHERE id = ?1", [id])
        .is_err());
    assert!(conn
        .execute("UPDATE audit_events SET after = '{}' WHERE id = ?1", [id])
        .is_err());
}

#[test]
fn an_intent_may_change_only_its_outcome() {
    let (dir, store) = fresh_store();
    let id = store.insert_audit_intent(&event(T0, "x", "u")).unwrap();
    let conn = rusqlite::Connection::open(common::db_path(&dir)).unwrap();
    for column in [
        "action = 'y'",
        "user_id = 'mallory'",
        "at_ms = 1",
        "summary = '{}'",
    ] {
        let err = conn
            .execute(
                &format!("UPDATE audit_events SET {column} WHERE id = ?1"),
                [id],
            )
            .unwrap_err();
        assert!(err.to_string().contains("append-only"), "{column}: {err}");
    }
    assert!(store
        .complete_audit(id, AUDIT_INTENT, None, None, None)
        .is_err());
}

#[test]
fn a_withdrawn_intent_is_gone_and_stale_intents_are_failed() {
    let (_dir, store) = fresh_store();
    let refused = store.insert_audit_intent(&event(T0, "x", "u")).unwrap();
    assert!(store.withdraw_audit(refused).unwrap());
    assert!(store.audit_event(refused).unwrap().is_none());
    let old = store.insert_audit_intent(&event(T0, "x", "u")).unwrap();
    let new = store
        .insert_audit_intent(&event(T0 + 10, "x", "u"))
        .unwrap();
    assert_eq!(store.fail_stale_audit_intents(T0 + 5, "ended").unwrap(), 1);
    let old = store.audit_event(old).unwrap().unwrap();
    assert_eq!((old.status, old.details.as_deref()), (500, Some("ended")));
    assert_eq!(
        store.audit_event(new).unwrap().unwrap().status,
        AUDIT_INTENT
    );
}

#[test]
fn audit_list_is_newest_first_and_paged() {
    let (_dir, store) = fresh_store();
    let mut ids = Vec::new();
    for i in 0..120 {
        // Two events share each timestamp: ties are broken by id, newest first.
        ids.push(store.insert_audit(&event(T0 + i / 2, "a", "u")).unwrap());
    }
    ids.reverse();

    let page = store.list_audit(&AuditQuery::default()).unwrap();
    assert_eq!(page.total, 120);
    assert_eq!(page.events.len(), AUDIT_DEFAULT_LIMIT as usize);
    let got: Vec<i64> = page.events.iter().map(|e| e.id).collect();
    assert_eq!(got, ids[..50]);

    let page = store
        .list_audit(&AuditQuery {
            limit: Some(30),
            offset: Some(100),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(page.total, 120);
    let got: Vec<i64> = page.events.iter().map(|e| e.id).collect();
    assert_eq!(got, ids[100..]);

    let page = store
        .list_audit(&AuditQuery {
            limit: Some(10_000),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(page.events.len(), 120.min(AUDIT_MAX_LIMIT as usize));
}

#[test]
fn audit_list_filters_combine() {
    let (_dir, store) = fresh_store();
    let apply = store
        .insert_audit(&NewAuditEvent {
            target: Some("orders".into()),
            ..event(T0, "reassignments.apply", "alice")
        })
        .unwrap();
    let heal = store
        .insert_audit(&NewAuditEvent {
            method: "INTERNAL".into(),
            details: Some("Rack fix for Payments".into()),
            ..event(T0 + 1_000, "selfheal.apply", "pilot")
        })
        .unwrap();
    let mcp = store
        .insert_audit(&NewAuditEvent {
            method: "MCP".into(),
            requested_by: Some("bob".into()),
            summary: json!({"topic": "invoices"}),
            ..event(T0 + 2_000, "reassignments.apply", "alice")
        })
        .unwrap();

    let ids = |q: AuditQuery| -> Vec<i64> {
        let page = store.list_audit(&q).unwrap();
        assert_eq!(page.total as usize, page.events.len());
        page.events.iter().map(|e| e.id).collect()
    };
    assert_eq!(
        ids(AuditQuery {
            action: Some("reassignments.apply".into()),
            ..Default::default()
        }),
        vec![mcp, apply]
    );
    // `user` matches the acting user or the requester.
    assert_eq!(
        ids(AuditQuery {
            user: Some("bob".into()),
            ..Default::default()
        }),
        vec![mcp]
    );
    assert_eq!(
        ids(AuditQuery {
            user: Some("alice".into()),
            ..Default::default()
        }),
        vec![mcp, apply]
    );
    // since and until are inclusive.
    assert_eq!(
        ids(AuditQuery {
            since_ms: Some(T0 + 1_000),
            until_ms: Some(T0 + 1_000),
            ..Default::default()
        }),
        vec![heal]
    );
    // Text searches action, target, summary and details, ignoring ASCII case.
    assert_eq!(
        ids(AuditQuery {
            text: Some("payments".into()),
            ..Default::default()
        }),
        vec![heal]
    );
    assert_eq!(
        ids(AuditQuery {
            text: Some("INVOICES".into()),
            ..Default::default()
        }),
        vec![mcp]
    );
    assert_eq!(
        ids(AuditQuery {
            text: Some("orders".into()),
            ..Default::default()
        }),
        vec![apply]
    );
    // LIKE wildcards are plain characters.
    assert_eq!(
        ids(AuditQuery {
            text: Some("%".into()),
            ..Default::default()
        }),
        Vec::<i64>::new()
    );
    // Filters combine; blank filters are ignored.
    assert_eq!(
        ids(AuditQuery {
            action: Some("reassignments.apply".into()),
            user: Some("alice".into()),
            since_ms: Some(T0 + 1),
            text: Some(" ".into()),
            ..Default::default()
        }),
        vec![mcp]
    );
}
