//! Whether a plan may be applied now: the rules that need history, which the service keeps and
//! `ballast plan` treats as satisfied. The result is the `decision` shared by the overview, the
//! proposal review, MCP and self-healing.

use std::collections::BTreeSet;

use ballast_model::BrokerId;
use serde::Serialize;

use crate::plan::BALANCE_HELD;
use crate::Plan;

/// Readings of the same broker beyond the trigger needed before a plan is recommended.
pub const READINGS_TO_RECOMMEND: usize = 4;

/// One reading's brokers beyond the trigger (on any counted load).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    pub at_ms: i64,
    pub tripped: BTreeSet<BrokerId>,
}

/// What `decide` needs besides the plan.
#[derive(Debug, Clone)]
pub struct Context<'a> {
    /// Newest last.
    pub readings: &'a [Reading],
    /// When measurement started (service start).
    pub started_at_ms: i64,
    pub warmup_ms: i64,
    pub now_ms: i64,
    /// `BALLAST_THROTTLE_MANAGED`: when false, plans are unsafe to apply without `force`.
    pub throttles_managed: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    pub application_allowed: bool,
    /// What happens next, in words an operator can act on.
    pub next_action: String,
    /// Machine-readable reason when not allowed: `warming_up`, `not_recommended`,
    /// `balance_held`, `confirming`, `throttles_externally_managed`; `balance_held` also when a
    /// repair plan is allowed while balancing is held.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Reasons a manual apply needs `force=true` (soft), e.g. `throttles_externally_managed`.
    pub unsafe_reasons: Vec<String>,
    /// Consecutive readings (newest back) in which the most persistent tripped broker stayed
    /// beyond the trigger, and how many are needed.
    pub readings_beyond_trigger: usize,
    pub readings_required: usize,
    pub warmup_remaining_ms: i64,
}

/// The longest run of consecutive readings, ending with the newest, in which `broker` tripped.
fn streak(readings: &[Reading], broker: BrokerId) -> usize {
    readings
        .iter()
        .rev()
        .take_while(|r| r.tripped.contains(&broker))
        .count()
}

pub fn decide(plan: &Plan, ctx: &Context<'_>) -> Decision {
    let warmup_remaining_ms = (ctx.started_at_ms + ctx.warmup_ms - ctx.now_ms).max(0);
    let tripped: BTreeSet<BrokerId> = plan.tripped.iter().map(|t| t.broker_id).collect();
    let best = tripped
        .iter()
        .map(|b| (streak(ctx.readings, *b), *b))
        .max()
        .unwrap_or((0, 0));
    let unsafe_reasons: Vec<String> = if ctx.throttles_managed {
        Vec::new()
    } else {
        vec!["throttles_externally_managed".to_string()]
    };
    let decision = |allowed: bool, reason: Option<&str>, next: String| Decision {
        application_allowed: allowed,
        next_action: next,
        reason: reason.map(str::to_string),
        unsafe_reasons: unsafe_reasons.clone(),
        readings_beyond_trigger: best.0,
        readings_required: READINGS_TO_RECOMMEND,
        warmup_remaining_ms,
    };
    if warmup_remaining_ms > 0 {
        return decision(
            false,
            Some("warming_up"),
            format!(
                "collecting measurements: the first proposal is evaluated in {} s",
                (warmup_remaining_ms + 999) / 1000
            ),
        );
    }
    if !plan.recommended {
        let next = match (plan.reason.as_deref(), &plan.reason_text) {
            (Some("balanced"), _) => "nothing to do: the cluster is balanced".to_string(),
            (_, Some(text)) => format!("nothing to apply: {text}"),
            _ => "nothing to apply".to_string(),
        };
        let reason = if plan.balance_hold {
            BALANCE_HELD
        } else {
            "not_recommended"
        };
        return decision(false, Some(reason), next);
    }
    // Repairs while a broker is down are not balancing: no confirmation streak is needed.
    if !plan.balance_hold && best.0 < READINGS_TO_RECOMMEND {
        return decision(
            false,
            Some("confirming"),
            format!(
                "confirming: broker {} has been beyond the trigger in {} of {} readings",
                best.1, best.0, READINGS_TO_RECOMMEND
            ),
        );
    }
    if !unsafe_reasons.is_empty() {
        return decision(
            false,
            Some("throttles_externally_managed"),
            "apply manually with force=true: BALLAST_THROTTLE_MANAGED is false, so ballast does not set replication throttles".to_string(),
        );
    }
    if plan.balance_hold {
        // Allowed, and still held: the plan only repairs replicas of down brokers.
        let next = format!(
            "apply to repair: {} partition moves restore replicas of down brokers",
            plan.moves.len()
        );
        return decision(true, Some(BALANCE_HELD), next);
    }
    let next = format!(
        "apply: {} partition moves, {} bytes to copy",
        plan.moves.len(),
        plan.estimated_bytes
    );
    decision(true, None, next)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{plan, Policy};
    use ballast_model::snapshot::{Snapshot, SnapshotBroker, SnapshotPartition, SNAPSHOT_FORMAT};
    use ballast_model::BrokerState;

    /// Broker 4 is empty: the plan moves onto it and broker 4 is the tripped broker.
    fn unbalanced() -> Plan {
        let partitions = (0..24)
            .map(|i| SnapshotPartition {
                topic: "t".into(),
                partition: i,
                replicas: vec![i % 3 + 1, (i + 1) % 3 + 1],
                leader: Some(i % 3 + 1),
                isr: None,
                size_bytes: 1 << 30,
                compacted: false,
                min_insync_replicas: 1,
                producer_msg_rate: 0.0,
                producer_byte_rate: 0.0,
                consumer_msg_rate: 0.0,
                consumer_byte_rate: 0.0,
                last_moved_at: None,
            })
            .collect();
        let s = Snapshot {
            format: SNAPSHOT_FORMAT.into(),
            taken_at: "2026-11-21T10:00:00Z".into(),
            cluster_id: None,
            brokers: (1..=4)
                .map(|id| SnapshotBroker {
                    id,
                    rack: None,
                    state: BrokerState::Alive,
                })
                .collect(),
            partitions,
        };
        plan(&s, &Policy::default(), 0)
    }

    fn readings(n: usize, broker: BrokerId) -> Vec<Reading> {
        (0..n)
            .map(|i| Reading {
                at_ms: i as i64,
                tripped: [broker].into_iter().collect(),
            })
            .collect()
    }

    fn ctx(readings: &[Reading], now_ms: i64, managed: bool) -> Context<'_> {
        Context {
            readings,
            started_at_ms: 0,
            warmup_ms: 300_000,
            now_ms,
            throttles_managed: managed,
        }
    }

    #[test]
    fn no_proposal_is_evaluated_during_the_warm_up() {
        let p = unbalanced();
        let r = readings(10, 4);
        let d = decide(&p, &ctx(&r, 60_000, true));
        assert!(!d.application_allowed);
        assert_eq!(d.reason.as_deref(), Some("warming_up"));
        assert_eq!(d.warmup_remaining_ms, 240_000);
    }

    #[test]
    fn a_plan_is_recommended_only_when_the_same_broker_stays_beyond_the_trigger_in_four_readings() {
        let p = unbalanced();
        assert!(p.recommended);
        for n in 0..4 {
            let r = readings(n, 4);
            let d = decide(&p, &ctx(&r, 400_000, true));
            assert!(!d.application_allowed, "{n} readings");
            assert_eq!(d.reason.as_deref(), Some("confirming"));
            assert_eq!(d.readings_beyond_trigger, n);
        }
        let r = readings(4, 4);
        let d = decide(&p, &ctx(&r, 400_000, true));
        assert!(d.application_allowed, "{d:?}");
        assert!(d.next_action.starts_with("apply"));
    }

    #[test]
    fn a_broker_that_dropped_below_the_trigger_restarts_its_count() {
        let p = unbalanced();
        let mut r = readings(5, 4);
        r[3].tripped.clear();
        let d = decide(&p, &ctx(&r, 400_000, true));
        assert!(!d.application_allowed);
        assert_eq!(d.readings_beyond_trigger, 1);
    }

    #[test]
    fn externally_managed_throttles_make_a_plan_unsafe() {
        let p = unbalanced();
        let r = readings(4, 4);
        let d = decide(&p, &ctx(&r, 400_000, false));
        assert!(!d.application_allowed);
        assert_eq!(d.reason.as_deref(), Some("throttles_externally_managed"));
        assert_eq!(
            d.unsafe_reasons,
            vec!["throttles_externally_managed".to_string()]
        );
    }
}
