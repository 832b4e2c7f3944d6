//! Topics, partitions, configs, log dirs, reassignments and leader elections.

use std::collections::{BTreeMap, BTreeSet};

use kafka_protocol::messages::alter_configs_response::AlterConfigsResourceResponse as LegacyAlterResult;
use kafka_protocol::messages::alter_partition_reassignments_response::{
    ReassignablePartitionResponse, ReassignableTopicResponse,
};
use kafka_protocol::messages::alter_replica_log_dirs_response::{
    AlterReplicaLogDirPartitionResult, AlterReplicaLogDirTopicResult,
};
use kafka_protocol::messages::create_partitions_response::CreatePartitionsTopicResult;
use kafka_protocol::messages::create_topics_response::{
    CreatableTopicConfigs, CreatableTopicResult,
};
use kafka_protocol::messages::delete_topics_response::DeletableTopicResult;
use kafka_protocol::messages::describe_configs_response::{
    DescribeConfigsResourceResult, DescribeConfigsResult, DescribeConfigsSynonym,
};
use kafka_protocol::messages::describe_log_dirs_response::{
    DescribeLogDirsPartition, DescribeLogDirsResult, DescribeLogDirsTopic,
};
use kafka_protocol::messages::elect_leaders_response::{PartitionResult, ReplicaElectionResult};
use kafka_protocol::messages::incremental_alter_configs_response::AlterConfigsResourceResponse;
use kafka_protocol::messages::list_partition_reassignments_response::{
    OngoingPartitionReassignment, OngoingTopicReassignment,
};
use kafka_protocol::messages::{
    AlterConfigsRequest, AlterConfigsResponse, AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse, AlterReplicaLogDirsRequest, AlterReplicaLogDirsResponse,
    BrokerId as KBrokerId, CreatePartitionsRequest, CreatePartitionsResponse, CreateTopicsRequest,
    CreateTopicsResponse, DeleteTopicsRequest, DeleteTopicsResponse, DescribeConfigsRequest,
    DescribeConfigsResponse, DescribeLogDirsRequest, DescribeLogDirsResponse, ElectLeadersRequest,
    ElectLeadersResponse, IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse,
    ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse,
};

use super::{sb, uuid, valid_topic_name, Ctx};
use crate::state::configs::{self, resource, Entry, Op};
use crate::state::lag::ConfigKey;
use crate::state::{err, ApiError, BrokerId, Cluster, NewPartition, Rates, Topic};

// ------------------------------------------------------------------ topics

fn config_entries_for_create(c: &Cluster, topic: &str) -> Vec<CreatableTopicConfigs> {
    match c.topics.get(topic) {
        Some(t) => configs::describe_topic(c, t)
            .into_iter()
            .map(|e| {
                let mut x = CreatableTopicConfigs::default();
                x.name = sb(e.name);
                x.value = e.value.map(sb);
                x.read_only = e.read_only;
                x.config_source = e.source;
                x.is_sensitive = e.sensitive;
                x
            })
            .collect(),
        None => Vec::new(),
    }
}

pub fn create_topics(ctx: &Ctx, req: CreateTopicsRequest) -> CreateTopicsResponse {
    let v = ctx.version;
    let mut c = ctx.shared.lock();
    let mut resp = CreateTopicsResponse::default();
    let mut seen = BTreeSet::new();
    for t in &req.topics {
        let name = t.name.to_string();
        let mut r = CreatableTopicResult::default();
        r.name = t.name.clone();
        let dup = !seen.insert(name.clone());
        let outcome = if dup {
            Err(ApiError::new(
                err::INVALID_REQUEST,
                format!("Duplicate topic name {name} in the request"),
            ))
        } else {
            create_one(&mut c, &name, t, req.validate_only)
        };
        match outcome {
            Ok((partitions, rf)) => {
                if v >= 5 {
                    r.num_partitions = partitions;
                    r.replication_factor = rf;
                    r.configs = Some(if req.validate_only {
                        Vec::new()
                    } else {
                        config_entries_for_create(&c, &name)
                    });
                }
                if v >= 7 {
                    r.topic_id = uuid(Cluster::topic_id_for(&name));
                }
            }
            Err(e) => {
                r.error_code = e.code;
                r.error_message = Some(sb(e.message));
                if v >= 5 {
                    r.num_partitions = -1;
                    r.replication_factor = -1;
                    r.topic_config_error_code = 0;
                }
            }
        }
        resp.topics.push(r);
    }
    resp
}

fn create_one(
    c: &mut Cluster,
    name: &str,
    t: &kafka_protocol::messages::create_topics_request::CreatableTopic,
    validate_only: bool,
) -> Result<(i32, i16), ApiError> {
    if !valid_topic_name(name) {
        return Err(ApiError::new(
            err::INVALID_TOPIC_EXCEPTION,
            format!("Topic name {name:?} is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'"),
        ));
    }
    if c.topics.contains_key(name) {
        return Err(ApiError::new(
            err::TOPIC_ALREADY_EXISTS,
            format!("Topic '{name}' already exists."),
        ));
    }
    let mut overrides = BTreeMap::new();
    for cfg in &t.configs {
        let key = cfg.name.to_string();
        let kind = configs::topic_kind(&key)?;
        if let Some(v) = &cfg.value {
            configs::validate_value(&key, kind, v.as_str())?;
            overrides.insert(key, v.to_string());
        }
    }
    let placement: Vec<Vec<BrokerId>> = if !t.assignments.is_empty() {
        if t.num_partitions != -1 || t.replication_factor != -1 {
            return Err(ApiError::new(
                err::INVALID_REQUEST,
                "Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.",
            ));
        }
        let mut sorted: Vec<_> = t.assignments.iter().collect();
        sorted.sort_by_key(|a| a.partition_index);
        let mut out = Vec::new();
        for (i, a) in sorted.iter().enumerate() {
            if a.partition_index != i as i32 {
                return Err(ApiError::new(
                    err::INVALID_REPLICA_ASSIGNMENT,
                    "Partitions should be consecutive and start from 0.",
                ));
            }
            let replicas: Vec<BrokerId> = a.broker_ids.iter().map(|b| b.0).collect();
            check_assignment(c, &replicas)?;
            out.push(replicas);
        }
        if out.iter().any(|r| r.len() != out[0].len()) {
            return Err(ApiError::new(
                err::INVALID_REPLICA_ASSIGNMENT,
                "All partitions should have the same number of replicas.",
            ));
        }
        out
    } else {
        let partitions = if t.num_partitions == -1 {
            c.broker_default_value("num.partitions")
                .and_then(|v| v.parse().ok())
                .unwrap_or(1)
        } else {
            t.num_partitions
        };
        if partitions <= 0 {
            return Err(ApiError::new(
                err::INVALID_PARTITIONS,
                "Number of partitions must be larger than 0.",
            ));
        }
        let rf = if t.replication_factor == -1 {
            c.broker_default_value("default.replication.factor")
                .and_then(|v| v.parse().ok())
                .unwrap_or(1)
        } else {
            i32::from(t.replication_factor)
        };
        if rf <= 0 {
            return Err(ApiError::new(
                err::INVALID_REPLICATION_FACTOR,
                "Replication factor must be larger than 0.",
            ));
        }
        c.place(name, 0, partitions, rf as usize)?
    };
    let partitions = placement.len() as i32;
    let rf = placement.first().map(|r| r.len()).unwrap_or(0) as i16;
    if !validate_only {
        let parts = placement
            .into_iter()
            .map(|replicas| NewPartition {
                leader: None,
                isr: replicas.clone(),
                replicas,
                size: 0.0,
                rates: Rates::default(),
                last_moved_at: None,
            })
            .collect();
        c.insert_topic(name, overrides, parts);
        tracing::info!(topic = name, partitions, "topic created");
    }
    Ok((partitions, rf))
}

fn check_assignment(c: &Cluster, replicas: &[BrokerId]) -> Result<(), ApiError> {
    if replicas.is_empty() {
        return Err(ApiError::new(
            err::INVALID_REPLICA_ASSIGNMENT,
            "The manual partition assignment includes an empty replica list.",
        ));
    }
    let distinct: BTreeSet<_> = replicas.iter().collect();
    if distinct.len() != replicas.len() {
        return Err(ApiError::new(
            err::INVALID_REPLICA_ASSIGNMENT,
            "The manual partition assignment includes the same broker more than once.",
        ));
    }
    for b in replicas {
        if !c.brokers.contains_key(b) {
            return Err(ApiError::new(
                err::INVALID_REPLICA_ASSIGNMENT,
                format!("The manual partition assignment includes broker {b}, but no such broker is registered."),
            ));
        }
    }
    Ok(())
}

pub fn delete_topics(ctx: &Ctx, req: DeleteTopicsRequest) -> DeleteTopicsResponse {
    let v = ctx.version;
    let mut c = ctx.shared.lock();
    let mut resp = DeleteTopicsResponse::default();
    // (name, id) pairs as given.
    let wanted: Vec<(Option<String>, Option<u128>)> = if v >= 6 {
        req.topics
            .iter()
            .map(|t| {
                (
                    t.name.as_ref().map(|n| n.to_string()),
                    (!t.topic_id.is_nil()).then(|| t.topic_id.as_u128()),
                )
            })
            .collect()
    } else {
        req.topic_names
            .iter()
            .map(|n| (Some(n.to_string()), None))
            .collect()
    };
    for (name, id) in wanted {
        let mut r = DeletableTopicResult::default();
        let resolved = match (&name, id) {
            (Some(n), _) => c.topics.get(n).map(|t| (t.name.clone(), t.id)),
            (None, Some(id)) => c.topic_by_id(id).map(|t| (t.name.clone(), t.id)),
            (None, None) => None,
        };
        r.name = name.clone().map(|n| sb(n).into());
        match resolved {
            Some((n, tid)) => {
                c.delete_topic(&n);
                tracing::info!(topic = %n, "topic deleted");
                r.name = Some(sb(n).into());
                if v >= 6 {
                    r.topic_id = uuid(tid);
                }
            }
            None => {
                r.error_code = if name.is_none() && id.is_some() {
                    err::UNKNOWN_TOPIC_ID
                } else {
                    err::UNKNOWN_TOPIC_OR_PARTITION
                };
                if v >= 5 {
                    r.error_message = Some(sb("This server does not host this topic-partition."));
                }
                if v >= 6 {
                    if let Some(id) = id {
                        r.topic_id = uuid(id);
                    }
                }
            }
        }
        resp.responses.push(r);
    }
    resp
}

pub fn create_partitions(ctx: &Ctx, req: CreatePartitionsRequest) -> CreatePartitionsResponse {
    let mut c = ctx.shared.lock();
    let mut resp = CreatePartitionsResponse::default();
    for t in &req.topics {
        let mut r = CreatePartitionsTopicResult::default();
        r.name = t.name.clone();
        if let Err(e) = create_partitions_one(&mut c, t, req.validate_only) {
            r.error_code = e.code;
            r.error_message = Some(sb(e.message));
        }
        resp.results.push(r);
    }
    resp
}

fn create_partitions_one(
    c: &mut Cluster,
    t: &kafka_protocol::messages::create_partitions_request::CreatePartitionsTopic,
    validate_only: bool,
) -> Result<(), ApiError> {
    let name = t.name.to_string();
    let (current, rf) = match c.topics.get(&name) {
        Some(topic) => (
            topic.partitions.len() as i32,
            topic
                .partitions
                .first()
                .map(|p| p.replicas.len())
                .unwrap_or(1),
        ),
        None => {
            return Err(ApiError::new(
                err::UNKNOWN_TOPIC_OR_PARTITION,
                "This server does not host this topic-partition.",
            ))
        }
    };
    if t.count <= current {
        return Err(ApiError::new(
            err::INVALID_PARTITIONS,
            format!(
                "Topic currently has {current} partitions, which is higher than the requested {}.",
                t.count
            ),
        ));
    }
    let added = t.count - current;
    let placement = match &t.assignments {
        Some(a) => {
            if a.len() as i32 != added {
                return Err(ApiError::new(
                    err::INVALID_REPLICA_ASSIGNMENT,
                    format!(
                        "Attempted to add {added} additional partition(s), but only {} assignment(s) were specified.",
                        a.len()
                    ),
                ));
            }
            let mut out = Vec::new();
            for x in a {
                let replicas: Vec<BrokerId> = x.broker_ids.iter().map(|b| b.0).collect();
                check_assignment(c, &replicas)?;
                if replicas.len() != rf {
                    return Err(ApiError::new(
                        err::INVALID_REPLICA_ASSIGNMENT,
                        format!("Inconsistent replication factor between partitions, partition 0 has {rf} while partitions [{current}] have replication factors [{}], respectively.", replicas.len()),
                    ));
                }
                out.push(replicas);
            }
            out
        }
        None => c.place(&name, current, added, rf)?,
    };
    if validate_only {
        return Ok(());
    }
    let up: BTreeSet<BrokerId> = c.alive_brokers().map(|b| b.id).collect();
    let news: Vec<_> = placement
        .into_iter()
        .map(|replicas| {
            c.make_partition(
                NewPartition {
                    leader: None,
                    isr: replicas.clone(),
                    replicas,
                    size: 0.0,
                    rates: Rates::default(),
                    last_moved_at: None,
                },
                &up,
            )
        })
        .collect();
    c.placement_changed();
    if let Some(topic) = c.topics.get_mut(&name) {
        topic.partitions.extend(news);
    }
    Ok(())
}

// ------------------------------------------------------------------ configs

fn entry_to_result(e: Entry, v: i16, synonyms: bool, docs: bool) -> DescribeConfigsResourceResult {
    let mut r = DescribeConfigsResourceResult::default();
    r.name = sb(e.name);
    r.value = e.value.map(sb);
    r.read_only = e.read_only;
    r.config_source = e.source;
    r.is_sensitive = e.sensitive;
    if synonyms {
        r.synonyms = e
            .synonyms
            .into_iter()
            .map(|(n, val, s)| {
                let mut syn = DescribeConfigsSynonym::default();
                syn.name = sb(n);
                syn.value = val.map(sb);
                syn.source = s;
                syn
            })
            .collect();
    }
    if v >= 3 {
        r.config_type = e.kind as i8;
        r.documentation = if docs { Some(sb(e.doc)) } else { None };
    }
    r
}

fn parse_broker(c: &Cluster, name: &str) -> Result<Option<BrokerId>, ApiError> {
    if name.is_empty() {
        return Ok(None);
    }
    let id: BrokerId = name.parse().map_err(|_| {
        ApiError::new(
            err::INVALID_REQUEST,
            format!("Broker id must be an integer, but it is: {name}"),
        )
    })?;
    if !c.brokers.contains_key(&id) {
        return Err(ApiError::new(
            err::INVALID_REQUEST,
            format!("Unexpected broker id, expected a registered broker id or empty string, but received {name}"),
        ));
    }
    Ok(Some(id))
}

pub fn describe_configs(ctx: &Ctx, req: DescribeConfigsRequest) -> DescribeConfigsResponse {
    let v = ctx.version;
    let c = ctx.shared.lock();
    let mut resp = DescribeConfigsResponse::default();
    for res in &req.resources {
        let mut r = DescribeConfigsResult::default();
        r.resource_type = res.resource_type;
        r.resource_name = res.resource_name.clone();
        let name = res.resource_name.as_str();
        let entries: Result<Vec<Entry>, ApiError> = match res.resource_type {
            resource::TOPIC => match c.topics.get(name) {
                // A change still on its way to the brokers is not shown yet.
                Some(t) => match c.lag.shown_config(&ConfigKey::Topic(name.to_string())) {
                    Some(shown) => {
                        let view = Topic {
                            name: t.name.clone(),
                            name_sb: t.name_sb.clone(),
                            id: t.id,
                            configs: shown.clone(),
                            partitions: Vec::new(),
                        };
                        Ok(configs::describe_topic(&c, &view))
                    }
                    None => Ok(configs::describe_topic(&c, t)),
                },
                None => Err(ApiError::new(
                    err::UNKNOWN_TOPIC_OR_PARTITION,
                    format!("The topic '{name}' does not exist."),
                )),
            },
            resource::BROKER => parse_broker(&c, name).map(|id| {
                let broker = id.and_then(|i| c.brokers.get(&i));
                match broker.and_then(|b| c.lag.shown_config(&ConfigKey::Broker(b.id))) {
                    Some(shown) => {
                        let mut view = broker.cloned();
                        if let Some(b) = view.as_mut() {
                            b.configs = shown.clone();
                        }
                        configs::describe_broker(&c, view.as_ref())
                    }
                    None => configs::describe_broker(&c, broker),
                }
            }),
            resource::BROKER_LOGGER => Err(ApiError::new(
                err::INVALID_REQUEST,
                "Broker loggers are not simulated",
            )),
            other => Err(ApiError::new(
                err::INVALID_REQUEST,
                format!("Unsupported resource type {other}"),
            )),
        };
        match entries {
            Ok(list) => {
                let keys: Option<BTreeSet<&str>> = res
                    .configuration_keys
                    .as_ref()
                    .map(|k| k.iter().map(|s| s.as_str()).collect());
                r.configs = list
                    .into_iter()
                    .filter(|e| keys.as_ref().is_none_or(|k| k.contains(e.name.as_str())))
                    .map(|e| entry_to_result(e, v, req.include_synonyms, req.include_documentation))
                    .collect();
            }
            Err(e) => {
                r.error_code = e.code;
                r.error_message = Some(sb(e.message));
            }
        }
        resp.results.push(r);
    }
    resp
}

/// Applies config operations to a topic or broker resource.
fn alter_resource(
    c: &mut Cluster,
    resource_type: i8,
    name: &str,
    ops: &[(String, Op)],
    replace: bool,
    validate_only: bool,
) -> Result<(), ApiError> {
    match resource_type {
        resource::TOPIC => {
            let Some(topic) = c.topics.get(name) else {
                return Err(ApiError::new(
                    err::UNKNOWN_TOPIC_OR_PARTITION,
                    format!("The topic '{name}' does not exist."),
                ));
            };
            let mut overrides = if replace {
                BTreeMap::new()
            } else {
                topic.configs.clone()
            };
            configs::apply_ops(&mut overrides, ops, configs::topic_kind, |n| {
                configs::topic_value(c, Some(topic), n).0
            })?;
            if !validate_only {
                let retention_changed = ["retention.ms", "retention.bytes", "cleanup.policy"]
                    .iter()
                    .any(|k| topic.configs.get(*k) != overrides.get(*k));
                let now = c.now_ms;
                c.lag.config_committed(
                    ConfigKey::Topic(name.to_string()),
                    &topic.configs,
                    &overrides,
                    now,
                );
                if let Some(t) = c.topics.get_mut(name) {
                    t.configs = overrides;
                }
                if retention_changed {
                    c.apply_retention(name);
                }
                tracing::info!(topic = name, "topic configs altered");
            }
            Ok(())
        }
        resource::BROKER => {
            let id = parse_broker(c, name)?;
            let current = match id {
                Some(i) => c
                    .brokers
                    .get(&i)
                    .map(|b| b.configs.clone())
                    .unwrap_or_default(),
                None => c.broker_defaults.clone(),
            };
            let mut overrides = if replace {
                BTreeMap::new()
            } else {
                current.clone()
            };
            configs::apply_ops(&mut overrides, ops, configs::broker_kind, |n| {
                c.broker_default_value(n)
            })?;
            if !validate_only {
                let key = match id {
                    Some(i) => ConfigKey::Broker(i),
                    None => ConfigKey::BrokerDefaults,
                };
                let now = c.now_ms;
                c.lag.config_committed(key, &current, &overrides, now);
                match id {
                    Some(i) => {
                        if let Some(b) = c.brokers.get_mut(&i) {
                            b.configs = overrides;
                        }
                    }
                    None => c.broker_defaults = overrides,
                }
                let names: Vec<&str> = ops.iter().map(|(n, _)| n.as_str()).collect();
                tracing::info!(broker = name, configs = ?names, "broker configs altered");
            }
            Ok(())
        }
        resource::BROKER_LOGGER => Err(ApiError::new(
            err::INVALID_REQUEST,
            "Broker loggers are not simulated",
        )),
        other => Err(ApiError::new(
            err::INVALID_REQUEST,
            format!("Unsupported resource type {other}"),
        )),
    }
}

pub fn incremental_alter_configs(
    ctx: &Ctx,
    req: IncrementalAlterConfigsRequest,
) -> IncrementalAlterConfigsResponse {
    let mut c = ctx.shared.lock();
    let mut resp = IncrementalAlterConfigsResponse::default();
    for res in &req.resources {
        let mut r = AlterConfigsResourceResponse::default();
        r.resource_type = res.resource_type;
        r.resource_name = res.resource_name.clone();
        let ops: Result<Vec<(String, Op)>, ApiError> = res
            .configs
            .iter()
            .map(|cfg| {
                let name = cfg.name.to_string();
                let value = cfg.value.as_ref().map(|v| v.to_string());
                let op = match (cfg.config_operation, value) {
                    (0, Some(v)) => Op::Set(v),
                    (1, _) => Op::Delete,
                    (2, Some(v)) => Op::Append(v),
                    (3, Some(v)) => Op::Subtract(v),
                    (0 | 2 | 3, None) => {
                        return Err(ApiError::new(
                            err::INVALID_REQUEST,
                            format!("Null value not supported for : {name}"),
                        ))
                    }
                    (o, _) => {
                        return Err(ApiError::new(
                            err::INVALID_REQUEST,
                            format!("Unknown alter config operation {o}"),
                        ))
                    }
                };
                Ok((name, op))
            })
            .collect();
        let result = ops.and_then(|ops| {
            alter_resource(
                &mut c,
                res.resource_type,
                res.resource_name.as_str(),
                &ops,
                false,
                req.validate_only,
            )
        });
        if let Err(e) = result {
            r.error_code = e.code;
            r.error_message = Some(sb(e.message));
        }
        resp.responses.push(r);
    }
    resp
}

pub fn alter_configs(ctx: &Ctx, req: AlterConfigsRequest) -> AlterConfigsResponse {
    let mut c = ctx.shared.lock();
    let mut resp = AlterConfigsResponse::default();
    for res in &req.resources {
        let mut r = LegacyAlterResult::default();
        r.resource_type = res.resource_type;
        r.resource_name = res.resource_name.clone();
        let ops: Vec<(String, Op)> = res
            .configs
            .iter()
            .filter_map(|cfg| {
                cfg.value
                    .as_ref()
                    .map(|v| (cfg.name.to_string(), Op::Set(v.to_string())))
            })
            .collect();
        if let Err(e) = alter_resource(
            &mut c,
            res.resource_type,
            res.resource_name.as_str(),
            &ops,
            true,
            req.validate_only,
        ) {
            r.error_code = e.code;
            r.error_message = Some(sb(e.message));
        }
        resp.responses.push(r);
    }
    resp
}

// ------------------------------------------------------------------ log dirs

pub fn describe_log_dirs(ctx: &Ctx, req: DescribeLogDirsRequest) -> DescribeLogDirsResponse {
    let v = ctx.version;
    let mut c = ctx.shared.lock();
    let broker = ctx.broker;
    c.index_replicas();
    let c = &*c;
    let mine = c.replicas_of(broker);
    let wanted: Option<BTreeMap<&str, BTreeSet<i32>>> = req.topics.as_ref().map(|ts| {
        ts.iter()
            .map(|t| (t.topic.as_str(), t.partitions.iter().copied().collect()))
            .collect()
    });
    let dirs = c.log_dirs.len();
    let mut per_dir: Vec<BTreeMap<&str, Vec<DescribeLogDirsPartition>>> =
        vec![BTreeMap::new(); dirs];
    let mut used = vec![0f64; dirs];
    {
        for (t, i, p) in mine {
            let dir = c.dir_of(&t.name, p, i as i32, broker);
            let in_sync = p.isr.contains(&broker);
            let size = if in_sync {
                p.size
            } else if let Some(r) = p.reassignment() {
                r.adding
                    .iter()
                    .position(|b| *b == broker)
                    .map(|k| r.copied[k])
                    .unwrap_or(p.size)
            } else if let Some(rem) = p.catchup_remaining(broker) {
                (p.size - rem).max(0.0)
            } else {
                p.size
            };
            used[dir] += size;
            let include = wanted.as_ref().is_none_or(|w| {
                w.get(t.name.as_str())
                    .is_some_and(|ps| ps.contains(&(i as i32)))
            });
            if !include {
                continue;
            }
            let mut dp = DescribeLogDirsPartition::default();
            dp.partition_index = i as i32;
            dp.partition_size = size as i64;
            // As Kafka 3.5+: for a current log the lag is its high watermark minus its log
            // end offset, never above 0, so it is reported as 0 (only a future replica's is a
            // lag). A follower's lag behind its leader shows in its size.
            dp.offset_lag = 0;
            dp.is_future_key = false;
            per_dir[dir].entry(t.name.as_str()).or_default().push(dp);
        }
    }
    let mut resp = DescribeLogDirsResponse::default();
    for (d, path) in c.log_dirs.iter().enumerate() {
        let mut r = DescribeLogDirsResult::default();
        r.log_dir = sb(path.clone());
        r.topics = std::mem::take(&mut per_dir[d])
            .into_iter()
            .map(|(name, partitions)| {
                let mut t = DescribeLogDirsTopic::default();
                t.name = sb(name).into();
                t.partitions = partitions;
                t
            })
            .collect();
        if v >= 4 {
            r.total_bytes = c.log_dir_capacity as i64;
            r.usable_bytes = (c.log_dir_capacity as f64 - used[d]).max(0.0) as i64;
        }
        resp.results.push(r);
    }
    resp
}

pub fn alter_replica_log_dirs(
    ctx: &Ctx,
    req: AlterReplicaLogDirsRequest,
) -> AlterReplicaLogDirsResponse {
    let mut c = ctx.shared.lock();
    let broker = ctx.broker;
    let mut results: BTreeMap<String, Vec<AlterReplicaLogDirPartitionResult>> = BTreeMap::new();
    for d in &req.dirs {
        let dir = c
            .log_dirs
            .iter()
            .position(|p| p.as_str() == d.path.as_str());
        for t in &d.topics {
            for p in &t.partitions {
                let code = match dir {
                    None => err::LOG_DIR_NOT_FOUND,
                    Some(dir) => match c.partition_mut(t.name.as_str(), *p) {
                        None => err::UNKNOWN_TOPIC_OR_PARTITION,
                        Some(part) if !part.replicas.contains(&broker) => {
                            err::REPLICA_NOT_AVAILABLE
                        }
                        Some(part) => {
                            let extra = part.extra_mut();
                            extra.dir_overrides.retain(|(b, _)| *b != broker);
                            extra.dir_overrides.push((broker, dir as u8));
                            err::NONE
                        }
                    },
                };
                let mut r = AlterReplicaLogDirPartitionResult::default();
                r.partition_index = *p;
                r.error_code = code;
                results.entry(t.name.to_string()).or_default().push(r);
            }
        }
    }
    let mut resp = AlterReplicaLogDirsResponse::default();
    resp.results = results
        .into_iter()
        .map(|(name, partitions)| {
            let mut t = AlterReplicaLogDirTopicResult::default();
            t.topic_name = sb(name).into();
            t.partitions = partitions;
            t
        })
        .collect();
    resp
}

// ------------------------------------------------------------------ reassignments

pub fn alter_partition_reassignments(
    ctx: &Ctx,
    req: AlterPartitionReassignmentsRequest,
) -> AlterPartitionReassignmentsResponse {
    let v = ctx.version;
    let mut c = ctx.shared.lock();
    let now = ctx.shared.now();
    let allow_rf = v < 1 || req.allow_replication_factor_change;
    let mut resp = AlterPartitionReassignmentsResponse::default();
    if v >= 1 {
        resp.allow_replication_factor_change = req.allow_replication_factor_change;
    }
    for t in &req.topics {
        let mut tr = ReassignableTopicResponse::default();
        tr.name = t.name.clone();
        for p in &t.partitions {
            let mut pr = ReassignablePartitionResponse::default();
            pr.partition_index = p.partition_index;
            let result = match &p.replicas {
                Some(r) => {
                    let target: Vec<BrokerId> = r.iter().map(|b| b.0).collect();
                    c.reassign(t.name.as_str(), p.partition_index, target, allow_rf, now)
                }
                None => c.cancel_reassignment(t.name.as_str(), p.partition_index, now),
            };
            match result {
                Ok(()) => pr.error_message = None,
                Err(e) => {
                    pr.error_code = e.code;
                    pr.error_message = Some(sb(e.message));
                }
            }
            tr.partitions.push(pr);
        }
        resp.responses.push(tr);
    }
    resp
}

pub fn list_partition_reassignments(
    ctx: &Ctx,
    req: ListPartitionReassignmentsRequest,
) -> ListPartitionReassignmentsResponse {
    let c = ctx.shared.lock();
    let wanted: Option<BTreeMap<&str, BTreeSet<i32>>> = req.topics.as_ref().map(|ts| {
        ts.iter()
            .map(|t| {
                (
                    t.name.as_str(),
                    t.partition_indexes.iter().copied().collect(),
                )
            })
            .collect()
    });
    let mut by_topic: BTreeMap<&str, Vec<OngoingPartitionReassignment>> = BTreeMap::new();
    for (topic, partition) in &c.active {
        if let Some(w) = &wanted {
            if !w
                .get(topic.as_str())
                .is_some_and(|ps| ps.contains(partition))
            {
                continue;
            }
        }
        let Some(p) = c.partition(topic, *partition) else {
            continue;
        };
        let Some(r) = p.reassignment() else {
            continue;
        };
        let mut o = OngoingPartitionReassignment::default();
        o.partition_index = *partition;
        o.replicas = p.replicas.iter().map(|b| KBrokerId(*b)).collect();
        o.adding_replicas = r.adding.iter().map(|b| KBrokerId(*b)).collect();
        o.removing_replicas = r.removing.iter().map(|b| KBrokerId(*b)).collect();
        by_topic.entry(topic.as_str()).or_default().push(o);
    }
    let mut resp = ListPartitionReassignmentsResponse::default();
    resp.topics = by_topic
        .into_iter()
        .map(|(name, partitions)| {
            let mut t = OngoingTopicReassignment::default();
            t.name = sb(name).into();
            t.partitions = partitions;
            t
        })
        .collect();
    resp
}

// ------------------------------------------------------------------ elections

pub fn elect_leaders(ctx: &Ctx, req: ElectLeadersRequest) -> ElectLeadersResponse {
    let v = ctx.version;
    let mut c = ctx.shared.lock();
    let unclean = v >= 1 && req.election_type == 1;
    let mut resp = ElectLeadersResponse::default();
    if v >= 1 && !matches!(req.election_type, 0 | 1) {
        resp.error_code = err::INVALID_REQUEST;
        return resp;
    }
    let explicit = req.topic_partitions.is_some();
    let targets: Vec<(String, i32)> = match &req.topic_partitions {
        Some(tps) => tps
            .iter()
            .flat_map(|t| t.partitions.iter().map(move |p| (t.topic.to_string(), *p)))
            .collect(),
        None => c
            .topics
            .values()
            .flat_map(|t| {
                t.partitions
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| {
                        if unclean {
                            p.leader < 0
                        } else {
                            p.replicas.first().is_some_and(|r| *r != p.leader)
                        }
                    })
                    .map(move |(i, _)| (t.name.clone(), i as i32))
            })
            .collect(),
    };
    let mut by_topic: BTreeMap<String, Vec<PartitionResult>> = BTreeMap::new();
    let mut elected = 0;
    for (topic, partition) in targets {
        let result = if unclean {
            c.elect_unclean(&topic, partition)
        } else {
            c.elect_preferred(&topic, partition)
        };
        if !explicit
            && result
                .as_ref()
                .is_err_and(|e| e.code == err::ELECTION_NOT_NEEDED)
        {
            continue;
        }
        let mut pr = PartitionResult::default();
        pr.partition_id = partition;
        match result {
            Ok(()) => {
                elected += 1;
                pr.error_message = None;
            }
            Err(e) => {
                pr.error_code = e.code;
                pr.error_message = Some(sb(e.message));
            }
        }
        by_topic.entry(topic).or_default().push(pr);
    }
    if elected > 0 {
        tracing::info!(partitions = elected, unclean, "leaders elected");
    }
    resp.replica_election_results = by_topic
        .into_iter()
        .map(|(topic, partition_result)| {
            let mut r = ReplicaElectionResult::default();
            r.topic = sb(topic).into();
            r.partition_result = partition_result;
            r
        })
        .collect();
    resp
}
