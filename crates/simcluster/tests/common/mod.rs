//! A minimal Kafka client over kafka-protocol for the simulator's tests.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use ballast_model::snapshot::{Snapshot, SnapshotBroker, SnapshotPartition, SNAPSHOT_FORMAT};
use ballast_model::BrokerState;
use ballast_simcluster::{Scenario, SimCluster, SimConfig};
use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{
    encode_request_header_into_buffer, Decodable, HeaderVersion, Request, StrBytes,
};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

pub trait Stream: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Stream for T {}

pub struct Client {
    stream: Pin<Box<dyn Stream>>,
    correlation: i32,
    pub client_id: String,
}

pub fn sb(s: &str) -> StrBytes {
    StrBytes::from_string(s.to_string())
}

impl Client {
    pub async fn connect(addr: &str) -> std::io::Result<Client> {
        let s = TcpStream::connect(addr).await?;
        s.set_nodelay(true)?;
        Ok(Client::over(Box::pin(s)))
    }

    pub fn over(stream: Pin<Box<dyn Stream>>) -> Client {
        Client {
            stream,
            correlation: 0,
            client_id: "simcluster-test".into(),
        }
    }

    /// TLS to `addr`, trusting `ca_pem`, with SNI `localhost`.
    pub async fn connect_tls(addr: &str, ca_pem: &str) -> std::io::Result<Client> {
        use rustls_pki_types::pem::PemObject;
        let mut roots = rustls::RootCertStore::empty();
        for cert in rustls_pki_types::CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
            roots
                .add(cert.map_err(std::io::Error::other)?)
                .map_err(std::io::Error::other)?;
        }
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(std::io::Error::other)?
        .with_root_certificates(roots)
        .with_no_client_auth();
        let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
        let tcp = TcpStream::connect(addr).await?;
        let name = rustls_pki_types::ServerName::try_from("localhost")
            .map_err(std::io::Error::other)?
            .to_owned();
        let tls = connector.connect(name, tcp).await?;
        Ok(Client::over(Box::pin(tls)))
    }

    pub async fn write_frame(&mut self, body: &[u8]) -> std::io::Result<()> {
        let mut out = Vec::with_capacity(body.len() + 4);
        out.extend_from_slice(&(body.len() as i32).to_be_bytes());
        out.extend_from_slice(body);
        self.stream.write_all(&out).await?;
        self.stream.flush().await
    }

    pub async fn read_frame(&mut self) -> std::io::Result<Bytes> {
        let mut len = [0u8; 4];
        self.stream.read_exact(&mut len).await?;
        let n = i32::from_be_bytes(len);
        if n < 0 {
            return Err(std::io::Error::other("negative frame"));
        }
        let mut buf = vec![0u8; n as usize];
        self.stream.read_exact(&mut buf).await?;
        Ok(Bytes::from(buf))
    }

    /// Encodes header + request at `version`.
    pub fn encode<R: Request>(&mut self, req: &R, version: i16) -> BytesMut {
        self.correlation += 1;
        let mut header = RequestHeader::default();
        header.request_api_key = R::KEY;
        header.request_api_version = version;
        header.correlation_id = self.correlation;
        header.client_id = Some(sb(&self.client_id));
        let mut buf = BytesMut::new();
        encode_request_header_into_buffer(&mut buf, &header).expect("encode header");
        req.encode(&mut buf, version).expect("encode request");
        buf
    }

    pub async fn send<R: Request>(
        &mut self,
        req: &R,
        version: i16,
    ) -> std::io::Result<R::Response> {
        let buf = self.encode(req, version);
        let cid = self.correlation;
        self.write_frame(&buf).await?;
        let mut frame = self.read_frame().await?;
        let header = ResponseHeader::decode(&mut frame, R::Response::header_version(version))
            .map_err(std::io::Error::other)?;
        assert_eq!(header.correlation_id, cid, "correlation id");
        R::Response::decode(&mut frame, version).map_err(std::io::Error::other)
    }

    /// ApiVersions, then the highest version both sides support for `key`.
    pub async fn versions(&mut self) -> BTreeMap<i16, (i16, i16)> {
        let mut req = ApiVersionsRequest::default();
        req.client_software_name = sb("simcluster-test");
        req.client_software_version = sb("1");
        let resp = self.send(&req, 3).await.expect("api versions");
        resp.api_keys
            .iter()
            .map(|k| (k.api_key, (k.min_version, k.max_version)))
            .collect()
    }
}

/// A cluster from a snapshot, on free ports, at the given speed.
pub async fn start(snapshot: Snapshot, speed: f64) -> SimCluster {
    start_with(snapshot, |c| c.speed = speed).await
}

pub async fn start_with(snapshot: Snapshot, f: impl FnOnce(&mut SimConfig)) -> SimCluster {
    let mut config = SimConfig {
        scenario: Scenario::Snapshot(snapshot),
        tick: Duration::from_millis(50),
        ..SimConfig::default()
    };
    f(&mut config);
    SimCluster::start(config).await.expect("start simcluster")
}

/// Brokers 1..=n on racks r0.. and no partitions yet.
pub fn brokers(n: i32) -> Vec<SnapshotBroker> {
    (1..=n)
        .map(|id| SnapshotBroker {
            id,
            rack: Some(format!("r{}", (id - 1) % 3)),
            state: BrokerState::Alive,
        })
        .collect()
}

pub fn partition(topic: &str, p: i32, replicas: &[i32], size: u64) -> SnapshotPartition {
    SnapshotPartition {
        topic: topic.into(),
        partition: p,
        replicas: replicas.to_vec(),
        leader: replicas.first().copied(),
        isr: None,
        size_bytes: size,
        compacted: false,
        min_insync_replicas: 1,
        producer_msg_rate: 0.0,
        producer_byte_rate: 0.0,
        consumer_msg_rate: 0.0,
        consumer_byte_rate: 0.0,
        last_moved_at: None,
    }
}

pub fn snapshot(brokers: Vec<SnapshotBroker>, partitions: Vec<SnapshotPartition>) -> Snapshot {
    Snapshot {
        format: SNAPSHOT_FORMAT.into(),
        taken_at: "2026-11-21T10:00:00Z".into(),
        cluster_id: Some("simcluster-test".into()),
        brokers,
        partitions,
    }
}

/// Clients to every broker by id, via the bootstrap list.
pub struct Admin {
    pub addrs: BTreeMap<i32, String>,
}

impl Admin {
    pub fn new(sim: &SimCluster) -> Admin {
        let ids: Vec<i32> = sim.truth().brokers.iter().map(|b| b.id).collect();
        Admin {
            addrs: ids
                .into_iter()
                .filter_map(|id| sim.broker_address(id).map(|a| (id, a)))
                .collect(),
        }
    }

    pub async fn to(&self, broker: i32) -> Client {
        Client::connect(&self.addrs[&broker])
            .await
            .expect("connect to broker")
    }

    /// A client to the first broker that accepts a connection.
    pub async fn any(&self) -> Client {
        for addr in self.addrs.values() {
            if let Ok(c) = Client::connect(addr).await {
                return c;
            }
        }
        panic!("no broker accepts connections");
    }

    pub async fn metadata(&self) -> MetadataResponse {
        let mut c = self.any().await;
        let mut req = MetadataRequest::default();
        req.topics = None;
        c.send(&req, 12).await.expect("metadata")
    }

    pub async fn partition(
        &self,
        topic: &str,
        p: i32,
    ) -> metadata_response::MetadataResponsePartition {
        let md = self.metadata().await;
        let t = md
            .topics
            .iter()
            .find(|t| t.name.as_ref().map(|n| n.as_str()) == Some(topic))
            .expect("topic in metadata");
        t.partitions
            .iter()
            .find(|x| x.partition_index == p)
            .expect("partition in metadata")
            .clone()
    }

    pub async fn leader(&self, topic: &str, p: i32) -> i32 {
        self.partition(topic, p).await.leader_id.0
    }

    pub async fn coordinator(&self, group: &str) -> Client {
        let mut c = self.any().await;
        let mut req = FindCoordinatorRequest::default();
        req.key_type = 0;
        req.coordinator_keys = vec![sb(group)];
        let resp = c.send(&req, 4).await.expect("find coordinator");
        let node = resp.coordinators[0].node_id.0;
        assert_eq!(resp.coordinators[0].error_code, 0, "coordinator error");
        self.to(node).await
    }

    pub async fn alter_configs(
        &self,
        resource_type: i8,
        name: &str,
        set: &[(&str, Option<&str>)],
    ) -> i16 {
        let mut c = self.any().await;
        let mut req = IncrementalAlterConfigsRequest::default();
        let mut res = incremental_alter_configs_request::AlterConfigsResource::default();
        res.resource_type = resource_type;
        res.resource_name = sb(name);
        res.configs = set
            .iter()
            .map(|(k, v)| {
                let mut a = incremental_alter_configs_request::AlterableConfig::default();
                a.name = sb(k);
                a.config_operation = if v.is_some() { 0 } else { 1 };
                a.value = v.map(sb);
                a
            })
            .collect();
        req.resources = vec![res];
        let resp = c.send(&req, 1).await.expect("incremental alter configs");
        resp.responses[0].error_code
    }

    pub async fn reassign(
        &self,
        topic: &str,
        p: i32,
        replicas: Option<&[i32]>,
    ) -> (i16, Option<String>) {
        let mut c = self.any().await;
        let mut req = AlterPartitionReassignmentsRequest::default();
        req.timeout_ms = 30_000;
        let mut t = alter_partition_reassignments_request::ReassignableTopic::default();
        t.name = sb(topic).into();
        let mut rp = alter_partition_reassignments_request::ReassignablePartition::default();
        rp.partition_index = p;
        rp.replicas = replicas.map(|r| r.iter().map(|b| BrokerId(*b)).collect());
        t.partitions = vec![rp];
        req.topics = vec![t];
        let resp = c.send(&req, 0).await.expect("alter reassignments");
        let pr = &resp.responses[0].partitions[0];
        (
            pr.error_code,
            pr.error_message.as_ref().map(|m| m.to_string()),
        )
    }

    pub async fn ongoing(&self) -> Vec<(String, i32, Vec<i32>, Vec<i32>, Vec<i32>)> {
        let mut c = self.any().await;
        let mut req = ListPartitionReassignmentsRequest::default();
        req.timeout_ms = 30_000;
        let resp = c.send(&req, 0).await.expect("list reassignments");
        resp.topics
            .iter()
            .flat_map(|t| {
                t.partitions.iter().map(move |p| {
                    (
                        t.name.to_string(),
                        p.partition_index,
                        p.replicas.iter().map(|b| b.0).collect(),
                        p.adding_replicas.iter().map(|b| b.0).collect(),
                        p.removing_replicas.iter().map(|b| b.0).collect(),
                    )
                })
            })
            .collect()
    }

    pub async fn elect_preferred(&self, topic: &str, partitions: &[i32]) -> Vec<(i32, i16)> {
        let mut c = self.any().await;
        let mut req = ElectLeadersRequest::default();
        req.election_type = 0;
        let mut tp = elect_leaders_request::TopicPartitions::default();
        tp.topic = sb(topic).into();
        tp.partitions = partitions.to_vec();
        req.topic_partitions = Some(vec![tp]);
        req.timeout_ms = 10_000;
        let resp = c.send(&req, 2).await.expect("elect leaders");
        resp.replica_election_results
            .iter()
            .flat_map(|r| {
                r.partition_result
                    .iter()
                    .map(|p| (p.partition_id, p.error_code))
            })
            .collect()
    }

    /// (earliest, latest) offsets from the leader.
    pub async fn offsets(&self, topic: &str, p: i32) -> (i64, i64) {
        let leader = self.leader(topic, p).await;
        let mut c = self.to(leader).await;
        let mut out = Vec::new();
        for ts in [-2i64, -1] {
            let mut req = ListOffsetsRequest::default();
            req.replica_id = BrokerId(-1);
            let mut t = list_offsets_request::ListOffsetsTopic::default();
            t.name = sb(topic).into();
            let mut lp = list_offsets_request::ListOffsetsPartition::default();
            lp.partition_index = p;
            lp.timestamp = ts;
            t.partitions = vec![lp];
            req.topics = vec![t];
            let resp = c.send(&req, 7).await.expect("list offsets");
            let pr = &resp.topics[0].partitions[0];
            assert_eq!(pr.error_code, 0, "list offsets error");
            out.push(pr.offset);
        }
        (out[0], out[1])
    }
}

/// Polls `f` every 50 ms until it returns Some or `timeout` passes.
pub async fn wait_for<T, F, Fut>(timeout: Duration, mut f: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Some(v) = f().await {
            return Some(v);
        }
        if tokio::time::Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A CA and a server certificate for `localhost` and 127.0.0.1: (ca pem, server identity).
pub fn tls_identity() -> (String, ballast_simcluster::TlsIdentity) {
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("ca params");
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "simcluster test ca");
    let ca_key = rcgen::KeyPair::generate().expect("ca key");
    let ca = ca_params.self_signed(&ca_key).expect("ca cert");
    let params =
        rcgen::CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
            .expect("server params");
    let key = rcgen::KeyPair::generate().expect("server key");
    let cert = params.signed_by(&key, &ca, &ca_key).expect("server cert");
    (
        ca.pem(),
        ballast_simcluster::TlsIdentity {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        },
    )
}

/// SaslHandshake v1 + SaslAuthenticate v2 with rsasl's client for PLAIN and SCRAM.
pub async fn sasl_login(
    c: &mut Client,
    mechanism: &str,
    user: &str,
    password: &str,
) -> Result<(), (i16, String)> {
    use rsasl::prelude::{Mechname, MessageSent, SASLClient, SASLConfig, State};
    let mut hs = SaslHandshakeRequest::default();
    hs.mechanism = sb(mechanism);
    let resp = c.send(&hs, 1).await.map_err(|e| (-1, e.to_string()))?;
    if resp.error_code != 0 {
        return Err((resp.error_code, "handshake".into()));
    }
    let config = SASLConfig::with_credentials(None, user.to_string(), password.to_string())
        .map_err(|e| (-1, e.to_string()))?;
    let mech = Mechname::parse(mechanism.as_bytes()).map_err(|e| (-1, e.to_string()))?;
    let mut session = SASLClient::new(config)
        .start_suggested(&[mech])
        .map_err(|e| (-1, e.to_string()))?;
    let mut input: Option<Vec<u8>> = None;
    loop {
        let mut out = std::io::Cursor::new(Vec::new());
        let state = session
            .step(input.as_deref(), &mut out)
            .map_err(|e| (-1, format!("client step: {e}")))?;
        let send = matches!(state, State::Running | State::Finished(MessageSent::Yes));
        if send {
            let mut auth = SaslAuthenticateRequest::default();
            auth.auth_bytes = Bytes::from(out.into_inner());
            let resp = c.send(&auth, 2).await.map_err(|e| (-1, e.to_string()))?;
            if resp.error_code != 0 {
                return Err((
                    resp.error_code,
                    resp.error_message
                        .map(|m| m.to_string())
                        .unwrap_or_default(),
                ));
            }
            input = Some(resp.auth_bytes.to_vec());
        }
        if !matches!(state, State::Running) {
            return Ok(());
        }
    }
}
