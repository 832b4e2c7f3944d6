//! Request handlers: one function per API key. Each decodes its request struct, reads or
//! mutates the model, and builds a response holding only fields valid for the negotiated
//! version. Unknown or unsupported requests get a well-formed error response; malformed frames
//! close the connection only.

mod admin;
mod data;
mod fallback;
mod groups;
mod metadata;
mod sasl;
mod security;

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, ApiVersionsResponse, RequestHeader, ResponseHeader,
};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};

use crate::state::{err, BrokerId};
use crate::Shared;

pub use self::sasl::SaslState;

/// What the connection does after a request.
pub enum Reply {
    /// Send this response frame (header and body, without the length).
    Frame(BytesMut),
    /// Send nothing (Produce with acks=0).
    Nothing,
    /// Close the connection (malformed or unexpected input).
    Close,
    /// An empty Fetch: wait this long, then handle the request again without waiting.
    Wait(Duration),
}

/// Per-connection state.
pub struct Conn {
    pub sasl_required: bool,
    pub authenticated: bool,
    pub principal: Option<String>,
    pub peer: String,
    pub client_id: String,
    pub sasl: Option<SaslState>,
    /// After SaslHandshake v0 the next frame is a raw SASL token.
    pub raw_sasl: bool,
    pub close_after_reply: bool,
}

impl Conn {
    pub fn new(sasl_required: bool, peer: String) -> Self {
        Conn {
            sasl_required,
            authenticated: !sasl_required,
            principal: None,
            peer,
            client_id: String::new(),
            sasl: None,
            raw_sasl: false,
            close_after_reply: false,
        }
    }
}

/// What a handler knows about its request.
pub struct Ctx<'a> {
    pub shared: &'a Shared,
    /// The broker that received the request.
    pub broker: BrokerId,
    pub version: i16,
}

/// API keys this simulator implements, with the versions its handlers support. What is
/// advertised is this intersected with kafka-protocol's `valid_versions()`.
pub const SUPPORTED: &[(ApiKey, i16, i16)] = &[
    (ApiKey::Produce, 3, 13),
    (ApiKey::Fetch, 4, 18),
    (ApiKey::ListOffsets, 1, 10),
    (ApiKey::Metadata, 0, 13),
    (ApiKey::OffsetCommit, 2, 9),
    (ApiKey::OffsetFetch, 1, 9),
    (ApiKey::FindCoordinator, 0, 6),
    (ApiKey::DescribeGroups, 0, 6),
    (ApiKey::ListGroups, 0, 5),
    (ApiKey::SaslHandshake, 0, 1),
    (ApiKey::ApiVersions, 0, 4),
    (ApiKey::CreateTopics, 2, 7),
    (ApiKey::DeleteTopics, 1, 6),
    (ApiKey::InitProducerId, 0, 5),
    (ApiKey::DescribeAcls, 1, 3),
    (ApiKey::CreateAcls, 1, 3),
    (ApiKey::DeleteAcls, 1, 3),
    (ApiKey::DescribeConfigs, 1, 4),
    (ApiKey::AlterConfigs, 0, 2),
    (ApiKey::AlterReplicaLogDirs, 1, 2),
    (ApiKey::DescribeLogDirs, 1, 4),
    (ApiKey::SaslAuthenticate, 0, 2),
    (ApiKey::CreatePartitions, 0, 3),
    (ApiKey::DeleteGroups, 0, 2),
    (ApiKey::ElectLeaders, 0, 2),
    (ApiKey::IncrementalAlterConfigs, 0, 1),
    (ApiKey::AlterPartitionReassignments, 0, 1),
    (ApiKey::ListPartitionReassignments, 0, 0),
    (ApiKey::DescribeClientQuotas, 0, 1),
    (ApiKey::AlterClientQuotas, 0, 1),
    (ApiKey::DescribeCluster, 0, 2),
    (ApiKey::DescribeQuorum, 0, 2),
    (ApiKey::ConsumerGroupDescribe, 0, 1),
    (ApiKey::ShareGroupDescribe, 1, 1),
    (ApiKey::DescribeShareGroupOffsets, 0, 0),
    (ApiKey::DescribeTopicPartitions, 0, 0),
];

/// The advertised (api key, min, max) triples.
pub fn advertised() -> Vec<(ApiKey, i16, i16)> {
    SUPPORTED
        .iter()
        .filter_map(|(api, min, max)| {
            let valid = api.valid_versions();
            let (lo, hi) = ((*min).max(valid.min), (*max).min(valid.max));
            (lo <= hi).then_some((*api, lo, hi))
        })
        .collect()
}

fn supported(api: ApiKey, version: i16) -> bool {
    advertised()
        .iter()
        .any(|(a, lo, hi)| *a == api && version >= *lo && version <= *hi)
}

/// Encodes a response header and body.
pub fn frame<R: Encodable>(
    api: ApiKey,
    version: i16,
    correlation_id: i32,
    resp: &R,
) -> Result<Reply, String> {
    let mut buf = BytesMut::new();
    let mut header = ResponseHeader::default();
    header.correlation_id = correlation_id;
    header
        .encode(&mut buf, api.response_header_version(version))
        .map_err(|e| format!("encode response header: {e}"))?;
    resp.encode(&mut buf, version)
        .map_err(|e| format!("encode {api:?} v{version} response: {e}"))?;
    Ok(Reply::Frame(buf))
}

/// Handles one request frame.
pub fn handle(
    shared: &Shared,
    broker: BrokerId,
    conn: &mut Conn,
    frame: Bytes,
    may_wait: bool,
) -> Reply {
    if conn.raw_sasl {
        return sasl::raw_token(shared, conn, frame);
    }
    if frame.len() < 8 {
        return Reply::Close;
    }
    let key = i16::from_be_bytes([frame[0], frame[1]]);
    let version = i16::from_be_bytes([frame[2], frame[3]]);
    let Ok(api) = ApiKey::try_from(key) else {
        tracing::debug!(broker, api_key = key, "unknown api key, closing connection");
        return Reply::Close;
    };
    if api == ApiKey::ApiVersions {
        return api_versions(frame, version);
    }
    let valid = api.valid_versions();
    if version < valid.min || version > valid.max {
        tracing::debug!(
            broker,
            ?api,
            version,
            "unsupported version, closing connection"
        );
        return Reply::Close;
    }
    let mut body = frame;
    let header = match RequestHeader::decode(&mut body, api.request_header_version(version)) {
        Ok(h) => h,
        Err(e) => {
            tracing::debug!(broker, error = %e, "malformed request header, closing connection");
            return Reply::Close;
        }
    };
    if let Some(id) = &header.client_id {
        if conn.client_id.as_str() != id.as_str() {
            conn.client_id = id.to_string();
        }
    }
    if !conn.authenticated && !matches!(api, ApiKey::SaslHandshake | ApiKey::SaslAuthenticate) {
        tracing::debug!(
            broker,
            ?api,
            "request before sasl authentication, closing connection"
        );
        return Reply::Close;
    }
    let ctx = Ctx {
        shared,
        broker,
        version,
    };
    match dispatch(&ctx, conn, api, header.correlation_id, &mut body, may_wait) {
        Ok(reply) => reply,
        Err(e) => {
            tracing::debug!(broker, ?api, version, error = %e, "bad request, closing connection");
            Reply::Close
        }
    }
}

fn decode<T: Decodable>(body: &mut Bytes, version: i16) -> Result<T, String> {
    T::decode(body, version).map_err(|e| format!("decode: {e}"))
}

fn dispatch(
    ctx: &Ctx,
    conn: &mut Conn,
    api: ApiKey,
    cid: i32,
    body: &mut Bytes,
    may_wait: bool,
) -> Result<Reply, String> {
    let v = ctx.version;
    if !supported(api, v) {
        return fallback::respond(api, v, cid);
    }
    macro_rules! call {
        ($f:path) => {{
            let req = decode(body, v)?;
            let resp = $f(ctx, req);
            frame(api, v, cid, &resp)
        }};
    }
    match api {
        ApiKey::Metadata => call!(metadata::metadata),
        ApiKey::DescribeCluster => call!(metadata::describe_cluster),
        ApiKey::DescribeQuorum => call!(metadata::describe_quorum),
        ApiKey::DescribeTopicPartitions => call!(metadata::describe_topic_partitions),
        ApiKey::FindCoordinator => call!(metadata::find_coordinator),
        ApiKey::InitProducerId => call!(metadata::init_producer_id),
        ApiKey::Produce => {
            let req = decode(body, v)?;
            match data::produce(ctx, req) {
                Some(resp) => frame(api, v, cid, &resp),
                None => Ok(Reply::Nothing),
            }
        }
        ApiKey::Fetch => {
            let req: kafka_protocol::messages::FetchRequest = decode(body, v)?;
            let wait = req.max_wait_ms;
            let (resp, bytes) = data::fetch(ctx, req);
            if bytes == 0 && may_wait && wait > 0 {
                let wait = Duration::from_millis(wait.clamp(0, 500) as u64);
                return Ok(Reply::Wait(wait));
            }
            frame(api, v, cid, &resp)
        }
        ApiKey::ListOffsets => call!(data::list_offsets),
        ApiKey::CreateTopics => call!(admin::create_topics),
        ApiKey::DeleteTopics => call!(admin::delete_topics),
        ApiKey::CreatePartitions => call!(admin::create_partitions),
        ApiKey::DescribeConfigs => call!(admin::describe_configs),
        ApiKey::IncrementalAlterConfigs => call!(admin::incremental_alter_configs),
        ApiKey::AlterConfigs => call!(admin::alter_configs),
        ApiKey::DescribeLogDirs => call!(admin::describe_log_dirs),
        ApiKey::AlterReplicaLogDirs => call!(admin::alter_replica_log_dirs),
        ApiKey::AlterPartitionReassignments => call!(admin::alter_partition_reassignments),
        ApiKey::ListPartitionReassignments => call!(admin::list_partition_reassignments),
        ApiKey::ElectLeaders => call!(admin::elect_leaders),
        ApiKey::DescribeAcls => call!(security::describe_acls),
        ApiKey::CreateAcls => call!(security::create_acls),
        ApiKey::DeleteAcls => call!(security::delete_acls),
        ApiKey::DescribeClientQuotas => call!(security::describe_client_quotas),
        ApiKey::AlterClientQuotas => call!(security::alter_client_quotas),
        ApiKey::ListGroups => call!(groups::list_groups),
        ApiKey::DescribeGroups => call!(groups::describe_groups),
        ApiKey::OffsetFetch => call!(groups::offset_fetch),
        ApiKey::OffsetCommit => call!(groups::offset_commit),
        ApiKey::DeleteGroups => call!(groups::delete_groups),
        ApiKey::ConsumerGroupDescribe => call!(groups::consumer_group_describe),
        ApiKey::ShareGroupDescribe => call!(groups::share_group_describe),
        ApiKey::DescribeShareGroupOffsets => call!(groups::describe_share_group_offsets),
        ApiKey::SaslHandshake => {
            let req = decode(body, v)?;
            let resp = sasl::handshake(ctx, conn, req);
            frame(api, v, cid, &resp)
        }
        ApiKey::SaslAuthenticate => {
            let req = decode(body, v)?;
            let resp = sasl::authenticate(ctx, conn, req);
            frame(api, v, cid, &resp)
        }
        _ => fallback::respond(api, v, cid),
    }
}

/// ApiVersions, including KIP-511: a version newer than supported gets a v0 response with
/// UNSUPPORTED_VERSION and the supported ranges.
fn api_versions(raw: Bytes, version: i16) -> Reply {
    let valid = ApiKey::ApiVersions.valid_versions();
    let mut body = raw;
    let header_version = if version >= 3 { 2 } else { 1 };
    let Ok(header) = RequestHeader::decode(&mut body, header_version) else {
        return Reply::Close;
    };
    let mut resp = ApiVersionsResponse::default();
    resp.api_keys = advertised()
        .into_iter()
        .map(|(api, lo, hi)| {
            let mut k = kafka_protocol::messages::api_versions_response::ApiVersion::default();
            k.api_key = api as i16;
            k.min_version = lo;
            k.max_version = hi;
            k
        })
        .collect();
    if version < valid.min || version > valid.max {
        resp.error_code = err::UNSUPPORTED_VERSION;
        return frame(ApiKey::ApiVersions, 0, header.correlation_id, &resp).unwrap_or(Reply::Close);
    }
    if ApiVersionsRequest::decode(&mut body, version).is_err() {
        // Kafka answers INVALID_REQUEST for a malformed ApiVersions body.
        resp.error_code = err::INVALID_REQUEST;
        resp.api_keys.clear();
    }
    if version >= 3 {
        resp.finalized_features_epoch = -1;
    }
    frame(ApiKey::ApiVersions, version, header.correlation_id, &resp).unwrap_or(Reply::Close)
}

/// Legal Kafka topic name: 1-249 of [a-zA-Z0-9._-], not "." or "..".
pub fn valid_topic_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 249
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-')
}

pub fn sb(s: impl Into<String>) -> StrBytes {
    StrBytes::from_string(s.into())
}

pub fn uuid(id: u128) -> uuid::Uuid {
    uuid::Uuid::from_u128(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::*;

    fn roundtrip<Req: Encodable + Decodable + Default, Resp: Encodable + Default>(v: i16) {
        let mut buf = BytesMut::new();
        Req::default().encode(&mut buf, v).expect("encode request");
        let mut bytes = buf.freeze();
        Req::decode(&mut bytes, v).expect("decode request");
        let mut out = BytesMut::new();
        Resp::default()
            .encode(&mut out, v)
            .expect("encode default response");
    }

    #[test]
    fn every_advertised_version_has_request_and_response_codecs() {
        for (api, lo, hi) in advertised() {
            for v in lo..=hi {
                match api {
                    ApiKey::Produce => roundtrip::<ProduceRequest, ProduceResponse>(v),
                    ApiKey::Fetch => roundtrip::<FetchRequest, FetchResponse>(v),
                    ApiKey::ListOffsets => roundtrip::<ListOffsetsRequest, ListOffsetsResponse>(v),
                    ApiKey::Metadata => roundtrip::<MetadataRequest, MetadataResponse>(v),
                    ApiKey::OffsetCommit => {
                        roundtrip::<OffsetCommitRequest, OffsetCommitResponse>(v)
                    }
                    ApiKey::OffsetFetch => roundtrip::<OffsetFetchRequest, OffsetFetchResponse>(v),
                    ApiKey::ConsumerGroupDescribe => {
                        roundtrip::<ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse>(v)
                    }
                    ApiKey::ShareGroupDescribe => {
                        roundtrip::<ShareGroupDescribeRequest, ShareGroupDescribeResponse>(v)
                    }
                    ApiKey::DescribeTopicPartitions => roundtrip::<
                        DescribeTopicPartitionsRequest,
                        DescribeTopicPartitionsResponse,
                    >(v),
                    ApiKey::DescribeShareGroupOffsets => roundtrip::<
                        DescribeShareGroupOffsetsRequest,
                        DescribeShareGroupOffsetsResponse,
                    >(v),
                    _ => {}
                }
            }
        }
    }

    #[test]
    fn topic_names_follow_kafka_rules() {
        assert!(valid_topic_name("orders.v1_x-2"));
        assert!(!valid_topic_name(""));
        assert!(!valid_topic_name(".."));
        assert!(!valid_topic_name("a b"));
        assert!(!valid_topic_name(&"x".repeat(250)));
    }
}
