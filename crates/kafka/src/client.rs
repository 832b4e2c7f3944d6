//! The client: bootstrap, the metadata cache, a lazily opened connection per broker, routing
//! (any broker, a given broker, a partition leader, the group coordinator, the controller) and
//! retries of retriable failures with backoff.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::task::Poll;

use ballast_model::BrokerId;
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::{
    FindCoordinatorRequest, GroupId, MetadataRequest, MetadataResponse, TopicName,
};
use kafka_protocol::protocol::StrBytes;

use crate::config::{ClientConfig, Sasl};
use crate::connection::{Connection, Dialer, Endpoint};
use crate::error::{Error, ItemError, Result};
use crate::oauth::TokenProvider;
use crate::types::{BrokerInfo, ClusterMetadata, PartitionInfo, TopicInfo};

/// An async Kafka client. Cheap to clone (clones share connections and caches).
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
}

type Slot = Arc<tokio::sync::Mutex<Option<(Endpoint, Arc<Connection>)>>>;

pub(crate) struct Inner {
    pub(crate) config: ClientConfig,
    dialer: Dialer,
    bootstrap: Vec<Endpoint>,
    metadata: RwLock<Arc<ClusterMetadata>>,
    metadata_generation: AtomicU64,
    refresh_lock: tokio::sync::Mutex<()>,
    slots: Mutex<HashMap<BrokerId, Slot>>,
    coordinators: Mutex<HashMap<String, BrokerId>>,
    next_broker: AtomicUsize,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Connects: tries each bootstrap address until one answers Metadata, and keeps that
    /// metadata. Authentication and TLS failures are returned at once (they name the broker).
    pub async fn connect(config: ClientConfig) -> Result<Client> {
        config.validate()?;
        let tls = config
            .security
            .tls()
            .map(crate::tls::client_config)
            .transpose()?;
        let oauth = match config.security.sasl() {
            Some(Sasl::OAuthBearer {
                token_endpoint,
                client_id,
                client_secret,
                scope,
                ..
            }) => Some(Arc::new(TokenProvider::new(
                token_endpoint,
                client_id,
                client_secret,
                scope.as_deref(),
                config.security.tls().and_then(|t| t.ca_file.as_deref()),
                config.request_timeout,
            )?)),
            _ => None,
        };
        let bootstrap = config
            .bootstrap_servers
            .iter()
            .map(|s| Endpoint::parse(s).map_err(Error::Config))
            .collect::<Result<Vec<_>>>()?;
        let dialer = Dialer {
            client_id: config.client_id.clone(),
            connect_timeout: config.connect_timeout,
            request_timeout: config.request_timeout,
            tls,
            sasl: config.security.sasl().cloned(),
            oauth,
        };
        let client = Client {
            inner: Arc::new(Inner {
                config,
                dialer,
                bootstrap,
                metadata: RwLock::new(Arc::new(ClusterMetadata::default())),
                metadata_generation: AtomicU64::new(0),
                refresh_lock: tokio::sync::Mutex::new(()),
                slots: Mutex::new(HashMap::new()),
                coordinators: Mutex::new(HashMap::new()),
                next_broker: AtomicUsize::new(0),
            }),
        };
        let metadata = client.metadata_from_bootstrap().await?;
        client.store_metadata(metadata);
        Ok(client)
    }

    pub fn config(&self) -> &ClientConfig {
        &self.inner.config
    }

    /// The cached metadata (as of the last refresh), without a request.
    pub fn cached_metadata(&self) -> Arc<ClusterMetadata> {
        match self.inner.metadata.read() {
            Ok(m) => m.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Fresh metadata: every topic (`None`) or the named ones (a missing topic comes back with
    /// UNKNOWN_TOPIC_OR_PARTITION in its `error`; topics are never auto-created). Asking for all
    /// topics also refreshes the cache.
    pub async fn metadata(&self, topics: Option<&[String]>) -> Result<ClusterMetadata> {
        match topics {
            None => self.refresh_metadata().await.map(|m| (*m).clone()),
            Some(topics) => {
                self.retrying("Metadata", move || async move {
                    let conn = self.any_connection().await?;
                    fetch_metadata(&conn, Some(topics)).await
                })
                .await
            }
        }
    }

    /// Refreshes the cache from any broker (falling back to the bootstrap addresses). Concurrent
    /// callers share one request.
    pub async fn refresh_metadata(&self) -> Result<Arc<ClusterMetadata>> {
        let generation = self.inner.metadata_generation.load(Ordering::Acquire);
        let _guard = self.inner.refresh_lock.lock().await;
        if self.inner.metadata_generation.load(Ordering::Acquire) != generation {
            return Ok(self.cached_metadata());
        }
        let known = self.cached_metadata();
        let mut last: Option<Error> = None;
        let n = known.brokers.len();
        let start = self.inner.next_broker.fetch_add(1, Ordering::Relaxed);
        for i in 0..n {
            let broker = &known.brokers[(start + i) % n];
            let attempt = async {
                let conn = self.connection(broker.id).await?;
                fetch_metadata(&conn, None).await
            };
            match attempt.await {
                Ok(metadata) => {
                    self.store_metadata(metadata);
                    return Ok(self.cached_metadata());
                }
                Err(e) if !e.is_retriable() => return Err(e),
                Err(e) => {
                    tracing::debug!(broker = broker.id, error = %e, "metadata refresh failed");
                    last = Some(e);
                }
            }
        }
        match self.metadata_from_bootstrap().await {
            Ok(metadata) => {
                self.store_metadata(metadata);
                Ok(self.cached_metadata())
            }
            Err(e) => {
                if let Some(last) = last {
                    tracing::debug!(error = %last, "no known broker answered metadata");
                }
                Err(e)
            }
        }
    }

    async fn metadata_from_bootstrap(&self) -> Result<ClusterMetadata> {
        let mut tried = Vec::new();
        let mut last = None;
        for endpoint in &self.inner.bootstrap {
            let attempt = async {
                let conn = Connection::open(&self.inner.dialer, endpoint).await?;
                fetch_metadata(&conn, None).await
            };
            match attempt.await {
                Ok(metadata) => return Ok(metadata),
                Err(e) if !e.is_retriable() => return Err(e),
                Err(e) => {
                    tracing::debug!(broker = %endpoint, error = %e, "bootstrap address failed");
                    tried.push(endpoint.to_string());
                    last = Some(e);
                }
            }
        }
        Err(Error::NoBrokerReachable {
            tried: tried.join(", "),
            source: Box::new(last.unwrap_or_else(|| Error::Config("no bootstrap server".into()))),
        })
    }

    fn store_metadata(&self, metadata: ClusterMetadata) {
        // connections to brokers that left or moved are dropped
        if let Ok(mut slots) = self.inner.slots.lock() {
            slots.retain(|id, _| metadata.broker(*id).is_some());
        }
        let mut guard = match self.inner.metadata.write() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        *guard = Arc::new(metadata);
        self.inner
            .metadata_generation
            .fetch_add(1, Ordering::AcqRel);
    }

    /// Cached metadata that knows every topic of `topics` (refreshing once if one is missing).
    pub(crate) async fn metadata_with_topics(
        &self,
        topics: &[String],
    ) -> Result<Arc<ClusterMetadata>> {
        let cached = self.cached_metadata();
        if topics
            .iter()
            .all(|t| cached.topic(t).is_some_and(|t| !t.partitions.is_empty()))
        {
            return Ok(cached);
        }
        self.refresh_metadata().await
    }

    /// Cached metadata that knows broker `id` (refreshing once if it does not).
    pub(crate) async fn metadata_with_broker(&self, id: BrokerId) -> Result<Arc<ClusterMetadata>> {
        let cached = self.cached_metadata();
        if cached.broker(id).is_some() {
            return Ok(cached);
        }
        let fresh = self.refresh_metadata().await?;
        if fresh.broker(id).is_none() {
            return Err(Error::UnknownBroker(id));
        }
        Ok(fresh)
    }

    // -----------------------------------------------------------------------------------------
    // routing

    /// The connection to broker `id` (known from metadata), opened on first use and re-opened
    /// after a failure.
    pub(crate) async fn connection(&self, id: BrokerId) -> Result<Arc<Connection>> {
        let metadata = self.cached_metadata();
        let broker = metadata.broker(id).ok_or(Error::UnknownBroker(id))?;
        let endpoint = Endpoint {
            id: Some(id),
            host: broker.host.clone(),
            port: u16::try_from(broker.port).map_err(|_| Error::Protocol {
                broker: id.to_string(),
                detail: format!("metadata gives port {}", broker.port),
            })?,
        };
        let slot = {
            let mut slots = match self.inner.slots.lock() {
                Ok(s) => s,
                Err(poisoned) => poisoned.into_inner(),
            };
            slots.entry(id).or_default().clone()
        };
        let mut guard = slot.lock().await;
        if let Some((known, conn)) = guard.as_ref() {
            if *known == endpoint && conn.is_usable() {
                return Ok(conn.clone());
            }
        }
        *guard = None;
        let conn = Arc::new(Connection::open(&self.inner.dialer, &endpoint).await?);
        *guard = Some((endpoint, conn.clone()));
        Ok(conn)
    }

    /// A connection to `broker` when named (each KRaft broker answers from its own view of the
    /// metadata), else to any broker.
    pub(crate) async fn connection_via(&self, broker: Option<BrokerId>) -> Result<Arc<Connection>> {
        match broker {
            Some(id) => {
                self.metadata_with_broker(id).await?;
                self.connection(id).await
            }
            None => self.any_connection().await,
        }
    }

    /// A connection to any broker, round-robin; a broker that cannot be reached is skipped.
    pub(crate) async fn any_connection(&self) -> Result<Arc<Connection>> {
        let mut metadata = self.cached_metadata();
        if metadata.brokers.is_empty() {
            metadata = self.refresh_metadata().await?;
        }
        let n = metadata.brokers.len();
        let start = self.inner.next_broker.fetch_add(1, Ordering::Relaxed);
        let mut last = None;
        for i in 0..n {
            match self.connection(metadata.brokers[(start + i) % n].id).await {
                Ok(conn) => return Ok(conn),
                Err(e) if !e.is_retriable() => return Err(e),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or(Error::NoBrokerReachable {
            tried: String::new(),
            source: Box::new(Error::Config("the cluster lists no broker".into())),
        }))
    }

    /// The controller from metadata (ZooKeeper clusters need it for topic and partition
    /// admin; KRaft brokers forward, so any broker it names works). A controller id that is no
    /// known broker (none, or librdkafka's mock, which says 0) falls back to any broker.
    pub(crate) async fn controller_connection(&self) -> Result<Arc<Connection>> {
        let metadata = self.cached_metadata();
        match metadata
            .controller_id
            .filter(|id| metadata.broker(*id).is_some())
        {
            Some(id) => self.connection(id).await,
            None => self.any_connection().await,
        }
    }

    /// The coordinator of `group`, from the cache or FindCoordinator.
    pub(crate) async fn coordinator(&self, group: &str) -> Result<BrokerId> {
        let found = self.find_coordinators(&[group.to_string()]).await?;
        found.into_iter().next().map_or_else(
            || Err(Error::kafka("FindCoordinator", 15, None)),
            |(_, r)| r,
        )
    }

    /// Coordinators of several groups (one batched FindCoordinator v4+ when possible).
    pub(crate) async fn find_coordinators(
        &self,
        groups: &[String],
    ) -> Result<Vec<(String, Result<BrokerId>)>> {
        let mut out = Vec::with_capacity(groups.len());
        let mut missing = Vec::new();
        {
            let cache = match self.inner.coordinators.lock() {
                Ok(c) => c,
                Err(poisoned) => poisoned.into_inner(),
            };
            for g in groups {
                match cache.get(g) {
                    Some(id) => out.push((g.clone(), Ok(*id))),
                    None => missing.push(g.clone()),
                }
            }
        }
        if missing.is_empty() {
            return Ok(out);
        }
        let conn = self.any_connection().await?;
        let version = conn.version::<FindCoordinatorRequest>()?;
        let mut found: Vec<(String, i16, Option<String>, BrokerId)> = Vec::new();
        if version >= 4 {
            let mut request = FindCoordinatorRequest::default();
            request.coordinator_keys = missing
                .iter()
                .map(|g| StrBytes::from_string(g.clone()))
                .collect();
            let response = conn.send(&request, version).await?;
            for c in response.coordinators {
                found.push((
                    c.key.to_string(),
                    c.error_code,
                    c.error_message.map(|m| m.to_string()),
                    c.node_id.0,
                ));
            }
        } else {
            for g in &missing {
                let mut request = FindCoordinatorRequest::default();
                request.key = StrBytes::from_string(g.clone());
                let response = conn.send(&request, version).await?;
                found.push((
                    g.clone(),
                    response.error_code,
                    response.error_message.map(|m| m.to_string()),
                    response.node_id.0,
                ));
            }
        }
        let mut metadata = self.cached_metadata();
        if found
            .iter()
            .any(|(_, code, _, id)| *code == 0 && metadata.broker(*id).is_none())
        {
            metadata = self.refresh_metadata().await?;
        }
        for g in missing {
            let result = match found.iter().find(|(k, ..)| *k == g) {
                Some((_, 0, _, id)) if metadata.broker(*id).is_some() => {
                    if let Ok(mut cache) = self.inner.coordinators.lock() {
                        cache.insert(g.clone(), *id);
                    }
                    Ok(*id)
                }
                Some((_, 0, _, id)) => Err(Error::UnknownBroker(*id)),
                Some((_, code, message, _)) => {
                    Err(Error::kafka("FindCoordinator", *code, message.clone()))
                }
                None => Err(Error::Protocol {
                    broker: conn.label().to_string(),
                    detail: format!("findcoordinator answer lacks group {g:?}"),
                }),
            };
            out.push((g, result));
        }
        Ok(out)
    }

    pub(crate) fn forget_coordinator(&self, group: &str) {
        if let Ok(mut cache) = self.inner.coordinators.lock() {
            cache.remove(group);
        }
    }

    // -----------------------------------------------------------------------------------------
    // retries

    /// Runs `attempt` until it succeeds, fails with a non-retriable error, or `retries` retries
    /// are spent; between tries it waits the backoff and refreshes metadata when the error
    /// suggests stale routing.
    pub(crate) async fn retrying<T, F, Fut>(&self, api: &'static str, attempt: F) -> Result<T>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        let mut tries = 0u32;
        loop {
            match attempt().await {
                Ok(v) => return Ok(v),
                Err(e) if e.is_retriable() && tries < self.inner.config.retries => {
                    tries += 1;
                    tracing::debug!(api, attempt = tries, error = %e, "retrying");
                    tokio::time::sleep(self.inner.config.backoff(tries)).await;
                    if e.invalidates_metadata() {
                        if let Err(refresh) = self.refresh_metadata().await {
                            tracing::debug!(api, error = %refresh, "metadata refresh failed");
                        }
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Waits the backoff of retry `tries` and refreshes metadata (for per-item retries).
    pub(crate) async fn backoff_and_refresh(&self, tries: u32) {
        tokio::time::sleep(self.inner.config.backoff(tries)).await;
        if let Err(e) = self.refresh_metadata().await {
            tracing::debug!(error = %e, "metadata refresh failed");
        }
    }
}

/// Sends Metadata for all topics (None) or the named ones over `conn`.
pub(crate) async fn fetch_metadata(
    conn: &Connection,
    topics: Option<&[String]>,
) -> Result<ClusterMetadata> {
    let version = conn.version::<MetadataRequest>()?;
    let mut request = MetadataRequest::default();
    request.topics = match topics {
        None if version == 0 => Some(Vec::new()),
        None => None,
        Some(names) => Some(
            names
                .iter()
                .map(|n| {
                    let mut t = MetadataRequestTopic::default();
                    t.name = Some(TopicName(StrBytes::from_string(n.clone())));
                    t
                })
                .collect(),
        ),
    };
    if version >= 4 {
        request.allow_auto_topic_creation = false;
    }
    let response = conn.send(&request, version).await?;
    if response.error_code != 0 {
        return Err(Error::kafka("Metadata", response.error_code, None));
    }
    Ok(convert_metadata(response, version))
}

pub(crate) fn convert_metadata(response: MetadataResponse, version: i16) -> ClusterMetadata {
    let mut brokers: Vec<BrokerInfo> = response
        .brokers
        .into_iter()
        .map(|b| BrokerInfo {
            id: b.node_id.0,
            host: b.host.to_string(),
            port: b.port,
            rack: b.rack.map(|r| r.to_string()),
        })
        .collect();
    brokers.sort_by_key(|b| b.id);
    let mut topics: Vec<TopicInfo> = response
        .topics
        .into_iter()
        .filter_map(|t| {
            let name = t.name?.0.to_string();
            let mut partitions: Vec<PartitionInfo> = t
                .partitions
                .into_iter()
                .map(|p| PartitionInfo {
                    partition: p.partition_index,
                    leader: (p.leader_id.0 >= 0).then_some(p.leader_id.0),
                    leader_epoch: (version >= 7 && p.leader_epoch >= 0).then_some(p.leader_epoch),
                    replicas: p.replica_nodes.into_iter().map(|b| b.0).collect(),
                    isr: p.isr_nodes.into_iter().map(|b| b.0).collect(),
                    offline_replicas: p.offline_replicas.into_iter().map(|b| b.0).collect(),
                    error: ItemError::from_code(p.error_code, None),
                })
                .collect();
            partitions.sort_by_key(|p| p.partition);
            Some(TopicInfo {
                name,
                id: (!t.topic_id.is_nil()).then(|| t.topic_id.to_string()),
                internal: t.is_internal,
                error: ItemError::from_code(t.error_code, None),
                partitions,
            })
        })
        .collect();
    topics.sort_by(|a, b| a.name.cmp(&b.name));
    ClusterMetadata {
        cluster_id: response.cluster_id.map(|c| c.to_string()),
        controller_id: (response.controller_id.0 >= 0).then_some(response.controller_id.0),
        brokers,
        topics,
    }
}

pub(crate) fn group_id(g: &str) -> GroupId {
    GroupId(StrBytes::from_string(g.to_string()))
}

pub(crate) fn topic_name(t: &str) -> TopicName {
    TopicName(StrBytes::from_string(t.to_string()))
}

pub(crate) fn str_bytes(s: &str) -> StrBytes {
    StrBytes::from_string(s.to_string())
}

/// Polls all futures concurrently on the current task and returns their outputs in order.
pub(crate) async fn join_all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut futures: Vec<Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (future, output) in futures.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match future.as_mut().poll(cx) {
                    Poll::Ready(v) => *output = Some(v),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::*;
    use ballast_model::TopicPartition;

    fn assert_send<T: Send>(_: &T) {}

    /// Workers spawn client calls on tokio: every operation's future must be Send.
    #[allow(dead_code, clippy::let_underscore_future)]
    fn operation_futures_are_send(c: &Client) {
        let tps = [TopicPartition::new("t", 0)];
        let groups = ["g".to_string()];
        assert_send(&Client::connect(ClientConfig::plaintext("a:1")));
        assert_send(&c.metadata(None));
        assert_send(&c.refresh_metadata());
        assert_send(&c.describe_cluster());
        assert_send(&c.describe_quorum());
        assert_send(&c.active_controller());
        assert_send(&c.broker_software());
        assert_send(&c.describe_log_dirs(1, None));
        assert_send(&c.describe_all_log_dirs());
        assert_send(&c.list_offsets(&tps, OffsetSpec::Latest));
        assert_send(&c.describe_configs(&[]));
        assert_send(&c.describe_config_values(&[], &["retention.ms"]));
        assert_send(&c.describe_config(&ConfigResource::BrokerDefaults));
        assert_send(&c.incremental_alter_configs(&[], false));
        assert_send(&c.create_topics(&[], false));
        assert_send(&c.delete_topics(&[]));
        assert_send(&c.create_partitions(&[], false));
        assert_send(&c.alter_partition_reassignments(&[]));
        assert_send(&c.list_partition_reassignments(None));
        assert_send(&c.elect_leaders(ElectionType::Preferred, None));
        assert_send(&c.alter_replica_log_dirs(1, &[]));
        assert_send(&c.describe_acls(&AclFilter::all()));
        assert_send(&c.create_acls(&[]));
        assert_send(&c.delete_acls(&[]));
        assert_send(&c.describe_client_quotas(&QuotaFilter::all()));
        assert_send(&c.alter_client_quotas(&[], false));
        assert_send(&c.list_groups());
        assert_send(&c.list_groups_on(&[1]));
        assert_send(&c.describe_log_dirs_of(&[1]));
        assert_send(&c.committed_offsets_of_groups(&groups));
        assert_send(&c.describe_groups(&groups));
        assert_send(&c.committed_offsets("g", None));
        assert_send(&c.commit_offsets("g", &[]));
        assert_send(&c.delete_groups(&groups));
        assert_send(&c.fetch(&tps[0], 0, 1));
        assert_send(&c.fetch_range(&tps[0], 0, 1, 1));
        assert_send(&c.produce(&tps[0], &[], Acks::All, Compression::None));
    }

    #[test]
    fn the_client_is_send_and_sync() {
        fn check<T: Send + Sync + Clone + 'static>() {}
        check::<Client>();
    }
}
