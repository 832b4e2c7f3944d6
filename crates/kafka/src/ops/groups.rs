//! Consumer groups: ListGroups (every broker), and through the group coordinator
//! (FindCoordinator, cached) DescribeGroups, OffsetFetch, OffsetCommit, DeleteGroups.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;

use ballast_model::{BrokerId, TopicPartition};
use bytes::{Buf, Bytes};
use kafka_protocol::messages::describe_share_group_offsets_request::DescribeShareGroupOffsetsRequestGroup;
use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::offset_fetch_request::{
    OffsetFetchRequestGroup, OffsetFetchRequestTopic, OffsetFetchRequestTopics,
};
use kafka_protocol::messages::{
    ConsumerGroupDescribeRequest, ConsumerProtocolAssignment, DeleteGroupsRequest,
    DescribeGroupsRequest, DescribeShareGroupOffsetsRequest, ListGroupsRequest,
    OffsetCommitRequest, OffsetFetchRequest, ShareGroupDescribeRequest,
};
use kafka_protocol::protocol::{Decodable, StrBytes};

use crate::client::{group_id, join_all, topic_name, Client};
use crate::codes;
use crate::error::{Error, ItemError, Result};
use crate::types::{
    CommittedOffset, GroupDescription, GroupListing, GroupMember, GroupOffsets, GroupResult,
    PartitionResult, TopicPartitions,
};
use crate::wire::guarded;

const NETWORK_EXCEPTION: i16 = 13;

/// At most this many groups go in one OffsetFetch (v8+) request.
const GROUPS_PER_OFFSET_FETCH: usize = 100;

/// Errors after which a group's request goes to a (re-discovered) coordinator again.
fn coordinator_moved(code: i16) -> bool {
    matches!(
        code,
        codes::NOT_COORDINATOR
            | codes::COORDINATOR_NOT_AVAILABLE
            | codes::COORDINATOR_LOAD_IN_PROGRESS
    )
}

fn as_item_error(e: &Error) -> ItemError {
    match e {
        Error::Kafka {
            code,
            name,
            message,
            ..
        } => ItemError {
            code: *code,
            name,
            message: message.clone(),
        },
        other => ItemError {
            code: NETWORK_EXCEPTION,
            name: codes::error_name(NETWORK_EXCEPTION),
            message: Some(other.to_string()),
        },
    }
}

impl Client {
    /// ListGroups on every broker (each lists the groups it coordinates), merged and sorted.
    /// Fails if a broker of the metadata cannot answer.
    pub async fn list_groups(&self) -> Result<Vec<GroupListing>> {
        let metadata = self.refresh_metadata().await?;
        let ids: Vec<BrokerId> = metadata.brokers.iter().map(|b| b.id).collect();
        self.list_groups_on(&ids).await
    }

    /// ListGroups on each of `brokers` (every broker of metadata the caller just read), all at
    /// once, merged and sorted. Fails if one of them cannot answer.
    pub async fn list_groups_on(&self, brokers: &[BrokerId]) -> Result<Vec<GroupListing>> {
        let calls: Vec<_> = brokers
            .iter()
            .map(|b| {
                let id = *b;
                self.retrying("ListGroups", move || async move {
                    let conn = self.connection(id).await?;
                    let version = conn.version::<ListGroupsRequest>()?;
                    let response = conn.send(&ListGroupsRequest::default(), version).await?;
                    if response.error_code != 0 {
                        return Err(Error::kafka("ListGroups", response.error_code, None));
                    }
                    Ok(response
                        .groups
                        .into_iter()
                        .map(|g| GroupListing {
                            group_id: g.group_id.0.to_string(),
                            protocol_type: g.protocol_type.to_string(),
                            state: (version >= 4).then(|| g.group_state.to_string()),
                            group_type: (version >= 5).then(|| g.group_type.to_string()),
                            coordinator: id,
                        })
                        .collect::<Vec<_>>())
                })
            })
            .collect();
        let mut groups: BTreeMap<String, GroupListing> = BTreeMap::new();
        for result in join_all(calls).await {
            for g in result? {
                groups.insert(g.group_id.clone(), g);
            }
        }
        Ok(groups.into_values().collect())
    }

    /// Every group's description, whatever its type, through each group's coordinator: state,
    /// protocol, members with their assignments. One description per group, in order; a
    /// group's error (e.g. GROUP_AUTHORIZATION_FAILED) is in its `error`.
    ///
    /// Classic DescribeGroups first. A group it does not know (GROUP_ID_NOT_FOUND: Kafka 4
    /// answers so for a KIP-848 consumer group, "Group g is not a classic group.") is asked of
    /// ConsumerGroupDescribe (members with their epochs, assigned and target partitions), then
    /// of ShareGroupDescribe (KIP-932), where the coordinator offers them. A group none of them
    /// describes but the coordinator's ListGroups lists (a streams group, or a consumer group on
    /// a broker that does not offer ConsumerGroupDescribe) is answered with its listed type and
    /// state and an UNSUPPORTED_VERSION error that says which API is missing: only a group no
    /// broker knows keeps GROUP_ID_NOT_FOUND.
    pub async fn describe_groups(&self, groups: &[String]) -> Result<Vec<GroupDescription>> {
        let mut out = self
            .per_group(
                groups,
                |coordinator, names| self.describe_groups_on(coordinator, names),
                failed_description,
                |d| d.error.as_ref().map(|e| e.code),
            )
            .await?;
        // Each group's place in `out` (a read of every group names thousands).
        let index: std::collections::HashMap<String, usize> = out
            .iter()
            .enumerate()
            .map(|(i, d)| (d.group_id.clone(), i))
            .collect();
        // What each further API found missing, by group: "ConsumerGroupDescribe on broker 1".
        let mut unsupported: BTreeMap<String, Vec<(&'static str, String)>> = BTreeMap::new();
        for api in [GroupApi::Consumer, GroupApi::Share] {
            let missing: Vec<String> = out
                .iter()
                .filter(|d| not_found(d))
                .map(|d| d.group_id.clone())
                .collect();
            if missing.is_empty() {
                return Ok(out);
            }
            let found = self
                .per_group(
                    &missing,
                    |coordinator, names| self.describe_typed_on(api, coordinator, names),
                    failed_description,
                    |d| d.error.as_ref().map(|e| e.code),
                )
                .await?;
            for d in found {
                match &d.error {
                    // Not of this type, or not read (the classic answer stands).
                    Some(e)
                        if e.code == codes::GROUP_ID_NOT_FOUND || e.code == NETWORK_EXCEPTION =>
                    {
                        continue
                    }
                    Some(e) if e.code == codes::UNSUPPORTED_VERSION => {
                        unsupported
                            .entry(d.group_id.clone())
                            .or_default()
                            .push((api.group_type(), e.message.clone().unwrap_or_default()));
                        continue;
                    }
                    _ => {}
                }
                if let Some(slot) = index.get(&d.group_id).and_then(|i| out.get_mut(*i)) {
                    *slot = d;
                }
            }
        }
        // Still unknown: does its coordinator list it (with a type no API above describes)?
        let missing: Vec<(String, Option<BrokerId>)> = out
            .iter()
            .filter(|d| not_found(d))
            .map(|d| (d.group_id.clone(), d.coordinator))
            .collect();
        let coordinators: BTreeSet<BrokerId> = missing.iter().filter_map(|(_, c)| *c).collect();
        let mut listed: BTreeMap<String, GroupListing> = BTreeMap::new();
        for id in coordinators {
            // A listing that fails leaves the groups as DescribeGroups answered.
            if let Ok(groups) = self.list_groups_on(&[id]).await {
                listed.extend(groups.into_iter().map(|g| (g.group_id.clone(), g)));
            }
        }
        for (group, _) in missing {
            let Some(l) = listed.remove(&group) else {
                continue;
            };
            let kind = l.group_type.clone().unwrap_or_default();
            let missing_api = unsupported.get(&group).and_then(|apis| {
                apis.iter()
                    .find(|(t, _)| t.eq_ignore_ascii_case(&kind))
                    .map(|(_, why)| why.clone())
            });
            let why = missing_api.unwrap_or_else(|| {
                format!(
                    "no API this client speaks describes a {} group",
                    if kind.is_empty() {
                        "listed"
                    } else {
                        kind.as_str()
                    }
                )
            });
            if let Some(slot) = index.get(&group).and_then(|i| out.get_mut(*i)) {
                *slot = GroupDescription {
                    group_id: group.clone(),
                    state: l.state.clone().unwrap_or_default(),
                    protocol_type: l.protocol_type.clone(),
                    protocol: String::new(),
                    members: Vec::new(),
                    coordinator: Some(l.coordinator),
                    error: Some(ItemError {
                        code: codes::UNSUPPORTED_VERSION,
                        name: codes::error_name(codes::UNSUPPORTED_VERSION),
                        message: Some(format!(
                            "group {group} is a {} group and cannot be described: {why}",
                            if kind.is_empty() {
                                "listed"
                            } else {
                                kind.as_str()
                            }
                        )),
                    }),
                    group_type: l.group_type,
                    group_epoch: None,
                    assignment_epoch: None,
                };
            }
        }
        Ok(out)
    }

    /// ConsumerGroupDescribe or ShareGroupDescribe of `groups` on their coordinator. A
    /// coordinator that does not offer the API answers each group UNSUPPORTED_VERSION, naming
    /// the API and the broker.
    async fn describe_typed_on(
        &self,
        api: GroupApi,
        coordinator: BrokerId,
        groups: Vec<String>,
    ) -> Result<Vec<(String, GroupDescription)>> {
        let conn = self.connection(coordinator).await?;
        let version = match api {
            GroupApi::Consumer => conn.version::<ConsumerGroupDescribeRequest>(),
            GroupApi::Share => conn.version::<ShareGroupDescribeRequest>(),
        };
        let version = match version {
            Ok(v) => v,
            Err(Error::UnsupportedVersion { api: name, .. }) => {
                let message = format!("broker {coordinator} does not offer {name}");
                return Ok(groups
                    .into_iter()
                    .map(|g| {
                        let mut d = failed_description(
                            &g,
                            ItemError {
                                code: codes::UNSUPPORTED_VERSION,
                                name: codes::error_name(codes::UNSUPPORTED_VERSION),
                                message: Some(message.clone()),
                            },
                        );
                        d.coordinator = Some(coordinator);
                        (g, d)
                    })
                    .collect());
            }
            Err(e) => return Err(e),
        };
        let described: Vec<GroupDescription> =
            match api {
                GroupApi::Consumer => {
                    let mut request = ConsumerGroupDescribeRequest::default();
                    request.group_ids = groups.iter().map(|g| group_id(g)).collect();
                    let response = conn.send(&request, version).await?;
                    response
                        .groups
                        .into_iter()
                        .map(|g| {
                            let mut members: Vec<GroupMember> =
                                g.members
                                    .into_iter()
                                    .map(|m| GroupMember {
                                        member_id: m.member_id.to_string(),
                                        group_instance_id: m.instance_id.map(|i| i.to_string()),
                                        client_id: m.client_id.to_string(),
                                        host: m.client_host.to_string(),
                                        assignment: topics_by_name(
                                            m.assignment.topic_partitions.into_iter().map(|t| {
                                                (t.topic_name.0.to_string(), t.partitions)
                                            }),
                                        ),
                                        target_assignment: Some(topics_by_name(
                                            m.target_assignment.topic_partitions.into_iter().map(
                                                |t| (t.topic_name.0.to_string(), t.partitions),
                                            ),
                                        )),
                                        member_epoch: Some(m.member_epoch),
                                    })
                                    .collect();
                            members.sort_by(|a, b| a.member_id.cmp(&b.member_id));
                            typed_description(
                                coordinator,
                                GroupApi::Consumer.group_type(),
                                g.group_id.0.to_string(),
                                g.group_state.to_string(),
                                g.assignor_name.to_string(),
                                members,
                                (g.group_epoch, g.assignment_epoch),
                                ItemError::from_code(
                                    g.error_code,
                                    g.error_message.map(|m| m.to_string()),
                                ),
                            )
                        })
                        .collect()
                }
                GroupApi::Share => {
                    let mut request = ShareGroupDescribeRequest::default();
                    request.group_ids = groups.iter().map(|g| group_id(g)).collect();
                    let response = conn.send(&request, version).await?;
                    response
                        .groups
                        .into_iter()
                        .map(|g| {
                            let mut members: Vec<GroupMember> =
                                g.members
                                    .into_iter()
                                    .map(|m| GroupMember {
                                        member_id: m.member_id.to_string(),
                                        group_instance_id: None,
                                        client_id: m.client_id.to_string(),
                                        host: m.client_host.to_string(),
                                        assignment: topics_by_name(
                                            m.assignment.topic_partitions.into_iter().map(|t| {
                                                (t.topic_name.0.to_string(), t.partitions)
                                            }),
                                        ),
                                        target_assignment: None,
                                        member_epoch: Some(m.member_epoch),
                                    })
                                    .collect();
                            members.sort_by(|a, b| a.member_id.cmp(&b.member_id));
                            typed_description(
                                coordinator,
                                GroupApi::Share.group_type(),
                                g.group_id.0.to_string(),
                                g.group_state.to_string(),
                                g.assignor_name.to_string(),
                                members,
                                (g.group_epoch, g.assignment_epoch),
                                ItemError::from_code(
                                    g.error_code,
                                    g.error_message.map(|m| m.to_string()),
                                ),
                            )
                        })
                        .collect()
                }
            };
        Ok(described
            .into_iter()
            .map(|d| (d.group_id.clone(), d))
            .collect())
    }

    async fn describe_groups_on(
        &self,
        coordinator: BrokerId,
        groups: Vec<String>,
    ) -> Result<Vec<(String, GroupDescription)>> {
        let conn = self.connection(coordinator).await?;
        let version = conn.version::<DescribeGroupsRequest>()?;
        let mut request = DescribeGroupsRequest::default();
        request.groups = groups.iter().map(|g| group_id(g)).collect();
        let response = conn.send(&request, version).await?;
        Ok(response
            .groups
            .into_iter()
            .map(|g| {
                let protocol_type = g.protocol_type.to_string();
                let decode = protocol_type == "consumer" || protocol_type.is_empty();
                let mut members: Vec<GroupMember> = g
                    .members
                    .into_iter()
                    .map(|m| GroupMember {
                        member_id: m.member_id.to_string(),
                        group_instance_id: m.group_instance_id.map(|i| i.to_string()),
                        client_id: m.client_id.to_string(),
                        host: m.client_host.to_string(),
                        assignment: if decode {
                            decode_assignment(&m.member_assignment).unwrap_or_else(|e| {
                                tracing::debug!(error = %e, "undecodable member assignment");
                                Vec::new()
                            })
                        } else {
                            Vec::new()
                        },
                        target_assignment: None,
                        member_epoch: None,
                    })
                    .collect();
                members.sort_by(|a, b| a.member_id.cmp(&b.member_id));
                let name = g.group_id.0.to_string();
                (
                    name.clone(),
                    GroupDescription {
                        group_id: name,
                        state: g.group_state.to_string(),
                        protocol_type,
                        protocol: g.protocol_data.to_string(),
                        members,
                        coordinator: Some(coordinator),
                        group_type: (g.error_code == 0).then(|| "classic".to_string()),
                        group_epoch: None,
                        assignment_epoch: None,
                        error: ItemError::from_code(
                            g.error_code,
                            g.error_message.map(|m| m.to_string()),
                        ),
                    },
                )
            })
            .collect())
    }

    /// DeleteGroups through each group's coordinator (the group must be empty). One result per
    /// group, in order.
    pub async fn delete_groups(&self, groups: &[String]) -> Result<Vec<GroupResult>> {
        self.per_group(
            groups,
            |coordinator, names| async move {
                let conn = self.connection(coordinator).await?;
                let version = conn.version::<DeleteGroupsRequest>()?;
                let mut request = DeleteGroupsRequest::default();
                request.groups_names = names.iter().map(|g| group_id(g)).collect();
                let response = conn.send(&request, version).await?;
                Ok(response
                    .results
                    .into_iter()
                    .map(|r| {
                        let name = r.group_id.0.to_string();
                        (
                            name.clone(),
                            GroupResult {
                                group_id: name,
                                error: ItemError::from_code(r.error_code, None),
                            },
                        )
                    })
                    .collect())
            },
            |g, error| GroupResult {
                group_id: g.to_string(),
                error: Some(error),
            },
            |r| r.error.as_ref().map(|e| e.code),
        )
        .await
    }

    /// Runs a per-group request against each group's coordinator, retrying the groups whose
    /// coordinator moved or could not be reached.
    async fn per_group<T, Call, Fut>(
        &self,
        groups: &[String],
        call: Call,
        failed: impl Fn(&str, ItemError) -> T,
        code_of: impl Fn(&T) -> Option<i16>,
    ) -> Result<Vec<T>>
    where
        Call: Fn(BrokerId, Vec<String>) -> Fut,
        Fut: Future<Output = Result<Vec<(String, T)>>>,
    {
        let order: Vec<String> = {
            let mut seen = BTreeSet::new();
            groups
                .iter()
                .filter(|g| seen.insert(g.as_str()))
                .cloned()
                .collect()
        };
        let mut done: BTreeMap<String, T> = BTreeMap::new();
        let mut pending = order.clone();
        let mut tries = 0u32;
        loop {
            let mut retry: Vec<String> = Vec::new();
            let mut by_coordinator: BTreeMap<BrokerId, Vec<String>> = BTreeMap::new();
            match self.find_coordinators(&pending).await {
                Ok(found) => {
                    for (g, coordinator) in found {
                        match coordinator {
                            Ok(id) => by_coordinator.entry(id).or_default().push(g),
                            Err(e) => {
                                if e.is_retriable() {
                                    retry.push(g.clone());
                                }
                                done.insert(g.clone(), failed(&g, as_item_error(&e)));
                            }
                        }
                    }
                }
                Err(e) if e.is_retriable() => {
                    for g in &pending {
                        done.insert(g.clone(), failed(g, as_item_error(&e)));
                    }
                    retry = pending.clone();
                }
                Err(e) => return Err(e),
            }
            let calls: Vec<_> = by_coordinator
                .into_iter()
                .map(|(id, names)| {
                    let fut = call(id, names.clone());
                    async move { (names, fut.await) }
                })
                .collect();
            for (names, result) in join_all(calls).await {
                match result {
                    Ok(items) => {
                        for (g, item) in items {
                            if !names.contains(&g) {
                                continue;
                            }
                            if let Some(code) = code_of(&item).filter(|c| coordinator_moved(*c)) {
                                if code != codes::COORDINATOR_LOAD_IN_PROGRESS {
                                    self.forget_coordinator(&g);
                                }
                                retry.push(g.clone());
                            }
                            done.insert(g, item);
                        }
                        for g in names {
                            if !done.contains_key(&g) {
                                let e = ItemError::from_code(
                                    -1,
                                    Some(
                                        "the coordinator's answer does not mention this group"
                                            .into(),
                                    ),
                                );
                                if let Some(e) = e {
                                    done.insert(g.clone(), failed(&g, e));
                                }
                            }
                        }
                    }
                    Err(e) if e.is_retriable() => {
                        for g in names {
                            self.forget_coordinator(&g);
                            done.insert(g.clone(), failed(&g, as_item_error(&e)));
                            retry.push(g);
                        }
                    }
                    Err(e) => return Err(e),
                }
            }
            if retry.is_empty() || tries >= self.inner.config.retries {
                break;
            }
            tries += 1;
            tracing::debug!(
                groups = retry.len(),
                attempt = tries,
                "retrying group requests"
            );
            self.backoff_and_refresh(tries).await;
            pending = retry;
        }
        Ok(order.iter().filter_map(|g| done.remove(g)).collect())
    }

    /// Every committed offset of each of `groups`: on Kafka 3.0+ (OffsetFetch v8+) many groups
    /// go in one request to their coordinator (at most 100), every coordinator at once; older
    /// brokers get one request a group, every coordinator at once. Groups whose coordinator moved
    /// are retried after rediscovering it. One result per group, in order (duplicates removed),
    /// each with its error; the same offsets as [`Client::committed_offsets`] with no partitions.
    pub async fn committed_offsets_of_groups(
        &self,
        groups: &[String],
    ) -> Result<Vec<GroupOffsets>> {
        self.per_group(
            groups,
            |coordinator, names| self.offset_fetch_on(coordinator, names),
            |g, error| GroupOffsets {
                group_id: g.to_string(),
                offsets: Vec::new(),
                error: Some(error),
            },
            |o| o.error.as_ref().map(|e| e.code),
        )
        .await
    }

    /// Every share-partition start offset of each share group of `groups` (KIP-932,
    /// DescribeShareGroupOffsets): where the group's consumption starts, the offset its backlog
    /// is counted from. In `GroupOffsets` form: `offset` is the start offset, None where the
    /// group has not started on the partition. A coordinator that does not offer the API answers
    /// each group UNSUPPORTED_VERSION naming it.
    pub async fn share_group_offsets(&self, groups: &[String]) -> Result<Vec<GroupOffsets>> {
        self.per_group(
            groups,
            |coordinator, names| self.share_offsets_on(coordinator, names),
            |g, error| GroupOffsets {
                group_id: g.to_string(),
                offsets: Vec::new(),
                error: Some(error),
            },
            |o| o.error.as_ref().map(|e| e.code),
        )
        .await
    }

    async fn share_offsets_on(
        &self,
        coordinator: BrokerId,
        groups: Vec<String>,
    ) -> Result<Vec<(String, GroupOffsets)>> {
        let conn = self.connection(coordinator).await?;
        let version = match conn.version::<DescribeShareGroupOffsetsRequest>() {
            Ok(v) => v,
            Err(Error::UnsupportedVersion { api, .. }) => {
                let error = ItemError {
                    code: codes::UNSUPPORTED_VERSION,
                    name: codes::error_name(codes::UNSUPPORTED_VERSION),
                    message: Some(format!("broker {coordinator} does not offer {api}")),
                };
                return Ok(groups
                    .into_iter()
                    .map(|g| {
                        let o = GroupOffsets {
                            group_id: g.clone(),
                            offsets: Vec::new(),
                            error: Some(error.clone()),
                        };
                        (g, o)
                    })
                    .collect());
            }
            Err(e) => return Err(e),
        };
        let mut request = DescribeShareGroupOffsetsRequest::default();
        request.groups = groups
            .iter()
            .map(|g| {
                let mut rg = DescribeShareGroupOffsetsRequestGroup::default();
                rg.group_id = group_id(g);
                rg.topics = None;
                rg
            })
            .collect();
        let response = conn.send(&request, version).await?;
        Ok(response
            .groups
            .into_iter()
            .map(|g| {
                let name = g.group_id.0.to_string();
                let mut offsets: Vec<CommittedOffset> = g
                    .topics
                    .into_iter()
                    .flat_map(|t| {
                        let topic = t.topic_name.0.to_string();
                        t.partitions.into_iter().map(move |p| {
                            committed(
                                &topic,
                                p.partition_index,
                                p.start_offset,
                                p.leader_epoch,
                                None,
                                p.error_code,
                            )
                        })
                    })
                    .collect();
                offsets.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
                let error =
                    ItemError::from_code(g.error_code, g.error_message.map(|m| m.to_string()));
                (
                    name.clone(),
                    GroupOffsets {
                        group_id: name,
                        offsets: if error.is_some() { Vec::new() } else { offsets },
                        error,
                    },
                )
            })
            .collect())
    }

    /// OffsetFetch of every committed offset of `groups`, all coordinated by `coordinator`.
    async fn offset_fetch_on(
        &self,
        coordinator: BrokerId,
        groups: Vec<String>,
    ) -> Result<Vec<(String, GroupOffsets)>> {
        let conn = self.connection(coordinator).await?;
        let version = conn.version::<OffsetFetchRequest>()?;
        let mut out = Vec::with_capacity(groups.len());
        if version < 8 {
            for g in groups {
                let result = self.committed_offsets_at(coordinator, &g, None).await;
                let offsets = match result {
                    Ok(offsets) => GroupOffsets {
                        group_id: g.clone(),
                        offsets,
                        error: None,
                    },
                    Err(e) if e.is_retriable() || matches!(e, Error::Kafka { .. }) => {
                        GroupOffsets {
                            group_id: g.clone(),
                            offsets: Vec::new(),
                            error: Some(as_item_error(&e)),
                        }
                    }
                    Err(e) => return Err(e),
                };
                out.push((g, offsets));
            }
            return Ok(out);
        }
        for chunk in groups.chunks(GROUPS_PER_OFFSET_FETCH) {
            let mut request = OffsetFetchRequest::default();
            request.groups = chunk
                .iter()
                .map(|g| {
                    let mut group = OffsetFetchRequestGroup::default();
                    group.group_id = group_id(g);
                    group.topics = None;
                    group
                })
                .collect();
            let response = conn.send(&request, version).await?;
            for g in response.groups {
                let name = g.group_id.0.to_string();
                let mut offsets = Vec::new();
                for t in g.topics {
                    let topic = t.name.0.to_string();
                    for p in t.partitions {
                        offsets.push(committed(
                            &topic,
                            p.partition_index,
                            p.committed_offset,
                            p.committed_leader_epoch,
                            p.metadata,
                            p.error_code,
                        ));
                    }
                }
                // A coordinator error on a partition is the group's (retried elsewhere).
                let code = if g.error_code != 0 {
                    g.error_code
                } else {
                    offsets
                        .iter()
                        .filter_map(|o| o.error.as_ref().map(|e| e.code))
                        .find(|c| coordinator_moved(*c))
                        .unwrap_or(0)
                };
                let error = ItemError::from_code(code, None);
                if error.is_some() {
                    offsets.clear();
                }
                offsets.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
                out.push((
                    name.clone(),
                    GroupOffsets {
                        group_id: name,
                        offsets,
                        error,
                    },
                ));
            }
        }
        Ok(out)
    }

    /// The committed offsets of `group`: of the given partitions, or (None) of every partition
    /// the group committed. Sorted by topic and partition; `offset` is None where the group has
    /// none.
    pub async fn committed_offsets(
        &self,
        group: &str,
        partitions: Option<&[TopicPartition]>,
    ) -> Result<Vec<CommittedOffset>> {
        self.with_coordinator("OffsetFetch", group, move |coordinator| async move {
            self.committed_offsets_at(coordinator, group, partitions)
                .await
        })
        .await
    }

    /// OffsetFetch of one group on its coordinator `coordinator`.
    async fn committed_offsets_at(
        &self,
        coordinator: BrokerId,
        group: &str,
        partitions: Option<&[TopicPartition]>,
    ) -> Result<Vec<CommittedOffset>> {
        let conn = self.connection(coordinator).await?;
        let version = conn.version::<OffsetFetchRequest>()?;
        let by_topic: Option<BTreeMap<&str, Vec<i32>>> = partitions.map(|tps| {
            let mut m: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
            for tp in tps {
                m.entry(tp.topic.as_str()).or_default().push(tp.partition);
            }
            m
        });
        let mut request = OffsetFetchRequest::default();
        if version >= 8 {
            let mut g = OffsetFetchRequestGroup::default();
            g.group_id = group_id(group);
            g.topics = by_topic.as_ref().map(|m| {
                m.iter()
                    .map(|(t, parts)| {
                        let mut topic = OffsetFetchRequestTopics::default();
                        topic.name = topic_name(t);
                        topic.partition_indexes = parts.clone();
                        topic
                    })
                    .collect()
            });
            request.groups = vec![g];
        } else {
            request.group_id = group_id(group);
            request.topics = match &by_topic {
                Some(m) => Some(
                    m.iter()
                        .map(|(t, parts)| {
                            let mut topic = OffsetFetchRequestTopic::default();
                            topic.name = topic_name(t);
                            topic.partition_indexes = parts.clone();
                            topic
                        })
                        .collect(),
                ),
                None if version >= 2 => None,
                None => {
                    return Err(Error::UnsupportedVersion {
                        api: "OffsetFetch",
                        broker: conn.label().to_string(),
                        broker_versions: None,
                        client_versions: (2, 9),
                    })
                }
            };
        }
        let response = conn.send(&request, version).await?;
        let mut out = Vec::new();
        if version >= 8 {
            let Some(g) = response.groups.into_iter().next() else {
                return Err(Error::Protocol {
                    broker: conn.label().to_string(),
                    detail: "offsetfetch answer lacks the group".to_string(),
                });
            };
            if g.error_code != 0 {
                return Err(Error::kafka("OffsetFetch", g.error_code, None));
            }
            for t in g.topics {
                let topic = t.name.0.to_string();
                for p in t.partitions {
                    out.push(committed(
                        &topic,
                        p.partition_index,
                        p.committed_offset,
                        p.committed_leader_epoch,
                        p.metadata,
                        p.error_code,
                    ));
                }
            }
        } else {
            if response.error_code != 0 {
                return Err(Error::kafka("OffsetFetch", response.error_code, None));
            }
            for t in response.topics {
                let topic = t.name.0.to_string();
                for p in t.partitions {
                    out.push(committed(
                        &topic,
                        p.partition_index,
                        p.committed_offset,
                        if version >= 5 {
                            p.committed_leader_epoch
                        } else {
                            -1
                        },
                        p.metadata,
                        p.error_code,
                    ));
                }
            }
        }
        if let Some(code) = out
            .iter()
            .filter_map(|o| o.error.as_ref().map(|e| e.code))
            .find(|c| coordinator_moved(*c))
        {
            return Err(Error::kafka("OffsetFetch", code, None));
        }
        out.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
        Ok(out)
    }

    /// OffsetCommit in the simple form (generation -1, no member id), for resetting offsets of
    /// an empty group (an active group refuses it, e.g. UNKNOWN_MEMBER_ID). One result per
    /// partition, in order.
    pub async fn commit_offsets(
        &self,
        group: &str,
        offsets: &[(TopicPartition, i64)],
    ) -> Result<Vec<PartitionResult>> {
        self.with_coordinator("OffsetCommit", group, move |coordinator| async move {
            let conn = self.connection(coordinator).await?;
            let version = conn.version::<OffsetCommitRequest>()?;
            let mut by_topic: BTreeMap<&str, Vec<(i32, i64)>> = BTreeMap::new();
            for (tp, offset) in offsets {
                by_topic
                    .entry(tp.topic.as_str())
                    .or_default()
                    .push((tp.partition, *offset));
            }
            let mut request = OffsetCommitRequest::default();
            request.group_id = group_id(group);
            request.generation_id_or_member_epoch = -1;
            request.member_id = StrBytes::default();
            request.topics = by_topic
                .into_iter()
                .map(|(t, parts)| {
                    let mut topic = OffsetCommitRequestTopic::default();
                    topic.name = topic_name(t);
                    topic.partitions = parts
                        .into_iter()
                        .map(|(p, offset)| {
                            let mut partition = OffsetCommitRequestPartition::default();
                            partition.partition_index = p;
                            partition.committed_offset = offset;
                            partition.committed_metadata = Some(StrBytes::default());
                            partition
                        })
                        .collect();
                    topic
                })
                .collect();
            let response = conn.send(&request, version).await?;
            let results: Vec<PartitionResult> = offsets
                .iter()
                .map(|(tp, _)| {
                    let found = response
                        .topics
                        .iter()
                        .filter(|t| t.name.0.as_str() == tp.topic)
                        .flat_map(|t| t.partitions.iter())
                        .find(|p| p.partition_index == tp.partition);
                    PartitionResult {
                        topic: tp.topic.clone(),
                        partition: tp.partition,
                        error: match found {
                            Some(p) => ItemError::from_code(p.error_code, None),
                            None => ItemError::from_code(
                                -1,
                                Some(
                                    "the coordinator's answer does not mention this partition"
                                        .into(),
                                ),
                            ),
                        },
                    }
                })
                .collect();
            if let Some(code) = results
                .iter()
                .filter_map(|r| r.error.as_ref().map(|e| e.code))
                .find(|c| coordinator_moved(*c))
            {
                return Err(Error::kafka("OffsetCommit", code, None));
            }
            Ok(results)
        })
        .await
    }

    /// Runs `call` against the coordinator of `group`, forgetting the cached coordinator and
    /// retrying when it moved or cannot be reached.
    async fn with_coordinator<T, Call, Fut>(
        &self,
        api: &'static str,
        group: &str,
        call: Call,
    ) -> Result<T>
    where
        Call: Fn(BrokerId) -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        let call = &call;
        self.retrying(api, move || async move {
            let coordinator = self.coordinator(group).await?;
            let result = call(coordinator).await;
            if let Err(e) = &result {
                if e.invalidates_coordinator() {
                    self.forget_coordinator(group);
                }
            }
            result
        })
        .await
    }
}

/// The typed describe APIs tried after DescribeGroups.
#[derive(Debug, Clone, Copy)]
enum GroupApi {
    /// ConsumerGroupDescribe (KIP-848, Kafka 3.7+).
    Consumer,
    /// ShareGroupDescribe (KIP-932, Kafka 4.0+).
    Share,
}

impl GroupApi {
    /// The group type ListGroups names for the groups this API describes.
    fn group_type(self) -> &'static str {
        match self {
            GroupApi::Consumer => "consumer",
            GroupApi::Share => "share",
        }
    }
}

/// A description of `group` that could not be read, for `error`.
fn failed_description(group: &str, error: ItemError) -> GroupDescription {
    GroupDescription {
        group_id: group.to_string(),
        state: String::new(),
        protocol_type: String::new(),
        protocol: String::new(),
        members: Vec::new(),
        coordinator: None,
        error: Some(error),
        group_type: None,
        group_epoch: None,
        assignment_epoch: None,
    }
}

/// Whether the group's describe answered that it does not know it: GROUP_ID_NOT_FOUND, or (a
/// DescribeGroups before v6, which has no error for it) `Dead` with no member and no protocol.
fn not_found(d: &GroupDescription) -> bool {
    match &d.error {
        Some(e) => e.code == codes::GROUP_ID_NOT_FOUND,
        None => {
            d.state.eq_ignore_ascii_case("dead")
                && d.members.is_empty()
                && d.protocol_type.is_empty()
        }
    }
}

/// A consumer or share group's description.
#[allow(clippy::too_many_arguments)]
fn typed_description(
    coordinator: BrokerId,
    kind: &str,
    group: String,
    state: String,
    assignor: String,
    members: Vec<GroupMember>,
    (group_epoch, assignment_epoch): (i32, i32),
    error: Option<ItemError>,
) -> GroupDescription {
    let known = error.is_none();
    GroupDescription {
        group_id: group,
        state,
        protocol_type: if known {
            kind.to_string()
        } else {
            String::new()
        },
        protocol: assignor,
        members,
        coordinator: Some(coordinator),
        error,
        group_type: known.then(|| kind.to_string()),
        group_epoch: known.then_some(group_epoch),
        assignment_epoch: known.then_some(assignment_epoch),
    }
}

/// Topic partitions by topic name, each topic once with its partitions in order.
fn topics_by_name(items: impl Iterator<Item = (String, Vec<i32>)>) -> Vec<TopicPartitions> {
    let mut topics: BTreeMap<String, BTreeSet<i32>> = BTreeMap::new();
    for (topic, partitions) in items {
        topics.entry(topic).or_default().extend(partitions);
    }
    topics
        .into_iter()
        .map(|(topic, partitions)| TopicPartitions {
            topic,
            partitions: partitions.into_iter().collect(),
        })
        .collect()
}

fn committed(
    topic: &str,
    partition: i32,
    offset: i64,
    leader_epoch: i32,
    metadata: Option<StrBytes>,
    error_code: i16,
) -> CommittedOffset {
    CommittedOffset {
        topic: topic.to_string(),
        partition,
        offset: (offset >= 0 && error_code == 0).then_some(offset),
        leader_epoch: (leader_epoch >= 0).then_some(leader_epoch),
        metadata: metadata.map(|m| m.to_string()).filter(|m| !m.is_empty()),
        error: ItemError::from_code(error_code, None),
    }
}

/// Decodes a member assignment of the consumer protocol (a version, then the
/// `ConsumerProtocolAssignment` of that version; later versions only add fields, so they are
/// read as the latest one known). Empty bytes (a rebalancing member) are no assignment.
pub(crate) fn decode_assignment(bytes: &[u8]) -> Result<Vec<TopicPartitions>, String> {
    if bytes.is_empty() {
        return Ok(Vec::new());
    }
    let mut buf = Bytes::copy_from_slice(bytes);
    if buf.len() < 2 {
        return Err("assignment shorter than its version".to_string());
    }
    let version = buf.get_i16();
    if version < 0 {
        return Err(format!("assignment has version {version}"));
    }
    let assignment = guarded(|| {
        ConsumerProtocolAssignment::decode(&mut buf, version.min(3)).map_err(|e| e.to_string())
    })?;
    let mut by_topic: BTreeMap<String, BTreeSet<i32>> = BTreeMap::new();
    for tp in assignment.assigned_partitions {
        by_topic
            .entry(tp.topic.0.to_string())
            .or_default()
            .extend(tp.partitions);
    }
    Ok(by_topic
        .into_iter()
        .map(|(topic, partitions)| TopicPartitions {
            topic,
            partitions: partitions.into_iter().collect(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::{BufMut, BytesMut};
    use kafka_protocol::messages::consumer_protocol_assignment::TopicPartition as WireTp;
    use kafka_protocol::protocol::Encodable;

    fn encoded(version: i16, topics: &[(&str, &[i32])]) -> Vec<u8> {
        let mut a = ConsumerProtocolAssignment::default();
        for (t, parts) in topics {
            let mut tp = WireTp::default();
            tp.topic = topic_name(t);
            tp.partitions = parts.to_vec();
            a.assigned_partitions.push(tp);
        }
        a.user_data = Some(Bytes::from_static(b"sticky"));
        let mut buf = BytesMut::new();
        buf.put_i16(version);
        a.encode(&mut buf, version.min(3)).unwrap();
        buf.to_vec()
    }

    #[test]
    fn consumer_protocol_assignments_decode_for_every_version() {
        for version in 0..=3 {
            let bytes = encoded(version, &[("b", &[2, 0]), ("a", &[1])]);
            assert_eq!(
                decode_assignment(&bytes).unwrap(),
                vec![
                    TopicPartitions {
                        topic: "a".into(),
                        partitions: vec![1]
                    },
                    TopicPartitions {
                        topic: "b".into(),
                        partitions: vec![0, 2]
                    },
                ],
                "version {version}"
            );
        }
    }

    #[test]
    fn a_future_assignment_version_is_read_as_the_latest_known() {
        let mut bytes = encoded(3, &[("t", &[0])]);
        bytes[0] = 0;
        bytes[1] = 7;
        assert_eq!(
            decode_assignment(&bytes).unwrap(),
            vec![TopicPartitions {
                topic: "t".into(),
                partitions: vec![0]
            }]
        );
    }

    #[test]
    fn empty_or_malformed_assignments_do_not_panic() {
        assert_eq!(decode_assignment(&[]).unwrap(), Vec::new());
        assert!(decode_assignment(&[0]).is_err());
        assert!(decode_assignment(&[0xff, 0xff]).is_err());
        let bytes = encoded(1, &[("topic", &[0, 1, 2])]);
        for cut in 2..bytes.len() - 1 {
            let _ = decode_assignment(&bytes[..cut]);
        }
    }
}
