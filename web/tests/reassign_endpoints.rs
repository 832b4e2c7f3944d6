//! The partition-moving endpoints against a simulated cluster, with the real observer tick for the
//! cached view and the real executor engine to carry operations out: bulk rules, explicit replica
//! sets, topic redistribution, elections, maintenance, cancel, throttle tuning.

use std::sync::Arc;
use std::time::Duration;

use ballast_config::{Config, RawConfig};
use ballast_executor::Engine;
use ballast_kafka::{Client, ClientConfig};
use ballast_schema::{AuditQuery, OperationState, Store};
use ballast_simcluster::{GenerateParams, Scenario, SimCluster, SimConfig};
use serde_json::{json, Value};

struct Bed {
    sim: SimCluster,
    client: Client,
    store: Store,
    config: Arc<Config>,
    base: String,
    http: reqwest::Client,
    new_broker: i32,
    _dir: tempfile::TempDir,
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

async fn bed() -> Bed {
    let sim = SimCluster::start(SimConfig {
        scenario: Scenario::Generate(GenerateParams {
            brokers: 4,
            racks: 2,
            topics: 2,
            partitions_per_topic: 4,
            replication_factor: 2,
            seed: 9,
            mean_partition_bytes: 5e6,
            mean_msg_rate: 0.0,
            msg_bytes: 100.0,
            ..GenerateParams::default()
        }),
        base_port: 0,
        speed: 10.0,
        tick: Duration::from_millis(20),
        ..SimConfig::default()
    })
    .await
    .expect("simulated cluster");
    let new_broker = sim
        .add_broker(Some("rack-0".into()))
        .await
        .expect("add a broker");
    let client = Client::connect(
        ClientConfig::plaintext(&sim.bootstrap())
            .with_request_timeout(Duration::from_secs(5))
            .with_retries(5, Duration::from_millis(50)),
    )
    .await
    .expect("connect");
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("ballast.db");
    Store::migrate(&db).expect("migrate");
    let store = Store::open(&db).expect("open");
    let raw = RawConfig::from_pairs(
        [
            ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", sim.bootstrap().as_str()),
            ("BALLAST_DATA_DIR", dir.path().to_str().expect("utf-8")),
            ("BALLAST_KAFKA_REQUEST_TIMEOUT", "5s"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string())),
        None,
    )
    .expect("raw config");
    let config = Arc::new(Config::from_raw(&raw).expect("config"));
    // One observer pass: the cached view previews plan from.
    let mut history = None;
    ballast_observer::tick(
        &client,
        &store,
        &mut history,
        ballast_observer::windows(&config.timing),
        now(),
    )
    .await
    .expect("observe");
    let mut state = ballast_web::AppState::new(
        store.clone(),
        config.clone(),
        Arc::new(ballast_runtime::SystemClock),
    );
    // The routes under test are licensed.
    state.license = Arc::new(
        ballast_web::license::LicenseRuntime::licensed_for_tests(&store, now()).expect("license"),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    tokio::spawn(async move {
        let _ = axum::serve(listener, ballast_web::router(state)).await;
    });
    Bed {
        sim,
        client,
        store,
        config,
        base: format!("http://{addr}"),
        http: reqwest::Client::new(),
        new_broker,
        _dir: dir,
    }
}

impl Bed {
    async fn send(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut req = self.http.request(method, format!("{}{path}", self.base));
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.expect("request");
        let status = r.status().as_u16();
        (status, r.json().await.expect("json"))
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.send(reqwest::Method::POST, path, Some(body)).await
    }

    fn audit_count(&self) -> u64 {
        self.store
            .list_audit(&AuditQuery::default())
            .expect("audit")
            .total
    }

    fn operations(&self) -> u64 {
        self.store.operations(None, 10, 0).expect("ops").total
    }

    fn topic(&self) -> (String, Vec<(i32, Vec<i32>)>) {
        let snap = self.sim.snapshot();
        let topic = snap.partitions[0].topic.clone();
        let parts = snap
            .partitions
            .iter()
            .filter(|p| p.topic == topic)
            .map(|p| (p.partition, p.replicas.clone()))
            .collect();
        (topic, parts)
    }

    async fn run_to_end(&self, id: &str) {
        let mut engine = Engine::new(self.store.clone(), self.config.clone());
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            engine.tick(&self.client, now()).await.expect("tick");
            let op = self.store.operation(id).expect("read").expect("op");
            if op.state.is_finished() {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "operation {id} did not finish"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

fn error_text(body: &Value) -> String {
    format!("{} {}", body["error"], body["details"])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bulk_request_of_previews_only_starts_nothing_takes_no_slot_and_writes_no_audit() {
    let bed = bed().await;
    let (topic, parts) = bed.topic();
    let (p, replicas) = &parts[0];
    let mut target = replicas.clone();
    target[0] = bed.new_broker;
    let (status, body) = bed
        .post(
            &format!("/api/v1/topics/{topic}/partitions/bulk"),
            json!({ "partitions": [{ "partition": p, "replicas": target, "preview": true }] }),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let r = &body["data"]["results"][0];
    assert_eq!(r["success"], true, "{body}");
    assert_eq!(r["preview"], true);
    assert_eq!(r["adding"], json!([bed.new_broker]));
    assert!(
        body["data"].get("started").is_none(),
        "no live entry: no started"
    );
    assert_eq!(bed.operations(), 0);
    assert_eq!(bed.audit_count(), 0);
    assert!(bed.store.slot(now()).expect("slot").is_none());
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bulk_request_rejects_invalid_and_duplicate_entries_and_runs_the_others_as_bulk_manual() {
    let bed = bed().await;
    let (topic, parts) = bed.topic();
    let moved = |i: usize| {
        let mut t = parts[i].1.clone();
        t[0] = bed.new_broker;
        t
    };
    let body = json!({
        "description": "mixed",
        "partitions": [
            { "partition": parts[0].0, "replicas": moved(0) },
            { "partition": parts[1].0, "replicas": moved(1) },
            { "partition": parts[1].0, "replicas": parts[1].1 },
            { "partition": parts[2].0, "replicas": [] },
            { "partition": parts[3].0, "replicas": [parts[3].1[0]] },
            { "partition": 99, "replicas": [1, 2] },
        ]
    });
    let (status, body) = bed
        .post(&format!("/api/v1/topics/{topic}/partitions/bulk"), body)
        .await;
    assert_eq!(status, 200, "{body}");
    let results = body["data"]["results"].as_array().expect("results");
    assert_eq!(results.len(), 6, "one result per entry, in order");
    let ok: Vec<bool> = results.iter().map(|r| r["success"] == true).collect();
    assert_eq!(ok, vec![true, false, false, false, false, false], "{body}");
    assert!(results[1]["error"]
        .as_str()
        .unwrap_or("")
        .contains("more than once"));
    assert!(results[4]["error"].as_str().unwrap_or("").contains("floor"));
    assert_eq!(body["data"]["started"], true);
    let id = body["data"]["bulkId"].as_str().expect("bulkId").to_string();
    let op = bed.store.operation(&id).expect("read").expect("op");
    assert_eq!(op.strategy, "BULK_MANUAL");
    assert_eq!(bed.store.moves(&id).expect("moves").len(), 1);
    let audit = bed
        .store
        .list_audit(&AuditQuery {
            action: Some("reassignments.apply".into()),
            ..AuditQuery::default()
        })
        .expect("audit");
    assert_eq!(audit.total, 1);
    assert_eq!(
        audit.events[0].summary["entries"].as_array().map(Vec::len),
        Some(6)
    );

    // While the operation holds the slot another mutating reassignment gets 409.
    let (status, body) = bed
        .post(
            &format!(
                "/api/v1/topics/{topic}/partitions/{}/redistribute",
                parts[2].0
            ),
            json!({ "replicas": moved(2) }),
        )
        .await;
    assert_eq!(status, 409, "{body}");
    let (status, _) = bed
        .post("/api/v1/preferred-leader-election", json!({}))
        .await;
    assert_eq!(status, 409);

    bed.run_to_end(&id).await;
    let (status, record) = bed
        .send(
            reqwest::Method::GET,
            &format!("/api/v1/reassignments/{id}"),
            None,
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(record["data"]["state"], "Completed", "{record}");
    assert_eq!(record["data"]["partitions"][0]["state"], "Completed");
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_bulk_and_single_partition_input_is_refused_and_changes_nothing() {
    let bed = bed().await;
    let (topic, parts) = bed.topic();
    let (status, body) = bed
        .post(
            &format!("/api/v1/topics/{topic}/partitions/bulk"),
            json!({ "partitions": [] }),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    let r = bed
        .http
        .post(format!(
            "{}/api/v1/topics/{topic}/partitions/bulk",
            bed.base
        ))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .expect("request");
    assert_eq!(r.status().as_u16(), 400);
    let single = format!(
        "/api/v1/topics/{topic}/partitions/{}/redistribute",
        parts[0].0
    );
    for (replicas, expected) in [
        (json!([]), 400),
        (json!([1, 1]), 400),
        (json!([-1, 2]), 400),
        (json!([parts[0].1[0]]), 409),
        (json!([parts[0].1[0], 77]), 409),
    ] {
        let (status, body) = bed.post(&single, json!({ "replicas": replicas })).await;
        assert_eq!(status, expected, "{replicas}: {}", error_text(&body));
    }
    let (status, _) = bed
        .post("/api/v1/topics/nope/partitions/0/redistribute", json!({}))
        .await;
    assert_eq!(status, 404);
    assert_eq!(bed.operations(), 0);
    assert_eq!(bed.audit_count(), 0);
    assert!(bed.sim.truth().reassignments.finished.is_empty());
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_topic_election_naming_another_topic_is_400_and_a_cluster_election_reports_each_partition(
) {
    let bed = bed().await;
    let (topic, _) = bed.topic();
    let (status, body) = bed
        .post(
            &format!("/api/v1/topics/{topic}/preferred-leader-election"),
            json!({ "topic": "someone-else" }),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = bed
        .post(
            &format!("/api/v1/topics/{topic}/preferred-leader-election"),
            json!({}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let rows = body["data"]["results"].as_array().expect("results");
    assert_eq!(rows.len(), 4, "only its own topic's partitions: {body}");
    assert!(rows.iter().all(|r| r["topic"] == topic.as_str()));
    let (status, body) = bed
        .send(
            reqwest::Method::POST,
            "/api/v1/preferred-leader-election",
            None,
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(
        bed.store.slot(now()).expect("slot").is_none(),
        "the slot is released"
    );
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_topic_redistribution_previews_from_the_cached_view_and_rejects_unavailable_brokers() {
    let bed = bed().await;
    let (topic, _) = bed.topic();
    let path = format!("/api/v1/topics/{topic}/redistribute");
    let (status, body) = bed.post(&path, json!({ "preview": true })).await;
    assert_eq!(status, 200, "{body}");
    let moves = body["data"]["moves"].as_array().expect("moves");
    assert!(
        moves.iter().any(|m| m["adding"]
            .as_array()
            .is_some_and(|a| a.contains(&json!(bed.new_broker)))),
        "the empty broker gets replicas: {body}"
    );
    assert_eq!(bed.operations(), 0);
    let (status, body) = bed
        .post(&path, json!({ "preview": true, "brokers": [1, 2, 99] }))
        .await;
    assert_eq!(status, 409, "{body}");
    let (status, body) = bed.post(&path, json!({ "preview": false })).await;
    assert_eq!(status, 200, "{body}");
    let id = body["data"]["operationId"]
        .as_str()
        .expect("started")
        .to_string();
    bed.run_to_end(&id).await;
    let op = bed.store.operation(&id).expect("read").expect("op");
    assert_eq!(op.state, OperationState::Completed, "{:?}", op.reason);
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn maintenance_drains_leadership_then_replicas_and_exit_ends_it() {
    let bed = bed().await;
    let path = "/api/v1/brokers/1/maintenance";
    let (status, body) = bed.send(reqwest::Method::POST, path, None).await;
    assert_eq!(status, 200, "{body}");
    let id = body["data"]["operationId"]
        .as_str()
        .expect("drain")
        .to_string();
    let moves = bed.store.moves(&id).expect("moves");
    assert!(moves.iter().any(|m| m.phase == 0), "leadership first");
    assert!(moves.iter().any(|m| m.phase == 1));
    bed.run_to_end(&id).await;
    let truth = bed.sim.truth();
    let b1 = truth.brokers.iter().find(|b| b.id == 1).expect("broker 1");
    assert_eq!(b1.replicas, 0, "broker 1 is drained");
    assert_eq!(b1.leaders, 0);
    assert_eq!(
        bed.store.maintenance().expect("maintenance")[0].broker_id,
        1
    );
    let (status, _) = bed.send(reqwest::Method::POST, path, None).await;
    assert_eq!(status, 409, "already in maintenance");
    let (status, _) = bed.send(reqwest::Method::DELETE, path, None).await;
    assert_eq!(status, 200);
    let (status, _) = bed.send(reqwest::Method::DELETE, path, None).await;
    assert_eq!(status, 404);
    let (status, _) = bed
        .send(
            reqwest::Method::POST,
            "/api/v1/brokers/42/maintenance",
            None,
        )
        .await;
    assert_eq!(status, 404);
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_list_throttle_and_apply_answer_in_the_envelope() {
    let bed = bed().await;
    let (status, _) = bed
        .post("/api/v1/reassignments/op-nope/cancel", json!({}))
        .await;
    assert_eq!(status, 404);
    let (status, body) = bed
        .send(
            reqwest::Method::GET,
            "/api/v1/reassignments?state=bogus",
            None,
        )
        .await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = bed
        .send(reqwest::Method::GET, "/api/v1/reassignments", None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["total"], 0);
    let (status, _) = bed
        .send(
            reqwest::Method::PUT,
            "/api/v1/reassignments/throttle",
            Some(json!({ "rateMb": 0 })),
        )
        .await;
    assert_eq!(status, 400);
    let (status, body) = bed
        .send(
            reqwest::Method::PUT,
            "/api/v1/reassignments/throttle",
            Some(json!({ "rateMb": 80 })),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["rateMb"], 80);
    assert_eq!(
        bed.store
            .setting("throttle.rate_mb")
            .expect("setting")
            .as_deref(),
        Some("80")
    );
    let (status, _) = bed
        .send(
            reqwest::Method::POST,
            "/api/v1/proposals/current/apply",
            None,
        )
        .await;
    assert_eq!(status, 404, "no current proposal yet");
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_placement_is_503_and_changes_nothing() {
    let bed = bed().await;
    let (topic, parts) = bed.topic();
    let mut target = parts[0].1.clone();
    target[0] = bed.new_broker;
    for b in 1..=bed.new_broker {
        bed.sim.stop_broker(b).await.expect("stop");
    }
    let (status, body) = bed
        .post(
            &format!(
                "/api/v1/topics/{topic}/partitions/{}/redistribute",
                parts[0].0
            ),
            json!({ "replicas": target }),
        )
        .await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(bed.operations(), 0);
    assert_eq!(bed.audit_count(), 0);
    assert!(bed.store.slot(now()).expect("slot").is_none());
    bed.sim.shutdown().await;
}
