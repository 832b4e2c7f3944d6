//! What-if simulation and blast radius over the observed cluster. Both are free (monitoring
//! mode), read-only and computed per request by the pure functions of `ballast-balancer`
//! ([`ballast_balancer::whatif`], [`ballast_balancer::blast`]) on a snapshot of the in-memory
//! observed view. Shapes: `docs/api/simulation.md`.
//!
//! A malformed body is a 400 before anything else; while there is no fresh sample the answer is
//! the observed routes' 503; a request that names something the cluster does not have (a topic,
//! a broker, a rack) or an impossible scenario is a 400 whose `details` names the field.

use std::collections::{BTreeMap, BTreeSet};

use ballast_balancer::blast::{self, BlastRadius, BlastRequest, ConsumerGroup};
use ballast_balancer::whatif::{self, WhatIf, WhatIfRequest};
use ballast_balancer::{InputError, Policy};
use ballast_config::Config;
use ballast_model::BrokerId;
use ballast_moves::THROTTLE_RATE_KEY;
use ballast_runtime::topology::snapshot_with_maintenance;
use ballast_schema::ObservedView;
use serde::Serialize;

use crate::context::Context;
use crate::error::OpError;
use crate::view::{self, Coverage};

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Throttle {
    /// MB/s (10^6 bytes).
    pub rate_mb: f64,
    pub bytes_per_sec: f64,
    /// `setting` (the runtime override in the settings table) or `config`
    /// (`BALLAST_THROTTLE_RATE_MB`).
    pub source: &'static str,
}

/// The rate copies run at, as the executor reads it: the stored override when it is a whole
/// number of MB/s above 0, else the configured rate; never above `BALLAST_THROTTLE_MAX_RATE_MB`.
pub fn throttle_from(stored: Option<&str>, configured_mb: u64, max_mb: u64) -> Throttle {
    let stored = stored
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|v| *v > 0);
    let (mb, source) = match stored {
        Some(mb) => (mb, "setting"),
        None => (configured_mb, "config"),
    };
    let mb = mb.min(max_mb) as f64;
    Throttle {
        rate_mb: mb,
        bytes_per_sec: mb * 1e6,
        source,
    }
}

pub(crate) async fn throttle(ctx: &Context) -> Result<Throttle, OpError> {
    let stored = ctx.db(|s| s.setting(THROTTLE_RATE_KEY)).await?;
    let t = &ctx.config.throttle;
    Ok(throttle_from(stored.as_deref(), t.rate_mb, t.max_rate_mb))
}

/// The planner's policy from the balance settings (`ballast_runtime::topology::policy`, as the
/// observer maps them), without `BALLAST_PROPOSAL_MAX_PARTITIONS`: a
/// simulation shows every move a scenario needs, not the next proposal's share of them.
pub fn policy(config: &Config) -> Policy {
    Policy {
        max_partitions: None,
        ..ballast_runtime::topology::policy(&config.balance, config.timing.move_cooldown)
    }
}

/// Every consumer group with the partitions it has committed offsets on, by group id.
fn consumer_groups(raw: &ObservedView) -> Vec<ConsumerGroup> {
    let mut groups: BTreeMap<&str, ConsumerGroup> = raw
        .groups
        .iter()
        .map(|g| {
            (
                g.group_id.as_str(),
                ConsumerGroup {
                    group_id: g.group_id.clone(),
                    coordinator: g.coordinator,
                    partitions: Vec::new(),
                },
            )
        })
        .collect();
    for o in &raw.group_offsets {
        groups
            .entry(o.group_id.as_str())
            .or_insert_with(|| ConsumerGroup {
                group_id: o.group_id.clone(),
                coordinator: None,
                partitions: Vec::new(),
            })
            .partitions
            .push((o.topic.clone(), o.partition));
    }
    groups.into_values().collect()
}

/// What every answer carries besides the result: which sample, how complete, which throttle.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Answer<T: Serialize> {
    observed_at: String,
    coverage: Coverage,
    throttle: Throttle,
    #[serde(flatten)]
    result: T,
}

/// Runs CPU-bound work (planning a large cluster takes seconds) off the async threads.
async fn compute<T, F>(f: F) -> Result<T, OpError>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| OpError::internal("simulation failed", e.to_string()))
}

fn invalid(error: &'static str) -> impl Fn(InputError) -> OpError {
    move |e| OpError::bad_input(error, e.to_string())
}

/// The operation `what_if_simulate`: the scenarios applied in order to the observed cluster and
/// planned with the proposals' planner; changes nothing.
pub async fn what_if_simulate(
    ctx: &Context,
    request: WhatIfRequest,
) -> Result<Answer<WhatIf>, OpError> {
    let v = view::require(ctx).await?;
    let throttle = throttle(ctx).await?;
    let policy = policy(&ctx.config);
    let now_ms = ctx.clock.now_ms();
    let rate = throttle.bytes_per_sec;
    let observed = v.clone();
    let maintenance = maintenance(ctx).await?;
    let result = compute(move || {
        // No cooldowns: a simulation shows what a scenario needs, not what may move right now.
        // Brokers in maintenance are as the proposals see them: they take no load and drain.
        let snapshot = snapshot_with_maintenance(&observed.raw, &[], &maintenance);
        whatif::simulate(&snapshot, &request, &policy, now_ms, rate)
    })
    .await?
    .map_err(invalid("invalid scenario"))?;
    Ok(Answer {
        observed_at: v.observed_at(),
        coverage: v.coverage.clone(),
        throttle,
        result,
    })
}

/// The operation `blast_radius_analyze`: what fails when a broker, several brokers or a rack
/// fail now; changes nothing.
pub async fn blast_radius_analyze(
    ctx: &Context,
    request: BlastRequest,
) -> Result<Answer<BlastRadius>, OpError> {
    let v = view::require(ctx).await?;
    let throttle = throttle(ctx).await?;
    let rate = throttle.bytes_per_sec;
    let observed = v.clone();
    let maintenance = maintenance(ctx).await?;
    let result = compute(move || {
        // Brokers in maintenance take no re-replicated copies, as in the proposals.
        let snapshot = snapshot_with_maintenance(&observed.raw, &[], &maintenance);
        let groups = consumer_groups(&observed.raw);
        blast::analyze(&snapshot, &groups, &request, rate)
    })
    .await?
    .map_err(invalid("invalid failure"))?;
    Ok(Answer {
        observed_at: v.observed_at(),
        coverage: v.coverage.clone(),
        throttle,
        result,
    })
}

/// The brokers an operator put in maintenance.
pub(crate) async fn maintenance(ctx: &Context) -> Result<BTreeSet<BrokerId>, OpError> {
    let rows = ctx.db(|s| s.maintenance()).await?;
    Ok(rows.into_iter().map(|m| m.broker_id).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_simulation_policy_follows_the_balance_settings_without_the_partition_cap() {
        let raw = ballast_config::RawConfig::from_pairs(
            [
                ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9"),
                ("BALLAST_BALANCE_THRESHOLD", "7"),
                ("BALLAST_BALANCE_FLOOR", "bytes=3MB/s disk=5GiB"),
                ("BALLAST_PROPOSAL_MAX_PARTITIONS", "10"),
                ("BALLAST_MOVE_COOLDOWN", "20m"),
            ]
            .map(|(k, v)| (k.to_string(), v.to_string())),
            None,
        )
        .expect("raw config");
        let config = Config::from_raw(&raw).expect("valid config");
        let p = policy(&config);
        assert_eq!(p.threshold_pct, 7.0);
        assert_eq!(p.floor_bytes_per_sec, 3e6);
        assert_eq!(p.floor_disk_bytes, 5.0 * (1u64 << 30) as f64);
        assert_eq!(p.cooldown_ms, 20 * 60 * 1000);
        assert_eq!(p.max_partitions, None);
    }

    #[test]
    fn the_throttle_is_the_stored_override_when_valid_and_never_above_the_maximum() {
        assert_eq!(throttle_from(Some("75"), 50, 1000).bytes_per_sec, 75e6);
        assert_eq!(throttle_from(Some("75"), 50, 1000).source, "setting");
        assert_eq!(throttle_from(Some("5000"), 50, 1000).rate_mb, 1000.0);
        for bad in [
            None,
            Some(""),
            Some("fast"),
            Some("0"),
            Some("-3"),
            Some("1.5"),
        ] {
            let t = throttle_from(bad, 50, 1000);
            assert_eq!((t.rate_mb, t.source), (50.0, "config"), "{bad:?}");
        }
    }
}
