//! The bytes on the wire: 4-byte length framing, request and response headers, and the choice of
//! a version per API. Pure functions, no IO.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, ApiVersionsResponse, RequestHeader, ResponseHeader,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, Request, StrBytes};

use crate::codes;

/// The largest answer the client accepts (a Fetch answer is bounded by its `max_bytes`).
pub(crate) const MAX_FRAME: usize = 512 * 1024 * 1024;

/// The ApiVersions version tried first (KIP-511); a broker that does not know it answers
/// UNSUPPORTED_VERSION in the v0 layout and the client asks again with what the broker offers.
pub(crate) const API_VERSIONS_FIRST: i16 = 3;

/// Our range for an API: kafka-protocol's valid range, capped where the client deliberately
/// stops (Fetch and Produce v13+ address topics by id only; ApiVersions per KIP-511 above).
pub(crate) fn client_versions<R: Request>() -> (i16, i16) {
    let cap = match ApiKey::try_from(R::KEY) {
        Ok(ApiKey::Fetch) | Ok(ApiKey::Produce) => 12,
        Ok(ApiKey::ApiVersions) => API_VERSIONS_FIRST,
        _ => i16::MAX,
    };
    (R::VERSIONS.min, R::VERSIONS.max.min(cap))
}

/// The API's name for errors and logs.
pub(crate) fn api_name(key: i16) -> &'static str {
    match ApiKey::try_from(key) {
        Ok(ApiKey::Produce) => "Produce",
        Ok(ApiKey::Fetch) => "Fetch",
        Ok(ApiKey::ListOffsets) => "ListOffsets",
        Ok(ApiKey::Metadata) => "Metadata",
        Ok(ApiKey::OffsetCommit) => "OffsetCommit",
        Ok(ApiKey::OffsetFetch) => "OffsetFetch",
        Ok(ApiKey::FindCoordinator) => "FindCoordinator",
        Ok(ApiKey::DescribeGroups) => "DescribeGroups",
        Ok(ApiKey::ListGroups) => "ListGroups",
        Ok(ApiKey::SaslHandshake) => "SaslHandshake",
        Ok(ApiKey::ApiVersions) => "ApiVersions",
        Ok(ApiKey::CreateTopics) => "CreateTopics",
        Ok(ApiKey::DeleteTopics) => "DeleteTopics",
        Ok(ApiKey::DeleteGroups) => "DeleteGroups",
        Ok(ApiKey::DescribeAcls) => "DescribeAcls",
        Ok(ApiKey::CreateAcls) => "CreateAcls",
        Ok(ApiKey::DeleteAcls) => "DeleteAcls",
        Ok(ApiKey::DescribeConfigs) => "DescribeConfigs",
        Ok(ApiKey::AlterReplicaLogDirs) => "AlterReplicaLogDirs",
        Ok(ApiKey::DescribeLogDirs) => "DescribeLogDirs",
        Ok(ApiKey::SaslAuthenticate) => "SaslAuthenticate",
        Ok(ApiKey::CreatePartitions) => "CreatePartitions",
        Ok(ApiKey::ElectLeaders) => "ElectLeaders",
        Ok(ApiKey::IncrementalAlterConfigs) => "IncrementalAlterConfigs",
        Ok(ApiKey::AlterPartitionReassignments) => "AlterPartitionReassignments",
        Ok(ApiKey::ListPartitionReassignments) => "ListPartitionReassignments",
        Ok(ApiKey::DescribeClientQuotas) => "DescribeClientQuotas",
        Ok(ApiKey::AlterClientQuotas) => "AlterClientQuotas",
        Ok(ApiKey::DescribeCluster) => "DescribeCluster",
        Ok(ApiKey::DescribeTopicPartitions) => "DescribeTopicPartitions",
        Ok(ApiKey::DescribeQuorum) => "DescribeQuorum",
        Ok(ApiKey::ConsumerGroupDescribe) => "ConsumerGroupDescribe",
        Ok(ApiKey::ShareGroupDescribe) => "ShareGroupDescribe",
        Ok(ApiKey::DescribeShareGroupOffsets) => "DescribeShareGroupOffsets",
        Ok(ApiKey::AlterShareGroupOffsets) => "AlterShareGroupOffsets",
        _ => "Unknown",
    }
}

/// The version ranges a broker offers, by API key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ApiVersionMap {
    ranges: HashMap<i16, (i16, i16)>,
}

impl ApiVersionMap {
    pub(crate) fn from_response(response: &ApiVersionsResponse) -> ApiVersionMap {
        ApiVersionMap {
            ranges: response
                .api_keys
                .iter()
                .map(|k| (k.api_key, (k.min_version, k.max_version)))
                .collect(),
        }
    }

    #[cfg(test)]
    pub(crate) fn from_ranges(ranges: &[(i16, i16, i16)]) -> ApiVersionMap {
        ApiVersionMap {
            ranges: ranges.iter().map(|&(k, a, b)| (k, (a, b))).collect(),
        }
    }

    /// Every API offered: (key, min, max), by key.
    pub(crate) fn triples(&self) -> Vec<(i16, i16, i16)> {
        let mut all: Vec<(i16, i16, i16)> =
            self.ranges.iter().map(|(k, (a, b))| (*k, *a, *b)).collect();
        all.sort_unstable();
        all
    }

    pub(crate) fn range(&self, key: i16) -> Option<(i16, i16)> {
        self.ranges.get(&key).copied()
    }

    /// The highest version both sides speak: `min(broker max, our max)`, provided it is not
    /// below either minimum. `Err` carries the broker's range (None when it lacks the API).
    pub(crate) fn pick(&self, key: i16, ours: (i16, i16)) -> Result<i16, Option<(i16, i16)>> {
        let Some((broker_min, broker_max)) = self.range(key) else {
            return Err(None);
        };
        let version = broker_max.min(ours.1);
        if version < broker_min.max(ours.0) {
            return Err(Some((broker_min, broker_max)));
        }
        Ok(version)
    }
}

/// A request frame: length, header, body.
pub(crate) fn encode_request<R: Request>(
    request: &R,
    version: i16,
    correlation_id: i32,
    client_id: &str,
) -> Result<Bytes, String> {
    let mut header = RequestHeader::default();
    header.request_api_key = R::KEY;
    header.request_api_version = version;
    header.correlation_id = correlation_id;
    header.client_id = Some(StrBytes::from_string(client_id.to_string()));
    let mut buf = BytesMut::with_capacity(64);
    buf.put_i32(0);
    header
        .encode(&mut buf, R::header_version(version))
        .map_err(|e| format!("cannot encode request header: {e}"))?;
    request.encode(&mut buf, version).map_err(|e| {
        format!(
            "cannot encode {} v{version}: {e}",
            api_name(R::KEY).to_lowercase()
        )
    })?;
    let len = i32::try_from(buf.len() - 4).map_err(|_| "request too large".to_string())?;
    buf[0..4].copy_from_slice(&len.to_be_bytes());
    Ok(buf.freeze())
}

/// The size announced by a frame's 4-byte prefix, checked.
pub(crate) fn frame_len(prefix: [u8; 4]) -> Result<usize, String> {
    let len = i32::from_be_bytes(prefix);
    match usize::try_from(len) {
        Ok(len) if len <= MAX_FRAME => Ok(len),
        _ => Err(format!(
            "answer announces {len} bytes (at most {MAX_FRAME} accepted; is this a TLS or SASL listener?)"
        )),
    }
}

/// Runs a decoder and turns a panic of the decoding library into an error: a malformed answer
/// must never take the process down.
pub(crate) fn guarded<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(e),
        Err(_) => Err("the answer could not be decoded".to_string()),
    }
}

/// The correlation id at the start of an answer body (every response header begins with it).
pub(crate) fn peek_correlation_id(frame: &Bytes) -> Result<i32, String> {
    if frame.len() < 4 {
        return Err("answer shorter than its header".to_string());
    }
    Ok(i32::from_be_bytes([frame[0], frame[1], frame[2], frame[3]]))
}

/// Decodes an answer frame (without its length prefix) of `R` at `version`.
pub(crate) fn decode_response<R: Request>(
    mut frame: Bytes,
    version: i16,
) -> Result<(i32, R::Response), String> {
    guarded(|| {
        let header = ResponseHeader::decode(&mut frame, R::Response::header_version(version))
            .map_err(|e| format!("bad response header: {e}"))?;
        let response = R::Response::decode(&mut frame, version).map_err(|e| {
            format!(
                "cannot decode {} v{version} answer: {e}",
                api_name(R::KEY).to_lowercase()
            )
        })?;
        Ok((header.correlation_id, response))
    })
}

/// What an ApiVersions answer means for negotiation.
#[derive(Debug)]
pub(crate) enum ApiVersionsOutcome {
    Ok(ApiVersionMap),
    /// The broker does not speak the version asked; ask again with this one (KIP-511).
    Retry(i16),
    Failed(i16),
}

/// Decodes an ApiVersions answer. On UNSUPPORTED_VERSION the broker answers in the v0 layout,
/// listing at least its own ApiVersions range; when even that does not decode, retry with v0.
pub(crate) fn decode_api_versions(
    frame: Bytes,
    version: i16,
) -> Result<(i32, ApiVersionsOutcome), String> {
    let correlation_id = peek_correlation_id(&frame)?;
    let mut body = frame.slice(4..);
    if body.len() < 2 {
        return Err("apiversions answer too short".to_string());
    }
    let error_code = body.clone().get_i16();
    if error_code == codes::UNSUPPORTED_VERSION {
        // a v0 body is the error code, an i32 count and 6 bytes per entry: check the count
        // first, so a body in another layout cannot ask the decoder for a huge allocation
        let plausible = body.len() >= 6 && {
            let count = i32::from_be_bytes([body[2], body[3], body[4], body[5]]);
            usize::try_from(count).is_ok_and(|c| c.saturating_mul(6) <= body.len() - 6)
        };
        let retry = plausible
            .then(|| {
                guarded(|| ApiVersionsResponse::decode(&mut body, 0).map_err(|e| e.to_string()))
                    .ok()
            })
            .flatten()
            .and_then(|r| ApiVersionMap::from_response(&r).range(ApiVersionsRequest::KEY))
            .map_or(0, |(_, max)| max.min(API_VERSIONS_FIRST))
            .min(version - 1)
            .max(0);
        return Ok((correlation_id, ApiVersionsOutcome::Retry(retry)));
    }
    let (_, response) = decode_response::<ApiVersionsRequest>(frame, version)?;
    if response.error_code != 0 {
        return Ok((
            correlation_id,
            ApiVersionsOutcome::Failed(response.error_code),
        ));
    }
    Ok((
        correlation_id,
        ApiVersionsOutcome::Ok(ApiVersionMap::from_response(&response)),
    ))
}

/// The ApiVersions request at `version` (v3+ names the client software).
pub(crate) fn api_versions_request(version: i16) -> ApiVersionsRequest {
    let mut request = ApiVersionsRequest::default();
    if version >= 3 {
        request.client_software_name = StrBytes::from_static_str("ballast");
        request.client_software_version = StrBytes::from_static_str(env!("CARGO_PKG_VERSION"));
    }
    request
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::api_versions_response::ApiVersion;
    use kafka_protocol::messages::{ApiVersionsResponse, MetadataRequest, MetadataResponse};

    fn response_frame<R: Encodable + HeaderVersion>(
        correlation_id: i32,
        response: &R,
        version: i16,
    ) -> Bytes {
        let mut buf = BytesMut::new();
        let mut header = ResponseHeader::default();
        header.correlation_id = correlation_id;
        header.encode(&mut buf, R::header_version(version)).unwrap();
        response.encode(&mut buf, version).unwrap();
        buf.freeze()
    }

    #[test]
    fn request_frames_carry_their_length_header_and_body() {
        let frame = encode_request(&MetadataRequest::default(), 1, 42, "ballast").unwrap();
        let len = i32::from_be_bytes([frame[0], frame[1], frame[2], frame[3]]) as usize;
        assert_eq!(len, frame.len() - 4);
        let mut body = frame.slice(4..);
        let header =
            kafka_protocol::protocol::decode_request_header_from_buffer(&mut body).unwrap();
        assert_eq!(header.request_api_key, 3);
        assert_eq!(header.request_api_version, 1);
        assert_eq!(header.correlation_id, 42);
        assert_eq!(header.client_id.as_deref(), Some("ballast"));
        let decoded = MetadataRequest::decode(&mut body, 1).unwrap();
        assert_eq!(decoded, MetadataRequest::default());
    }

    #[test]
    fn response_frames_decode_with_their_correlation_id() {
        let mut response = MetadataResponse::default();
        response.cluster_id = Some(StrBytes::from_static_str("c1"));
        for version in [2, 9, 12] {
            let frame = response_frame(7, &response, version);
            let (cid, decoded) = decode_response::<MetadataRequest>(frame, version).unwrap();
            assert_eq!(cid, 7);
            assert_eq!(decoded.cluster_id.as_deref(), Some("c1"));
        }
    }

    #[test]
    fn a_truncated_answer_is_an_error_not_a_panic() {
        let response = MetadataResponse::default();
        let frame = response_frame(7, &response, 9);
        for cut in 0..frame.len() {
            assert!(decode_response::<MetadataRequest>(frame.slice(..cut), 9).is_err());
        }
        let garbage = Bytes::from_static(&[0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 1, 2]);
        assert!(decode_response::<MetadataRequest>(garbage, 9).is_err());
    }

    #[test]
    fn frame_length_rejects_negative_and_huge_sizes() {
        assert_eq!(frame_len(10i32.to_be_bytes()), Ok(10));
        assert!(frame_len((-1i32).to_be_bytes()).is_err());
        assert!(frame_len(i32::MAX.to_be_bytes()).is_err());
        // "HTTP" from a wrong port, or a TLS alert, reads as an absurd length
        assert!(frame_len(*b"HTTP").is_err());
    }

    #[test]
    fn version_negotiation_picks_the_highest_common_version() {
        let map = ApiVersionMap::from_ranges(&[(3, 0, 12), (1, 4, 16), (60, 0, 0)]);
        assert_eq!(map.pick(3, (0, 13)), Ok(12), "broker max below ours");
        assert_eq!(map.pick(3, (0, 9)), Ok(9), "our max below the broker's");
        assert_eq!(map.pick(1, (4, 12)), Ok(12));
        assert_eq!(map.pick(60, (0, 1)), Ok(0));
        assert_eq!(map.pick(32, (0, 4)), Err(None), "api not offered");
        let old = ApiVersionMap::from_ranges(&[(2, 0, 0)]);
        assert_eq!(old.pick(2, (1, 10)), Err(Some((0, 0))), "no common version");
        let new = ApiVersionMap::from_ranges(&[(2, 11, 14)]);
        assert_eq!(new.pick(2, (1, 10)), Err(Some((11, 14))));
    }

    #[test]
    fn fetch_and_produce_stop_before_topic_ids() {
        use kafka_protocol::messages::{FetchRequest, ProduceRequest};
        assert_eq!(client_versions::<FetchRequest>(), (4, 12));
        assert_eq!(client_versions::<ProduceRequest>(), (3, 12));
        assert_eq!(client_versions::<MetadataRequest>().1, 13);
    }

    fn unsupported_frame(correlation_id: i32, api_versions_max: Option<i16>) -> Bytes {
        let mut response = ApiVersionsResponse::default();
        response.error_code = codes::UNSUPPORTED_VERSION;
        if let Some(max) = api_versions_max {
            let mut k = ApiVersion::default();
            k.api_key = 18;
            k.min_version = 0;
            k.max_version = max;
            response.api_keys.push(k);
        }
        response_frame(correlation_id, &response, 0)
    }

    #[test]
    fn api_versions_falls_back_to_what_the_broker_offers() {
        let (cid, outcome) = decode_api_versions(unsupported_frame(5, Some(2)), 3).unwrap();
        assert_eq!(cid, 5);
        assert!(
            matches!(outcome, ApiVersionsOutcome::Retry(2)),
            "{outcome:?}"
        );
        let (_, outcome) = decode_api_versions(unsupported_frame(5, None), 3).unwrap();
        assert!(
            matches!(outcome, ApiVersionsOutcome::Retry(0)),
            "{outcome:?}"
        );
        // a broker that claims a higher version than the one it refused: do not loop, go lower
        let (_, outcome) = decode_api_versions(unsupported_frame(5, Some(9)), 2).unwrap();
        assert!(
            matches!(outcome, ApiVersionsOutcome::Retry(1)),
            "{outcome:?}"
        );
        // librdkafka's mock answers v3 with a body that does not decode as v0: retry with v0
        let mut body = BytesMut::new();
        body.put_i32(5);
        body.put_i16(35);
        body.put_u8(1);
        body.put_i16(18);
        let (_, outcome) = decode_api_versions(body.freeze(), 3).unwrap();
        assert!(
            matches!(outcome, ApiVersionsOutcome::Retry(0)),
            "{outcome:?}"
        );
    }

    #[test]
    fn api_versions_answer_gives_the_broker_ranges() {
        let mut response = ApiVersionsResponse::default();
        for (key, min, max) in [(3, 0, 12), (18, 0, 3)] {
            let mut k = ApiVersion::default();
            k.api_key = key;
            k.min_version = min;
            k.max_version = max;
            response.api_keys.push(k);
        }
        for version in [0, 3] {
            let (_, outcome) =
                decode_api_versions(response_frame(1, &response, version), version).unwrap();
            let ApiVersionsOutcome::Ok(map) = outcome else {
                panic!("{outcome:?}")
            };
            assert_eq!(map.range(3), Some((0, 12)));
            assert_eq!(map.range(18), Some((0, 3)));
        }
    }
}
