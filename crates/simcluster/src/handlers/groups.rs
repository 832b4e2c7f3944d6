//! Consumer group APIs: ListGroups, DescribeGroups, OffsetFetch, OffsetCommit, DeleteGroups.
//! Each must reach the group's coordinator (NOT_COORDINATOR otherwise), as on a real broker.

use kafka_protocol::messages::delete_groups_response::DeletableGroupResult;
use kafka_protocol::messages::describe_groups_response::{DescribedGroup, DescribedGroupMember};
use kafka_protocol::messages::list_groups_response::ListedGroup;
use kafka_protocol::messages::offset_commit_response::{
    OffsetCommitResponsePartition, OffsetCommitResponseTopic,
};
use kafka_protocol::messages::offset_fetch_response::{
    OffsetFetchResponseGroup, OffsetFetchResponsePartition, OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic, OffsetFetchResponseTopics,
};
use kafka_protocol::messages::{
    ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse, DeleteGroupsRequest,
    DeleteGroupsResponse, DescribeGroupsRequest, DescribeGroupsResponse,
    DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse, ListGroupsRequest,
    ListGroupsResponse, OffsetCommitRequest, OffsetCommitResponse, OffsetFetchRequest,
    OffsetFetchResponse, ShareGroupDescribeRequest, ShareGroupDescribeResponse,
};

use super::{sb, Ctx};
use crate::state::groups::{self, CommitItem, GroupKind};
use crate::state::{err, Cluster};

/// Whether this broker coordinates the group, or the error to return.
fn coordinated_here(c: &Cluster, broker: i32, group: &str) -> Result<(), i16> {
    match groups::coordinator(c, group) {
        Some(b) if b == broker => Ok(()),
        Some(_) => Err(err::NOT_COORDINATOR),
        None => Err(err::COORDINATOR_NOT_AVAILABLE),
    }
}

pub fn list_groups(ctx: &Ctx, req: ListGroupsRequest) -> ListGroupsResponse {
    let v = ctx.version;
    let mut c = ctx.shared.lock();
    groups::refresh_coordinators(&mut c);
    let mut resp = ListGroupsResponse::default();
    let states: Vec<String> = req
        .states_filter
        .iter()
        .map(|s| s.to_ascii_lowercase())
        .collect();
    let types: Vec<String> = req
        .types_filter
        .iter()
        .map(|s| s.to_ascii_lowercase())
        .collect();
    resp.groups = c
        .groups
        .values()
        .filter(|g| c.coordinators.get(&g.id) == Some(ctx.broker))
        .filter(|g| states.is_empty() || states.contains(&g.state().to_ascii_lowercase()))
        .filter(|g| types.is_empty() || types.iter().any(|t| t == g.kind.as_str()))
        .map(|g| {
            let mut l = ListedGroup::default();
            l.group_id = sb(g.id.clone()).into();
            l.protocol_type = sb(g.protocol_type.clone());
            if v >= 4 {
                l.group_state = sb(g.state());
            }
            if v >= 5 {
                l.group_type = sb(g.kind.as_str());
            }
            l
        })
        .collect();
    resp
}

pub fn describe_groups(ctx: &Ctx, req: DescribeGroupsRequest) -> DescribeGroupsResponse {
    let v = ctx.version;
    let c = ctx.shared.lock();
    let mut resp = DescribeGroupsResponse::default();
    for id in &req.groups {
        let mut d = DescribedGroup::default();
        d.group_id = id.clone();
        if v >= 3 && req.include_authorized_operations {
            d.authorized_operations = super::metadata::group_ops();
        }
        if let Err(code) = coordinated_here(&c, ctx.broker, id.as_str()) {
            d.error_code = code;
            if v >= 6 {
                d.error_message = Some(sb("This is not the correct coordinator."));
            }
            resp.groups.push(d);
            continue;
        }
        match c.groups.get(id.as_str()) {
            None => {
                d.group_state = sb("Dead");
                if v >= 6 {
                    d.error_code = err::GROUP_ID_NOT_FOUND;
                    d.error_message = Some(sb(format!("Group {} not found.", id.as_str())));
                }
            }
            // Kafka 4.1: classic DescribeGroups does not describe a consumer or share group.
            Some(g) if g.kind != GroupKind::Classic => {
                d.group_state = sb("Dead");
                if v >= 6 {
                    d.error_code = err::GROUP_ID_NOT_FOUND;
                    d.error_message =
                        Some(sb(format!("Group {} is not a classic group.", id.as_str())));
                }
            }
            Some(g) => {
                d.group_state = sb(g.state());
                d.protocol_type = sb(g.protocol_type.clone());
                d.protocol_data = sb(if g.members.is_empty() {
                    String::new()
                } else {
                    g.protocol.clone()
                });
                let topics = g.subscribed_topics();
                d.members = g
                    .members
                    .iter()
                    .enumerate()
                    .map(|(i, m)| {
                        let mut dm = DescribedGroupMember::default();
                        dm.member_id = sb(m.member_id.clone());
                        dm.client_id = sb(m.client_id.clone());
                        dm.client_host = sb(m.host.clone());
                        dm.member_metadata = groups::subscription_bytes(&topics);
                        dm.member_assignment = groups::assignment_bytes(&c.member_assignment(g, i));
                        dm
                    })
                    .collect();
            }
        }
        resp.groups.push(d);
    }
    resp
}

/// One committed offset as OffsetFetch reports it: (partition, offset, leader epoch, metadata).
type Fetched = (i32, i64, i32, Option<String>);

/// Committed offsets of a group for the requested topics (None: every committed offset).
fn fetch_group(
    c: &Cluster,
    group: &str,
    topics: Option<Vec<(String, Vec<i32>)>>,
) -> Vec<(String, Vec<Fetched>)> {
    // A share group's start offsets are no committed offsets (DescribeShareGroupOffsets).
    let g = c.groups.get(group).filter(|g| g.kind != GroupKind::Share);
    let topics: Vec<(String, Vec<i32>)> = match topics {
        Some(t) => t,
        None => g
            .map(|g| {
                g.offsets
                    .iter()
                    .map(|(t, slots)| {
                        let ps = slots
                            .iter()
                            .enumerate()
                            .filter(|(_, s)| s.is_some())
                            .map(|(i, _)| i as i32)
                            .collect();
                        (t.clone(), ps)
                    })
                    .filter(|(_, ps): &(String, Vec<i32>)| !ps.is_empty())
                    .collect()
            })
            .unwrap_or_default(),
    };
    topics
        .into_iter()
        .map(|(t, ps)| {
            let parts = ps
                .into_iter()
                .map(|p| match g.and_then(|g| g.committed(&t, p)) {
                    Some(cm) => (
                        p,
                        cm.offset.floor() as i64,
                        cm.leader_epoch,
                        cm.metadata.clone(),
                    ),
                    None => (p, -1, -1, None),
                })
                .collect();
            (t, parts)
        })
        .collect()
}

pub fn offset_fetch(ctx: &Ctx, req: OffsetFetchRequest) -> OffsetFetchResponse {
    let v = ctx.version;
    let c = ctx.shared.lock();
    let mut resp = OffsetFetchResponse::default();
    if v >= 8 {
        for g in &req.groups {
            let mut gr = OffsetFetchResponseGroup::default();
            gr.group_id = g.group_id.clone();
            if let Err(code) = coordinated_here(&c, ctx.broker, g.group_id.as_str()) {
                gr.error_code = code;
                resp.groups.push(gr);
                continue;
            }
            let wanted = g.topics.as_ref().map(|ts| {
                ts.iter()
                    .map(|t| (t.name.to_string(), t.partition_indexes.clone()))
                    .collect()
            });
            gr.topics = fetch_group(&c, g.group_id.as_str(), wanted)
                .into_iter()
                .map(|(t, parts)| {
                    let mut rt = OffsetFetchResponseTopics::default();
                    rt.name = sb(t).into();
                    rt.partitions = parts
                        .into_iter()
                        .map(|(p, o, e, m)| {
                            let mut rp = OffsetFetchResponsePartitions::default();
                            rp.partition_index = p;
                            rp.committed_offset = o;
                            rp.committed_leader_epoch = e;
                            rp.metadata = Some(sb(m.unwrap_or_default()));
                            rp
                        })
                        .collect();
                    rt
                })
                .collect();
            resp.groups.push(gr);
        }
        return resp;
    }
    if let Err(code) = coordinated_here(&c, ctx.broker, req.group_id.as_str()) {
        if v >= 2 {
            resp.error_code = code;
        }
        return resp;
    }
    let wanted = req.topics.as_ref().map(|ts| {
        ts.iter()
            .map(|t| (t.name.to_string(), t.partition_indexes.clone()))
            .collect()
    });
    resp.topics = fetch_group(&c, req.group_id.as_str(), wanted)
        .into_iter()
        .map(|(t, parts)| {
            let mut rt = OffsetFetchResponseTopic::default();
            rt.name = sb(t).into();
            rt.partitions = parts
                .into_iter()
                .map(|(p, o, e, m)| {
                    let mut rp = OffsetFetchResponsePartition::default();
                    rp.partition_index = p;
                    rp.committed_offset = o;
                    if v >= 5 {
                        rp.committed_leader_epoch = e;
                    }
                    rp.metadata = Some(sb(m.unwrap_or_default()));
                    rp
                })
                .collect();
            rt
        })
        .collect();
    resp
}

pub fn offset_commit(ctx: &Ctx, req: OffsetCommitRequest) -> OffsetCommitResponse {
    let mut c = ctx.shared.lock();
    let group = req.group_id.to_string();
    let here = coordinated_here(&c, ctx.broker, &group);
    let items: Vec<CommitItem> = req
        .topics
        .iter()
        .flat_map(|t| {
            t.partitions.iter().map(move |p| CommitItem {
                topic: t.name.to_string(),
                partition: p.partition_index,
                offset: p.committed_offset,
                leader_epoch: p.committed_leader_epoch,
                metadata: p.committed_metadata.as_ref().map(|m| m.to_string()),
            })
        })
        .collect();
    let results = match here {
        Ok(()) => c.commit_offsets(
            &group,
            req.generation_id_or_member_epoch,
            req.member_id.as_str(),
            items,
        ),
        Err(code) => items
            .into_iter()
            .map(|i| (i.topic, i.partition, code))
            .collect(),
    };
    let mut resp = OffsetCommitResponse::default();
    let mut topics: Vec<OffsetCommitResponseTopic> = Vec::new();
    for (t, p, code) in results {
        let idx = match topics.iter().position(|x| x.name.as_str() == t) {
            Some(i) => i,
            None => {
                let mut rt = OffsetCommitResponseTopic::default();
                rt.name = sb(t).into();
                topics.push(rt);
                topics.len() - 1
            }
        };
        let mut rp = OffsetCommitResponsePartition::default();
        rp.partition_index = p;
        rp.error_code = code;
        topics[idx].partitions.push(rp);
    }
    resp.topics = topics;
    resp
}

pub fn delete_groups(ctx: &Ctx, req: DeleteGroupsRequest) -> DeleteGroupsResponse {
    let mut c = ctx.shared.lock();
    let mut resp = DeleteGroupsResponse::default();
    for g in &req.groups_names {
        let mut r = DeletableGroupResult::default();
        r.group_id = g.clone();
        r.error_code = match coordinated_here(&c, ctx.broker, g.as_str()) {
            Err(code) => code,
            Ok(()) => match c.delete_group(g.as_str()) {
                Ok(()) => err::NONE,
                Err(e) => e.code,
            },
        };
        resp.results.push(r);
    }
    resp
}

/// A consumer or share group's members as ConsumerGroupDescribe/ShareGroupDescribe list them:
/// (member id, client id, host, epoch, assigned partitions by topic).
type TypedMember = (String, String, String, i32, Vec<(String, Vec<i32>)>);

/// The group `id` if it is of `kind`, or the error Kafka 4.1 answers: NOT_COORDINATOR on
/// another broker, GROUP_ID_NOT_FOUND "Group g not found." or "Group g is not a consumer
/// group." / "... is not a share group.".
fn typed_group<'c>(
    c: &'c crate::state::Cluster,
    broker: i32,
    id: &str,
    kind: GroupKind,
) -> Result<(&'c crate::state::Group, Vec<TypedMember>), (i16, String)> {
    if let Err(code) = coordinated_here(c, broker, id) {
        return Err((code, "This is not the correct coordinator.".into()));
    }
    let Some(g) = c.groups.get(id) else {
        return Err((err::GROUP_ID_NOT_FOUND, format!("Group {id} not found.")));
    };
    if g.kind != kind {
        return Err((
            err::GROUP_ID_NOT_FOUND,
            format!("Group {id} is not a {} group.", kind.as_str()),
        ));
    }
    let members = g
        .members
        .iter()
        .enumerate()
        .map(|(i, m)| {
            (
                m.member_id.clone(),
                m.client_id.clone(),
                m.host.clone(),
                g.generation,
                c.member_assignment(g, i),
            )
        })
        .collect();
    Ok((g, members))
}

/// ConsumerGroupDescribe (KIP-848): a consumer group with its epochs and every member's
/// assigned and target partitions (the simulated members have reconciled: equal).
pub fn consumer_group_describe(
    ctx: &Ctx,
    req: ConsumerGroupDescribeRequest,
) -> ConsumerGroupDescribeResponse {
    use kafka_protocol::messages::consumer_group_describe_response::{
        Assignment, DescribedGroup, Member, TopicPartitions,
    };
    let c = ctx.shared.lock();
    let assignment = |parts: &[(String, Vec<i32>)]| {
        let mut a = Assignment::default();
        a.topic_partitions = parts
            .iter()
            .map(|(t, ps)| {
                let mut tp = TopicPartitions::default();
                tp.topic_id = c
                    .topics
                    .get(t)
                    .map(|t| super::uuid(t.id))
                    .unwrap_or_default();
                tp.topic_name = sb(t.clone()).into();
                tp.partitions = ps.clone();
                tp
            })
            .collect();
        a
    };
    let mut resp = ConsumerGroupDescribeResponse::default();
    for id in &req.group_ids {
        let mut d = DescribedGroup::default();
        d.group_id = id.clone();
        match typed_group(&c, ctx.broker, id.as_str(), GroupKind::Consumer) {
            Err((code, message)) => {
                d.error_code = code;
                d.error_message = Some(sb(message));
            }
            Ok((g, members)) => {
                d.group_state = sb(g.state());
                d.group_epoch = g.generation;
                d.assignment_epoch = g.generation;
                d.assignor_name = sb(g.protocol.clone());
                d.members = members
                    .into_iter()
                    .map(|(member, client, host, epoch, parts)| {
                        let mut m = Member::default();
                        m.member_id = sb(member);
                        m.client_id = sb(client);
                        m.client_host = sb(host);
                        m.member_epoch = epoch;
                        m.subscribed_topic_names =
                            parts.iter().map(|(t, _)| sb(t.clone()).into()).collect();
                        m.assignment = assignment(&parts);
                        m.target_assignment = assignment(&parts);
                        m.member_type = 1;
                        m
                    })
                    .collect();
            }
        }
        resp.groups.push(d);
    }
    resp
}

/// ShareGroupDescribe (KIP-932): a share group with its epochs and every member's partitions.
pub fn share_group_describe(
    ctx: &Ctx,
    req: ShareGroupDescribeRequest,
) -> ShareGroupDescribeResponse {
    use kafka_protocol::messages::share_group_describe_response::{
        Assignment, DescribedGroup, Member, TopicPartitions,
    };
    let c = ctx.shared.lock();
    let mut resp = ShareGroupDescribeResponse::default();
    for id in &req.group_ids {
        let mut d = DescribedGroup::default();
        d.group_id = id.clone();
        match typed_group(&c, ctx.broker, id.as_str(), GroupKind::Share) {
            Err((code, message)) => {
                d.error_code = code;
                d.error_message = Some(sb(message));
            }
            Ok((g, members)) => {
                d.group_state = sb(g.state());
                d.group_epoch = g.generation;
                d.assignment_epoch = g.generation;
                d.assignor_name = sb(g.protocol.clone());
                d.members = members
                    .into_iter()
                    .map(|(member, client, host, epoch, parts)| {
                        let mut m = Member::default();
                        m.member_id = sb(member);
                        m.client_id = sb(client);
                        m.client_host = sb(host);
                        m.member_epoch = epoch;
                        m.subscribed_topic_names =
                            parts.iter().map(|(t, _)| sb(t.clone()).into()).collect();
                        let mut a = Assignment::default();
                        a.topic_partitions = parts
                            .iter()
                            .map(|(t, ps)| {
                                let mut tp = TopicPartitions::default();
                                tp.topic_id = c
                                    .topics
                                    .get(t)
                                    .map(|t| super::uuid(t.id))
                                    .unwrap_or_default();
                                tp.topic_name = sb(t.clone()).into();
                                tp.partitions = ps.clone();
                                tp
                            })
                            .collect();
                        m.assignment = a;
                        m
                    })
                    .collect();
            }
        }
        resp.groups.push(d);
    }
    resp
}

/// DescribeShareGroupOffsets: each share-partition's start offset (-1 where the group has not
/// started on the partition), every partition it has one for when no topic is named.
pub fn describe_share_group_offsets(
    ctx: &Ctx,
    req: DescribeShareGroupOffsetsRequest,
) -> DescribeShareGroupOffsetsResponse {
    use kafka_protocol::messages::describe_share_group_offsets_response::{
        DescribeShareGroupOffsetsResponseGroup, DescribeShareGroupOffsetsResponsePartition,
        DescribeShareGroupOffsetsResponseTopic,
    };
    let c = ctx.shared.lock();
    let mut resp = DescribeShareGroupOffsetsResponse::default();
    for rg in &req.groups {
        let mut out = DescribeShareGroupOffsetsResponseGroup::default();
        out.group_id = rg.group_id.clone();
        let id = rg.group_id.as_str();
        let group = match typed_group(&c, ctx.broker, id, GroupKind::Share) {
            Ok((g, _)) => g,
            Err((code, message)) => {
                out.error_code = code;
                out.error_message = Some(sb(message));
                resp.groups.push(out);
                continue;
            }
        };
        let wanted: Vec<(String, Vec<i32>)> = match &rg.topics {
            Some(ts) => ts
                .iter()
                .map(|t| (t.topic_name.to_string(), t.partitions.clone()))
                .collect(),
            None => group
                .offsets
                .iter()
                .map(|(t, slots)| {
                    let ps = slots
                        .iter()
                        .enumerate()
                        .filter(|(_, s)| s.is_some())
                        .map(|(i, _)| i as i32)
                        .collect();
                    (t.clone(), ps)
                })
                .collect(),
        };
        out.topics = wanted
            .into_iter()
            .map(|(t, ps)| {
                let mut rt = DescribeShareGroupOffsetsResponseTopic::default();
                rt.topic_id = c
                    .topics
                    .get(&t)
                    .map(|x| super::uuid(x.id))
                    .unwrap_or_default();
                rt.partitions = ps
                    .into_iter()
                    .map(|p| {
                        let mut rp = DescribeShareGroupOffsetsResponsePartition::default();
                        rp.partition_index = p;
                        match group.committed(&t, p) {
                            Some(cm) => {
                                rp.start_offset = cm.offset.floor() as i64;
                                rp.leader_epoch = cm.leader_epoch;
                            }
                            None => {
                                rp.start_offset = -1;
                                rp.leader_epoch = -1;
                            }
                        }
                        rp
                    })
                    .collect();
                rt.topic_name = sb(t).into();
                rt
            })
            .collect();
        resp.groups.push(out);
    }
    resp
}
