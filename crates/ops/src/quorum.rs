//! Controllers as nodes: the KRaft metadata quorum of a reading (DescribeQuorum, stored by the
//! observer with the sample) turned into one row per voter and observer (id, role, endpoints,
//! leader, lag, time since its last fetch and catch-up, up or down) and the quorum's health
//! ("quorum: 2 of 3 voters"). On ZooKeeper the controller is a broker, named by Metadata.
//!
//! The rule: the quorum leader is up (it answered); another voter is up while it fetched from the
//! leader and was caught up with it within `BALLAST_QUORUM_FETCH_TIMEOUT`, both measured against
//! the leader's own time in the same answer; a voter the leader has no fetch time for (a newly
//! elected leader that never heard from it) is down. Without fetch times at all (DescribeQuorum
//! v0, Kafka before 3.3) no voter's state is known, and none is counted down.

use std::collections::BTreeSet;

use ballast_model::BrokerId;
use ballast_schema::ObservedView;
use serde::Serialize;
use serde_json::{json, Value};

/// One node of the quorum: a voter (controller, or broker and controller) or an observer
/// (a broker replicating the metadata log).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuorumNode {
    pub id: BrokerId,
    /// `controller` (a voter that is no broker), `broker` (an observer) or `both` (a voter that
    /// is also a registered broker: combined mode).
    pub role: &'static str,
    pub voter: bool,
    pub leader: bool,
    /// Its listeners: a voter's as DescribeQuorum v2 names them (Kafka 3.9+), a broker's as
    /// Metadata names it; empty when neither is known.
    pub endpoints: Vec<Value>,
    pub log_end_offset: Option<i64>,
    /// Records behind the leader's log end offset.
    pub lag: Option<i64>,
    pub last_fetch_ms: Option<i64>,
    /// Milliseconds between its last fetch and the leader's answer.
    pub fetch_age_ms: Option<i64>,
    pub last_caught_up_ms: Option<i64>,
    pub caught_up_age_ms: Option<i64>,
    /// Voters only: fetching and caught up within the timeout (None: not known).
    pub up: Option<bool>,
    /// Why a voter is down, in words; None when up or not known.
    pub down_reason: Option<String>,
}

/// The quorum of a reading.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Quorum {
    pub leader_id: Option<BrokerId>,
    pub leader_epoch: Option<i64>,
    pub high_watermark: Option<i64>,
    pub voters: usize,
    /// Voters known to be up (the leader included).
    pub voters_up: usize,
    /// Voters whose state is not known (no fetch times).
    pub voters_unknown: usize,
    /// Voters known to be down, by id.
    pub voters_down: Vec<BrokerId>,
    /// `healthy`, `degraded` (a voter down) or `critical` (fewer than a majority up, or no
    /// leader).
    pub status: &'static str,
    /// "quorum: 2 of 3 voters".
    pub text: String,
    pub fetch_timeout_ms: i64,
    pub nodes: Vec<QuorumNode>,
}

fn i64_of(v: &Value, key: &str) -> Option<i64> {
    v.get(key).and_then(Value::as_i64)
}

/// The quorum of `raw` (None off KRaft or when the observer could not read it).
pub fn assess(raw: &ObservedView, fetch_timeout_ms: i64) -> Option<Quorum> {
    let q = raw.cluster.facts.quorum.as_ref()?;
    let leader = i64_of(q, "leaderId").map(|l| l as BrokerId);
    let brokers: BTreeSet<BrokerId> = raw.brokers.iter().map(|b| b.broker_id).collect();
    let list = |key: &str| -> Vec<Value> {
        q.get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let voters = list("voters");
    let observers = list("observers");
    let endpoints_of = list("nodes");
    // Fetch times are known when the leader reported its own (v1+).
    let times_known = voters.iter().any(|r| {
        i64_of(r, "id").map(|i| i as BrokerId) == leader && i64_of(r, "fetchAgeMs").is_some()
    });
    let broker_endpoint = |id: BrokerId| -> Option<Value> {
        raw.brokers
            .iter()
            .find(|b| b.broker_id == id && b.host.is_some())
            .map(|b| json!({"listener": "broker", "host": b.host, "port": b.port}))
    };
    let node = |r: &Value, voter: bool| -> Option<QuorumNode> {
        let id = i64_of(r, "id")? as BrokerId;
        let is_leader = leader == Some(id);
        let mut endpoints: Vec<Value> = endpoints_of
            .iter()
            .filter(|n| i64_of(n, "id") == Some(i64::from(id)))
            .flat_map(|n| {
                n.get("listeners")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
            })
            .map(|l| json!({"listener": l["name"], "host": l["host"], "port": l["port"]}))
            .collect();
        endpoints.extend(broker_endpoint(id));
        let fetch_age = i64_of(r, "fetchAgeMs");
        let caught_up_age = i64_of(r, "caughtUpAgeMs");
        let (up, down_reason) = if !voter {
            (None, None)
        } else if is_leader {
            (Some(true), None)
        } else if !times_known {
            (None, None)
        } else {
            match (fetch_age, caught_up_age) {
                (None, _) => (
                    Some(false),
                    Some("the quorum leader has no fetch from it".to_string()),
                ),
                (Some(f), _) if f > fetch_timeout_ms => (
                    Some(false),
                    Some(format!(
                        "last fetched {} s before the leader's answer",
                        (f + 500) / 1000
                    )),
                ),
                (_, None) => (
                    Some(false),
                    Some("never caught up with the quorum leader".to_string()),
                ),
                (_, Some(c)) if c > fetch_timeout_ms => (
                    Some(false),
                    Some(format!(
                        "last caught up {} s before the leader's answer",
                        (c + 500) / 1000
                    )),
                ),
                _ => (Some(true), None),
            }
        };
        Some(QuorumNode {
            id,
            role: match (voter, brokers.contains(&id)) {
                (true, true) => "both",
                (true, false) => "controller",
                (false, _) => "broker",
            },
            voter,
            leader: is_leader,
            endpoints,
            log_end_offset: i64_of(r, "logEndOffset"),
            lag: i64_of(r, "lag"),
            last_fetch_ms: i64_of(r, "lastFetchMs"),
            fetch_age_ms: fetch_age,
            last_caught_up_ms: i64_of(r, "lastCaughtUpMs"),
            caught_up_age_ms: caught_up_age,
            up,
            down_reason,
        })
    };
    let mut nodes: Vec<QuorumNode> = voters.iter().filter_map(|r| node(r, true)).collect();
    nodes.extend(observers.iter().filter_map(|r| node(r, false)));
    let voter_nodes = || nodes.iter().filter(|n| n.voter);
    let total = voter_nodes().count();
    let up = voter_nodes().filter(|n| n.up == Some(true)).count();
    let unknown = voter_nodes().filter(|n| n.up.is_none()).count();
    let down: Vec<BrokerId> = voter_nodes()
        .filter(|n| n.up == Some(false))
        .map(|n| n.id)
        .collect();
    let status = if leader.is_none() || (unknown == 0 && up * 2 <= total) {
        "critical"
    } else if !down.is_empty() {
        "degraded"
    } else {
        "healthy"
    };
    let mut text = if unknown == total && leader.is_some() {
        format!("quorum: {total} voters, their fetch times not reported (DescribeQuorum v0)")
    } else {
        format!("quorum: {up} of {total} voters")
    };
    if leader.is_none() {
        text.push_str(", no leader");
    } else if unknown > 0 && unknown < total {
        text.push_str(&format!(", {unknown} not known"));
    }
    Some(Quorum {
        leader_id: leader,
        leader_epoch: i64_of(q, "leaderEpoch"),
        high_watermark: i64_of(q, "highWatermark"),
        voters: total,
        voters_up: up,
        voters_unknown: unknown,
        voters_down: down,
        status,
        text,
        fetch_timeout_ms,
        nodes,
    })
}

/// The controllers view of a reading: on KRaft every voter and observer of the metadata quorum
/// with the quorum's health; on ZooKeeper the controller broker Metadata names.
pub fn controllers(raw: &ObservedView, quorum: Option<&Quorum>) -> Value {
    let facts = &raw.cluster.facts;
    let mode = facts.metadata_mode.as_deref();
    match quorum {
        Some(q) => json!({
            "metadataMode": mode,
            "controllerId": facts.controller_id,
            "controllerSource": facts.controller_source,
            "quorum": {
                "status": q.status,
                "text": q.text,
                "leaderId": q.leader_id,
                "leaderEpoch": q.leader_epoch,
                "highWatermark": q.high_watermark,
                "voters": q.voters,
                "votersUp": q.voters_up,
                "votersUnknown": q.voters_unknown,
                "votersDown": q.voters_down,
                "fetchTimeoutMs": q.fetch_timeout_ms,
            },
            "nodes": q.nodes,
        }),
        None => {
            let nodes: Vec<Value> = facts
                .controller_id
                .filter(|_| mode == Some("zookeeper") || facts.controller_source.as_deref() == Some("metadata"))
                .map(|id| {
                    let b = raw.brokers.iter().find(|b| b.broker_id == id);
                    json!({
                        "id": id,
                        "role": "broker",
                        "voter": false,
                        "leader": true,
                        "endpoints": b.filter(|b| b.host.is_some()).map(|b| vec![json!({"listener": "broker", "host": b.host, "port": b.port})]).unwrap_or_default(),
                    })
                })
                .into_iter()
                .collect();
            json!({
                "metadataMode": mode,
                "controllerId": facts.controller_id,
                "controllerSource": facts.controller_source,
                "quorum": Value::Null,
                "nodes": nodes,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ballast_schema::{ClusterFacts, ObservedBroker, ObservedCluster};

    fn empty() -> ObservedView {
        ObservedView {
            cluster: ObservedCluster {
                generation: 1,
                first_sampled_at_ms: 0,
                facts: ClusterFacts::default(),
            },
            brokers: Vec::new(),
            log_dirs: Vec::new(),
            topics: Vec::new(),
            partitions: Vec::new(),
            replicas: Vec::new(),
            groups: Vec::new(),
            group_offsets: Vec::new(),
            latest_readings: Vec::new(),
        }
    }

    fn broker(id: BrokerId) -> ObservedBroker {
        ObservedBroker {
            broker_id: id,
            host: Some("127.0.0.1".into()),
            port: Some(9000 + id),
            rack: None,
            alive: true,
            first_seen_ms: None,
            last_seen_ms: None,
            log_dirs_read: true,
            log_dirs_error: None,
        }
    }

    fn replica(id: i64, fetch_age: Option<i64>, caught_up_age: Option<i64>) -> Value {
        json!({"id": id, "logEndOffset": 100, "lag": 0, "lastFetchMs": 1, "fetchAgeMs": fetch_age, "caughtUpAgeMs": caught_up_age})
    }

    /// Dedicated controllers 101–103 (101 leads) and brokers 1–3 observing.
    fn dedicated(voter_103: Value) -> ObservedView {
        let mut raw = empty();
        raw.brokers = vec![broker(1), broker(2), broker(3)];
        raw.cluster.facts.metadata_mode = Some("kraft".into());
        raw.cluster.facts.controller_id = Some(101);
        raw.cluster.facts.controller_source = Some("quorum".into());
        raw.cluster.facts.quorum = Some(json!({
            "leaderId": 101, "leaderEpoch": 4, "highWatermark": 100,
            "voters": [replica(101, Some(0), Some(0)), replica(102, Some(300), Some(300)), voter_103],
            "observers": [replica(1, Some(200), Some(200)), replica(2, Some(200), Some(200)), replica(3, Some(200), Some(200))],
            "nodes": [{"id": 101, "listeners": [{"name": "CONTROLLER", "host": "127.0.0.1", "port": 9101}]}],
        }));
        raw
    }

    #[test]
    fn dedicated_controllers_are_nodes_with_the_controller_role_and_brokers_observers() {
        let q = assess(&dedicated(replica(103, Some(100), Some(100))), 10_000).expect("a quorum");
        let roles: Vec<(BrokerId, &str, bool)> =
            q.nodes.iter().map(|n| (n.id, n.role, n.leader)).collect();
        assert_eq!(
            roles,
            vec![
                (101, "controller", true),
                (102, "controller", false),
                (103, "controller", false),
                (1, "broker", false),
                (2, "broker", false),
                (3, "broker", false)
            ]
        );
        assert_eq!(
            q.nodes[0].endpoints,
            vec![json!({"listener": "CONTROLLER", "host": "127.0.0.1", "port": 9101})]
        );
        assert_eq!(q.status, "healthy");
        assert_eq!(q.text, "quorum: 3 of 3 voters");
    }

    #[test]
    fn a_voter_that_does_not_fetch_is_down_and_the_quorum_degraded_saying_2_of_3_voters() {
        let q =
            assess(&dedicated(replica(103, Some(45_000), Some(45_000))), 10_000).expect("a quorum");
        assert_eq!(q.status, "degraded");
        assert_eq!(q.text, "quorum: 2 of 3 voters");
        assert_eq!(q.voters_down, vec![103]);
        let n = q.nodes.iter().find(|n| n.id == 103).expect("103");
        assert_eq!(n.up, Some(false));
        assert_eq!(
            n.down_reason.as_deref(),
            Some("last fetched 45 s before the leader's answer")
        );
        // A leader that never heard from the voter (no fetch time): down too.
        let q = assess(&dedicated(replica(103, None, None)), 10_000).expect("a quorum");
        assert_eq!((q.status, q.voters_down.clone()), ("degraded", vec![103]));
    }

    #[test]
    fn a_voter_far_behind_is_down_though_it_fetches() {
        let q =
            assess(&dedicated(replica(103, Some(100), Some(30_000))), 10_000).expect("a quorum");
        assert_eq!(q.text, "quorum: 2 of 3 voters");
        let n = q.nodes.iter().find(|n| n.id == 103).expect("103");
        assert_eq!(
            n.down_reason.as_deref(),
            Some("last caught up 30 s before the leader's answer")
        );
    }

    #[test]
    fn fewer_than_a_majority_of_voters_up_is_critical() {
        let mut raw = dedicated(replica(103, None, None));
        if let Some(q) = raw.cluster.facts.quorum.as_mut() {
            q["voters"][1] = replica(102, None, None);
        }
        let q = assess(&raw, 10_000).expect("a quorum");
        assert_eq!(
            (q.status, q.text.as_str()),
            ("critical", "quorum: 1 of 3 voters")
        );
    }

    #[test]
    fn combined_nodes_are_both_and_without_fetch_times_no_voter_is_counted_down() {
        let mut raw = empty();
        raw.brokers = vec![broker(1), broker(2), broker(3)];
        raw.cluster.facts.quorum = Some(json!({
            "leaderId": 1, "leaderEpoch": 1, "highWatermark": 5,
            "voters": [replica(1, None, None), replica(2, None, None), replica(3, None, None)],
            "observers": [],
        }));
        let q = assess(&raw, 10_000).expect("a quorum");
        assert!(q.nodes.iter().all(|n| n.role == "both"));
        assert_eq!(q.status, "healthy");
        assert_eq!(q.voters_unknown, 2);
        assert_eq!(q.voters_up, 1);
        assert!(q.voters_down.is_empty());
        // The broker's own endpoint from Metadata.
        assert_eq!(
            q.nodes[1].endpoints,
            vec![json!({"listener": "broker", "host": "127.0.0.1", "port": 9002})]
        );
    }

    #[test]
    fn on_zookeeper_the_controller_is_the_broker_metadata_names() {
        let mut raw = empty();
        raw.brokers = vec![broker(1), broker(2)];
        raw.cluster.facts.metadata_mode = Some("zookeeper".into());
        raw.cluster.facts.controller_id = Some(2);
        raw.cluster.facts.controller_source = Some("metadata".into());
        assert!(assess(&raw, 10_000).is_none());
        let c = controllers(&raw, None);
        assert_eq!(c["nodes"][0]["id"], 2);
        assert_eq!(c["nodes"][0]["role"], "broker");
        assert_eq!(c["quorum"], Value::Null);
    }
}
