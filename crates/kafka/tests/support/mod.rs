//! A tiny in-test Kafka: TCP (or TLS) listeners that decode request headers and answer with
//! kafka-protocol structs. ApiVersions and Metadata have default answers built from a shared
//! `ClusterState`; a test handler answers (or overrides) anything else, and can also stay
//! silent or close the connection.

#![allow(dead_code)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsResponse, BrokerId, MetadataRequest, MetadataResponse, ResponseHeader,
    TopicName,
};
use kafka_protocol::protocol::{
    decode_request_header_from_buffer, Decodable, Encodable, HeaderVersion, StrBytes,
};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;

pub struct Request {
    pub broker: i32,
    pub api_key: i16,
    pub version: i16,
    pub correlation_id: i32,
    pub connection: usize,
    pub body: Bytes,
}

impl Request {
    pub fn decode<T: Decodable>(&self) -> T {
        T::decode(&mut self.body.clone(), self.version).expect("request decodes")
    }
}

pub enum Reply {
    Answer(Bytes),
    /// Close the connection without answering.
    Close,
    /// Never answer (the connection stays open).
    Silent,
    /// Send nothing and go on (a request that has no answer, e.g. acks=0).
    Nothing,
}

/// The answer frame body (header + response) for `request`.
pub fn answer<R: Encodable + HeaderVersion>(request: &Request, response: &R) -> Reply {
    let mut buf = BytesMut::new();
    let mut header = ResponseHeader::default();
    header.correlation_id = request.correlation_id;
    header
        .encode(&mut buf, R::header_version(request.version))
        .expect("header encodes");
    response
        .encode(&mut buf, request.version)
        .expect("response encodes");
    Reply::Answer(buf.freeze())
}

#[derive(Clone, Debug)]
pub struct FakePartition {
    pub partition: i32,
    pub leader: i32,
    pub replicas: Vec<i32>,
}

#[derive(Clone, Debug)]
pub struct FakeTopic {
    pub name: String,
    pub partitions: Vec<FakePartition>,
}

#[derive(Clone, Debug)]
pub struct Logged {
    pub broker: i32,
    pub api_key: i16,
    pub version: i16,
    pub connection: usize,
}

pub struct ClusterState {
    pub brokers: Vec<(i32, u16)>,
    pub controller: i32,
    pub topics: Vec<FakeTopic>,
    /// Per-API version ranges offered instead of kafka-protocol's; `None` hides the API.
    pub api_ranges: HashMap<i16, Option<(i16, i16)>>,
    pub log: Vec<Logged>,
    pub connections: usize,
    /// Free-form counters and notes for handlers.
    pub counters: HashMap<String, i64>,
    pub notes: Vec<String>,
}

impl ClusterState {
    pub fn count(&mut self, key: &str) -> i64 {
        let c = self.counters.entry(key.to_string()).or_insert(0);
        *c += 1;
        *c
    }

    pub fn requests(&self, api: ApiKey) -> Vec<Logged> {
        self.log
            .iter()
            .filter(|l| l.api_key == api as i16)
            .cloned()
            .collect()
    }

    pub fn leader_of(&self, topic: &str, partition: i32) -> Option<i32> {
        self.topics
            .iter()
            .find(|t| t.name == topic)?
            .partitions
            .iter()
            .find(|p| p.partition == partition)
            .map(|p| p.leader)
    }

    pub fn set_leader(&mut self, topic: &str, partition: i32, leader: i32) {
        for t in &mut self.topics {
            if t.name == topic {
                for p in &mut t.partitions {
                    if p.partition == partition {
                        p.leader = leader;
                    }
                }
            }
        }
    }
}

pub type Handler = Arc<dyn Fn(&Request, &mut ClusterState) -> Option<Reply> + Send + Sync>;

pub struct FakeCluster {
    pub state: Arc<Mutex<ClusterState>>,
    pub addrs: Vec<(i32, SocketAddr)>,
}

impl FakeCluster {
    /// Brokers 1..=n on 127.0.0.1, plaintext.
    pub async fn start(n: i32, topics: Vec<FakeTopic>, handler: Handler) -> FakeCluster {
        Self::start_with(n, topics, handler, None).await
    }

    pub async fn start_with(
        n: i32,
        topics: Vec<FakeTopic>,
        handler: Handler,
        tls: Option<tokio_rustls::TlsAcceptor>,
    ) -> FakeCluster {
        let mut listeners = Vec::new();
        for id in 1..=n {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            listeners.push((id, listener));
        }
        let addrs: Vec<(i32, SocketAddr)> = listeners
            .iter()
            .map(|(id, l)| (*id, l.local_addr().unwrap()))
            .collect();
        let state = Arc::new(Mutex::new(ClusterState {
            brokers: addrs.iter().map(|(id, a)| (*id, a.port())).collect(),
            controller: 1,
            topics,
            api_ranges: HashMap::new(),
            log: Vec::new(),
            connections: 0,
            counters: HashMap::new(),
            notes: Vec::new(),
        }));
        for (id, listener) in listeners {
            let state = state.clone();
            let handler = handler.clone();
            let tls = tls.clone();
            tokio::spawn(async move {
                loop {
                    let Ok((stream, _)) = listener.accept().await else {
                        return;
                    };
                    let connection = {
                        let mut s = state.lock().unwrap();
                        s.connections += 1;
                        s.connections
                    };
                    let state = state.clone();
                    let handler = handler.clone();
                    match &tls {
                        Some(acceptor) => {
                            let acceptor = acceptor.clone();
                            tokio::spawn(async move {
                                if let Ok(stream) = acceptor.accept(stream).await {
                                    serve(stream, id, connection, state, handler).await;
                                }
                            });
                        }
                        None => {
                            tokio::spawn(serve(stream, id, connection, state, handler));
                        }
                    }
                }
            });
        }
        FakeCluster { state, addrs }
    }

    pub fn bootstrap(&self) -> String {
        format!("127.0.0.1:{}", self.addrs[0].1.port())
    }

    pub fn state(&self) -> std::sync::MutexGuard<'_, ClusterState> {
        self.state.lock().unwrap()
    }
}

pub fn no_handler() -> Handler {
    Arc::new(|_, _| None)
}

pub fn topic(name: &str, leaders: &[i32]) -> FakeTopic {
    FakeTopic {
        name: name.to_string(),
        partitions: leaders
            .iter()
            .enumerate()
            .map(|(i, l)| FakePartition {
                partition: i as i32,
                leader: *l,
                replicas: vec![*l],
            })
            .collect(),
    }
}

async fn serve<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    broker: i32,
    connection: usize,
    state: Arc<Mutex<ClusterState>>,
    handler: Handler,
) {
    loop {
        let mut prefix = [0u8; 4];
        if stream.read_exact(&mut prefix).await.is_err() {
            return;
        }
        let len = i32::from_be_bytes(prefix) as usize;
        if len > 100 * 1024 * 1024 {
            return; // like Kafka's socket.request.max.bytes: e.g. a TLS hello on a plaintext port
        }
        let mut body = vec![0u8; len];
        if stream.read_exact(&mut body).await.is_err() {
            return;
        }
        let mut body = Bytes::from(body);
        let Ok(header) = decode_request_header_from_buffer(&mut body) else {
            return;
        };
        let request = Request {
            broker,
            api_key: header.request_api_key,
            version: header.request_api_version,
            correlation_id: header.correlation_id,
            connection,
            body,
        };
        let reply = {
            let mut s = state.lock().unwrap();
            s.log.push(Logged {
                broker,
                api_key: request.api_key,
                version: request.version,
                connection,
            });
            handler(&request, &mut s).or_else(|| default_reply(&request, &s))
        };
        match reply {
            Some(Reply::Answer(frame)) => {
                let mut out = BytesMut::with_capacity(frame.len() + 4);
                out.extend_from_slice(&(frame.len() as i32).to_be_bytes());
                out.extend_from_slice(&frame);
                if stream.write_all(&out).await.is_err() {
                    return;
                }
            }
            Some(Reply::Nothing) | Some(Reply::Silent) => {}
            Some(Reply::Close) | None => return,
        }
    }
}

fn default_reply(request: &Request, state: &ClusterState) -> Option<Reply> {
    match ApiKey::try_from(request.api_key).ok()? {
        ApiKey::ApiVersions => Some(api_versions(request, state)),
        ApiKey::Metadata => Some(metadata(request, state)),
        _ => None,
    }
}

fn range_of(state: &ClusterState, key: ApiKey) -> Option<(i16, i16)> {
    match state.api_ranges.get(&(key as i16)) {
        Some(r) => *r,
        None => {
            let v = key.valid_versions();
            Some((v.min, v.max))
        }
    }
}

fn api_versions(request: &Request, state: &ClusterState) -> Reply {
    let own = range_of(state, ApiKey::ApiVersions).unwrap_or((0, 3));
    let mut response = ApiVersionsResponse::default();
    let entry = |key: i16, (min, max): (i16, i16)| {
        let mut v = ApiVersion::default();
        v.api_key = key;
        v.min_version = min;
        v.max_version = max;
        v
    };
    if request.version > own.1 {
        // KIP-511: answer in the v0 layout with our own ApiVersions range
        response.error_code = 35;
        response.api_keys = vec![entry(ApiKey::ApiVersions as i16, own)];
        let mut buf = BytesMut::new();
        let mut header = ResponseHeader::default();
        header.correlation_id = request.correlation_id;
        header.encode(&mut buf, 0).unwrap();
        response.encode(&mut buf, 0).unwrap();
        return Reply::Answer(buf.freeze());
    }
    for key in ApiKey::iter() {
        if let Some(range) = range_of(state, key) {
            response.api_keys.push(entry(key as i16, range));
        }
    }
    answer(request, &response)
}

fn metadata(request: &Request, state: &ClusterState) -> Reply {
    let req: MetadataRequest = request.decode();
    let mut response = MetadataResponse::default();
    response.cluster_id = Some(StrBytes::from_static_str("fake-cluster"));
    response.controller_id = BrokerId(state.controller);
    response.brokers = state
        .brokers
        .iter()
        .map(|(id, port)| {
            let mut b = MetadataResponseBroker::default();
            b.node_id = BrokerId(*id);
            b.host = StrBytes::from_static_str("127.0.0.1");
            b.port = i32::from(*port);
            b.rack = Some(StrBytes::from_string(format!("rack-{}", id % 2)));
            b
        })
        .collect();
    let wanted: Option<Vec<String>> = req.topics.map(|ts| {
        ts.into_iter()
            .filter_map(|t| t.name.map(|n| n.0.to_string()))
            .collect()
    });
    let names: Vec<String> = match &wanted {
        Some(w) if !w.is_empty() => w.clone(),
        _ => state.topics.iter().map(|t| t.name.clone()).collect(),
    };
    for name in names {
        let mut t = MetadataResponseTopic::default();
        t.name = Some(TopicName(StrBytes::from_string(name.clone())));
        match state.topics.iter().find(|x| x.name == name) {
            None => t.error_code = 3,
            Some(topic) => {
                t.partitions = topic
                    .partitions
                    .iter()
                    .map(|p| {
                        let mut mp = MetadataResponsePartition::default();
                        mp.partition_index = p.partition;
                        mp.leader_id = BrokerId(p.leader);
                        mp.leader_epoch = 1;
                        mp.replica_nodes = p.replicas.iter().map(|r| BrokerId(*r)).collect();
                        mp.isr_nodes = mp.replica_nodes.clone();
                        mp
                    })
                    .collect();
            }
        }
        response.topics.push(t);
    }
    answer(request, &response)
}
