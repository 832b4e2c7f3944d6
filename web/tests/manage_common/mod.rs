//! The harness of the management and audit tests (as `live_common`, plus the store): a small
//! simulated cluster, the web router over it on a free port with its database at hand, a cluster
//! client to arrange and check state, and JSON requests with any method and user.

#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use ballast_config::{Config, RawConfig};
use ballast_kafka::{Client, ClientConfig, NewTopic};
use ballast_schema::{AuditEvent, AuditQuery, OpenOptions, Store};
use ballast_simcluster::{GenerateParams, NewTopic as SimTopic, Scenario, SimCluster, SimConfig};
use reqwest::Method;
use serde_json::Value;

pub struct Harness {
    pub sim: SimCluster,
    /// A client of its own, for arranging state and reading the truth.
    pub kafka: Client,
    pub base: String,
    pub http: reqwest::Client,
    pub store: Store,
    /// The web process's state: operations run through it as the MCP and chat doors run them.
    pub state: ballast_web::AppState,
    _dir: tempfile::TempDir,
}

/// Three brokers on three racks, two generated topics of three partitions.
pub fn small_cluster() -> GenerateParams {
    GenerateParams {
        brokers: 3,
        racks: 3,
        topics: 2,
        partitions_per_topic: 3,
        replication_factor: 2,
        seed: 11,
        mean_partition_bytes: 1e6,
        mean_msg_rate: 5.0,
        msg_bytes: 100.0,
        ..GenerateParams::default()
    }
}

/// Serves the router for `bootstrap` on a free port: its base URL, its store and the temp dir
/// holding the database.
pub async fn serve(bootstrap: &str) -> (String, Store, tempfile::TempDir) {
    serve_with(bootstrap, OpenOptions::default()).await
}

/// `serve` with the web process's store opened with `options` (e.g. a short busy timeout).
pub async fn serve_with(
    bootstrap: &str,
    options: OpenOptions,
) -> (String, Store, tempfile::TempDir) {
    serve_configured(bootstrap, options, &[]).await
}

/// `serve_with` with more settings (e.g. `BALLAST_READBACK_TIMEOUT`).
pub async fn serve_configured(
    bootstrap: &str,
    options: OpenOptions,
    settings: &[(&str, &str)],
) -> (String, Store, tempfile::TempDir) {
    let (base, state, dir) = serve_state(bootstrap, options, settings).await;
    (base, state.store.clone(), dir)
}

/// `serve_configured`, answering the web process's state instead of its store.
pub async fn serve_state(
    bootstrap: &str,
    options: OpenOptions,
    settings: &[(&str, &str)],
) -> (String, ballast_web::AppState, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("ballast.db");
    Store::migrate(&db).expect("migrate");
    let store = Store::open_with(&db, options).expect("open store");
    let raw = RawConfig::from_pairs(
        [
            ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", bootstrap),
            ("BALLAST_KAFKA_REQUEST_TIMEOUT", "5s"),
            ("BALLAST_DATA_DIR", dir.path().to_str().expect("utf-8 path")),
        ]
        .into_iter()
        .chain(settings.iter().copied())
        .map(|(k, v)| (k.to_string(), v.to_string())),
        None,
    )
    .expect("raw config");
    let config = Config::from_raw(&raw).expect("valid config");
    let mut state = ballast_web::AppState::new(
        store.clone(),
        Arc::new(config),
        Arc::new(ballast_runtime::SystemClock),
    );
    // The routes under test are licensed.
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    state.set_license(
        ballast_web::license::LicenseRuntime::licensed_for_tests(&store, now_ms).expect("license"),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    let served = state.clone();
    tokio::spawn(async move {
        let _ = axum::serve(listener, ballast_web::router(served)).await;
    });
    (format!("http://{addr}"), state, dir)
}

impl Harness {
    pub async fn start() -> Harness {
        Harness::start_with(OpenOptions::default()).await
    }

    pub async fn start_with(options: OpenOptions) -> Harness {
        Harness::start_configured(options, &[]).await
    }

    /// A harness whose web process has these settings too.
    pub async fn start_configured(options: OpenOptions, settings: &[(&str, &str)]) -> Harness {
        let sim = SimCluster::start(SimConfig {
            scenario: Scenario::Generate(small_cluster()),
            tick: Duration::from_millis(20),
            ..SimConfig::default()
        })
        .await
        .expect("simulated cluster");
        let kafka = Client::connect(
            ClientConfig::plaintext(&sim.bootstrap())
                .with_request_timeout(Duration::from_secs(5))
                .with_retries(5, Duration::from_millis(50)),
        )
        .await
        .expect("connect");
        let (base, state, dir) = serve_state(&sim.bootstrap(), options, settings).await;
        Harness {
            sim,
            kafka,
            base,
            http: reqwest::Client::new(),
            store: state.store.clone(),
            state,
            _dir: dir,
        }
    }

    /// A request with a JSON body (or none), as `user` when given: the status and the JSON body.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        user: Option<&str>,
    ) -> (u16, Value) {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        if let Some(user) = user {
            request = request.header("x-ballast-user", user);
        }
        let response = request.send().await.expect("request");
        let status = response.status().as_u16();
        (status, response.json().await.expect("json body"))
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        self.send(Method::GET, path, None, None).await
    }

    /// GET expecting 200: the envelope's `data`.
    pub async fn data(&self, path: &str) -> Value {
        let (status, body) = self.get(path).await;
        assert_eq!(status, 200, "GET {path}: {body}");
        body["data"].clone()
    }

    pub async fn put(&self, path: &str, body: Value) -> (u16, Value) {
        self.send(Method::PUT, path, Some(&body), Some("alice"))
            .await
    }

    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.send(Method::POST, path, Some(&body), Some("alice"))
            .await
    }

    pub async fn delete(&self, path: &str) -> (u16, Value) {
        self.send(Method::DELETE, path, None, Some("alice")).await
    }

    /// Every audit event, newest first.
    pub fn audit(&self) -> Vec<AuditEvent> {
        self.store
            .list_audit(&AuditQuery {
                limit: Some(500),
                ..AuditQuery::default()
            })
            .expect("list audit")
            .events
    }

    /// Creates a topic through the cluster client.
    pub async fn create_topic(&self, topic: NewTopic) {
        let results = self
            .kafka
            .create_topics(&[topic], false)
            .await
            .expect("create topic");
        assert!(results[0].error.is_none(), "{:?}", results[0].error);
    }

    /// A topic whose consumers are simulated: its groups `<name>-consumer-<i>` have active
    /// members.
    pub fn add_consumed_topic(&self, name: &str) {
        self.sim
            .add_topic(&SimTopic {
                name: name.into(),
                partitions: 3,
                replication_factor: 2,
                size_bytes: 1_000_000,
                producer_msg_rate: 10.0,
                producer_byte_rate: 1_000.0,
                consumer_msg_rate: 10.0,
                consumer_byte_rate: 1_000.0,
                configs: Default::default(),
            })
            .expect("add topic");
    }

    /// The topic's own override of `key` (None: not set on the topic).
    pub async fn topic_override(&self, topic: &str, key: &str) -> Option<String> {
        let entries = self
            .kafka
            .describe_config(&ballast_kafka::ConfigResource::Topic(topic.into()))
            .await
            .expect("describe config");
        entries
            .into_iter()
            .find(|e| e.name == key && e.source == ballast_kafka::ConfigSource::DynamicTopicConfig)
            .and_then(|e| e.value)
    }
}

/// Asserts the general error envelope with status `expected`; returns the details.
pub fn assert_error(status: u16, body: &Value, expected: u16) -> String {
    assert_eq!(status, expected, "{body}");
    assert_eq!(body["success"], false, "{body}");
    assert!(
        body["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{body}"
    );
    body["details"].as_str().expect("details").to_string()
}

/// Asserts a 200 success envelope; returns its data.
pub fn assert_ok(status: u16, body: &Value) -> Value {
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["success"], true, "{body}");
    body["data"].clone()
}

/// Holds the database's write lock from a foreign connection for `hold`, as another process
/// would (with `schema/`'s tests, the only use of rusqlite outside `schema/`: it issues no
/// statement of its own).
pub fn hold_write_lock(
    path: std::path::PathBuf,
    hold: std::time::Duration,
) -> std::thread::JoinHandle<()> {
    let (locked_tx, locked_rx) = std::sync::mpsc::channel();
    let handle = std::thread::spawn(move || {
        let mut conn = rusqlite::Connection::open(&path).expect("open");
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .expect("write lock");
        locked_tx.send(()).expect("signal");
        std::thread::sleep(hold);
        tx.commit().expect("release");
    });
    locked_rx.recv().expect("locked");
    handle
}
