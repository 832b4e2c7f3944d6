//! The topic lifecycle end to end (issue 42, docs/api/topics.md): the real binary creates, grows,
//! re-replicates and deletes topics of a simulated cluster, and the cluster's own view (the
//! simulator's truth) shows exactly the placement ballast answered.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use ballast_simcluster::GenerateParams;
use serde_json::{json, Value};

use crate::cluster::Sim;
use crate::support::{wait_for, Service};

/// Six brokers over three racks, two topics of 12 partitions at replication factor 2, with
/// consumer groups; `ballast run` on it with a license and fast timings.
fn start() -> (Sim, Service) {
    let sim = Sim::start_with(
        GenerateParams {
            brokers: 6,
            racks: 3,
            topics: 2,
            partitions_per_topic: 12,
            replication_factor: 2,
            seed: 7,
            mean_partition_bytes: 5e6,
            mean_msg_rate: 5.0,
            msg_bytes: 100.0,
            groups: Some(2),
            ..GenerateParams::default()
        },
        1.0,
    );
    let license = crate::license::dev_license();
    let service = Service::start_with(&[
        ("LICENSE_STRING", license.as_str()),
        ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", sim.bootstrap.as_str()),
        ("BALLAST_SAMPLE_INTERVAL", "1s"),
        ("BALLAST_EXECUTOR_INTERVAL", "200ms"),
        ("BALLAST_THROTTLE_RATE_MB", "100"),
    ]);
    wait_for(Duration::from_secs(30), "ready", || {
        let r = reqwest::blocking::get(service.url("/api/v1/ready")).ok()?;
        (r.status().as_u16() == 200).then_some(())
    });
    (sim, service)
}

fn send(
    method: reqwest::Method,
    service: &Service,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let client = reqwest::blocking::Client::new();
    let mut req = client.request(method, service.url(path));
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().expect("request");
    let status = resp.status().as_u16();
    (status, resp.json().unwrap_or(Value::Null))
}

fn post(service: &Service, path: &str, body: Value) -> (u16, Value) {
    send(reqwest::Method::POST, service, path, Some(body))
}

/// The simulator's placement of `topic`: partition → replicas.
fn placement(sim: &Sim, topic: &str) -> BTreeMap<i32, Vec<i32>> {
    sim.snapshot()
        .partitions
        .iter()
        .filter(|p| p.topic == topic)
        .map(|p| (p.partition, p.replicas.clone()))
        .collect()
}

fn answered(assignment: &Value) -> BTreeMap<i32, Vec<i32>> {
    assignment
        .as_array()
        .expect("assignment")
        .iter()
        .map(|row| {
            (
                row["partition"].as_i64().expect("partition") as i32,
                row["replicas"]
                    .as_array()
                    .expect("replicas")
                    .iter()
                    .map(|b| b.as_i64().expect("id") as i32)
                    .collect(),
            )
        })
        .collect()
}

fn rack_of(sim: &Sim) -> BTreeMap<i32, Option<String>> {
    sim.snapshot()
        .brokers
        .iter()
        .map(|b| (b.id, b.rack.clone()))
        .collect()
}

fn audit_event(service: &Service, action: &str, target: &str) -> Value {
    wait_for(Duration::from_secs(10), action, || {
        let (_, v) = send(
            reqwest::Method::GET,
            service,
            &format!("/api/v1/audit-log?action={action}"),
            None,
        );
        v["data"]["events"]
            .as_array()?
            .iter()
            .find(|e| e["target"] == target && e["status"] == 200)
            .cloned()
    })
}

#[test]
fn a_created_topic_gets_exactly_the_rack_aware_even_placement_answered_and_bad_input_changes_nothing(
) {
    let (sim, service) = start();
    let body = json!({"name": "fresh", "partitions": 12, "replicationFactor": 3,
                      "configs": {"retention.ms": 3600000}, "validateOnly": true});
    let (status, checked) = post(&service, "/api/v1/topics", body.clone());
    assert_eq!(status, 200, "{checked}");
    assert_eq!(checked["data"]["created"], false);
    assert!(
        placement(&sim, "fresh").is_empty(),
        "validateOnly created it"
    );
    let planned = answered(&checked["data"]["assignment"]);
    assert_eq!(planned.len(), 12);

    let mut create = body.clone();
    create["validateOnly"] = json!(false);
    let (status, created) = post(&service, "/api/v1/topics", create.clone());
    assert_eq!(status, 200, "{created}");
    assert_eq!(created["data"]["created"], true);
    let assignment = answered(&created["data"]["assignment"]);
    // The cluster holds exactly the answered placement.
    assert_eq!(placement(&sim, "fresh"), assignment);
    // Rack-aware, each broker two leaders and six replicas of the topic.
    let racks = rack_of(&sim);
    let mut leaders: BTreeMap<i32, usize> = BTreeMap::new();
    let mut replicas: BTreeMap<i32, usize> = BTreeMap::new();
    for r in assignment.values() {
        let spread: BTreeSet<_> = r.iter().map(|b| racks[b].clone()).collect();
        assert_eq!(spread.len(), 3, "one replica a rack: {r:?}");
        *leaders.entry(r[0]).or_default() += 1;
        for b in r {
            *replicas.entry(*b).or_default() += 1;
        }
    }
    // Each broker two leaders and six replicas of the topic, give or take one where a broker's
    // replica count is already at the trigger.
    assert!(leaders.values().all(|n| (1..=3).contains(n)), "{leaders:?}");
    assert!(
        replicas.values().all(|n| (5..=7).contains(n)),
        "{replicas:?}"
    );
    assert_eq!(replicas.len(), 6, "{replicas:?}");
    let event = audit_event(&service, "topics.create", "fresh");
    assert_eq!(
        event["after"]["configs"]["retention.ms"], "3600000",
        "{event}"
    );

    // Bad input: a clear 400 naming the field, and nothing changes.
    for (bad, field) in [
        (
            json!({"name": "has space", "partitions": 1, "replicationFactor": 1}),
            "name",
        ),
        (
            json!({"name": "zero", "partitions": 0, "replicationFactor": 1}),
            "partitions",
        ),
        (
            json!({"name": "wide", "partitions": 1, "replicationFactor": 7}),
            "replicationFactor",
        ),
        (
            json!({"name": "cfg", "partitions": 1, "replicationFactor": 1, "configs": {"retention.ms": "soon"}}),
            "retention.ms",
        ),
        (
            json!({"name": "unknown-broker", "partitions": 1, "replicationFactor": 2, "assignment": [[1, 99]]}),
            "assignment: partition 0: broker 99 is not in the cluster",
        ),
        (
            json!({"name": "twice", "partitions": 1, "replicationFactor": 2, "assignment": [[2, 2]]}),
            "assignment: partition 0 names broker 2 twice",
        ),
        (
            json!({"name": "short", "partitions": 1, "replicationFactor": 2, "assignment": [[1]]}),
            "assignment: partition 0 lists 1 replica(s); the replication factor is 2",
        ),
        (
            json!({"name": "fewer", "partitions": 2, "replicationFactor": 1, "assignment": [[1]]}),
            "assignment: names 1 partition(s); 2 are to be placed",
        ),
    ] {
        let (status, refused) = post(&service, "/api/v1/topics", bad.clone());
        assert_eq!(status, 400, "{bad}: {refused}");
        assert_eq!(refused["success"], false);
        assert!(refused.to_string().contains(field), "{bad}: {refused}");
    }
    let (status, exists) = post(&service, "/api/v1/topics", create);
    assert_eq!(status, 409, "{exists}");
    let names: BTreeSet<String> = sim
        .snapshot()
        .partitions
        .iter()
        .map(|p| p.topic.clone())
        .collect();
    assert!(
        !names.iter().any(|n| [
            "has space",
            "zero",
            "wide",
            "cfg",
            "unknown-broker",
            "twice",
            "short",
            "fewer"
        ]
        .contains(&n.as_str())),
        "{names:?}"
    );

    // The planner, run on the cluster with the new topic in view (the what-if of an unchanged
    // cluster: the proposals' planner without their partition cap), moves none of its replicas.
    let plan = wait_for(
        Duration::from_secs(30),
        "a plan that sees the new topic",
        || {
            let (status, v) = post(
                &service,
                "/api/v1/what-if/simulate",
                json!({"scenarios": [{"type": "scaleTraffic", "factor": 1, "topic": "fresh"}]}),
            );
            (status == 200).then_some(v)
        },
    );
    let moved: Vec<&Value> = plan["data"]["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .filter(|m| m["topic"] == "fresh")
        .collect();
    assert!(
        moved.is_empty(),
        "the planner moves the new topic: {moved:?}"
    );

    // A created topic reverts as a delete, after a preview.
    let id = event["id"].as_i64().expect("event id");
    let (status, preview) = post(
        &service,
        "/api/v1/audit-log/revert/preview",
        json!({"eventId": id}),
    );
    assert_eq!(status, 200, "{preview}");
    assert_eq!(preview["data"]["canRevert"], true, "{preview}");
    assert_eq!(
        preview["data"]["changes"][0]["revertTo"]["exists"], false,
        "{preview}"
    );
    let fingerprint = preview["data"]["fingerprint"].clone();
    let (status, reverted) = post(
        &service,
        "/api/v1/audit-log/revert",
        json!({"eventId": id, "fingerprint": fingerprint}),
    );
    assert_eq!(status, 202, "{reverted}");
    assert!(placement(&sim, "fresh").is_empty(), "the revert deleted it");
}

#[test]
fn an_explicit_assignment_is_created_and_added_exactly_as_the_operator_named_it() {
    let (sim, service) = start();
    let (status, created) = post(
        &service,
        "/api/v1/topics",
        json!({"name": "named", "partitions": 2, "replicationFactor": 2,
               "assignment": [[3, 1], [3, 2]]}),
    );
    assert_eq!(status, 200, "{created}");
    assert_eq!(
        placement(&sim, "named"),
        BTreeMap::from([(0, vec![3, 1]), (1, vec![3, 2])])
    );
    assert_eq!(
        answered(&created["data"]["assignment"]),
        placement(&sim, "named")
    );
    let (status, added) = post(
        &service,
        "/api/v1/topics/named/partitions",
        json!({"count": 3, "assignment": [[4, 5]]}),
    );
    assert_eq!(status, 200, "{added}");
    assert_eq!(placement(&sim, "named")[&2], vec![4, 5]);
}

#[test]
fn added_partitions_get_the_answered_placement_and_a_lower_count_is_refused_as_kafka_cannot() {
    let (sim, service) = start();
    let topic = sim.snapshot().partitions[0].topic.clone();
    let (status, lower) = post(
        &service,
        &format!("/api/v1/topics/{topic}/partitions"),
        json!({"count": 6}),
    );
    assert_eq!(status, 400, "{lower}");
    assert!(
        lower.to_string().contains("cannot remove partitions"),
        "{lower}"
    );
    assert_eq!(placement(&sim, &topic).len(), 12);
    let (status, unknown) = post(
        &service,
        &format!("/api/v1/topics/{topic}/partitions"),
        json!({"count": 13, "assignment": [[1, 99]]}),
    );
    assert_eq!(status, 400, "{unknown}");
    assert!(
        unknown
            .to_string()
            .contains("partition 12: broker 99 is not in the cluster"),
        "{unknown}"
    );
    assert_eq!(placement(&sim, &topic).len(), 12, "nothing added");
    let (status, added) = post(
        &service,
        &format!("/api/v1/topics/{topic}/partitions"),
        json!({"count": 18}),
    );
    assert_eq!(status, 200, "{added}");
    assert_eq!(added["data"]["added"], true);
    let now = placement(&sim, &topic);
    assert_eq!(now.len(), 18);
    for (p, r) in answered(&added["data"]["assignment"]) {
        assert!(p >= 12);
        assert_eq!(now[&p], r, "partition {p}");
    }
    // Not revertible, and the audit log says why.
    let event = audit_event(&service, "topics.partitions.add", &topic);
    let (status, preview) = post(
        &service,
        "/api/v1/audit-log/revert/preview",
        json!({"eventId": event["id"]}),
    );
    assert_eq!(status, 400, "{preview}");
    assert!(
        preview
            .to_string()
            .contains("cannot lower a topic's partition count"),
        "{preview}"
    );
}

fn wait_completed(service: &Service, id: &str) -> Value {
    wait_for(
        Duration::from_secs(60),
        "the operation's completion",
        || {
            let (_, v) = send(
                reqwest::Method::GET,
                service,
                &format!("/api/v1/reassignments/{id}"),
                None,
            );
            (v["data"]["state"] == "Completed").then_some(v)
        },
    )
}

#[test]
fn a_replication_factor_change_runs_as_throttled_moves_up_and_down_and_never_below_the_floor() {
    let (sim, service) = start();
    let topic = sim.snapshot().partitions[0].topic.clone();
    let path = format!("/api/v1/topics/{topic}/replication-factor");
    let (status, plan) = send(
        reqwest::Method::PUT,
        &service,
        &path,
        Some(json!({"replicationFactor": 3, "validateOnly": true})),
    );
    assert_eq!(status, 200, "{plan}");
    assert_eq!(plan["data"]["totalMoves"], 12);
    assert!(
        plan["data"]["estimatedBytes"].as_u64().unwrap_or(0) > 0,
        "{plan}"
    );
    assert!(placement(&sim, &topic).values().all(|r| r.len() == 2));

    let (status, up) = send(
        reqwest::Method::PUT,
        &service,
        &path,
        Some(json!({"replicationFactor": 3})),
    );
    assert_eq!(status, 200, "{up}");
    let id = up["data"]["operationId"]
        .as_str()
        .expect("operation")
        .to_string();
    let done = wait_completed(&service, &id);
    assert_eq!(done["data"]["strategy"], "REPLICATION_FACTOR", "{done}");
    let racks = rack_of(&sim);
    let before = answered(&json!(plan["data"]["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .map(|m| json!({"partition": m["partition"], "replicas": m["replicasBefore"]}))
        .collect::<Vec<_>>()));
    for (p, r) in placement(&sim, &topic) {
        assert_eq!(r.len(), 3, "partition {p}");
        assert_eq!(
            &r[..2],
            &before[&p][..],
            "the replicas it had stay, leader first"
        );
        let spread: BTreeSet<_> = r.iter().map(|b| racks[b].clone()).collect();
        assert_eq!(spread.len(), 3, "partition {p}: {r:?}");
    }

    // Two partitions back down to 2; the leader stays.
    let (status, down) = send(
        reqwest::Method::PUT,
        &service,
        &path,
        Some(json!({"replicationFactor": 2, "partitions": [0, 1]})),
    );
    assert_eq!(status, 200, "{down}");
    wait_completed(
        &service,
        down["data"]["operationId"].as_str().expect("operation"),
    );
    let now = placement(&sim, &topic);
    assert_eq!((now[&0].len(), now[&1].len(), now[&2].len()), (2, 2, 3));

    // Below min.insync.replicas + 1 (1 + 1 = 2): refused, nothing queued.
    let (status, floor) = send(
        reqwest::Method::PUT,
        &service,
        &path,
        Some(json!({"replicationFactor": 1})),
    );
    assert_eq!(status, 400, "{floor}");
    assert!(floor.to_string().contains("min.insync.replicas"), "{floor}");
    assert_eq!(placement(&sim, &topic)[&0].len(), 2);
}

#[test]
fn deleting_a_topic_with_committed_offsets_needs_force_says_what_is_lost_and_is_audited_with_its_placement(
) {
    let (sim, service) = start();
    // A topic with committed offsets (the generated groups commit on every partition of their
    // topic), as the deletion's preview names them.
    let topics: BTreeSet<String> = sim
        .snapshot()
        .partitions
        .iter()
        .map(|p| p.topic.clone())
        .collect();
    let topic = wait_for(Duration::from_secs(30), "a topic with groups", || {
        topics.iter().find_map(|t| {
            let (_, v) = send(
                reqwest::Method::DELETE,
                &service,
                &format!("/api/v1/topics/{t}?force=true&validateOnly=true"),
                None,
            );
            (!v["data"]["consumerGroups"].as_array()?.is_empty()).then(|| t.clone())
        })
    });
    let path = format!("/api/v1/topics/{topic}");
    let (status, refused) = send(reqwest::Method::DELETE, &service, &path, None);
    assert_eq!(status, 409, "{refused}");
    assert!(refused.to_string().contains("force=true"), "{refused}");
    let (status, preview) = send(
        reqwest::Method::DELETE,
        &service,
        &format!("{path}?force=true&validateOnly=true"),
        None,
    );
    assert_eq!(status, 200, "{preview}");
    assert_eq!(preview["data"]["deleted"], false);
    assert!(
        preview["data"]["sizeBytes"].as_i64().unwrap_or(0) > 0,
        "{preview}"
    );
    assert!(!preview["data"]["consumerGroups"]
        .as_array()
        .expect("groups")
        .is_empty());
    assert_eq!(placement(&sim, &topic).len(), 12);
    let (status, deleted) = send(
        reqwest::Method::DELETE,
        &service,
        &format!("{path}?force=true"),
        None,
    );
    assert_eq!(status, 200, "{deleted}");
    assert!(placement(&sim, &topic).is_empty());
    let event = audit_event(&service, "topics.delete", &topic);
    assert_eq!(
        event["before"]["assignment"].as_array().map(Vec::len),
        Some(12),
        "{event}"
    );
    let (status, again) = send(reqwest::Method::DELETE, &service, &path, None);
    assert_eq!(status, 404, "{again}");
}
