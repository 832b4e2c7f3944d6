//! The wire protocol: version negotiation, every advertised version answered, records in and
//! out, errors for what is not simulated, and robustness against garbage.

mod common;

use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use common::*;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::Decodable;
use kafka_protocol::records::{
    Compression, Record, RecordBatchDecoder, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};

fn scenario() -> ballast_model::snapshot::Snapshot {
    let mut busy = partition("busy", 0, &[1, 2], 10_000_000);
    busy.producer_msg_rate = 1000.0;
    busy.producer_byte_rate = 200_000.0;
    snapshot(
        brokers(3),
        vec![
            partition("quiet", 0, &[1, 2], 0),
            partition("quiet", 1, &[2, 3], 0),
            busy,
        ],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_versions_advertises_what_is_implemented_and_answers_newer_versions_with_v0() {
    let sim = start(scenario(), 1.0).await;
    let admin = Admin::new(&sim);
    let mut c = admin.any().await;
    let versions = c.versions().await;
    assert_eq!(versions.get(&(ApiKey::Metadata as i16)), Some(&(0, 13)));
    assert_eq!(versions.get(&(ApiKey::Produce as i16)), Some(&(3, 13)));
    assert_eq!(
        versions.get(&(ApiKey::ListPartitionReassignments as i16)),
        Some(&(0, 0))
    );
    assert!(
        !versions.contains_key(&(ApiKey::JoinGroup as i16)),
        "group membership is not simulated"
    );
    for (key, (lo, hi)) in &versions {
        let api = ApiKey::try_from(*key).expect("known key");
        let valid = api.valid_versions();
        assert!(
            *lo >= valid.min && *hi <= valid.max,
            "{api:?} {lo}..{hi} within kafka-protocol's {valid}"
        );
    }
    // KIP-511: ApiVersions v9 is unknown: a v0 response with UNSUPPORTED_VERSION and the ranges.
    let mut header = RequestHeader::default();
    header.request_api_key = ApiKey::ApiVersions as i16;
    header.request_api_version = 9;
    header.correlation_id = 77;
    header.client_id = Some(sb("future-client"));
    let mut buf = BytesMut::new();
    kafka_protocol::protocol::Encodable::encode(&header, &mut buf, 2).expect("header");
    buf.put_u8(0); // empty tagged fields of an unknown body
    c.write_frame(&buf).await.expect("send");
    let mut frame = c.read_frame().await.expect("response");
    let rh = ResponseHeader::decode(&mut frame, 0).expect("v0 header");
    assert_eq!(rh.correlation_id, 77);
    let resp = ApiVersionsResponse::decode(&mut frame, 0).expect("v0 body");
    assert_eq!(resp.error_code, 35);
    assert!(resp
        .api_keys
        .iter()
        .any(|k| k.api_key == ApiKey::ApiVersions as i16 && k.max_version == 4));
    sim.shutdown().await;
}

/// A minimal request of each implemented API; the test sends it at every advertised version.
async fn probe(c: &mut Client, api: ApiKey, v: i16) -> std::io::Result<()> {
    macro_rules! send {
        ($req:expr) => {{
            c.send(&$req, v).await.map(|_| ())
        }};
    }
    match api {
        ApiKey::Produce => {
            let mut r = ProduceRequest::default();
            r.acks = 1;
            r.timeout_ms = 1000;
            send!(r)
        }
        ApiKey::Fetch => {
            let mut r = FetchRequest::default();
            r.max_wait_ms = 0;
            r.replica_id = BrokerId(-1);
            send!(r)
        }
        ApiKey::ListOffsets => send!(ListOffsetsRequest::default()),
        ApiKey::Metadata => {
            let mut r = MetadataRequest::default();
            r.topics = if v == 0 { Some(vec![]) } else { None };
            send!(r)
        }
        ApiKey::OffsetCommit => {
            let mut r = OffsetCommitRequest::default();
            r.group_id = sb("probe").into();
            r.generation_id_or_member_epoch = -1;
            send!(r)
        }
        ApiKey::OffsetFetch => {
            let mut r = OffsetFetchRequest::default();
            if v < 8 {
                r.group_id = sb("probe").into();
            }
            let mut g = offset_fetch_request::OffsetFetchRequestGroup::default();
            g.group_id = sb("probe").into();
            if v >= 8 {
                r.groups = vec![g];
            }
            send!(r)
        }
        ApiKey::FindCoordinator => {
            let mut r = FindCoordinatorRequest::default();
            if v < 4 {
                r.key = sb("probe");
            }
            r.coordinator_keys = if v >= 4 { vec![sb("probe")] } else { vec![] };
            send!(r)
        }
        ApiKey::DescribeGroups => {
            let mut r = DescribeGroupsRequest::default();
            r.groups = vec![sb("probe").into()];
            send!(r)
        }
        ApiKey::ListGroups => send!(ListGroupsRequest::default()),
        ApiKey::SaslHandshake => {
            let mut r = SaslHandshakeRequest::default();
            r.mechanism = sb("PLAIN");
            send!(r)
        }
        ApiKey::ApiVersions => send!(ApiVersionsRequest::default()),
        ApiKey::CreateTopics => {
            let mut r = CreateTopicsRequest::default();
            r.validate_only = true;
            send!(r)
        }
        ApiKey::DeleteTopics => send!(DeleteTopicsRequest::default()),
        ApiKey::InitProducerId => {
            let mut r = InitProducerIdRequest::default();
            r.transactional_id = None;
            r.producer_id = (-1).into();
            r.producer_epoch = -1;
            send!(r)
        }
        ApiKey::DescribeAcls => {
            let mut r = DescribeAclsRequest::default();
            r.resource_type_filter = 1;
            r.pattern_type_filter = 1;
            r.operation = 1;
            r.permission_type = 1;
            send!(r)
        }
        ApiKey::CreateAcls => send!(CreateAclsRequest::default()),
        ApiKey::DeleteAcls => send!(DeleteAclsRequest::default()),
        ApiKey::DescribeConfigs => {
            let mut r = DescribeConfigsRequest::default();
            let mut res = describe_configs_request::DescribeConfigsResource::default();
            res.resource_type = 2;
            res.resource_name = sb("quiet");
            res.configuration_keys = None;
            r.resources = vec![res];
            r.include_synonyms = true;
            r.include_documentation = v >= 3;
            send!(r)
        }
        ApiKey::AlterConfigs => send!(AlterConfigsRequest::default()),
        ApiKey::AlterReplicaLogDirs => send!(AlterReplicaLogDirsRequest::default()),
        ApiKey::DescribeLogDirs => {
            let mut r = DescribeLogDirsRequest::default();
            r.topics = None;
            send!(r)
        }
        ApiKey::SaslAuthenticate => Ok(()),
        ApiKey::CreatePartitions => send!(CreatePartitionsRequest::default()),
        ApiKey::DeleteGroups => send!(DeleteGroupsRequest::default()),
        ApiKey::ElectLeaders => {
            let mut r = ElectLeadersRequest::default();
            r.topic_partitions = None;
            send!(r)
        }
        ApiKey::IncrementalAlterConfigs => send!(IncrementalAlterConfigsRequest::default()),
        ApiKey::AlterPartitionReassignments => send!(AlterPartitionReassignmentsRequest::default()),
        ApiKey::ListPartitionReassignments => {
            let mut r = ListPartitionReassignmentsRequest::default();
            r.topics = None;
            send!(r)
        }
        ApiKey::DescribeClientQuotas => send!(DescribeClientQuotasRequest::default()),
        ApiKey::AlterClientQuotas => send!(AlterClientQuotasRequest::default()),
        ApiKey::DescribeCluster => {
            let mut r = DescribeClusterRequest::default();
            r.endpoint_type = 1;
            send!(r)
        }
        ApiKey::DescribeQuorum => {
            let mut p = describe_quorum_request::PartitionData::default();
            p.partition_index = 0;
            let mut t = describe_quorum_request::TopicData::default();
            t.topic_name = TopicName(sb("__cluster_metadata"));
            t.partitions = vec![p];
            let mut r = DescribeQuorumRequest::default();
            r.topics = vec![t];
            send!(r)
        }
        ApiKey::ConsumerGroupDescribe => {
            let mut r = ConsumerGroupDescribeRequest::default();
            r.group_ids = vec![GroupId(sb("quiet-group"))];
            send!(r)
        }
        ApiKey::ShareGroupDescribe => {
            let mut r = ShareGroupDescribeRequest::default();
            r.group_ids = vec![GroupId(sb("quiet-group"))];
            send!(r)
        }
        ApiKey::DescribeShareGroupOffsets => send!(DescribeShareGroupOffsetsRequest::default()),
        ApiKey::DescribeTopicPartitions => send!(DescribeTopicPartitionsRequest::default()),
        other => panic!("no probe for {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_advertised_version_of_every_api_is_answered() {
    let sim = start(scenario(), 1.0).await;
    let admin = Admin::new(&sim);
    let versions = admin.any().await.versions().await;
    let mut answered = 0;
    for (key, (lo, hi)) in versions {
        let api = ApiKey::try_from(key).expect("known");
        let mut c = admin.to(1).await;
        for v in lo..=hi {
            probe(&mut c, api, v)
                .await
                .unwrap_or_else(|e| panic!("{api:?} v{v} was not answered: {e}"));
            answered += 1;
        }
    }
    assert!(answered > 150, "answered {answered} api versions");
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_that_is_not_simulated_gets_an_error_response_and_the_connection_stays_open() {
    let sim = start(scenario(), 1.0).await;
    let mut c = Admin::new(&sim).any().await;
    let mut join = JoinGroupRequest::default();
    join.group_id = sb("g").into();
    join.protocol_type = sb("consumer");
    let resp = c
        .send(&join, 5)
        .await
        .expect("an answer, not a closed connection");
    assert_eq!(resp.error_code, 35, "UNSUPPORTED_VERSION");
    let mut req = MetadataRequest::default();
    req.topics = None;
    let md = c.send(&req, 9).await.expect("still serving");
    assert_eq!(md.brokers.len(), 3);
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_topics_are_reported_and_never_auto_created() {
    let sim = start(scenario(), 1.0).await;
    let mut c = Admin::new(&sim).any().await;
    let mut req = MetadataRequest::default();
    let mut t = metadata_request::MetadataRequestTopic::default();
    t.name = Some(sb("nope").into());
    req.topics = Some(vec![t]);
    req.allow_auto_topic_creation = true;
    let md = c.send(&req, 12).await.expect("metadata");
    assert_eq!(md.topics[0].error_code, 3, "UNKNOWN_TOPIC_OR_PARTITION");
    let mut req = MetadataRequest::default();
    req.topics = None;
    let md = c.send(&req, 12).await.expect("metadata");
    assert_eq!(md.topics.len(), 2);
    assert_eq!(
        md.cluster_id.as_ref().map(|c| c.to_string()).as_deref(),
        Some("simcluster-test")
    );
    assert!(md.topics.iter().all(|t| !t.topic_id.is_nil()));
    assert!(md.brokers.iter().all(|b| b.rack.is_some()));
    sim.shutdown().await;
}

fn batch(records: &[(&str, &str)], compression: Compression) -> Bytes {
    batch_at(records, compression, 1_000)
}

fn batch_at(records: &[(&str, &str)], compression: Compression, ts: i64) -> Bytes {
    let recs: Vec<Record> = records
        .iter()
        .enumerate()
        .map(|(i, (k, v))| Record {
            transactional: false,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: -1,
            producer_id: -1,
            producer_epoch: -1,
            timestamp_type: TimestampType::Creation,
            offset: i as i64,
            sequence: i as i32 - 1,
            timestamp: ts + i as i64,
            key: Some(Bytes::from(k.to_string())),
            value: Some(Bytes::from(v.to_string())),
            headers: Default::default(),
        })
        .collect();
    let mut buf = BytesMut::new();
    RecordBatchEncoder::encode(
        &mut buf,
        recs.iter(),
        &RecordEncodeOptions {
            version: 2,
            compression,
        },
    )
    .expect("encode batch");
    buf.freeze()
}

fn produce_req(topic: &str, p: i32, records: Bytes, acks: i16) -> ProduceRequest {
    let mut req = ProduceRequest::default();
    req.acks = acks;
    req.timeout_ms = 5000;
    let mut td = produce_request::TopicProduceData::default();
    td.name = sb(topic).into();
    let mut pd = produce_request::PartitionProduceData::default();
    pd.index = p;
    pd.records = Some(records);
    td.partition_data = vec![pd];
    req.topic_data = vec![td];
    req
}

fn fetch_req(topic: &str, p: i32, offset: i64, partition_max: i32) -> FetchRequest {
    let mut req = FetchRequest::default();
    req.replica_id = BrokerId(-1);
    req.max_wait_ms = 0;
    req.max_bytes = 50 << 20;
    let mut t = fetch_request::FetchTopic::default();
    t.topic = sb(topic).into();
    let mut fp = fetch_request::FetchPartition::default();
    fp.partition = p;
    fp.fetch_offset = offset;
    fp.partition_max_bytes = partition_max;
    t.partitions = vec![fp];
    req.topics = vec![t];
    req
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn produced_records_in_every_codec_are_fetched_back_at_their_offsets() {
    let sim = start(scenario(), 1.0).await;
    let admin = Admin::new(&sim);
    let mut leader = admin.to(1).await;
    let codecs = [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ];
    for (i, z) in codecs.iter().enumerate() {
        let resp = leader
            .send(
                &produce_req("quiet", 0, batch(&[("k", "v1"), ("k", "v2")], *z), -1),
                9,
            )
            .await
            .expect("produce");
        let pr = &resp.responses[0].partition_responses[0];
        assert_eq!((pr.error_code, pr.base_offset), (0, 2 * i as i64), "{z:?}");
    }
    // acks=0: no response, but the records land.
    let buf = leader.encode(
        &produce_req("quiet", 0, batch(&[("k", "quiet")], Compression::None), 0),
        9,
    );
    leader.write_frame(&buf).await.expect("send");
    let (start, end) = admin.offsets("quiet", 0).await;
    assert_eq!((start, end), (0, 11));
    let resp = leader
        .send(&fetch_req("quiet", 0, 3, 1 << 20), 11)
        .await
        .expect("fetch");
    let pd = &resp.responses[0].partitions[0];
    assert_eq!((pd.error_code, pd.high_watermark), (0, 11));
    let mut records = pd.records.clone().expect("records");
    let sets = RecordBatchDecoder::decode_all(&mut records).expect("decode");
    let offsets: Vec<i64> = sets
        .iter()
        .flat_map(|s| s.records.iter().map(|r| r.offset))
        .collect();
    assert_eq!(
        offsets,
        (2..11).collect::<Vec<_>>(),
        "whole batches from the one holding offset 3"
    );
    // The follower refuses produce and fetch.
    let mut follower = admin.to(2).await;
    let resp = follower
        .send(
            &produce_req("quiet", 0, batch(&[("k", "v")], Compression::None), 1),
            9,
        )
        .await
        .expect("produce");
    assert_eq!(resp.responses[0].partition_responses[0].error_code, 6);
    let resp = follower
        .send(&fetch_req("quiet", 0, 0, 1 << 20), 12)
        .await
        .expect("fetch");
    assert_eq!(resp.responses[0].partitions[0].error_code, 6);
    assert_eq!(
        resp.responses[0].partitions[0].current_leader.leader_id.0,
        1
    );
    // Out of range.
    let resp = leader
        .send(&fetch_req("quiet", 0, 99, 1 << 20), 11)
        .await
        .expect("fetch");
    assert_eq!(resp.responses[0].partitions[0].error_code, 1);
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetching_synthetic_offsets_honours_max_bytes_with_whole_batches() {
    let sim = start(scenario(), 1.0).await;
    let admin = Admin::new(&sim);
    let (start, end) = admin.offsets("busy", 0).await;
    assert!(end > 40_000, "10 MB of 200-byte messages: {end}");
    let mut leader = admin.to(1).await;
    let resp = leader
        .send(&fetch_req("busy", 0, start + 10, 10_000), 11)
        .await
        .expect("fetch");
    let pd = &resp.responses[0].partitions[0];
    assert_eq!(pd.error_code, 0);
    let mut records = pd.records.clone().expect("records");
    assert!(
        records.len() <= 10_000,
        "{} bytes for a 10000-byte limit",
        records.len()
    );
    let sets = RecordBatchDecoder::decode_all(&mut records).expect("whole batches");
    let recs: Vec<&Record> = sets.iter().flat_map(|s| s.records.iter()).collect();
    assert!(recs.len() > 10);
    assert_eq!(recs[0].offset, start + 10);
    assert!(recs
        .iter()
        .all(|r| r.value.as_ref().map(|v| v.len()) == Some(200)));
    assert!(recs.windows(2).all(|w| w[1].timestamp >= w[0].timestamp));
    // A limit smaller than one record still returns one (KIP-74).
    let resp = leader
        .send(&fetch_req("busy", 0, start, 10), 11)
        .await
        .expect("fetch");
    let mut records = resp.responses[0].partitions[0]
        .records
        .clone()
        .expect("records");
    let sets = RecordBatchDecoder::decode_all(&mut records).expect("decode");
    assert_eq!(sets.iter().map(|s| s.records.len()).sum::<usize>(), 1);
    // ListOffsets by timestamp: one second ago is about 1000 messages back.
    let mut req = ListOffsetsRequest::default();
    req.replica_id = BrokerId(-1);
    let mut t = list_offsets_request::ListOffsetsTopic::default();
    t.name = sb("busy").into();
    let mut lp = list_offsets_request::ListOffsetsPartition::default();
    lp.partition_index = 0;
    lp.timestamp = sim.now_ms() - 1000;
    t.partitions = vec![lp];
    req.topics = vec![t];
    let resp = leader.send(&req, 7).await.expect("list offsets");
    let pr = &resp.topics[0].partitions[0];
    let (_, end) = admin.offsets("busy", 0).await;
    assert!(
        (end - pr.offset - 1000).abs() < 300,
        "offset {} vs end {end}",
        pr.offset
    );
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_bytes_do_not_take_a_broker_down() {
    let sim = start(scenario(), 1.0).await;
    let admin = Admin::new(&sim);
    let addr = admin.addrs[&1].clone();
    let mut seed: u64 = 0x1234_5678;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let keys: Vec<i16> = (0..70).collect();
    for round in 0..300 {
        let Ok(mut c) = Client::connect(&addr).await else {
            panic!("broker stopped accepting connections at round {round}");
        };
        let len = (next() % 300) as usize;
        let mut body: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        match round % 3 {
            // A plausible header with a real api key and version, then garbage.
            0 if body.len() >= 8 => {
                let k = keys[(next() % keys.len() as u64) as usize];
                body[0..2].copy_from_slice(&k.to_be_bytes());
                body[2..4].copy_from_slice(&((next() % 14) as i16).to_be_bytes());
            }
            // A lying length prefix.
            1 => {
                let mut framed = ((next() % 1_000_000) as i32 - 10).to_be_bytes().to_vec();
                framed.extend_from_slice(&body);
                use tokio::io::AsyncWriteExt;
                let _ = tokio::time::timeout(Duration::from_millis(100), async {
                    let mut s = tokio::net::TcpStream::connect(&addr).await?;
                    s.write_all(&framed).await
                })
                .await;
                continue;
            }
            _ => {}
        }
        let _ = c.write_frame(&body).await;
        let _ = tokio::time::timeout(Duration::from_millis(50), c.read_frame()).await;
    }
    let mut c = Client::connect(&addr).await.expect("still accepting");
    let mut req = MetadataRequest::default();
    req.topics = None;
    let md = c.send(&req, 12).await.expect("still answering");
    assert_eq!(md.brokers.len(), 3);
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_frame_closes_only_that_connection() {
    let sim = start(scenario(), 1.0).await;
    let admin = Admin::new(&sim);
    let mut good = admin.to(1).await;
    let mut bad = admin.to(1).await;
    // Metadata v12 header, then a body that ends too early.
    let mut buf = bad.encode(&MetadataRequest::default(), 12);
    buf.truncate(buf.len() - 1);
    buf.put_u8(0xff);
    bad.write_frame(&buf[..buf.len() - 1]).await.expect("send");
    assert!(
        bad.read_frame().await.is_err(),
        "the malformed connection is closed"
    );
    let mut req = MetadataRequest::default();
    req.topics = None;
    assert!(
        good.send(&req, 12).await.is_ok(),
        "other connections keep working"
    );
    sim.shutdown().await;
}

fn list_offset_at(topic: &str, p: i32, ts: i64) -> ListOffsetsRequest {
    let mut req = ListOffsetsRequest::default();
    req.replica_id = BrokerId(-1);
    let mut t = list_offsets_request::ListOffsetsTopic::default();
    t.name = sb(topic).into();
    let mut lp = list_offsets_request::ListOffsetsPartition::default();
    lp.partition_index = p;
    lp.timestamp = ts;
    t.partitions = vec![lp];
    req.topics = vec![t];
    req
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_offsets_by_timestamp_uses_the_timestamps_of_produced_records() {
    let sim = start(scenario(), 1.0).await;
    let admin = Admin::new(&sim);
    let mut leader = admin.to(1).await;
    let t0 = sim.now_ms() - 30_000;
    for (i, z) in [Compression::None, Compression::Zstd, Compression::Gzip]
        .into_iter()
        .enumerate()
    {
        let records = batch_at(&[("k", "v")], z, t0 + 10_000 * i as i64);
        let resp = leader
            .send(&produce_req("quiet", 0, records, -1), 9)
            .await
            .expect("produce");
        assert_eq!(
            resp.responses[0].partition_responses[0].base_offset,
            i as i64
        );
    }
    let mut lookups = Vec::new();
    for ts in [t0 + 10_000, t0 + 5_000, t0 - 60_000, t0 + 20_001, -3] {
        let req = list_offset_at("quiet", 0, ts);
        let resp = leader.send(&req, 7).await.expect("list offsets");
        let pr = &resp.topics[0].partitions[0];
        assert_eq!(pr.error_code, 0);
        lookups.push((
            pr.offset,
            if pr.timestamp < 0 {
                -1
            } else {
                pr.timestamp - t0
            },
        ));
    }
    assert_eq!(
        lookups,
        vec![(1, 10_000), (1, 10_000), (0, 0), (-1, -1), (2, 20_000)],
        "exactly the second, between first and second, before all, after all, max timestamp"
    );
    sim.shutdown().await;
}

/// A partition's ISR, eligible leader replicas and last known ELR as answered.
type ElrRow = (Vec<i32>, Option<Vec<i32>>, Option<Vec<i32>>);

fn elr_of(r: &DescribeTopicPartitionsResponse, topic: &str) -> Vec<ElrRow> {
    let ids = |l: &[BrokerId]| l.iter().map(|b| b.0).collect::<Vec<i32>>();
    r.topics
        .iter()
        .find(|t| t.name.as_ref().is_some_and(|n| n.0.as_str() == topic))
        .map(|t| {
            t.partitions
                .iter()
                .map(|p| {
                    (
                        ids(&p.isr_nodes),
                        p.eligible_leader_replicas.as_deref().map(ids),
                        p.last_known_elr.as_deref().map(ids),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// DescribeTopicPartitions as a Kafka 4.1 cluster (ELR on by default) answers it: empty ELR
/// lists (not absent) while the ISR is at least `min.insync.replicas`; a replica whose broker
/// stopped while that left the ISR below it is eligible; back in the ISR, the ELR is empty again.
/// Pages follow the partition limit and the cursor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_topic_partitions_names_a_replica_that_left_the_isr_below_min_insync_eligible_until_it_is_back(
) {
    let mut strict = partition("strict", 0, &[1, 2, 3], 0);
    strict.min_insync_replicas = 3;
    let sim = start(
        snapshot(
            brokers(3),
            vec![
                strict,
                partition("quiet", 0, &[1, 2], 0),
                partition("quiet", 1, &[2, 3], 0),
            ],
        ),
        1.0,
    )
    .await;
    let admin = Admin::new(&sim);
    let describe = || async {
        let mut c = admin.to(1).await;
        c.send(&DescribeTopicPartitionsRequest::default(), 0)
            .await
            .expect("DescribeTopicPartitions")
    };
    let r = describe().await;
    assert_eq!(
        elr_of(&r, "strict"),
        vec![(vec![1, 2, 3], Some(vec![]), Some(vec![]))]
    );
    assert_eq!(elr_of(&r, "quiet").len(), 2);
    assert!(r.next_cursor.is_none());

    sim.stop_broker(3).await.expect("stop 3");
    let r = describe().await;
    assert_eq!(
        elr_of(&r, "strict"),
        vec![(vec![1, 2], Some(vec![3]), Some(vec![]))],
        "ISR 2 < min.insync.replicas 3: 3 is eligible"
    );
    assert_eq!(
        elr_of(&r, "quiet")[1],
        (vec![2], Some(vec![]), Some(vec![])),
        "ISR 1 = min.insync.replicas 1: no ELR"
    );

    sim.start_broker(3).await.expect("start 3");
    let r = describe().await;
    assert_eq!(
        elr_of(&r, "strict"),
        vec![(vec![1, 2, 3], Some(vec![]), Some(vec![]))]
    );

    // One partition a page: quiet-0, then quiet-1 from the cursor, then strict-0.
    let mut c = admin.to(1).await;
    let mut req = DescribeTopicPartitionsRequest::default();
    req.response_partition_limit = 1;
    let mut seen = Vec::new();
    for _ in 0..5 {
        let r = c.send(&req, 0).await.expect("a page");
        for t in &r.topics {
            for p in &t.partitions {
                seen.push((
                    t.name.as_ref().map(|n| n.0.to_string()).unwrap_or_default(),
                    p.partition_index,
                ));
            }
        }
        let Some(next) = r.next_cursor else { break };
        let mut cursor = describe_topic_partitions_request::Cursor::default();
        cursor.topic_name = next.topic_name;
        cursor.partition_index = next.partition_index;
        req.cursor = Some(cursor);
    }
    assert_eq!(
        seen,
        vec![
            ("quiet".to_string(), 0),
            ("quiet".to_string(), 1),
            ("strict".to_string(), 0)
        ]
    );
    sim.shutdown().await;
}
