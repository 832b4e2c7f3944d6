//! Reassignment operations: queuing takes the slot with the operation, one runs at a time, the
//! executor's writes are fenced, finishing releases the slot, cancel is a request.

mod common;

use ballast_schema::{
    AuditQuery, CancelRequest, MoveState, NewAuditEvent, NewMove, NewOperation, OperationState,
    Queued,
};
use common::fresh_store;

const T0: i64 = 1_800_000_000_000;

fn op(moves: usize) -> NewOperation {
    NewOperation {
        kind: "bulk".into(),
        strategy: "BULK_MANUAL".into(),
        method: "POST".into(),
        requested_by: Some("alice".into()),
        detail: serde_json::json!({}),
        moves: (0..moves)
            .map(|p| NewMove {
                topic: "orders".into(),
                partition: p as i32,
                source: vec![1, 2, 3],
                target: vec![4, 2, 3],
                steps: 1,
                bytes_total: 1000,
                phase: 0,
            })
            .collect(),
        ..NewOperation::default()
    }
}

fn audit() -> NewAuditEvent {
    NewAuditEvent {
        at_ms: T0,
        action: "reassignments.apply".into(),
        method: "POST".into(),
        status: 200,
        summary: serde_json::json!({}),
        ..NewAuditEvent::default()
    }
}

#[test]
fn queuing_takes_the_slot_and_a_second_mutation_is_refused_until_the_first_finishes() {
    let (_dir, store) = fresh_store();
    let Queued::Started {
        id,
        lease,
        audit_event_id,
    } = store
        .queue_operation(&op(2), Some(&audit()), T0, 30_000)
        .unwrap()
    else {
        panic!("the slot is free");
    };
    assert!(audit_event_id.is_some());
    let holder = store.slot(T0).unwrap().expect("held");
    assert_eq!(holder.operation_id.as_deref(), Some(id.as_str()));

    // Refused while held, and refused while the operation is unfinished even after the lease
    // expired (an executor that was down for longer than the lease).
    assert!(matches!(
        store.queue_operation(&op(1), None, T0 + 1, 30_000).unwrap(),
        Queued::Busy(_)
    ));
    let Queued::Busy(busy) = store
        .queue_operation(&op(1), None, T0 + 60_000, 30_000)
        .unwrap()
    else {
        panic!("an unfinished operation keeps the slot busy");
    };
    assert_eq!(busy.operation_id.as_deref(), Some(id.as_str()));
    assert!(store
        .acquire_idle_slot("web:election", "election", T0 + 1, 1_000)
        .unwrap()
        .is_err());

    store.start_operation(&lease, &id, T0 + 5).unwrap();
    store
        .finish_operation(
            Some(&lease),
            &id,
            OperationState::Completed,
            None,
            None,
            T0 + 10,
        )
        .unwrap();
    assert_eq!(
        store.slot(T0 + 10).unwrap(),
        None,
        "finishing released the slot"
    );
    assert!(matches!(
        store
            .queue_operation(&op(1), None, T0 + 11, 30_000)
            .unwrap(),
        Queued::Started { .. }
    ));
}

#[test]
fn a_busy_queue_writes_nothing_and_an_invalid_operation_is_refused() {
    let (_dir, store) = fresh_store();
    assert!(store.queue_operation(&op(0), None, T0, 30_000).is_err());
    assert_eq!(store.operations(None, 10, 0).unwrap().total, 0);
    assert!(store.slot(T0).unwrap().is_none());
}

#[test]
fn move_updates_by_a_superseded_executor_are_fenced() {
    let (_dir, store) = fresh_store();
    let Queued::Started { id, lease, .. } = store.queue_operation(&op(1), None, T0, 1_000).unwrap()
    else {
        panic!("free");
    };
    let mut u = store.moves(&id).unwrap()[0].clone();
    u.state = MoveState::Submitting;
    u.submitted = Some(vec![4, 2, 3]);
    store
        .update_moves(Some(&lease), &[u.clone()], T0 + 1)
        .unwrap();
    assert_eq!(store.tracked_moves().unwrap().len(), 1);

    // The lease expires and the executor re-acquires for the operation: the old lease is stale.
    let renewed = store
        .acquire_slot(&lease.holder, "reassignment", Some(&id), T0 + 5_000, 1_000)
        .unwrap()
        .expect("free again");
    u.state = MoveState::Active;
    let err = store
        .update_moves(Some(&lease), &[u.clone()], T0 + 5_001)
        .unwrap_err();
    assert!(err.is_fenced(), "{err}");
    store
        .update_moves(Some(&renewed), &[u], T0 + 5_001)
        .unwrap();
    assert_eq!(store.moves(&id).unwrap()[0].state, MoveState::Active);
}

#[test]
fn cancel_is_a_request_on_an_unfinished_operation_only() {
    let (_dir, store) = fresh_store();
    let Queued::Started { id, lease, .. } =
        store.queue_operation(&op(1), None, T0, 30_000).unwrap()
    else {
        panic!("free");
    };
    assert!(matches!(
        store.request_cancel(&id, T0 + 1).unwrap(),
        CancelRequest::Requested(o) if o.cancel_requested
    ));
    assert!(store.operation(&id).unwrap().unwrap().cancel_requested);
    store
        .finish_operation(
            Some(&lease),
            &id,
            OperationState::Cancelled,
            Some("cancelled"),
            None,
            T0 + 2,
        )
        .unwrap();
    assert!(matches!(
        store.request_cancel(&id, T0 + 3).unwrap(),
        CancelRequest::AlreadyFinished(_)
    ));
    assert_eq!(
        store.request_cancel("op-nope", T0).unwrap(),
        CancelRequest::NotFound
    );
}

#[test]
fn a_move_update_and_its_audit_event_are_written_together_or_not_at_all() {
    let (_dir, store) = fresh_store();
    let Queued::Started { id, .. } = store.queue_operation(&op(1), None, T0, 30_000).unwrap()
    else {
        panic!("the slot is free");
    };
    let before = store.moves(&id).unwrap();
    let mut timed_out = before[0].clone();
    timed_out.state = MoveState::Cancelled;
    timed_out.timed_out = true;
    let event = |related: Option<i64>| NewAuditEvent {
        action: "reassignments.timeout".into(),
        method: "INTERNAL".into(),
        related_event_id: related,
        ..audit()
    };
    let query = ballast_schema::AuditQuery {
        action: Some("reassignments.timeout".into()),
        ..Default::default()
    };
    // An event the store refuses (it names no event) takes the move update with it.
    assert!(store
        .update_moves_audited(None, &[timed_out.clone()], &[event(Some(999))], T0 + 1)
        .is_err());
    assert_eq!(store.moves(&id).unwrap(), before);
    assert!(store.list_audit(&query).unwrap().events.is_empty());
    // Both go in.
    store
        .update_moves_audited(None, &[timed_out.clone()], &[event(None)], T0 + 2)
        .unwrap();
    assert_eq!(store.moves(&id).unwrap(), vec![timed_out]);
    assert_eq!(store.list_audit(&query).unwrap().events.len(), 1);
}

#[test]
fn an_operation_an_agent_started_is_audited_once_per_partition_besides_the_operation() {
    let (_dir, store) = fresh_store();
    let mut e = audit();
    e.method = "MCP".into();
    e.user_id = Some("approver".into());
    e.requested_by = Some("agent".into());
    let Queued::Started {
        id, audit_event_id, ..
    } = store.queue_operation(&op(3), Some(&e), T0, 30_000).unwrap()
    else {
        panic!("the slot is free");
    };
    let page = store.list_audit(&AuditQuery::default()).unwrap();
    assert_eq!(page.total, 4, "the operation and each of its 3 partitions");
    let parts: Vec<_> = page
        .events
        .iter()
        .filter(|ev| Some(ev.id) != audit_event_id)
        .collect();
    assert_eq!(parts.len(), 3);
    for ev in &parts {
        assert_eq!(ev.method, "MCP");
        assert_eq!(ev.user_id.as_deref(), Some("approver"));
        assert_eq!(ev.requested_by.as_deref(), Some("agent"));
        assert_eq!(ev.action, "reassignments.apply");
        assert_eq!(ev.related_event_id, audit_event_id);
        assert_eq!(ev.summary["operationId"], id.as_str());
        assert_eq!(ev.before, Some(serde_json::json!({"replicas": [1, 2, 3]})));
        assert_eq!(ev.after, Some(serde_json::json!({"replicas": [4, 2, 3]})));
    }
    let mut targets: Vec<_> = parts.iter().filter_map(|e| e.target.clone()).collect();
    targets.sort();
    assert_eq!(targets, ["orders-0", "orders-1", "orders-2"]);

    // A REST (HTTP method) operation keeps one event.
    let (_dir2, rest) = fresh_store();
    rest.queue_operation(&op(3), Some(&audit()), T0, 30_000)
        .unwrap();
    assert_eq!(rest.list_audit(&AuditQuery::default()).unwrap().total, 1);
}

#[test]
fn a_prediction_is_kept_with_its_operation_and_each_realized_part_is_written_once_after_completion()
{
    use ballast_schema::{LoadsReading, PredictedBroker, Prediction, RealizedPart};
    let (_dir, store) = fresh_store();
    let prediction = Prediction {
        reading_at_ms: T0 - 1_000,
        partitions: 2,
        partitions_without_rates: 0,
        brokers: vec![PredictedBroker {
            broker_id: 4,
            takes_load: true,
            before: [0.0; 7],
            after: [2.0, 0.0, 2000.0, 0.0, 0.0, 0.0, 0.0],
        }],
    };
    let Queued::Started { id, lease, .. } = store
        .queue_operation_predicted(&op(2), Some(&prediction), Some(&audit()), T0, 30_000)
        .unwrap()
    else {
        panic!("the slot is free");
    };
    let kept = store.operation_realized(&id).unwrap().expect("kept");
    assert_eq!(kept.prediction, prediction);
    assert!(
        store.realized_due().unwrap().is_empty(),
        "not completed yet"
    );
    assert_eq!(store.last_realized().unwrap(), None);
    store
        .finish_operation(
            Some(&lease),
            &id,
            OperationState::Completed,
            None,
            None,
            T0 + 5_000,
        )
        .unwrap();
    let due = store.realized_due().unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!(due[0].finished_at_ms, T0 + 5_000);
    assert!(due[0].counts_missing && due[0].rates_missing);
    let reading = |at: i64, leaders: f64| LoadsReading {
        reading_at_ms: at,
        partitions: 2,
        partitions_without_rates: 0,
        brokers: vec![(4, [leaders, 0.0, 2000.0, 0.0, 0.0, 0.0, 0.0])],
    };
    assert!(store
        .record_realized(&id, RealizedPart::Counts, &reading(T0 + 6_000, 2.0))
        .unwrap());
    assert!(
        !store
            .record_realized(&id, RealizedPart::Counts, &reading(T0 + 7_000, 1.0))
            .unwrap(),
        "written once"
    );
    let due = store.realized_due().unwrap();
    assert!(!due[0].counts_missing && due[0].rates_missing);
    assert!(store
        .record_realized(&id, RealizedPart::Rates, &reading(T0 + 65_000, 2.0))
        .unwrap());
    assert!(store.realized_due().unwrap().is_empty());
    let (last, realized) = store
        .last_realized()
        .unwrap()
        .expect("the last completed plan");
    assert_eq!(last.id, id);
    assert_eq!(realized.counts.map(|c| c.reading_at_ms), Some(T0 + 6_000));
    // An operation queued without a prediction has none.
    let Queued::Started { id: plain, .. } = store
        .queue_operation(&op(1), Some(&audit()), T0 + 70_000, 30_000)
        .unwrap()
    else {
        panic!("the slot is free");
    };
    assert_eq!(store.operation_realized(&plain).unwrap(), None);
}
