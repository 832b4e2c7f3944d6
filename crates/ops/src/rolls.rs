//! Rolling restarts and agent upgrades, as operators ask for them: `start_rolling_restart`,
//! `request_roll` (pause, resume, abort) and `upgrade_agent`. Each stores its request with its
//! audit row in one transaction (the roll takes the mutation slot); the executor drives a roll
//! (`ballast_executor::roll`) and an agent runs its command.

use std::collections::BTreeSet;

use ballast_runtime::millis;
use ballast_schema::{
    AgentCommand, AgentRecord, CommandKind, NewAgentCommand, NewRoll, Roll, RollRequest,
};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::actor::Actor;
use crate::context::Context;
use crate::error::OpError;
use crate::reassignments::{busy_conflict, conflict};

/// What `start_rolling_restart` is asked.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StartBody {
    /// The brokers to restart (default: every broker of the cluster). They go in id order with
    /// the active controller last, whatever the order given.
    #[schema(schema_with = crate::schema::distinct_broker_ids_or_null)]
    pub brokers: Option<Vec<i32>>,
    /// Why (recorded with the roll and in the audit log).
    pub reason: Option<String>,
}

/// The build an agent upgrade installs: the service's own.
#[derive(Debug, Clone)]
pub struct TargetBuild {
    pub version: String,
    pub sha256: String,
}

/// Whether an agent was heard from within `BALLAST_AGENT_STALE_AFTER` at `now`.
pub fn agent_up(ctx: &Context, a: &AgentRecord, now: i64) -> bool {
    now.saturating_sub(a.last_seen_at_ms) < millis(ctx.config.roll.agent_stale_after)
}

/// A roll as the API shows it.
pub fn roll_json(r: &Roll) -> Value {
    let mut v = serde_json::to_value(r).unwrap_or(Value::Null);
    if let Some(o) = v.as_object_mut() {
        o.insert("currentBroker".into(), json!(r.current_broker()));
    }
    v
}

/// An agent command as the API shows it.
pub fn command_json(c: &AgentCommand) -> Value {
    json!({
        "id": c.id,
        "kind": c.kind,
        "state": c.state,
        "rollId": c.roll_id,
        "targetVersion": c.target_version,
        "targetDigest": c.target_digest,
        "requestedBy": c.requested_by,
        "detail": c.detail,
        "createdAt": c.created_at_ms,
        "sentAt": c.sent_at_ms,
        "finishedAt": c.finished_at_ms,
    })
}

/// `brokers` in id order with the active controller last.
pub fn restart_order(brokers: &[i32], controller: Option<i32>) -> Vec<i32> {
    let mut order: Vec<i32> = brokers.to_vec();
    order.sort_unstable();
    order.dedup();
    if let Some(c) = controller {
        if let Some(i) = order.iter().position(|b| *b == c) {
            let c = order.remove(i);
            order.push(c);
        }
    }
    order
}

/// The operation `upgrade_agent`: queues an `upgrade` command to `build` for the agent of
/// `broker` (404 when none reported; 409 when it is down, runs this build already or has an
/// unfinished command, or a roll runs); audited `agents.upgrade`.
pub async fn upgrade_agent(
    ctx: &Context,
    actor: &Actor,
    broker: i32,
    build: &TargetBuild,
) -> Result<Value, OpError> {
    let agent = ctx.db(move |s| s.agent(broker)).await?;
    let Some(agent) = agent else {
        return Err(OpError::not_found(
            "agent not found",
            format!("no agent of broker {broker} has reported"),
        ));
    };
    let now = ctx.clock.now_ms();
    if !agent_up(ctx, &agent, now) {
        return Err(conflict(
            "agent down",
            format!(
                "the agent of broker {broker} was last heard from at {}; an upgrade waits for a running agent",
                agent.last_seen_at_ms
            ),
        ));
    }
    if let Some(roll) = ctx.db(|s| s.active_roll()).await? {
        return Err(conflict(
            "a rolling restart is in progress",
            format!(
                "rolling restart {} is {}; upgrade agents when it has ended",
                roll.id, roll.state
            ),
        ));
    }
    if agent.heartbeat.build_digest == build.sha256 {
        return Err(conflict(
            "agent already runs this build",
            format!(
                "the agent of broker {broker} runs {} (sha256 {})",
                agent.heartbeat.version, build.sha256
            ),
        ));
    }
    let cmd = NewAgentCommand {
        broker_id: broker,
        kind: CommandKind::Upgrade,
        roll_id: None,
        target_version: Some(build.version.clone()),
        target_digest: Some(build.sha256.clone()),
        requested_by: actor.user.clone(),
    };
    let mut audit = actor.event(now, "agents.upgrade", format!("agent {broker}"));
    audit.summary = json!({
        "brokerId": broker,
        "fromVersion": agent.heartbeat.version,
        "fromDigest": agent.heartbeat.build_digest,
        "toVersion": build.version,
        "toDigest": build.sha256,
    });
    let queued = ctx
        .db(move |s| s.queue_agent_command(&cmd, Some(&audit), now))
        .await?;
    match queued {
        Some(c) => Ok(json!({ "command": command_json(&c) })),
        None => Err(conflict(
            "agent busy",
            format!("the agent of broker {broker} has an unfinished command"),
        )),
    }
}

/// Why a roll naming dedicated controllers (voters of the metadata quorum that are no broker) is
/// refused, in those words: whether an agent runs on each, and that a roll restarts brokers.
fn controllers_refusal(controllers: &[i32], has_agent: impl Fn(i32) -> bool) -> OpError {
    let (with, without): (Vec<i32>, Vec<i32>) = controllers.iter().partition(|id| has_agent(**id));
    let list = |ids: &[i32]| {
        ids.iter()
            .map(i32::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut why = Vec::new();
    if !without.is_empty() {
        why.push(if without.len() == 1 {
            format!(
                "node {} is a controller (a voter of the metadata quorum, not a broker) and no agent runs on it",
                without[0]
            )
        } else {
            format!(
                "nodes {} are controllers (voters of the metadata quorum, not brokers) and no agent runs on them",
                list(&without)
            )
        });
    }
    if !with.is_empty() {
        why.push(format!(
            "controller(s) {} have an agent, but a rolling restart restarts brokers only: restart a controller with its own service manager, one at a time, while every voter is caught up",
            list(&with)
        ));
    }
    conflict(
        "controllers are not rolled",
        format!(
            "{}; leave them out of `brokers` to roll the brokers",
            why.join("; ")
        ),
    )
}

/// The operation `start_rolling_restart`: the brokers asked (default all), the active controller
/// last, each with a running agent; takes the mutation slot (409 while a reassignment or another
/// roll runs); audited `rolling_restart.start`.
pub async fn start_rolling_restart(
    ctx: &Context,
    actor: &Actor,
    body: StartBody,
) -> Result<Value, OpError> {
    let client = ctx.kafka.client().await?;
    let md = client.metadata(None).await.map_err(|e| {
        OpError::unavailable(
            "cluster metadata could not be read; nothing was changed",
            ballast_runtime::error_chain(&e),
        )
    })?;
    // The active controller: on KRaft the metadata quorum's leader (Metadata's controller id is
    // a broker the answering broker picks), on ZooKeeper Metadata's.
    let active = client.active_controller().await.map_err(|e| {
        OpError::unavailable(
            "the active controller could not be read; nothing was changed",
            ballast_runtime::error_chain(&e),
        )
    })?;
    let controller = active.id;
    // Dedicated controllers: voters of the metadata quorum that are no broker.
    let voters: BTreeSet<i32> = active
        .quorum
        .iter()
        .flat_map(|q| q.voters.iter().map(|v| v.id))
        .collect();
    let known: BTreeSet<i32> = md.brokers.iter().map(|b| b.id).collect();
    let wanted: Vec<i32> = match &body.brokers {
        Some(list) => {
            let set: BTreeSet<i32> = list.iter().copied().collect();
            if set.len() != list.len() {
                return Err(OpError::bad_input(
                    "invalid brokers",
                    "a broker is listed more than once",
                ));
            }
            if list.is_empty() {
                return Err(OpError::bad_input(
                    "invalid brokers",
                    "list at least one broker, or leave brokers out for all of them",
                ));
            }
            let unknown: Vec<i32> = set.difference(&known).copied().collect();
            let controllers: Vec<i32> = unknown
                .iter()
                .copied()
                .filter(|id| voters.contains(id))
                .collect();
            if !controllers.is_empty() {
                let now = ctx.clock.now_ms();
                let agents = ctx.db(|s| s.agents()).await?;
                return Err(controllers_refusal(&controllers, |id| {
                    agents
                        .iter()
                        .any(|a| a.heartbeat.broker_id == id && agent_up(ctx, a, now))
                }));
            }
            if !unknown.is_empty() {
                return Err(OpError::bad_input(
                    "invalid brokers",
                    format!("brokers {unknown:?} are not registered with the cluster"),
                ));
            }
            set.into_iter().collect()
        }
        None => known.iter().copied().collect(),
    };
    if let Some(reason) = &body.reason {
        if reason.len() > 1000 {
            return Err(OpError::bad_input(
                "invalid reason",
                "reason must be at most 1000 characters",
            ));
        }
    }
    let order = restart_order(&wanted, controller);
    let now = ctx.clock.now_ms();
    let agents = ctx.db(|s| s.agents()).await?;
    let missing: Vec<String> = order
        .iter()
        .filter(|b| {
            !agents
                .iter()
                .any(|a| a.heartbeat.broker_id == **b && agent_up(ctx, a, now))
        })
        .map(|b| b.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(conflict(
            "brokers without a running agent",
            format!(
                "no agent of broker(s) {} has reported in the last {}; start `ballast agent` on those hosts",
                missing.join(", "),
                ballast_config::format_duration(ctx.config.roll.agent_stale_after)
            ),
        ));
    }
    let mut audit = actor.event(now, "rolling_restart.start", "rolling restart");
    audit.summary = json!({
        "brokers": order,
        "controller": controller,
        "reason": body.reason,
        "message": format!("rolling restart of brokers {order:?}"),
    });
    let new = NewRoll {
        brokers: order,
        user_id: actor.user.clone(),
        method: actor.method.clone(),
        reason: body.reason.clone(),
    };
    let ttl = millis(ctx.config.timing.slot_lease_ttl);
    let created = ctx
        .db(move |s| s.create_roll(&new, Some(&audit), now, ttl))
        .await?;
    match created {
        Ok(roll) => Ok(roll_json(&roll)),
        Err(busy) => Err(busy_conflict(&busy)),
    }
}

/// The operation behind pause, resume and abort: stores `request` for roll `id` (404 unknown,
/// 409 ended); audited `action`.
pub async fn request_roll(
    ctx: &Context,
    actor: &Actor,
    id: String,
    request: RollRequest,
    action: &str,
) -> Result<Value, OpError> {
    let now = ctx.clock.now_ms();
    let mut audit = actor.event(now, action, id.clone());
    audit.summary = json!({ "rollId": id });
    let i = id.clone();
    let done = ctx
        .db(move |s| s.request_roll(&i, request, Some(&audit), now))
        .await?;
    if let Some(r) = done {
        return Ok(roll_json(&r));
    }
    let i = id.clone();
    match ctx.db(move |s| s.roll(&i)).await? {
        Some(r) => Err(conflict(
            "rolling restart ended",
            format!("rolling restart {id} is {}", r.state),
        )),
        None => Err(OpError::not_found(
            "rolling restart not found",
            format!("no rolling restart {id}"),
        )),
    }
}

#[cfg(test)]
mod controller_tests {
    use super::controllers_refusal;

    #[test]
    fn a_roll_naming_a_controller_without_an_agent_says_it_is_a_controller_with_no_agent() {
        let e = controllers_refusal(&[101], |_| false);
        let text = format!("{e:?}");
        assert!(
            text.contains("node 101 is a controller (a voter of the metadata quorum, not a broker) and no agent runs on it"),
            "{text}"
        );
        assert!(!text.contains("not registered"), "{text}");
        let e = controllers_refusal(&[101, 102], |id| id == 102);
        let text = format!("{e:?}");
        assert!(text.contains("node 101 is a controller"), "{text}");
        assert!(
            text.contains(
                "controller(s) 102 have an agent, but a rolling restart restarts brokers only"
            ),
            "{text}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_active_controller_is_restarted_last_and_the_rest_in_id_order() {
        assert_eq!(restart_order(&[3, 1, 2], Some(1)), vec![2, 3, 1]);
        assert_eq!(restart_order(&[3, 1, 2], Some(9)), vec![1, 2, 3]);
        assert_eq!(restart_order(&[2], None), vec![2]);
    }
}
