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

/// Fresh measurements on which the plan's benefit must show before it may be applied: the
/// readings after the first of the four, each taken after this observer's warm-up, whose plan was
/// recommended and helped the broker.
pub const FRESH_TO_CONFIRM: usize = 3;

/// One reading: the brokers beyond the trigger (on any counted load), and those of them the
/// reading's plan was recommended for and helped (its benefit shown on this measurement).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    pub at_ms: i64,
    pub tripped: BTreeSet<BrokerId>,
    pub helped: BTreeSet<BrokerId>,
}

impl Reading {
    /// The reading `plan` makes at `at_ms`.
    pub fn of(plan: &Plan, at_ms: i64) -> Reading {
        Reading {
            at_ms,
            tripped: plan.tripped.iter().map(|t| t.broker_id).collect(),
            helped: plan
                .tripped
                .iter()
                .filter(|t| plan.recommended && !plan.balance_hold && t.helped)
                .map(|t| t.broker_id)
                .collect(),
        }
    }
}

/// What `decide` needs besides the plan.
#[derive(Debug, Clone)]
pub struct Context<'a> {
    /// Newest last; the newest is the reading of the plan being decided.
    pub readings: &'a [Reading],
    /// When this observer process started: the warm-up restarts with every start, and only
    /// readings after it count as fresh.
    pub started_at_ms: i64,
    pub warmup_ms: i64,
    /// Readings further apart than this (or the newest further from `now_ms`) are not in a row:
    /// the service sets three sample intervals.
    pub max_gap_ms: i64,
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
    /// Machine-readable reason when not allowed: `warming_up`, `data_not_ready` (a load is
    /// still being measured), `not_recommended`,
    /// `balance_held`, `confirming`, `benefit_unconfirmed`, `throttles_externally_managed`;
    /// `balance_held` also when a repair plan is allowed while balancing is held.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Reasons a manual apply needs `force=true` (soft), e.g. `throttles_externally_managed`.
    pub unsafe_reasons: Vec<String>,
    /// Readings in a row (newest back, no gap) in which the most persistent tripped broker stayed
    /// beyond the trigger, and how many are needed.
    pub readings_beyond_trigger: usize,
    pub readings_required: usize,
    /// Of those, the newest in a row that are fresh and showed the plan's benefit for it, and how
    /// many are needed.
    pub fresh_measurements: usize,
    pub fresh_required: usize,
    pub warmup_remaining_ms: i64,
}

/// How far back the readings are in a row: the newest is within `max_gap_ms` of `now_ms` and
/// each older one within `max_gap_ms` of the next. Returns the readings in a row, newest last.
fn in_a_row<'r>(readings: &'r [Reading], ctx: &Context<'_>) -> &'r [Reading] {
    let mut start = readings.len();
    let mut next_at = ctx.now_ms;
    while start > 0 {
        let r = &readings[start - 1];
        if next_at - r.at_ms > ctx.max_gap_ms {
            break;
        }
        next_at = r.at_ms;
        start -= 1;
    }
    &readings[start..]
}

/// For `broker`: readings in a row, ending with the newest, in which it tripped; and of those the
/// newest in a row that are fresh (after the warm-up) and show the plan helped it.
fn streaks(row: &[Reading], broker: BrokerId, fresh_from_ms: i64) -> (usize, usize) {
    let tripped = row
        .iter()
        .rev()
        .take_while(|r| r.tripped.contains(&broker))
        .count();
    let fresh = row
        .iter()
        .rev()
        .take(tripped)
        .take_while(|r| r.at_ms >= fresh_from_ms && r.helped.contains(&broker))
        .count();
    (tripped, fresh)
}

pub fn decide(plan: &Plan, ctx: &Context<'_>) -> Decision {
    let warm_at = ctx.started_at_ms.saturating_add(ctx.warmup_ms);
    let warmup_remaining_ms = (warm_at - ctx.now_ms).max(0);
    let row = in_a_row(ctx.readings, ctx);
    // The broker closest to confirmation: confirmed first, then the longest streaks.
    let best = plan
        .tripped
        .iter()
        .map(|t| t.broker_id)
        .collect::<BTreeSet<BrokerId>>()
        .into_iter()
        .map(|b| {
            let (tripped, fresh) = streaks(row, b, warm_at);
            let confirmed = tripped >= READINGS_TO_RECOMMEND && fresh >= FRESH_TO_CONFIRM;
            ((confirmed, tripped, fresh), b)
        })
        .max()
        .map_or(((false, 0, 0), 0), |x| x);
    let ((_, readings_beyond_trigger, fresh_measurements), broker) = best;
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
        readings_beyond_trigger,
        readings_required: READINGS_TO_RECOMMEND,
        fresh_measurements,
        fresh_required: FRESH_TO_CONFIRM,
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
    // A load still being measured is unknown: no plan is applied before every load it may
    // balance is known (a plan on counts alone could be undone by the rates a minute later).
    let measuring: Vec<(&str, &crate::Measuring)> = plan
        .loads
        .0
        .iter()
        .filter_map(|(load, s)| s.measuring.as_ref().map(|m| (load.name(), m)))
        .collect();
    if let Some(longest) = measuring
        .iter()
        .map(|(_, m)| m)
        .max_by_key(|m| m.remaining_ms)
    {
        let names: Vec<&str> = measuring.iter().map(|(n, _)| *n).collect();
        return decision(
            false,
            Some("data_not_ready"),
            format!(
                "measuring {}: {} of {} readings so far; the proposal is checked again once every load is measured (about {} s)",
                names.join(", "),
                longest.readings,
                longest.needed,
                (longest.remaining_ms.max(0) + 999) / 1000
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
    // Repairs while a broker is down are not balancing, nor are repairs of rack awareness (a
    // hard goal, proposed without waiting for self-healing): no confirmation is needed.
    if !plan.balance_hold && plan.rack_awareness.repaired == 0 {
        if readings_beyond_trigger < READINGS_TO_RECOMMEND {
            return decision(
                false,
                Some("confirming"),
                format!(
                    "confirming: broker {broker} has been beyond the trigger in {readings_beyond_trigger} of {READINGS_TO_RECOMMEND} readings in a row"
                ),
            );
        }
        if fresh_measurements < FRESH_TO_CONFIRM {
            return decision(
                false,
                Some("benefit_unconfirmed"),
                format!(
                    "confirming: the plan's benefit for broker {broker} has shown on {fresh_measurements} of {FRESH_TO_CONFIRM} fresh measurements"
                ),
            );
        }
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
    let next = ballast_model::units::apply_action(plan.moves.len(), plan.estimated_bytes);
    decision(true, None, next)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{plan, Policy};
    use ballast_model::snapshot::{Snapshot, SnapshotPartition};
    use ballast_model::BrokerState;

    /// Broker 4 is empty: the plan moves onto it and broker 4 is the tripped broker.
    fn unbalanced() -> Plan {
        plan(&snapshot(), &Policy::default(), 0)
    }

    fn snapshot() -> Snapshot {
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
        crate::fixtures::cluster(4, partitions)
    }

    const SAMPLE: i64 = 60_000;
    const NOW: i64 = 1_000_000;

    /// `n` readings one sample apart, the newest at `NOW`, broker tripped and helped in each.
    fn readings(n: usize, broker: BrokerId) -> Vec<Reading> {
        (0..n)
            .map(|i| Reading {
                at_ms: NOW - (n - 1 - i) as i64 * SAMPLE,
                tripped: [broker].into_iter().collect(),
                helped: [broker].into_iter().collect(),
            })
            .collect()
    }

    fn ctx(readings: &[Reading], now_ms: i64, managed: bool) -> Context<'_> {
        Context {
            readings,
            started_at_ms: 0,
            warmup_ms: 300_000,
            max_gap_ms: 3 * SAMPLE,
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
    fn the_warm_up_restarts_when_the_observer_restarts() {
        // Plenty of readings from before; the observer process started a minute ago.
        let p = unbalanced();
        let r = readings(10, 4);
        let d = decide(
            &p,
            &Context {
                started_at_ms: NOW - SAMPLE,
                ..ctx(&r, NOW, true)
            },
        );
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
            let d = decide(&p, &ctx(&r, NOW, true));
            assert!(!d.application_allowed, "{n} readings");
            assert_eq!(d.reason.as_deref(), Some("confirming"));
            assert_eq!(d.readings_beyond_trigger, n);
        }
        let r = readings(4, 4);
        let d = decide(&p, &ctx(&r, NOW, true));
        assert!(d.application_allowed, "{d:?}");
        assert_eq!(d.reason, None);
        assert!(d.next_action.starts_with("apply"));
        assert_eq!((d.readings_beyond_trigger, d.readings_required), (4, 4));
        assert!(d.fresh_measurements >= d.fresh_required, "{d:?}");
        assert_eq!(d.fresh_required, 3);
    }

    #[test]
    fn a_broker_that_dropped_below_the_trigger_restarts_its_count() {
        let p = unbalanced();
        let mut r = readings(5, 4);
        r[3].tripped.clear();
        let d = decide(&p, &ctx(&r, NOW, true));
        assert!(!d.application_allowed);
        assert_eq!(d.readings_beyond_trigger, 1);
    }

    #[test]
    fn a_gap_of_more_than_three_sample_intervals_breaks_the_streak() {
        let p = unbalanced();
        // Five readings, but four sample intervals pass between the second and the third.
        let mut r = readings(5, 4);
        r[0].at_ms -= 3 * SAMPLE;
        r[1].at_ms -= 3 * SAMPLE;
        let d = decide(&p, &ctx(&r, NOW, true));
        assert!(!d.application_allowed);
        assert_eq!(d.reason.as_deref(), Some("confirming"));
        assert_eq!(d.readings_beyond_trigger, 3);
        // Exactly three intervals apart is still in a row.
        let mut r = readings(5, 4);
        r[0].at_ms -= 2 * SAMPLE;
        r[1].at_ms -= 2 * SAMPLE;
        assert_eq!(decide(&p, &ctx(&r, NOW, true)).readings_beyond_trigger, 5);
        // Readings that stopped long ago are not a streak now.
        let r = readings(6, 4);
        let d = decide(&p, &ctx(&r, NOW + 4 * SAMPLE, true));
        assert_eq!(d.readings_beyond_trigger, 0);
    }

    #[test]
    fn the_benefit_must_show_on_three_fresh_measurements() {
        let p = unbalanced();
        // Four readings beyond the trigger, but the plan helped broker 4 on the newest two only.
        let mut r = readings(4, 4);
        r[1].helped.clear();
        let d = decide(&p, &ctx(&r, NOW, true));
        assert!(!d.application_allowed);
        assert_eq!(d.reason.as_deref(), Some("benefit_unconfirmed"));
        assert_eq!((d.readings_beyond_trigger, d.fresh_measurements), (4, 2));
        // Readings from before this observer's warm-up ended are not fresh.
        let r = readings(6, 4);
        let restarted = Context {
            started_at_ms: NOW - 300_000 - 90_000,
            ..ctx(&r, NOW, true)
        };
        let d = decide(&p, &restarted);
        assert_eq!(d.reason.as_deref(), Some("benefit_unconfirmed"));
        assert_eq!((d.readings_beyond_trigger, d.fresh_measurements), (6, 2));
        // One sample later the third fresh measurement confirms it.
        let mut r = readings(6, 4);
        r.push(Reading {
            at_ms: NOW + SAMPLE,
            ..r[5].clone()
        });
        let d = decide(
            &p,
            &Context {
                readings: &r,
                now_ms: NOW + SAMPLE,
                ..restarted
            },
        );
        assert!(d.application_allowed, "{d:?}");
    }

    #[test]
    fn a_reading_records_the_brokers_a_recommended_plan_helped() {
        let p = unbalanced();
        let r = Reading::of(&p, 7);
        assert!(r.tripped.contains(&4));
        assert!(r.helped.contains(&4));
        let mut not = p.clone();
        not.recommended = false;
        assert!(Reading::of(&not, 7).helped.is_empty());
    }

    #[test]
    fn a_repair_plan_while_balance_is_held_is_allowed_with_reason_balance_held() {
        let mut s = snapshot();
        s.brokers[0].state = BrokerState::Down;
        let p = plan(&s, &Policy::default(), 0);
        assert!(p.balance_hold && p.recommended && !p.moves.is_empty());
        // No streak needed for repairs.
        let d = decide(&p, &ctx(&[], NOW, true));
        assert!(d.application_allowed, "{d:?}");
        assert_eq!(d.reason.as_deref(), Some("balance_held"));
        let json = serde_json::to_value(&d).expect("json");
        assert_eq!(json["reason"], "balance_held");
    }

    #[test]
    fn a_plan_that_repairs_rack_awareness_needs_no_readings_beyond_the_trigger() {
        // Racks r1 = {1, 3}, r2 = {2, 4}; every partition on both racks but `x`, on broker 1
        // and 3 (both r1). With no reading yet, a balancing plan would wait for four; the
        // repair does not.
        let mut s = snapshot();
        for b in &mut s.brokers {
            b.rack = Some(format!("r{}", (b.id - 1) % 2 + 1));
        }
        s.partitions = (0..24)
            .map(|i| {
                let mut p = s.partitions[0].clone();
                p.partition = i;
                p.replicas = vec![i % 4 + 1, (i + 1) % 4 + 1];
                p.leader = Some(i % 4 + 1);
                p
            })
            .collect();
        let mut x = s.partitions[0].clone();
        x.topic = "x".into();
        x.replicas = vec![1, 3];
        x.leader = Some(1);
        x.size_bytes = 1 << 20;
        s.partitions.push(x);
        let p = plan(&s, &Policy::default(), 0);
        assert_eq!(p.rack_awareness.repaired, 1, "{:?}", p.rack_awareness);
        assert!(p.recommended, "{:?}", p.reason);
        let d = decide(&p, &ctx(&[], NOW, true));
        assert!(d.application_allowed, "{d:?}");
    }

    #[test]
    fn externally_managed_throttles_make_a_plan_unsafe() {
        let p = unbalanced();
        let r = readings(4, 4);
        let d = decide(&p, &ctx(&r, NOW, false));
        assert!(!d.application_allowed);
        assert_eq!(d.reason.as_deref(), Some("throttles_externally_managed"));
        assert_eq!(
            d.unsafe_reasons,
            vec!["throttles_externally_managed".to_string()]
        );
    }
}
