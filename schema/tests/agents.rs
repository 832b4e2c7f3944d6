//! Agents, their commands and rolling restarts (docs/rolling-restarts.md): a command is handed
//! out once; an agent that started again fails what it never reported; an unfinished roll keeps
//! every reassignment out whatever the slot's lease says; a finished roll frees the slot.

mod common;

use ballast_schema::{
    AgentHeartbeat, CommandKind, CommandState, NewAgentCommand, NewOperation, NewRoll, Queued,
    RollRequest, RollState,
};
use common::fresh_store;

const T0: i64 = 1_800_000_000_000;

fn heartbeat(broker: i32, started: i64) -> AgentHeartbeat {
    AgentHeartbeat {
        broker_id: broker,
        node_id: format!("host-{broker}"),
        version: "0.1.0".into(),
        build_digest: "a".repeat(64),
        broker_process_up: Some(true),
        broker_uptime_s: Some(10),
        agent_started_at_ms: started,
        disks: serde_json::json!([]),
        remote_addr: None,
    }
}

fn restart(broker: i32) -> NewAgentCommand {
    NewAgentCommand {
        broker_id: broker,
        kind: CommandKind::Restart,
        roll_id: None,
        target_version: None,
        target_digest: None,
        requested_by: "alice".into(),
    }
}

#[test]
fn a_command_is_handed_out_once_and_a_second_waits_until_the_first_ends() {
    let (_dir, store) = fresh_store();
    store
        .record_agent_heartbeat(&heartbeat(1, 5), true, T0)
        .expect("hb");
    let cmd = store
        .queue_agent_command(&restart(1), None, T0)
        .expect("queue")
        .expect("queued");
    assert!(store
        .queue_agent_command(&restart(1), None, T0)
        .expect("queue")
        .is_none());
    let sent = store
        .record_agent_heartbeat(&heartbeat(1, 5), true, T0 + 1)
        .expect("hb");
    assert_eq!(sent.map(|c| c.id), Some(cmd.id));
    assert!(store
        .record_agent_heartbeat(&heartbeat(1, 5), true, T0 + 2)
        .expect("hb")
        .is_none());
    // another broker's agent cannot report it
    assert!(!store
        .finish_agent_command(2, cmd.id, true, "ok", T0 + 3)
        .expect("finish"));
    assert!(store
        .finish_agent_command(1, cmd.id, true, "ok", T0 + 3)
        .expect("finish"));
    assert!(!store
        .finish_agent_command(1, cmd.id, false, "again", T0 + 4)
        .expect("finish"));
    let done = store.agent_command(cmd.id).expect("read").expect("there");
    assert_eq!(done.state, CommandState::Succeeded);
    assert!(store
        .queue_agent_command(&restart(1), None, T0)
        .expect("queue")
        .is_some());
}

#[test]
fn an_agent_that_started_again_fails_the_command_it_never_reported_whatever_its_clock() {
    let (_dir, store) = fresh_store();
    // the agent's clock is far ahead of the service's: no matter
    store
        .record_agent_heartbeat(&heartbeat(1, T0 + 3_600_000), true, T0)
        .expect("hb");
    let cmd = store
        .queue_agent_command(&restart(1), None, T0)
        .expect("queue")
        .expect("queued");
    store
        .record_agent_heartbeat(&heartbeat(1, T0 + 3_600_000), true, T0 + 1)
        .expect("hb");
    store
        .record_agent_heartbeat(&heartbeat(1, T0 + 3_600_000), true, T0 + 2)
        .expect("hb");
    let c = store.agent_command(cmd.id).expect("read").expect("there");
    assert_eq!(c.state, CommandState::Sent, "the same agent run keeps it");
    store
        .record_agent_heartbeat(&heartbeat(1, T0 + 3_700_000), true, T0 + 3)
        .expect("hb");
    let c = store.agent_command(cmd.id).expect("read").expect("there");
    assert_eq!(c.state, CommandState::Failed);
    assert!(c.detail.unwrap_or_default().contains("started again"));
}

#[test]
fn an_unfinished_roll_refuses_reassignments_even_after_its_lease_lapsed_and_frees_the_slot_when_it_ends(
) {
    let (_dir, store) = fresh_store();
    let new = NewRoll {
        brokers: vec![1, 2],
        user_id: "alice".into(),
        method: "POST".into(),
        reason: None,
    };
    let roll = store
        .create_roll(&new, None, T0, 1_000)
        .expect("create")
        .expect("not busy");
    assert_eq!(roll.state, RollState::Running);
    assert!(store
        .create_roll(&new, None, T0, 1_000)
        .expect("create")
        .is_err());
    let op = NewOperation {
        kind: "bulk".into(),
        strategy: "BULK_MANUAL".into(),
        method: "POST".into(),
        detail: serde_json::json!({}),
        moves: vec![ballast_schema::NewMove {
            topic: "orders".into(),
            partition: 0,
            source: vec![1, 2, 3],
            target: vec![4, 2, 3],
            steps: 1,
            bytes_total: 1000,
            phase: 0,
        }],
        ..NewOperation::default()
    };
    // long after the lease expired, the roll still keeps reassignments out
    let later = T0 + 3_600_000;
    match store
        .queue_operation(&op, None, later, 1_000)
        .expect("queue")
    {
        Queued::Busy(b) => {
            assert_eq!(b.rolling_restart_id.as_deref(), Some(roll.id.as_str()));
            assert!(b.message().contains("rolling restart"), "{}", b.message());
        }
        Queued::Started { .. } => panic!("queued during a roll"),
    }
    assert!(store
        .acquire_idle_slot("web:election", "election", later, 1_000)
        .expect("slot")
        .is_err());
    // a request is a flag; the state is the executor's
    let asked = store
        .request_roll(&roll.id, RollRequest::Abort, None, later)
        .expect("request")
        .expect("unfinished");
    assert!(asked.abort_requested);
    assert_eq!(asked.state, RollState::Running);
    let mut ended = asked.clone();
    ended.state = RollState::Aborted;
    ended.finished_at_ms = Some(later);
    store
        .save_roll(&ended, None, None, &[], later)
        .expect("save");
    assert!(store
        .request_roll(&roll.id, RollRequest::Resume, None, later)
        .expect("request")
        .is_none());
    assert!(
        store.slot(T0 + 1).expect("slot").is_none(),
        "the roll's slot is released"
    );
    assert!(matches!(
        store
            .queue_operation(&op, None, later, 1_000)
            .expect("queue"),
        Queued::Started { .. }
    ));
}

#[test]
fn an_agent_running_a_command_is_handed_no_other_while_it_reports() {
    let (_dir, store) = fresh_store();
    store
        .record_agent_heartbeat(&heartbeat(1, 5), true, T0)
        .expect("hb");
    store
        .queue_agent_command(&restart(1), None, T0)
        .expect("queue")
        .expect("queued");
    let none = store
        .record_agent_heartbeat(&heartbeat(1, 5), false, T0 + 1)
        .expect("hb");
    assert!(none.is_none());
    let agent = store.agent(1).expect("agent").expect("there");
    assert_eq!(agent.last_seen_at_ms, T0 + 1, "the heartbeat still counts");
    assert!(store
        .record_agent_heartbeat(&heartbeat(1, 5), true, T0 + 2)
        .expect("hb")
        .is_some());
}
