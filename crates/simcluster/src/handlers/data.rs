//! Produce, Fetch, ListOffsets.

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::fetch_response::{
    FetchableTopicResponse, LeaderIdAndEpoch, NodeEndpoint, PartitionData,
};
use kafka_protocol::messages::list_offsets_response::{
    ListOffsetsPartitionResponse, ListOffsetsTopicResponse,
};
use kafka_protocol::messages::produce_response::{
    LeaderIdAndEpoch as ProduceLeader, NodeEndpoint as ProduceNode, PartitionProduceResponse,
    TopicProduceResponse,
};
use kafka_protocol::messages::{
    BrokerId as KBrokerId, FetchRequest, FetchResponse, ListOffsetsRequest, ListOffsetsResponse,
    ProduceRequest, ProduceResponse,
};

use super::{sb, Ctx};
use crate::state::log::{self, RecordsError};
use crate::state::{err, ApiError, BrokerId, Cluster, Partition};

/// Most synthetic records returned for one partition in one fetch.
const MAX_SYNTHETIC_RECORDS: i64 = 2000;

fn unknown_partition() -> ApiError {
    ApiError::new(
        err::UNKNOWN_TOPIC_OR_PARTITION,
        "This server does not host this topic-partition.",
    )
}

fn not_leader() -> ApiError {
    ApiError::new(
        err::NOT_LEADER_OR_FOLLOWER,
        "This server is not the leader for that topic-partition.",
    )
}

/// Appends a produced record set; returns (base offset, log start offset).
fn append(
    c: &mut Cluster,
    broker: BrokerId,
    topic: &str,
    partition: i32,
    records: Option<&Bytes>,
    acks: i16,
) -> Result<(i64, i64), ApiError> {
    let max_bytes: usize = c
        .topic_config(topic, "max.message.bytes")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_048_588);
    let min_isr = c.min_insync(topic);
    let p = c
        .partition_mut(topic, partition)
        .ok_or_else(unknown_partition)?;
    if p.leader != broker {
        return Err(not_leader());
    }
    if acks == -1 && (p.isr.len() as i32) < min_isr {
        return Err(ApiError::new(
            err::NOT_ENOUGH_REPLICAS,
            format!(
                "The size of the current ISR {} is insufficient to satisfy the min.isr requirement of {min_isr}",
                p.isr.len()
            ),
        ));
    }
    let Some(records) = records else {
        return Err(ApiError::new(err::CORRUPT_MESSAGE, "no records"));
    };
    let batches = log::split_batches(records, max_bytes).map_err(|e| match e {
        RecordsError::Corrupt(m) => ApiError::new(err::CORRUPT_MESSAGE, m),
        RecordsError::TooLarge(n) => ApiError::new(
            err::MESSAGE_TOO_LARGE,
            format!("The record batch of {n} bytes is larger than max.message.bytes {max_bytes}"),
        ),
    })?;
    let base = p.high_watermark();
    let frac = p.log_end - base as f64;
    let mut next = base;
    let mut bytes = 0usize;
    let epoch = p.leader_epoch;
    let extra = p.extra_mut();
    for b in &batches {
        let stored = log::assign_offset(b, next, epoch);
        next = stored.last + 1;
        bytes += stored.bytes.len();
        extra.stored.push(stored);
    }
    p.log_end = next as f64 + frac;
    p.size += bytes as f64;
    Ok((base, p.log_start_offset()))
}

pub fn produce(ctx: &Ctx, req: ProduceRequest) -> Option<ProduceResponse> {
    let v = ctx.version;
    let mut c = ctx.shared.lock();
    let acks = req.acks;
    let mut resp = ProduceResponse::default();
    let mut moved_leaders: Vec<BrokerId> = Vec::new();
    for td in &req.topic_data {
        let name: Option<String> = if v >= 13 {
            c.topic_by_id(td.topic_id.as_u128()).map(|t| t.name.clone())
        } else {
            Some(td.name.to_string())
        };
        let mut tr = TopicProduceResponse::default();
        if v >= 13 {
            tr.topic_id = td.topic_id;
        } else {
            tr.name = td.name.clone();
        }
        for pd in &td.partition_data {
            let mut pr = PartitionProduceResponse::default();
            pr.index = pd.index;
            pr.log_append_time_ms = -1;
            let result = if !matches!(acks, -1..=1) {
                Err(ApiError::new(
                    err::INVALID_REQUIRED_ACKS,
                    "acks must be -1, 0 or 1",
                ))
            } else {
                match &name {
                    Some(n) => append(&mut c, ctx.broker, n, pd.index, pd.records.as_ref(), acks),
                    None => Err(ApiError::new(
                        err::UNKNOWN_TOPIC_ID,
                        "This server does not host this topic ID.",
                    )),
                }
            };
            match result {
                Ok((base, start)) => {
                    pr.base_offset = base;
                    if v >= 5 {
                        pr.log_start_offset = start;
                    }
                }
                Err(e) => {
                    pr.error_code = e.code;
                    pr.base_offset = -1;
                    if v >= 5 {
                        pr.log_start_offset = -1;
                    }
                    if v >= 8 {
                        pr.error_message = Some(sb(e.message));
                    }
                    if v >= 10 && e.code == err::NOT_LEADER_OR_FOLLOWER {
                        if let Some(p) = name.as_deref().and_then(|n| c.partition(n, pd.index)) {
                            let mut l = ProduceLeader::default();
                            l.leader_id = KBrokerId(p.leader);
                            l.leader_epoch = p.leader_epoch;
                            pr.current_leader = l;
                            if p.leader >= 0 {
                                moved_leaders.push(p.leader);
                            }
                        }
                    }
                }
            }
            tr.partition_responses.push(pr);
        }
        resp.responses.push(tr);
    }
    if v >= 10 {
        moved_leaders.sort_unstable();
        moved_leaders.dedup();
        resp.node_endpoints = moved_leaders
            .into_iter()
            .filter_map(|id| c.brokers.get(&id))
            .map(|b| {
                let mut n = ProduceNode::default();
                n.node_id = KBrokerId(b.id);
                n.host = sb(c.host.clone());
                n.port = i32::from(b.port);
                n.rack = b.rack.as_deref().map(sb);
                n
            })
            .collect();
    }
    if acks == 0 {
        None
    } else {
        Some(resp)
    }
}

/// Records from `from` up to `budget` bytes: stored batches whole, synthetic ones generated.
/// With `at_least_one`, the first batch is returned even when it exceeds the budget (KIP-74).
fn read_records(
    topic: &str,
    partition: i32,
    p: &Partition,
    from: i64,
    budget: usize,
    at_least_one: bool,
    now: i64,
) -> Bytes {
    let hw = p.high_watermark();
    let mut out = BytesMut::new();
    let mut offset = from;
    let msg_bytes = p.rates.msg_bytes();
    let record_size = log::synthetic_record_size(msg_bytes);
    let mut synthetic_left = MAX_SYNTHETIC_RECORDS;
    while offset < hw {
        let remaining = budget.saturating_sub(out.len());
        let first = out.is_empty() && at_least_one;
        let stored = p.stored().and_then(|s| s.first_from(offset));
        if let Some(b) = stored.filter(|b| b.base <= offset) {
            if b.bytes.len() > remaining && !first {
                break;
            }
            out.extend_from_slice(&b.bytes);
            offset = b.last + 1;
            continue;
        }
        let until = stored.map(|b| b.base).unwrap_or(hw).min(hw);
        let mut n = (remaining.saturating_sub(61) / record_size) as i64;
        if n == 0 {
            if first {
                n = 1;
            } else {
                break;
            }
        }
        n = n.min(until - offset).min(synthetic_left);
        if n <= 0 {
            break;
        }
        let encoded = log::synthetic_batch(
            &mut out,
            topic,
            partition,
            offset,
            n,
            msg_bytes,
            p.leader_epoch,
            |o| p.timestamp_of(o, now),
        );
        if encoded.is_err() {
            break;
        }
        synthetic_left -= n;
        offset += n;
        if synthetic_left <= 0 {
            break;
        }
    }
    out.freeze()
}

pub fn fetch(ctx: &Ctx, req: FetchRequest) -> (FetchResponse, usize) {
    let v = ctx.version;
    let c = ctx.shared.lock();
    let now = c.now_ms;
    let mut total = 0usize;
    let max_total = if req.max_bytes <= 0 {
        usize::MAX
    } else {
        req.max_bytes as usize
    };
    let mut resp = FetchResponse::default();
    let mut leaders: Vec<BrokerId> = Vec::new();
    for ft in &req.topics {
        let topic = if v >= 13 {
            c.topic_by_id(ft.topic_id.as_u128())
        } else {
            c.topics.get(ft.topic.as_str())
        };
        let mut tr = FetchableTopicResponse::default();
        if v >= 13 {
            tr.topic_id = ft.topic_id;
        } else {
            tr.topic = ft.topic.clone();
        }
        for fp in &ft.partitions {
            let mut pd = PartitionData::default();
            pd.partition_index = fp.partition;
            pd.aborted_transactions = Some(Vec::new());
            let part = topic.and_then(|t| {
                usize::try_from(fp.partition)
                    .ok()
                    .and_then(|i| t.partitions.get(i))
            });
            let Some(p) = part else {
                pd.error_code = if topic.is_none() && v >= 13 {
                    err::UNKNOWN_TOPIC_ID
                } else {
                    err::UNKNOWN_TOPIC_OR_PARTITION
                };
                pd.high_watermark = -1;
                pd.last_stable_offset = -1;
                pd.log_start_offset = -1;
                pd.records = Some(Bytes::new());
                tr.partitions.push(pd);
                continue;
            };
            let name = topic.map(|t| t.name.as_str()).unwrap_or_default();
            let hw = p.high_watermark();
            let start = p.log_start_offset();
            pd.high_watermark = hw;
            pd.last_stable_offset = hw;
            if v >= 5 {
                pd.log_start_offset = start;
            }
            pd.records = Some(Bytes::new());
            let epoch_error = if fp.current_leader_epoch >= 0 && v >= 9 {
                if fp.current_leader_epoch < p.leader_epoch {
                    Some(err::FENCED_LEADER_EPOCH)
                } else if fp.current_leader_epoch > p.leader_epoch {
                    Some(err::UNKNOWN_LEADER_EPOCH)
                } else {
                    None
                }
            } else {
                None
            };
            if p.leader != ctx.broker {
                pd.error_code = err::NOT_LEADER_OR_FOLLOWER;
                if v >= 12 {
                    let mut l = LeaderIdAndEpoch::default();
                    l.leader_id = KBrokerId(p.leader);
                    l.leader_epoch = p.leader_epoch;
                    pd.current_leader = l;
                    if p.leader >= 0 {
                        leaders.push(p.leader);
                    }
                }
            } else if let Some(code) = epoch_error {
                pd.error_code = code;
            } else if fp.fetch_offset < start || fp.fetch_offset > hw {
                pd.error_code = err::OFFSET_OUT_OF_RANGE;
            } else if fp.fetch_offset < hw && total < max_total {
                let budget = (fp.partition_max_bytes.max(0) as usize).min(max_total - total);
                let records = read_records(
                    name,
                    fp.partition,
                    p,
                    fp.fetch_offset,
                    budget,
                    total == 0,
                    now,
                );
                total += records.len();
                pd.records = Some(records);
            }
            tr.partitions.push(pd);
        }
        resp.responses.push(tr);
    }
    if v >= 16 {
        leaders.sort_unstable();
        leaders.dedup();
        resp.node_endpoints = leaders
            .into_iter()
            .filter_map(|id| c.brokers.get(&id))
            .map(|b| {
                let mut n = NodeEndpoint::default();
                n.node_id = KBrokerId(b.id);
                n.host = sb(c.host.clone());
                n.port = i32::from(b.port);
                n.rack = b.rack.as_deref().map(sb);
                n
            })
            .collect();
    }
    (resp, total)
}

pub fn list_offsets(ctx: &Ctx, req: ListOffsetsRequest) -> ListOffsetsResponse {
    let v = ctx.version;
    let c = ctx.shared.lock();
    let now = c.now_ms;
    let mut resp = ListOffsetsResponse::default();
    for t in &req.topics {
        let mut tr = ListOffsetsTopicResponse::default();
        tr.name = t.name.clone();
        for rp in &t.partitions {
            let mut pr = ListOffsetsPartitionResponse::default();
            pr.partition_index = rp.partition_index;
            pr.timestamp = -1;
            pr.offset = -1;
            match c.partition(t.name.as_str(), rp.partition_index) {
                None => pr.error_code = err::UNKNOWN_TOPIC_OR_PARTITION,
                Some(p) if p.leader != ctx.broker && req.replica_id.0 < 0 => {
                    pr.error_code = if p.leader < 0 {
                        err::LEADER_NOT_AVAILABLE
                    } else {
                        err::NOT_LEADER_OR_FOLLOWER
                    }
                }
                Some(p) => {
                    if v >= 4 {
                        pr.leader_epoch = p.leader_epoch;
                    }
                    let hw = p.high_watermark();
                    let start = p.log_start_offset();
                    match rp.timestamp {
                        -1 => pr.offset = hw,
                        -2 => pr.offset = start,
                        // EARLIEST_LOCAL (v8+): a tiered partition's first local offset.
                        -4 if v >= 8 => pr.offset = p.local_start_offset(),
                        // LATEST_TIERED (v9+): the last offset offloaded, -1 when none.
                        -5 if v >= 9 => {
                            let local = p.local_start_offset();
                            if local > start {
                                pr.offset = local - 1;
                            }
                        }
                        -3 => {
                            if let Some((o, t)) = p.max_timestamp_offset(now) {
                                pr.offset = o;
                                pr.timestamp = t;
                            }
                        }
                        ts if ts >= 0 => {
                            if let Some((o, t)) = p.offset_for_timestamp(ts, now) {
                                pr.offset = o;
                                pr.timestamp = t;
                            }
                        }
                        _ => pr.error_code = err::INVALID_REQUEST,
                    }
                }
            }
            tr.partitions.push(pr);
        }
        resp.topics.push(tr);
    }
    resp
}
