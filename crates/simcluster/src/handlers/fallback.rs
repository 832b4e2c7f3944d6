//! Responses for API keys the simulator does not implement: the response type's default with
//! UNSUPPORTED_VERSION as its error code where it has one. Never a dropped connection, unless
//! the version is one kafka-protocol cannot encode. (Generated from kafka-protocol 0.18's API
//! key list.)

use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Encodable, Message};

use super::{frame, Reply};
use crate::state::err;

const UNSUPPORTED: i16 = err::UNSUPPORTED_VERSION;

fn fb<R: Encodable + Default + Message>(
    api: ApiKey,
    version: i16,
    cid: i32,
    set: impl Fn(&mut R),
) -> Result<Reply, String> {
    if version < R::VERSIONS.min || version > R::VERSIONS.max {
        return Err(format!("{api:?} v{version} cannot be answered"));
    }
    let mut r = R::default();
    set(&mut r);
    frame(api, version, cid, &r).or_else(|_| frame(api, version, cid, &R::default()))
}

pub fn respond(api: ApiKey, version: i16, cid: i32) -> Result<Reply, String> {
    tracing::debug!(?api, version, "api not simulated, answering with an error");
    match api {
        ApiKey::Produce => fb(api, version, cid, |_: &mut ProduceResponse| {}),
        ApiKey::Fetch => fb(api, version, cid, |r: &mut FetchResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::ListOffsets => fb(api, version, cid, |_: &mut ListOffsetsResponse| {}),
        ApiKey::Metadata => fb(api, version, cid, |r: &mut MetadataResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::OffsetCommit => fb(api, version, cid, |_: &mut OffsetCommitResponse| {}),
        ApiKey::OffsetFetch => fb(api, version, cid, |r: &mut OffsetFetchResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::FindCoordinator => fb(api, version, cid, |r: &mut FindCoordinatorResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::JoinGroup => fb(api, version, cid, |r: &mut JoinGroupResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::Heartbeat => fb(api, version, cid, |r: &mut HeartbeatResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::LeaveGroup => fb(api, version, cid, |r: &mut LeaveGroupResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::SyncGroup => fb(api, version, cid, |r: &mut SyncGroupResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::DescribeGroups => fb(api, version, cid, |_: &mut DescribeGroupsResponse| {}),
        ApiKey::ListGroups => fb(api, version, cid, |r: &mut ListGroupsResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::SaslHandshake => fb(api, version, cid, |r: &mut SaslHandshakeResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::ApiVersions => fb(api, version, cid, |r: &mut ApiVersionsResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::CreateTopics => fb(api, version, cid, |_: &mut CreateTopicsResponse| {}),
        ApiKey::DeleteTopics => fb(api, version, cid, |_: &mut DeleteTopicsResponse| {}),
        ApiKey::DeleteRecords => fb(api, version, cid, |_: &mut DeleteRecordsResponse| {}),
        ApiKey::InitProducerId => fb(api, version, cid, |r: &mut InitProducerIdResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::OffsetForLeaderEpoch => {
            fb(api, version, cid, |_: &mut OffsetForLeaderEpochResponse| {})
        }
        ApiKey::AddPartitionsToTxn => {
            fb(api, version, cid, |r: &mut AddPartitionsToTxnResponse| {
                r.error_code = UNSUPPORTED
            })
        }
        ApiKey::AddOffsetsToTxn => fb(api, version, cid, |r: &mut AddOffsetsToTxnResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::EndTxn => fb(api, version, cid, |r: &mut EndTxnResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::WriteTxnMarkers => fb(api, version, cid, |_: &mut WriteTxnMarkersResponse| {}),
        ApiKey::TxnOffsetCommit => fb(api, version, cid, |_: &mut TxnOffsetCommitResponse| {}),
        ApiKey::DescribeAcls => fb(api, version, cid, |r: &mut DescribeAclsResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::CreateAcls => fb(api, version, cid, |_: &mut CreateAclsResponse| {}),
        ApiKey::DeleteAcls => fb(api, version, cid, |_: &mut DeleteAclsResponse| {}),
        ApiKey::DescribeConfigs => fb(api, version, cid, |_: &mut DescribeConfigsResponse| {}),
        ApiKey::AlterConfigs => fb(api, version, cid, |_: &mut AlterConfigsResponse| {}),
        ApiKey::AlterReplicaLogDirs => {
            fb(api, version, cid, |_: &mut AlterReplicaLogDirsResponse| {})
        }
        ApiKey::DescribeLogDirs => fb(api, version, cid, |r: &mut DescribeLogDirsResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::SaslAuthenticate => fb(api, version, cid, |r: &mut SaslAuthenticateResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::CreatePartitions => fb(api, version, cid, |_: &mut CreatePartitionsResponse| {}),
        ApiKey::CreateDelegationToken => fb(
            api,
            version,
            cid,
            |r: &mut CreateDelegationTokenResponse| r.error_code = UNSUPPORTED,
        ),
        ApiKey::RenewDelegationToken => {
            fb(api, version, cid, |r: &mut RenewDelegationTokenResponse| {
                r.error_code = UNSUPPORTED
            })
        }
        ApiKey::ExpireDelegationToken => fb(
            api,
            version,
            cid,
            |r: &mut ExpireDelegationTokenResponse| r.error_code = UNSUPPORTED,
        ),
        ApiKey::DescribeDelegationToken => fb(
            api,
            version,
            cid,
            |r: &mut DescribeDelegationTokenResponse| r.error_code = UNSUPPORTED,
        ),
        ApiKey::DeleteGroups => fb(api, version, cid, |_: &mut DeleteGroupsResponse| {}),
        ApiKey::ElectLeaders => fb(api, version, cid, |r: &mut ElectLeadersResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::IncrementalAlterConfigs => fb(
            api,
            version,
            cid,
            |_: &mut IncrementalAlterConfigsResponse| {},
        ),
        ApiKey::AlterPartitionReassignments => fb(
            api,
            version,
            cid,
            |r: &mut AlterPartitionReassignmentsResponse| r.error_code = UNSUPPORTED,
        ),
        ApiKey::ListPartitionReassignments => fb(
            api,
            version,
            cid,
            |r: &mut ListPartitionReassignmentsResponse| r.error_code = UNSUPPORTED,
        ),
        ApiKey::OffsetDelete => fb(api, version, cid, |r: &mut OffsetDeleteResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::DescribeClientQuotas => {
            fb(api, version, cid, |r: &mut DescribeClientQuotasResponse| {
                r.error_code = UNSUPPORTED
            })
        }
        ApiKey::AlterClientQuotas => fb(api, version, cid, |_: &mut AlterClientQuotasResponse| {}),
        ApiKey::DescribeUserScramCredentials => fb(
            api,
            version,
            cid,
            |r: &mut DescribeUserScramCredentialsResponse| r.error_code = UNSUPPORTED,
        ),
        ApiKey::AlterUserScramCredentials => fb(
            api,
            version,
            cid,
            |_: &mut AlterUserScramCredentialsResponse| {},
        ),
        ApiKey::Vote => fb(api, version, cid, |r: &mut VoteResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::BeginQuorumEpoch => fb(api, version, cid, |r: &mut BeginQuorumEpochResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::EndQuorumEpoch => fb(api, version, cid, |r: &mut EndQuorumEpochResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::DescribeQuorum => fb(api, version, cid, |r: &mut DescribeQuorumResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::AlterPartition => fb(api, version, cid, |r: &mut AlterPartitionResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::UpdateFeatures => fb(api, version, cid, |r: &mut UpdateFeaturesResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::Envelope => fb(api, version, cid, |r: &mut EnvelopeResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::FetchSnapshot => fb(api, version, cid, |r: &mut FetchSnapshotResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::DescribeCluster => fb(api, version, cid, |r: &mut DescribeClusterResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::DescribeProducers => fb(api, version, cid, |_: &mut DescribeProducersResponse| {}),
        ApiKey::BrokerRegistration => {
            fb(api, version, cid, |r: &mut BrokerRegistrationResponse| {
                r.error_code = UNSUPPORTED
            })
        }
        ApiKey::BrokerHeartbeat => fb(api, version, cid, |r: &mut BrokerHeartbeatResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::UnregisterBroker => fb(api, version, cid, |r: &mut UnregisterBrokerResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::DescribeTransactions => {
            fb(api, version, cid, |_: &mut DescribeTransactionsResponse| {})
        }
        ApiKey::ListTransactions => fb(api, version, cid, |r: &mut ListTransactionsResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::AllocateProducerIds => {
            fb(api, version, cid, |r: &mut AllocateProducerIdsResponse| {
                r.error_code = UNSUPPORTED
            })
        }
        ApiKey::ConsumerGroupHeartbeat => fb(
            api,
            version,
            cid,
            |r: &mut ConsumerGroupHeartbeatResponse| r.error_code = UNSUPPORTED,
        ),
        ApiKey::ConsumerGroupDescribe => fb(
            api,
            version,
            cid,
            |_: &mut ConsumerGroupDescribeResponse| {},
        ),
        ApiKey::ControllerRegistration => fb(
            api,
            version,
            cid,
            |r: &mut ControllerRegistrationResponse| r.error_code = UNSUPPORTED,
        ),
        ApiKey::GetTelemetrySubscriptions => fb(
            api,
            version,
            cid,
            |r: &mut GetTelemetrySubscriptionsResponse| r.error_code = UNSUPPORTED,
        ),
        ApiKey::PushTelemetry => fb(api, version, cid, |r: &mut PushTelemetryResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::AssignReplicasToDirs => {
            fb(api, version, cid, |r: &mut AssignReplicasToDirsResponse| {
                r.error_code = UNSUPPORTED
            })
        }
        ApiKey::ListConfigResources => {
            fb(api, version, cid, |r: &mut ListConfigResourcesResponse| {
                r.error_code = UNSUPPORTED
            })
        }
        ApiKey::DescribeTopicPartitions => fb(
            api,
            version,
            cid,
            |_: &mut DescribeTopicPartitionsResponse| {},
        ),
        ApiKey::ShareGroupHeartbeat => {
            fb(api, version, cid, |r: &mut ShareGroupHeartbeatResponse| {
                r.error_code = UNSUPPORTED
            })
        }
        ApiKey::ShareGroupDescribe => {
            fb(api, version, cid, |_: &mut ShareGroupDescribeResponse| {})
        }
        ApiKey::ShareFetch => fb(api, version, cid, |r: &mut ShareFetchResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::ShareAcknowledge => fb(api, version, cid, |r: &mut ShareAcknowledgeResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::AddRaftVoter => fb(api, version, cid, |r: &mut AddRaftVoterResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::RemoveRaftVoter => fb(api, version, cid, |r: &mut RemoveRaftVoterResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::UpdateRaftVoter => fb(api, version, cid, |r: &mut UpdateRaftVoterResponse| {
            r.error_code = UNSUPPORTED
        }),
        ApiKey::InitializeShareGroupState => fb(
            api,
            version,
            cid,
            |_: &mut InitializeShareGroupStateResponse| {},
        ),
        ApiKey::ReadShareGroupState => {
            fb(api, version, cid, |_: &mut ReadShareGroupStateResponse| {})
        }
        ApiKey::WriteShareGroupState => {
            fb(api, version, cid, |_: &mut WriteShareGroupStateResponse| {})
        }
        ApiKey::DeleteShareGroupState => fb(
            api,
            version,
            cid,
            |_: &mut DeleteShareGroupStateResponse| {},
        ),
        ApiKey::ReadShareGroupStateSummary => fb(
            api,
            version,
            cid,
            |_: &mut ReadShareGroupStateSummaryResponse| {},
        ),
        ApiKey::DescribeShareGroupOffsets => fb(
            api,
            version,
            cid,
            |_: &mut DescribeShareGroupOffsetsResponse| {},
        ),
        ApiKey::AlterShareGroupOffsets => fb(
            api,
            version,
            cid,
            |r: &mut AlterShareGroupOffsetsResponse| r.error_code = UNSUPPORTED,
        ),
        ApiKey::DeleteShareGroupOffsets => fb(
            api,
            version,
            cid,
            |r: &mut DeleteShareGroupOffsetsResponse| r.error_code = UNSUPPORTED,
        ),
    }
}
