//! Metadata, DescribeCluster, FindCoordinator, InitProducerId.

use kafka_protocol::messages::describe_cluster_response::DescribeClusterBroker;
use kafka_protocol::messages::describe_topic_partitions_response::{
    Cursor as NextCursor, DescribeTopicPartitionsResponsePartition,
    DescribeTopicPartitionsResponseTopic,
};
use kafka_protocol::messages::find_coordinator_response::Coordinator;
use kafka_protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_protocol::messages::{
    BrokerId as KBrokerId, DescribeClusterRequest, DescribeClusterResponse, DescribeQuorumRequest,
    DescribeQuorumResponse, DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse,
    FindCoordinatorRequest, FindCoordinatorResponse, InitProducerIdRequest, InitProducerIdResponse,
    MetadataRequest, MetadataResponse,
};

use super::{sb, uuid, Ctx};
use crate::state::{err, groups, Cluster, Topic};

/// Authorized operations bitfields (ACLs are stored, not enforced: everything is allowed).
const TOPIC_OPS: i32 =
    (1 << 3) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (1 << 8) | (1 << 10) | (1 << 11);
const CLUSTER_OPS: i32 =
    (1 << 5) | (1 << 7) | (1 << 8) | (1 << 9) | (1 << 10) | (1 << 11) | (1 << 12);
const GROUP_OPS: i32 = (1 << 3) | (1 << 6) | (1 << 8);

pub fn group_ops() -> i32 {
    GROUP_OPS
}

fn topic_entry(c: &Cluster, t: &Topic, version: i16, ops: bool) -> MetadataResponseTopic {
    let mut mt = MetadataResponseTopic::default();
    mt.name = Some(t.name_sb.clone().into());
    if version >= 10 {
        mt.topic_id = uuid(t.id);
    }
    if version >= 8 && ops {
        mt.topic_authorized_operations = TOPIC_OPS;
    }
    mt.partitions = t
        .partitions
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut mp = MetadataResponsePartition::default();
            mp.partition_index = i as i32;
            mp.leader_id = KBrokerId(p.leader);
            if p.leader < 0 {
                mp.error_code = err::LEADER_NOT_AVAILABLE;
            }
            if version >= 7 {
                mp.leader_epoch = p.leader_epoch;
            }
            mp.replica_nodes = p.replicas.iter().map(|b| KBrokerId(*b)).collect();
            mp.isr_nodes = p.isr.iter().map(|b| KBrokerId(*b)).collect();
            if version >= 5 {
                mp.offline_replicas = p
                    .replicas
                    .iter()
                    .filter(|b| !c.is_up(**b))
                    .map(|b| KBrokerId(*b))
                    .collect();
            }
            mp
        })
        .collect();
    mt
}

pub fn metadata(ctx: &Ctx, req: MetadataRequest) -> MetadataResponse {
    let v = ctx.version;
    let mut c = ctx.shared.lock();
    // KRaft: a live broker the answering broker picks, not the active controller (that is
    // DescribeQuorum's leader).
    let reported_controller = c.reported_controller(ctx.broker);
    let mut resp = MetadataResponse::default();
    resp.brokers = c
        .alive_brokers()
        .map(|b| {
            let mut mb = MetadataResponseBroker::default();
            mb.node_id = KBrokerId(b.id);
            mb.host = sb(c.host.clone());
            mb.port = i32::from(b.port);
            if v >= 1 {
                mb.rack = b.rack.as_deref().map(sb);
            }
            mb
        })
        .collect();
    if v >= 2 {
        resp.cluster_id = Some(sb(c.cluster_id.clone()));
    }
    if v >= 1 {
        resp.controller_id = KBrokerId(reported_controller);
    }
    if (8..=10).contains(&v) && req.include_cluster_authorized_operations {
        resp.cluster_authorized_operations = CLUSTER_OPS;
    }
    let ops = req.include_topic_authorized_operations;
    let all = match &req.topics {
        None => true,
        Some(list) => list.is_empty() && v == 0,
    };
    if all {
        resp.topics = c
            .topics
            .values()
            .map(|t| topic_entry(&c, t, v, ops))
            .collect();
    } else if let Some(list) = req.topics {
        for rt in list {
            let found = match &rt.name {
                Some(name) => c.topics.get(name.as_str()),
                None => c.topic_by_id(rt.topic_id.as_u128()),
            };
            match found {
                Some(t) => resp.topics.push(topic_entry(&c, t, v, ops)),
                None => {
                    let mut mt = MetadataResponseTopic::default();
                    mt.name = rt.name.clone();
                    if rt.name.is_some() {
                        mt.error_code = err::UNKNOWN_TOPIC_OR_PARTITION;
                    } else {
                        mt.error_code = err::UNKNOWN_TOPIC_ID;
                        if v >= 10 {
                            mt.topic_id = rt.topic_id;
                        }
                    }
                    resp.topics.push(mt);
                }
            }
        }
    }
    resp
}

/// DescribeTopicPartitions (Kafka 3.8+, KIP-966): the named topics (every topic when none is
/// named) in name order from the cursor on, at most `response_partition_limit` partitions an
/// answer and a `next_cursor` where more remain; each partition with its eligible leader
/// replicas and last known ELR as Kafka 4.1 (ELR on) reports them: empty lists, not absent,
/// while the ISR is at least `min.insync.replicas`. An unknown topic answers
/// UNKNOWN_TOPIC_OR_PARTITION.
pub fn describe_topic_partitions(
    ctx: &Ctx,
    req: DescribeTopicPartitionsRequest,
) -> DescribeTopicPartitionsResponse {
    let c = ctx.shared.lock();
    let mut names: Vec<String> = if req.topics.is_empty() {
        c.topics.keys().cloned().collect()
    } else {
        req.topics.iter().map(|t| t.name.0.to_string()).collect()
    };
    names.sort();
    names.dedup();
    let limit = if req.response_partition_limit > 0 {
        req.response_partition_limit.min(2_000) as usize
    } else {
        2_000
    };
    let (from_topic, from_partition) = req.cursor.as_ref().map_or((String::new(), 0), |c| {
        (c.topic_name.0.to_string(), c.partition_index)
    });
    let mut resp = DescribeTopicPartitionsResponse::default();
    let mut left = limit;
    for name in names.iter().filter(|n| **n >= from_topic) {
        let mut rt = DescribeTopicPartitionsResponseTopic::default();
        rt.name = Some(sb(name.clone()).into());
        let Some(t) = c.topics.get(name) else {
            rt.error_code = err::UNKNOWN_TOPIC_OR_PARTITION;
            resp.topics.push(rt);
            continue;
        };
        rt.topic_id = uuid(t.id);
        rt.is_internal = name.starts_with("__");
        let min_isr = c.min_insync(name);
        let first = if *name == from_topic {
            from_partition.max(0) as usize
        } else {
            0
        };
        for (i, p) in t.partitions.iter().enumerate().skip(first) {
            if left == 0 {
                let mut next = NextCursor::default();
                next.topic_name = sb(name.clone()).into();
                next.partition_index = i as i32;
                resp.next_cursor = Some(next);
                break;
            }
            left -= 1;
            let mut rp = DescribeTopicPartitionsResponsePartition::default();
            rp.partition_index = i as i32;
            rp.leader_id = KBrokerId(p.leader);
            if p.leader < 0 {
                rp.error_code = err::LEADER_NOT_AVAILABLE;
            }
            rp.leader_epoch = p.leader_epoch;
            rp.replica_nodes = p.replicas.iter().map(|b| KBrokerId(*b)).collect();
            rp.isr_nodes = p.isr.iter().map(|b| KBrokerId(*b)).collect();
            rp.eligible_leader_replicas = Some(
                p.eligible_leader_replicas(min_isr)
                    .into_iter()
                    .map(KBrokerId)
                    .collect(),
            );
            rp.last_known_elr = Some(Vec::new());
            rp.offline_replicas = p
                .replicas
                .iter()
                .filter(|b| !c.is_up(**b))
                .map(|b| KBrokerId(*b))
                .collect();
            rt.partitions.push(rp);
        }
        let full = resp.next_cursor.is_some();
        if !(full && rt.partitions.is_empty()) {
            resp.topics.push(rt);
        }
        if full {
            break;
        }
    }
    resp
}

pub fn describe_cluster(ctx: &Ctx, req: DescribeClusterRequest) -> DescribeClusterResponse {
    let v = ctx.version;
    let mut c = ctx.shared.lock();
    let mut resp = DescribeClusterResponse::default();
    if v >= 1 {
        resp.endpoint_type = 1;
        if req.endpoint_type != 1 {
            // Controller endpoints are not exposed separately (combined mode).
            resp.error_code = 119; // UNSUPPORTED_ENDPOINT_TYPE
            resp.error_message = Some(sb("The endpoint type is not supported"));
            return resp;
        }
    }
    resp.cluster_id = sb(c.cluster_id.clone());
    // As Metadata: on KRaft a live broker picked per answer, not the active controller.
    resp.controller_id = KBrokerId(c.reported_controller(ctx.broker));
    resp.brokers = c
        .brokers
        .values()
        .filter(|b| b.up || (v >= 2 && req.include_fenced_brokers))
        .map(|b| {
            let mut db = DescribeClusterBroker::default();
            db.broker_id = KBrokerId(b.id);
            db.host = sb(c.host.clone());
            db.port = i32::from(b.port);
            db.rack = b.rack.as_deref().map(sb);
            if v >= 2 {
                db.is_fenced = !b.up;
            }
            db
        })
        .collect();
    if req.include_cluster_authorized_operations {
        resp.cluster_authorized_operations = CLUSTER_OPS;
    }
    resp
}

pub fn find_coordinator(ctx: &Ctx, req: FindCoordinatorRequest) -> FindCoordinatorResponse {
    let v = ctx.version;
    let c = ctx.shared.lock();
    let lookup = |key: &str| -> Result<(i32, String, i32), (i16, String)> {
        if req.key_type == 2 {
            return Err((
                err::INVALID_REQUEST,
                "Share coordinators are not simulated".into(),
            ));
        }
        if key.is_empty() && req.key_type == 0 {
            return Err((err::INVALID_GROUP_ID, "The group id is empty".into()));
        }
        match groups::coordinator(&c, key) {
            Some(id) => {
                let port = c.brokers.get(&id).map(|b| i32::from(b.port)).unwrap_or(0);
                Ok((id, c.host.clone(), port))
            }
            None => Err((
                err::COORDINATOR_NOT_AVAILABLE,
                "The coordinator is not available.".into(),
            )),
        }
    };
    let mut resp = FindCoordinatorResponse::default();
    if v >= 4 {
        resp.coordinators = req
            .coordinator_keys
            .iter()
            .map(|key| {
                let mut co = Coordinator::default();
                co.key = key.clone();
                match lookup(key.as_str()) {
                    Ok((id, host, port)) => {
                        co.node_id = KBrokerId(id);
                        co.host = sb(host);
                        co.port = port;
                    }
                    Err((code, msg)) => {
                        co.node_id = KBrokerId(-1);
                        co.port = -1;
                        co.error_code = code;
                        co.error_message = Some(sb(msg));
                    }
                }
                co
            })
            .collect();
    } else {
        match lookup(req.key.as_str()) {
            Ok((id, host, port)) => {
                resp.node_id = KBrokerId(id);
                resp.host = sb(host);
                resp.port = port;
                if v >= 1 {
                    resp.error_message = None;
                }
            }
            Err((code, msg)) => {
                resp.error_code = code;
                resp.node_id = KBrokerId(-1);
                resp.port = -1;
                if v >= 1 {
                    resp.error_message = Some(sb(msg));
                }
            }
        }
    }
    resp
}

pub fn init_producer_id(ctx: &Ctx, req: InitProducerIdRequest) -> InitProducerIdResponse {
    let mut c = ctx.shared.lock();
    let mut resp = InitProducerIdResponse::default();
    if req.transactional_id.is_some() {
        resp.error_code = err::TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
        resp.producer_id = (-1).into();
        resp.producer_epoch = -1;
        return resp;
    }
    if ctx.version >= 3 && req.producer_id.0 >= 0 {
        resp.producer_id = req.producer_id;
        resp.producer_epoch = req.producer_epoch.saturating_add(1);
    } else {
        resp.producer_id = c.next_producer_id.into();
        c.next_producer_id += 1;
        resp.producer_epoch = 0;
    }
    resp
}

/// DescribeQuorum: the KRaft metadata quorum (`__cluster_metadata` partition 0). Every broker is
/// a voter (combined mode), or, with dedicated controllers, those vote and the brokers observe;
/// the leader is the active controller, stable until it stops or the
/// control API moves it. Up voters are caught up with the leader's log end offset (it grows
/// with time, a record every 500 ms); a stopped voter keeps the offset it had when it stopped,
/// so its lag grows.
pub fn describe_quorum(ctx: &Ctx, req: DescribeQuorumRequest) -> DescribeQuorumResponse {
    use kafka_protocol::messages::describe_quorum_response::{
        Listener, Node, PartitionData, ReplicaState, TopicData,
    };
    let v = ctx.version;
    let c = ctx.shared.lock();
    let mut resp = DescribeQuorumResponse::default();
    let now = c.now_ms;
    let end = c.metadata_offset(now);
    let asked = req
        .topics
        .iter()
        .flat_map(|t| t.partitions.iter().map(move |p| (t, p.partition_index)))
        .collect::<Vec<_>>();
    for (t, index) in asked {
        let mut pd = PartitionData::default();
        pd.partition_index = index;
        if t.topic_name.as_str() != "__cluster_metadata" || index != 0 {
            pd.error_code = err::UNKNOWN_TOPIC_OR_PARTITION;
        } else {
            pd.leader_id = KBrokerId(c.controller);
            pd.leader_epoch = c.controller_epoch;
            pd.high_watermark = if c.controller >= 0 { end } else { -1 };
            let state = |id: i32, up: bool, down_since: Option<i64>| {
                let mut r = ReplicaState::default();
                r.replica_id = KBrokerId(id);
                let at = if up { now } else { down_since.unwrap_or(now) };
                r.log_end_offset = c.metadata_offset(at);
                if v >= 1 {
                    r.last_fetch_timestamp = at;
                    r.last_caught_up_timestamp = at;
                }
                r
            };
            let brokers: Vec<ReplicaState> = c
                .brokers
                .values()
                .map(|b| state(b.id, b.up, b.down_since))
                .collect();
            if c.dedicated_controllers.is_empty() {
                pd.current_voters = brokers;
            } else {
                // Dedicated controllers vote; the brokers observe the metadata log.
                pd.current_voters = c
                    .dedicated_controllers
                    .iter()
                    .map(|(id, voter)| state(*id, voter.up, voter.down_since))
                    .collect();
                pd.observers = brokers;
            }
        }
        let mut td = TopicData::default();
        td.topic_name = t.topic_name.clone();
        td.partitions = vec![pd];
        resp.topics.push(td);
    }
    if v >= 2 {
        let node = |id: i32, port: u16| {
            let mut l = Listener::default();
            l.name = sb("CONTROLLER");
            l.host = sb(c.host.clone());
            l.port = port;
            let mut n = Node::default();
            n.node_id = KBrokerId(id);
            n.listeners = vec![l];
            n
        };
        resp.nodes = if c.dedicated_controllers.is_empty() {
            c.brokers.values().map(|b| node(b.id, b.port)).collect()
        } else {
            // A dedicated controller has no listener of the simulator's: Kafka's default
            // controller port names it.
            c.dedicated_controllers
                .keys()
                .map(|id| node(*id, 9093))
                .collect()
        };
    }
    resp
}
