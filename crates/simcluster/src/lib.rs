//! `ballast-simcluster`: a simulated multi-broker Apache Kafka cluster that speaks the real Kafka
//! wire protocol, for tests, benchmarks and `ballast demo`.
//!
//! Layers: [`state`] (a synchronous cluster model moved by simulated time) → `handlers` (one
//! function per API key) → `server` (a tokio listener per broker) → `control` (HTTP) →
//! [`SimCluster`] (this handle). See the crate README for the model, the control API and limits.

mod clock;
mod control;
mod error;
mod handlers;
pub mod scenario;
mod security;
mod server;
pub mod state;
mod truth;
mod util;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use ballast_model::snapshot::Snapshot;
use serde::Deserialize;
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub use crate::error::SimError;
pub use crate::scenario::{generate, GenerateParams, Skew, MAX_GROUPS_PER_TOPIC};
pub use crate::security::{SecurityConfig, SecurityProtocol, TlsIdentity};
pub use crate::state::BrokerId;
pub use crate::truth::{
    BrokerThrottle, BrokerTruth, MoveTruthEntry, ReassignmentTruth, ThrottleTruth, TopicThrottle,
    Truth,
};
pub use crate::util::iso8601;

use crate::clock::SimClock;
use crate::state::{Cluster, NewPartition, Rates};

/// How long a restarted broker tries its old port again before it takes another (see
/// `Shared::rebind`).
const REBIND_FOR: Duration = Duration::from_secs(2);

/// Default bytes per second of one unthrottled replica copy: a 1 Gbit/s link.
pub const DEFAULT_LINK_SPEED: f64 = 125_000_000.0;

/// Where the cluster comes from.
#[derive(Debug, Clone)]
pub enum Scenario {
    Snapshot(Snapshot),
    Generate(GenerateParams),
}

/// Everything [`SimCluster::start`] needs.
#[derive(Debug, Clone)]
pub struct SimConfig {
    pub scenario: Scenario,
    /// Brokers listen on base_port, base_port+1, … in broker id order; 0 picks free ports.
    pub base_port: u16,
    /// The control API's port; None: no control API; Some(0): a free port.
    pub control_port: Option<u16>,
    pub security: SecurityConfig,
    /// Simulated seconds per real second.
    pub speed: f64,
    /// Bytes per second of one unthrottled replica copy.
    pub link_speed: f64,
    /// How often the background ticker advances simulated time.
    pub tick: Duration,
    /// Address the brokers and the control API listen on and advertise.
    pub host: String,
    /// Simulated time from an accepted config or client-quota change to DescribeConfigs and
    /// DescribeClientQuotas showing it, as a KRaft broker applies it from the metadata log a
    /// moment after the controller committed it. Zero shows every change at once.
    pub metadata_lag: Duration,
}

/// The default [`SimConfig::metadata_lag`]: long enough that a read sent right after a change
/// still sees the old value, as on a real KRaft cluster.
pub const DEFAULT_METADATA_LAG: Duration = Duration::from_millis(300);

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            scenario: Scenario::Generate(GenerateParams::default()),
            base_port: 0,
            control_port: None,
            security: SecurityConfig::default(),
            speed: 1.0,
            link_speed: DEFAULT_LINK_SPEED,
            tick: Duration::from_millis(100),
            host: "127.0.0.1".into(),
            metadata_lag: DEFAULT_METADATA_LAG,
        }
    }
}

/// New producer and consumer rates (per second); None leaves a rate unchanged.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RatesUpdate {
    pub producer_msg_rate: Option<f64>,
    pub producer_byte_rate: Option<f64>,
    pub consumer_msg_rate: Option<f64>,
    pub consumer_byte_rate: Option<f64>,
}

/// A topic with traffic, added while the cluster runs.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewTopic {
    pub name: String,
    pub partitions: i32,
    #[serde(default = "default_rf")]
    pub replication_factor: i32,
    /// Size of each partition's replica when created.
    #[serde(default)]
    pub size_bytes: u64,
    #[serde(default)]
    pub producer_msg_rate: f64,
    #[serde(default)]
    pub producer_byte_rate: f64,
    #[serde(default)]
    pub consumer_msg_rate: f64,
    #[serde(default)]
    pub consumer_byte_rate: f64,
    #[serde(default)]
    pub configs: BTreeMap<String, String>,
}

fn default_rf() -> i32 {
    3
}

/// Items (partitions and committed group offsets) one wall millisecond of advancing stands for:
/// a model advances at most once per `work / ADVANCE_ITEMS_PER_MS` wall milliseconds, so walking
/// it takes a bounded share of the time (at 300,000 partitions and 430,000 group offsets, once
/// per 0.73 s instead of every 50 ms: the walk took 45% of all CPU of an observer benchmark).
pub const ADVANCE_ITEMS_PER_MS: usize = 1_000;

/// Whether a model `behind_ms` simulated milliseconds behind the clock is advanced now: at
/// least `step_ms` behind (half a tick), and for a large model at least one wall millisecond per
/// [`ADVANCE_ITEMS_PER_MS`] items of its walk (`speed` simulated ms per wall ms). A small model
/// (under `step_ms` × 1,000 items at speed 1) advances every half tick as before.
pub fn advance_due(behind_ms: i64, step_ms: i64, work: usize, speed: f64) -> bool {
    let by_size = ((work / ADVANCE_ITEMS_PER_MS) as f64 * speed).min(i64::MAX as f64) as i64;
    behind_ms >= step_ms.max(by_size)
}

/// State shared by the listeners, the ticker and the control API.
pub(crate) struct Shared {
    pub state: Mutex<Cluster>,
    pub clock: SimClock,
    /// Simulated milliseconds a request may see the model behind (half a tick): requests within
    /// it share one advance. A large model waits longer ([`advance_due`]).
    pub advance_step_ms: i64,
    /// Simulated milliseconds per wall millisecond (the clock's speed).
    pub speed: f64,
    pub host: String,
    pub base_port: u16,
    pub protocol: SecurityProtocol,
    pub tls: Option<Arc<rustls::ServerConfig>>,
    pub sasl: Option<security::SaslServer>,
    pub listeners: Mutex<BTreeMap<BrokerId, server::Listener>>,
    pub shutdown: watch::Sender<bool>,
}

impl Shared {
    /// The model, advanced to now (to within half a [`SimConfig::tick`]). Never hold it across
    /// an `.await`.
    pub fn lock(&self) -> MutexGuard<'_, Cluster> {
        let mut guard = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = self.clock.now_ms();
        // Advancing walks every partition and group: once per half tick, not once per request
        // (a sample of a large cluster sends thousands), and less often for a large model.
        if advance_due(
            now - guard.now_ms,
            self.advance_step_ms,
            guard.advance_work(),
            self.speed,
        ) {
            guard.advance(now);
        }
        guard
    }

    pub fn now(&self) -> i64 {
        self.clock.now_ms()
    }

    fn listeners(&self) -> MutexGuard<'_, BTreeMap<BrokerId, server::Listener>> {
        self.listeners
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub async fn stop_broker(&self, id: BrokerId) -> Result<(), SimError> {
        {
            let mut c = self.lock();
            if !c.brokers.contains_key(&id) {
                return Err(SimError::UnknownBroker(id));
            }
            let now = self.now();
            c.stop_broker(id, now);
        }
        let listener = self.listeners().remove(&id);
        if let Some(l) = listener {
            l.close().await;
        }
        Ok(())
    }

    /// Dedicated controllers `ids` (101–103 as production runs them) become the quorum's voters,
    /// the brokers its observers; the first leads.
    pub fn set_dedicated_controllers(&self, ids: &[BrokerId]) -> Result<(), SimError> {
        let mut c = self.lock();
        if ids.is_empty() || ids.iter().any(|id| c.brokers.contains_key(id)) {
            return Err(SimError::Invalid(
                "dedicated controllers need ids of their own, none a broker's".into(),
            ));
        }
        c.set_dedicated_controllers(ids);
        tracing::info!(?ids, leader = c.controller, "dedicated controllers");
        Ok(())
    }

    /// Stops or starts dedicated controller `id` (a voter down: it stops fetching).
    pub fn set_controller_up(&self, id: BrokerId, up: bool) -> Result<(), SimError> {
        let mut c = self.lock();
        let now = c.now_ms;
        if !c.set_controller_up(id, up, now) {
            return Err(SimError::Invalid(format!(
                "{id} is not a dedicated controller"
            )));
        }
        tracing::info!(
            controller = id,
            up,
            leader = c.controller,
            "controller state"
        );
        Ok(())
    }

    /// Moves the quorum's leadership (the active controller) to broker `id`, which must be up.
    pub fn move_controller(&self, id: BrokerId) -> Result<(), SimError> {
        let mut c = self.lock();
        if c.dedicated_controllers.contains_key(&id) {
            if !c.move_controller(id) {
                return Err(SimError::Invalid(format!(
                    "controller {id} is down and cannot lead the quorum"
                )));
            }
            return Ok(());
        }
        if !c.brokers.contains_key(&id) {
            return Err(SimError::UnknownBroker(id));
        }
        if !c.move_controller(id) {
            return Err(SimError::Invalid(format!(
                "broker {id} is down and cannot lead the quorum"
            )));
        }
        tracing::info!(
            broker = id,
            epoch = c.controller_epoch,
            "quorum leader moved"
        );
        Ok(())
    }

    pub async fn start_broker(self: &Arc<Self>, id: BrokerId) -> Result<(), SimError> {
        let port = {
            let c = self.lock();
            match c.brokers.get(&id) {
                None => return Err(SimError::UnknownBroker(id)),
                Some(b) if b.up && self.listeners().contains_key(&id) => return Ok(()),
                Some(b) => b.port,
            }
        };
        let listener = self.rebind(id, port).await?;
        let bound = listener.port;
        self.listeners().insert(id, listener);
        let mut c = self.lock();
        if let Some(b) = c.brokers.get_mut(&id) {
            b.port = bound;
        }
        let now = self.now();
        c.start_broker(id, now);
        Ok(())
    }

    /// A restarted broker's listener, on its old port as a real broker's. While it was down,
    /// another socket on the machine may have been given that port (a client's own end of a
    /// connection: the kernel hands out a free port); the bind is tried again for
    /// [`REBIND_FOR`], and a cluster whose ports were picked free (`base_port` 0) then takes
    /// another free port, which the metadata names.
    async fn rebind(
        self: &Arc<Self>,
        id: BrokerId,
        port: u16,
    ) -> Result<server::Listener, SimError> {
        let deadline = std::time::Instant::now() + REBIND_FOR;
        loop {
            match server::bind(self.clone(), id, port).await {
                Err(SimError::Bind { source, .. })
                    if source.kind() == std::io::ErrorKind::AddrInUse
                        && std::time::Instant::now() < deadline =>
                {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(SimError::Bind { source, .. })
                    if source.kind() == std::io::ErrorKind::AddrInUse && self.base_port == 0 =>
                {
                    tracing::warn!(
                        broker = id,
                        port,
                        "old port taken; the broker listens on another"
                    );
                    return server::bind(self.clone(), id, 0).await;
                }
                other => return other,
            }
        }
    }

    pub async fn add_broker(self: &Arc<Self>, rack: Option<String>) -> Result<BrokerId, SimError> {
        let (id, port) = {
            let mut c = self.lock();
            let id = c.brokers.keys().next_back().map(|i| i + 1).unwrap_or(1);
            let port = if self.base_port == 0 {
                0
            } else {
                c.brokers
                    .values()
                    .map(|b| b.port)
                    .max()
                    .unwrap_or(self.base_port.saturating_sub(1))
                    .saturating_add(1)
            };
            let now = self.now();
            c.add_broker(id, rack, false, now);
            (id, port)
        };
        match server::bind(self.clone(), id, port).await {
            Ok(listener) => {
                let port = listener.port;
                self.listeners().insert(id, listener);
                let mut c = self.lock();
                if let Some(b) = c.brokers.get_mut(&id) {
                    b.port = port;
                    b.up = true;
                    b.down_since = None;
                }
                if c.controller < 0 {
                    let now = self.now();
                    c.start_broker(id, now);
                }
                tracing::info!(broker = id, port, "broker added");
                Ok(id)
            }
            Err(e) => {
                self.lock().brokers.remove(&id);
                Err(e)
            }
        }
    }

    pub fn set_rates(
        &self,
        topic: &str,
        partition: Option<i32>,
        update: &RatesUpdate,
    ) -> Result<(), SimError> {
        for v in [
            update.producer_msg_rate,
            update.producer_byte_rate,
            update.consumer_msg_rate,
            update.consumer_byte_rate,
        ]
        .into_iter()
        .flatten()
        {
            if !v.is_finite() || v < 0.0 {
                return Err(SimError::Invalid(
                    "rates must be finite and not negative".into(),
                ));
            }
        }
        let mut c = self.lock();
        let t = c
            .topics
            .get_mut(topic)
            .ok_or_else(|| SimError::Invalid(format!("unknown topic {topic}")))?;
        let count = t.partitions.len();
        let range: Vec<usize> = match partition {
            Some(p) if p >= 0 && (p as usize) < count => vec![p as usize],
            Some(p) => {
                return Err(SimError::Invalid(format!(
                    "topic {topic} has no partition {p}"
                )))
            }
            None => (0..count).collect(),
        };
        for i in range {
            let r = &mut t.partitions[i].rates;
            if let Some(v) = update.producer_msg_rate {
                r.producer_msg = v;
            }
            if let Some(v) = update.producer_byte_rate {
                r.producer_byte = v;
            }
            if let Some(v) = update.consumer_msg_rate {
                r.consumer_msg = v;
            }
            if let Some(v) = update.consumer_byte_rate {
                r.consumer_byte = v;
            }
        }
        scenario::derive_groups(&mut c, topic);
        Ok(())
    }

    pub fn add_topic(&self, spec: &NewTopic) -> Result<(), SimError> {
        let mut c = self.lock();
        if !handlers::valid_topic_name(&spec.name) {
            return Err(SimError::Invalid(format!(
                "invalid topic name {:?}",
                spec.name
            )));
        }
        if c.topics.contains_key(&spec.name) {
            return Err(SimError::Invalid(format!(
                "topic {} already exists",
                spec.name
            )));
        }
        if spec.partitions <= 0 || spec.replication_factor <= 0 {
            return Err(SimError::Invalid(
                "partitions and replicationFactor must be at least 1".into(),
            ));
        }
        for (k, v) in &spec.configs {
            let kind = state::configs::topic_kind(k).map_err(|e| SimError::Invalid(e.message))?;
            state::configs::validate_value(k, kind, v).map_err(|e| SimError::Invalid(e.message))?;
        }
        let placement = c
            .place(
                &spec.name,
                0,
                spec.partitions,
                spec.replication_factor as usize,
            )
            .map_err(|e| SimError::Invalid(e.message))?;
        let rates = Rates {
            producer_msg: spec.producer_msg_rate,
            producer_byte: spec.producer_byte_rate,
            consumer_msg: spec.consumer_msg_rate,
            consumer_byte: spec.consumer_byte_rate,
        };
        if [
            rates.producer_msg,
            rates.producer_byte,
            rates.consumer_msg,
            rates.consumer_byte,
        ]
        .iter()
        .any(|v| !v.is_finite() || *v < 0.0)
        {
            return Err(SimError::Invalid(
                "rates must be finite and not negative".into(),
            ));
        }
        let parts = placement
            .into_iter()
            .map(|replicas| NewPartition {
                leader: replicas.first().copied(),
                isr: replicas.clone(),
                replicas,
                size: spec.size_bytes as f64,
                rates,
                last_moved_at: None,
            })
            .collect();
        c.insert_topic(&spec.name, spec.configs.clone(), parts);
        c.apply_tiering(&spec.name);
        scenario::derive_groups(&mut c, &spec.name);
        Ok(())
    }
}

/// A lag in simulated milliseconds.
fn lag_ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// A running simulated cluster. Dropping it stops every listener.
pub struct SimCluster {
    shared: Arc<Shared>,
    ticker: Option<JoinHandle<()>>,
    control: Option<(SocketAddr, JoinHandle<()>)>,
}

/// Reads and validates a `ballast.snapshot/v1` file.
pub fn read_snapshot(path: &Path) -> Result<Snapshot, SimError> {
    let text = std::fs::read_to_string(path).map_err(|source| SimError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let snapshot: Snapshot = serde_json::from_str(&text).map_err(|e| SimError::Snapshot {
        path: path.to_path_buf(),
        problem: e.to_string(),
    })?;
    snapshot.validate().map_err(|e| SimError::Snapshot {
        path: path.to_path_buf(),
        problem: e.to_string(),
    })?;
    Ok(snapshot)
}

impl SimCluster {
    /// Builds the scenario and binds every broker (and the control API). A port in use is an
    /// error naming it.
    pub async fn start(config: SimConfig) -> Result<SimCluster, SimError> {
        let snapshot = match &config.scenario {
            Scenario::Snapshot(s) => s.clone(),
            Scenario::Generate(p) => {
                if p.brokers == 0 {
                    return Err(SimError::Scenario("at least one broker is needed".into()));
                }
                generate(p)
            }
        };
        let start_ms = util::parse_iso8601(&snapshot.taken_at).unwrap_or_else(util::wall_ms);
        let clock = SimClock::new(start_ms, config.speed);
        let link_speed = if config.link_speed.is_finite() && config.link_speed > 0.0 {
            config.link_speed
        } else {
            DEFAULT_LINK_SPEED
        };
        let mut cluster =
            scenario::load(&snapshot, clock.now_ms(), link_speed).map_err(SimError::Scenario)?;
        cluster.host = config.host.clone();
        cluster.lag = state::lag::MetadataLag::new(lag_ms(config.metadata_lag));
        let sec = &config.security;
        cluster.security_protocol = sec.protocol.name().to_string();
        let tls = if sec.protocol.uses_tls() {
            let identity = sec.tls.as_ref().ok_or_else(|| {
                SimError::Security(format!(
                    "{} needs a certificate and a key",
                    sec.protocol.name()
                ))
            })?;
            Some(security::tls_config(identity)?)
        } else {
            None
        };
        let sasl = if sec.protocol.uses_sasl() {
            cluster.sasl_mechanisms = security::MECHANISMS.iter().map(|m| m.to_string()).collect();
            Some(security::sasl_server(&sec.users, &cluster.cluster_id)?)
        } else {
            None
        };
        let (shutdown, _) = watch::channel(false);
        let ids: Vec<(BrokerId, bool)> = cluster.brokers.values().map(|b| (b.id, b.up)).collect();
        let speed = clock.speed();
        let advance_step_ms =
            (config.tick.as_secs_f64() * 1000.0 / 2.0 * speed).min(i64::MAX as f64) as i64;
        let shared = Arc::new(Shared {
            state: Mutex::new(cluster),
            clock,
            advance_step_ms,
            speed,
            host: config.host.clone(),
            base_port: config.base_port,
            protocol: sec.protocol,
            tls,
            sasl,
            listeners: Mutex::new(BTreeMap::new()),
            shutdown,
        });
        // Every broker gets its port, stopped ones too (they bind when started).
        for (i, (id, up)) in ids.iter().enumerate() {
            let port = if config.base_port == 0 {
                0
            } else {
                config
                    .base_port
                    .checked_add(i as u16)
                    .ok_or_else(|| SimError::Invalid("ports run past 65535".into()))?
            };
            if *up {
                let listener = match server::bind(shared.clone(), *id, port).await {
                    Ok(l) => l,
                    Err(e) => {
                        let _ = shared.shutdown.send(true);
                        return Err(e);
                    }
                };
                let bound = listener.port;
                shared.listeners().insert(*id, listener);
                if let Some(b) = shared.lock().brokers.get_mut(id) {
                    b.port = bound;
                }
            } else if let Some(b) = shared.lock().brokers.get_mut(id) {
                b.port = port;
            }
        }
        let control = match config.control_port {
            Some(port) => match control::serve(shared.clone(), &config.host, port).await {
                Ok(c) => Some(c),
                Err(e) => {
                    let _ = shared.shutdown.send(true);
                    return Err(e);
                }
            },
            None => None,
        };
        let ticker = {
            let shared = shared.clone();
            let tick = config.tick.max(Duration::from_millis(1));
            let mut stop = shared.shutdown.subscribe();
            tokio::spawn(async move {
                let mut interval = tokio::time::interval(tick);
                interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    tokio::select! {
                        _ = interval.tick() => { drop(shared.lock()); }
                        _ = stop.changed() => break,
                    }
                }
            })
        };
        let c = SimCluster {
            shared,
            ticker: Some(ticker),
            control,
        };
        tracing::info!(bootstrap = %c.bootstrap(), control = ?c.control_url(), "simulated cluster started");
        Ok(c)
    }

    /// `host:port` of every broker, comma separated, in broker id order.
    pub fn bootstrap(&self) -> String {
        let c = self.shared.lock();
        c.brokers
            .values()
            .map(|b| format!("{}:{}", self.shared.host, b.port))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// `host:port` of one broker.
    pub fn broker_address(&self, id: BrokerId) -> Option<String> {
        let c = self.shared.lock();
        c.brokers
            .get(&id)
            .map(|b| format!("{}:{}", self.shared.host, b.port))
    }

    /// `http://host:port` of the control API, when it runs.
    pub fn control_url(&self) -> Option<String> {
        self.control
            .as_ref()
            .map(|(addr, _)| format!("http://{addr}"))
    }

    pub async fn stop_broker(&self, id: BrokerId) -> Result<(), SimError> {
        self.shared.stop_broker(id).await
    }

    pub async fn start_broker(&self, id: BrokerId) -> Result<(), SimError> {
        self.shared.start_broker(id).await
    }

    /// Moves the KRaft quorum's leadership (the active controller) to broker `id` (up).
    pub fn move_controller(&self, id: BrokerId) -> Result<(), SimError> {
        self.shared.move_controller(id)
    }

    /// Dedicated controllers `ids` become the quorum's voters, the brokers its observers.
    pub fn set_dedicated_controllers(&self, ids: &[BrokerId]) -> Result<(), SimError> {
        self.shared.set_dedicated_controllers(ids)
    }

    /// Stops or starts a dedicated controller.
    pub fn set_controller_up(&self, id: BrokerId, up: bool) -> Result<(), SimError> {
        self.shared.set_controller_up(id, up)
    }

    /// Adds an empty broker listening on the next port; returns its id.
    pub async fn add_broker(&self, rack: Option<String>) -> Result<BrokerId, SimError> {
        self.shared.add_broker(rack).await
    }

    /// Changes the rates of a topic (every partition) or one partition.
    pub fn set_rates(
        &self,
        topic: &str,
        partition: Option<i32>,
        update: &RatesUpdate,
    ) -> Result<(), SimError> {
        self.shared.set_rates(topic, partition, update)
    }

    pub fn add_topic(&self, spec: &NewTopic) -> Result<(), SimError> {
        self.shared.add_topic(spec)
    }

    /// A simulated group of `kind` (`classic`, `consumer` for KIP-848, `share` for KIP-932)
    /// whose `members` consume every partition of `topic` from its log start at the topic's
    /// consumer rate (`POST /groups`).
    pub fn add_group(
        &self,
        id: &str,
        kind: state::GroupKind,
        topic: &str,
        members: usize,
    ) -> Result<(), SimError> {
        let mut c = self.shared.lock();
        c.add_group(id, kind, topic, members)
            .map_err(SimError::Invalid)
    }

    /// The group's members leave, as when its consumers stop: it is Empty and keeps its
    /// offsets (`POST /groups/{id}/stop`).
    pub fn stop_group(&self, id: &str) -> Result<(), SimError> {
        self.shared.lock().stop_group(id).map_err(SimError::Invalid)
    }

    /// Changes [`SimConfig::metadata_lag`] for the changes made from now on.
    pub fn set_metadata_lag(&self, lag: Duration) {
        self.shared.lock().lag.lag_ms = lag_ms(lag);
    }

    pub fn truth(&self) -> Truth {
        let c = self.shared.lock();
        truth::build(&c, self.shared.clock.speed())
    }

    /// Every group's committed offsets as a client reads them (whole offsets), by group, then
    /// (topic, partition): the truth an observer's sample is checked against.
    pub fn committed_offsets(&self) -> BTreeMap<String, BTreeMap<(String, i32), i64>> {
        let c = self.shared.lock();
        c.groups
            .values()
            .map(|g| {
                let offsets = g
                    .offsets
                    .iter()
                    .flat_map(|(t, slots)| {
                        slots.iter().enumerate().filter_map(move |(i, slot)| {
                            let offset = slot.as_ref()?.offset.floor() as i64;
                            Some(((t.clone(), i as i32), offset))
                        })
                    })
                    .collect();
                (g.id.clone(), offsets)
            })
            .collect()
    }

    /// Every partition's log start and end offsets (what ListOffsets earliest and latest
    /// answer), by (topic, partition).
    pub fn log_offsets(&self) -> BTreeMap<(String, i32), (i64, i64)> {
        let c = self.shared.lock();
        c.topics
            .values()
            .flat_map(|t| {
                t.partitions.iter().enumerate().map(|(i, p)| {
                    (
                        (t.name.clone(), i as i32),
                        (p.log_start_offset(), p.high_watermark()),
                    )
                })
            })
            .collect()
    }

    /// Every partition's log as tiered storage (KIP-405) splits it, by (topic, partition): the
    /// first local offset (ListOffsets -4), the local size (what DescribeLogDirs reports) and
    /// the bytes held only remotely (which Kafka reports to no client).
    pub fn tiered_logs(&self) -> BTreeMap<(String, i32), (i64, u64, u64)> {
        let c = self.shared.lock();
        c.topics
            .values()
            .flat_map(|t| {
                t.partitions.iter().enumerate().map(|(i, p)| {
                    (
                        (t.name.clone(), i as i32),
                        (
                            p.local_start_offset(),
                            p.size.max(0.0) as u64,
                            p.remote_bytes().max(0.0) as u64,
                        ),
                    )
                })
            })
            .collect()
    }

    /// The current state as a `ballast.snapshot/v1` document.
    pub fn snapshot(&self) -> Snapshot {
        let c = self.shared.lock();
        scenario::export(&c)
    }

    /// Simulated time, milliseconds since the epoch.
    pub fn now_ms(&self) -> i64 {
        self.shared.now()
    }

    /// Stops every listener, connection, the ticker and the control API.
    pub async fn shutdown(mut self) {
        let _ = self.shared.shutdown.send(true);
        let listeners: Vec<server::Listener> = std::mem::take(&mut *self.shared.listeners())
            .into_values()
            .collect();
        for l in listeners {
            l.close().await;
        }
        if let Some(t) = self.ticker.take() {
            let _ = t.await;
        }
        if let Some((_, t)) = self.control.take() {
            t.abort();
            let _ = t.await;
        }
    }
}

impl Drop for SimCluster {
    fn drop(&mut self) {
        let _ = self.shared.shutdown.send(true);
        if let Some((_, t)) = self.control.take() {
            t.abort();
        }
    }
}

#[cfg(test)]
mod advance_tests {
    use super::*;

    #[test]
    fn a_small_model_advances_every_half_tick_and_a_large_one_once_per_wall_ms_per_thousand_items()
    {
        // 60 brokers' worth of a small test cluster: the half tick decides.
        assert!(!advance_due(49, 50, 2_000, 1.0));
        assert!(advance_due(50, 50, 2_000, 1.0));
        // 300,000 partitions and 430,000 group offsets: 730 ms.
        assert!(!advance_due(729, 50, 730_000, 1.0));
        assert!(advance_due(730, 50, 730_000, 1.0));
        // On a clock running ten times as fast, ten times the simulated milliseconds.
        assert!(!advance_due(7_299, 500, 730_000, 10.0));
        assert!(advance_due(7_300, 500, 730_000, 10.0));
    }
}
