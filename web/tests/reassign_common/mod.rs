//! The harness of the partition-moving tests (`reassign_endpoints`, `proposal_apply`): a simulated
//! cluster with one empty broker added, one real observer tick for the cached view, the web router
//! (licensed) on a free port over its own database, and the real executor engine to carry queued
//! operations out. The web process's clock can be moved forward ([`ShiftClock`]).

#![allow(dead_code)]

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ballast_config::{Config, RawConfig};
use ballast_executor::Engine;
use ballast_kafka::{Client, ClientConfig};
use ballast_schema::{AuditEvent, AuditQuery, NewProposal, Store};
use ballast_simcluster::{GenerateParams, Scenario, SimCluster, SimConfig};
use serde_json::{json, Value};

pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The wall clock plus an offset the test can move.
#[derive(Default)]
pub struct ShiftClock {
    offset_ms: AtomicI64,
}

impl ShiftClock {
    pub fn advance(&self, by: Duration) {
        self.offset_ms
            .fetch_add(by.as_millis() as i64, Ordering::SeqCst);
    }
}

impl ballast_runtime::Clock for ShiftClock {
    fn now_ms(&self) -> i64 {
        now() + self.offset_ms.load(Ordering::SeqCst)
    }
}

pub struct Bed {
    pub sim: SimCluster,
    pub client: Client,
    pub store: Store,
    pub config: Arc<Config>,
    pub clock: Arc<ShiftClock>,
    pub base: String,
    pub http: reqwest::Client,
    pub new_broker: i32,
    _dir: tempfile::TempDir,
}

/// Four brokers on two racks, two topics of four partitions (replication factor 2, about 5 MB
/// each).
pub fn small() -> GenerateParams {
    GenerateParams {
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
    }
}

pub async fn bed() -> Bed {
    bed_with(small(), &[]).await
}

/// A bed over the generated cluster `params` with extra `BALLAST_*` settings `env`.
pub async fn bed_with(params: GenerateParams, env: &[(&str, &str)]) -> Bed {
    let sim = SimCluster::start(SimConfig {
        scenario: Scenario::Generate(params),
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
    let bootstrap = sim.bootstrap();
    let data_dir = dir.path().to_str().expect("utf-8").to_string();
    let pairs: Vec<(String, String)> = [
        ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", bootstrap.as_str()),
        ("BALLAST_DATA_DIR", data_dir.as_str()),
        ("BALLAST_KAFKA_REQUEST_TIMEOUT", "5s"),
    ]
    .iter()
    .chain(env.iter())
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let raw = RawConfig::from_pairs(pairs, None).expect("raw config");
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
    let clock = Arc::new(ShiftClock::default());
    let mut state = ballast_web::AppState::new(store.clone(), config.clone(), clock.clone());
    // The routes under test are licensed.
    state.set_license(
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
        clock,
        base: format!("http://{addr}"),
        http: reqwest::Client::new(),
        new_broker,
        _dir: dir,
    }
}

impl Bed {
    /// `method path` with an optional JSON body as `user` (the `X-Ballast-User` header).
    pub async fn send_as(
        &self,
        user: Option<&str>,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut req = self.http.request(method, format!("{}{path}", self.base));
        if let Some(u) = user {
            req = req.header("x-ballast-user", u);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.expect("request");
        let status = r.status().as_u16();
        (status, r.json().await.expect("json"))
    }

    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        self.send_as(None, method, path, body).await
    }

    /// A POST with `body`, or none for Null (routes that take none refuse one).
    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let body = (!body.is_null()).then_some(body);
        self.send(reqwest::Method::POST, path, body).await
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        self.send(reqwest::Method::GET, path, None).await
    }

    pub fn audit_count(&self) -> u64 {
        self.store
            .list_audit(&AuditQuery::default())
            .expect("audit")
            .total
    }

    /// Every audit event, newest first.
    pub fn audit(&self) -> Vec<AuditEvent> {
        self.store
            .list_audit(&AuditQuery {
                limit: Some(500),
                ..AuditQuery::default()
            })
            .expect("audit")
            .events
    }

    pub fn operations(&self) -> u64 {
        self.store.operations(None, 10, 0).expect("ops").total
    }

    /// The first topic with its partitions' replica lists.
    pub fn topic(&self) -> (String, Vec<(i32, Vec<i32>)>) {
        self.topic_at(0)
    }

    /// The `i`th topic (name order) with its partitions' replica lists.
    pub fn topic_at(&self, i: usize) -> (String, Vec<(i32, Vec<i32>)>) {
        let snap = self.sim.snapshot();
        let names: BTreeSet<String> = snap.partitions.iter().map(|p| p.topic.clone()).collect();
        let topic = names.into_iter().nth(i).expect("topic");
        let mut parts: Vec<(i32, Vec<i32>)> = snap
            .partitions
            .iter()
            .filter(|p| p.topic == topic)
            .map(|p| (p.partition, p.replicas.clone()))
            .collect();
        parts.sort();
        (topic, parts)
    }

    /// One executor pass.
    pub async fn executor_pass(&self, engine: &mut Engine) {
        engine.tick(&self.client, now()).await.expect("tick");
    }

    pub async fn run_to_end(&self, id: &str) {
        let mut engine = Engine::new(self.store.clone(), self.config.clone());
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
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

    /// The topology fingerprint of the latest observed view, as the observer plans on it.
    pub fn observed_fingerprint(&self) -> String {
        let view = self.store.observed_view().expect("read").expect("a view");
        let snapshot =
            ballast_runtime::topology::snapshot_with_maintenance(&view, &[], &BTreeSet::new());
        ballast_runtime::topology::fingerprint(&snapshot)
    }

    /// Stores `p` as the current proposal, checked at `checked_at_ms`.
    pub fn save_proposal(&self, p: &NewProposal, checked_at_ms: i64) {
        self.store
            .save_proposal(p, checked_at_ms, 10)
            .expect("save proposal");
    }

    /// A proposal moving the first replica of the first topic's partition 0 onto the empty
    /// broker, planned on `fingerprint`.
    pub fn proposal(&self, id: &str, fingerprint: &str, allowed: bool) -> NewProposal {
        let (topic, parts) = self.topic();
        let (p, before) = &parts[0];
        let mut after = before.clone();
        after[0] = std::iter::once(self.new_broker)
            .chain(1..self.new_broker)
            .find(|b| !before.contains(b))
            .expect("a broker not holding the partition");
        let plan = json!({
            "format": "ballast.plan/v1",
            "recommended": true,
            "moves": [{
                "topic": topic, "partition": p, "replicasBefore": before,
                "replicasAfter": after, "leaderBefore": before[0], "leaderAfter": after[0],
                "costClass": "inter-broker", "bytes": 5_000_000
            }],
            "estimatedBytes": 5_000_000,
        });
        NewProposal {
            id: id.into(),
            fingerprint: fingerprint.into(),
            moves_digest: format!("digest-{id}"),
            basis: String::new(),
            recommended: true,
            application_allowed: allowed,
            moves: 1,
            estimated_bytes: 5_000_000,
            balance_hold: false,
            plan,
            decision: json!({
                "applicationAllowed": allowed,
                "nextAction": if allowed { "apply" } else { "wait" },
                "unsafeReasons": [],
            }),
            detail: json!({}),
        }
    }
}

pub fn error_text(body: &Value) -> String {
    format!("{} {}", body["error"], body["details"])
}
