//! The harness of the `live_*` tests: a small simulated cluster, the web router over it on a free
//! port, a cluster client to arrange state, and JSON requests.

#![allow(dead_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use ballast_config::{Config, RawConfig};
use ballast_kafka::{Client, ClientConfig, NewTopic};
use ballast_schema::Store;
use ballast_simcluster::{GenerateParams, Scenario, SimCluster, SimConfig};
use serde_json::Value;

pub struct Harness {
    pub sim: SimCluster,
    /// A client of its own, for arranging what the tests read.
    pub kafka: Client,
    pub base: String,
    pub http: reqwest::Client,
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

/// Serves the router for `bootstrap` on a free port; returns its base URL and the temp dir that
/// holds its database.
pub async fn serve(bootstrap: &str) -> (String, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("ballast.db");
    Store::migrate(&db).expect("migrate");
    let store = Store::open(&db).expect("open store");
    let raw = RawConfig::from_pairs(
        [
            ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", bootstrap),
            ("BALLAST_KAFKA_REQUEST_TIMEOUT", "5s"),
            ("BALLAST_DATA_DIR", dir.path().to_str().expect("utf-8 path")),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string())),
        None,
    )
    .expect("raw config");
    let config = Config::from_raw(&raw).expect("valid config");
    let state = ballast_web::AppState::new(
        store,
        Arc::new(config),
        Arc::new(ballast_runtime::SystemClock),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    tokio::spawn(async move {
        let _ = axum::serve(listener, ballast_web::router(state)).await;
    });
    (format!("http://{addr}"), dir)
}

impl Harness {
    pub async fn start() -> Harness {
        Harness::start_with(small_cluster()).await
    }

    pub async fn start_with(params: GenerateParams) -> Harness {
        let sim = SimCluster::start(SimConfig {
            scenario: Scenario::Generate(params),
            tick: Duration::from_millis(20),
            // The live reads are checked against state the tests arrange through the client just
            // before, so a describe shows a change at once here; the management tests
            // (`manage_common`) keep the simulator's KRaft metadata lag.
            metadata_lag: Duration::ZERO,
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
        let (base, dir) = serve(&sim.bootstrap()).await;
        Harness {
            sim,
            kafka,
            base,
            http: reqwest::Client::new(),
            _dir: dir,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// GET `path`: the status and the JSON body.
    pub async fn get(&self, path: &str) -> (u16, Value) {
        let response = self.http.get(self.url(path)).send().await.expect("request");
        let status = response.status().as_u16();
        let body = response.json().await.expect("json body");
        (status, body)
    }

    /// GET `path` expecting 200: the envelope's `data`.
    pub async fn data(&self, path: &str) -> Value {
        let (status, body) = self.get(path).await;
        assert_eq!(status, 200, "GET {path}: {body}");
        assert_eq!(body["success"], true, "GET {path}: {body}");
        body["data"].clone()
    }

    pub async fn post(&self, path: &str, body: &str) -> (u16, Value) {
        let response = self
            .http
            .post(self.url(path))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .expect("request");
        let status = response.status().as_u16();
        (status, response.json().await.expect("json body"))
    }

    /// Creates a topic through the cluster client and waits until its metadata is visible.
    pub async fn create_topic(&self, topic: NewTopic) {
        let name = topic.name.clone();
        let results = self
            .kafka
            .create_topics(&[topic], false)
            .await
            .expect("create topic");
        assert!(results[0].error.is_none(), "{:?}", results[0].error);
        eventually("topic metadata", || async {
            let m = self
                .kafka
                .metadata(Some(std::slice::from_ref(&name)))
                .await
                .ok()?;
            m.topic(&name).filter(|t| t.error.is_none()).map(|_| ())
        })
        .await;
    }
}

/// Asserts the general error envelope with status `status`; returns the details.
pub fn assert_error(status: u16, body: &Value, expected: u16) -> String {
    assert_eq!(status, expected, "{body}");
    assert_eq!(body["success"], false, "{body}");
    assert!(
        body["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{body}"
    );
    body["details"].as_str().expect("details").to_string()
}

/// Polls `f` every 50 ms for up to 10 s.
pub async fn eventually<T, F, Fut>(what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(Instant::now() < deadline, "{what}: not reached within 10 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
