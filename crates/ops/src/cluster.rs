//! The cluster's errors in an operation's words.

use ballast_kafka::{Error as KafkaError, ItemError};

use crate::context::KafkaHandle;
use crate::error::OpError;

/// True for a failure of the connection rather than an answer of the cluster.
pub fn connection_level(err: &KafkaError) -> bool {
    matches!(
        err,
        KafkaError::Connect { .. }
            | KafkaError::ConnectTimeout { .. }
            | KafkaError::Io { .. }
            | KafkaError::Disconnected { .. }
            | KafkaError::Timeout { .. }
            | KafkaError::NoBrokerReachable { .. }
            | KafkaError::Tls { .. }
            | KafkaError::Authentication { .. }
            | KafkaError::OAuth { .. }
    )
}

/// The Kafka error name of an error the cluster answered with, if it is one.
pub fn kafka_name(err: &KafkaError) -> Option<&'static str> {
    match err {
        KafkaError::Kafka { name, .. } => Some(name),
        _ => None,
    }
}

/// A failed read of the cluster: unreachable (503; the client is dropped in the background so
/// the next call reconnects), 404 for an unknown topic, group or broker, 502 for the rest.
pub fn read_failed(kafka: &KafkaHandle, err: KafkaError) -> OpError {
    let details = ballast_runtime::error_chain(&err);
    if connection_level(&err) {
        let handle = kafka.clone();
        tokio::spawn(async move { handle.reset().await });
        return OpError::unavailable("cluster unavailable", details);
    }
    match (&err, kafka_name(&err)) {
        (KafkaError::UnknownTopicOrPartition { .. }, _)
        | (_, Some("UNKNOWN_TOPIC_OR_PARTITION" | "UNKNOWN_TOPIC_ID")) => {
            OpError::not_found("unknown topic or partition", details)
        }
        (_, Some("GROUP_ID_NOT_FOUND")) => OpError::not_found("unknown consumer group", details),
        (_, Some("INVALID_TOPIC_EXCEPTION")) => OpError::bad_input("invalid topic name", details),
        (KafkaError::UnknownBroker(_), _) => OpError::not_found("unknown broker", details),
        (KafkaError::InvalidArgument(_), _) => OpError::bad_input("invalid request", details),
        _ => OpError::cluster("cluster error", details),
    }
}

/// A failed change: the cluster refusing the request as asked (an invalid value, a policy) is
/// the caller's 400 with the broker's words in `details`; the rest as [`read_failed`].
pub fn change_failed(kafka: &KafkaHandle, err: KafkaError) -> OpError {
    if let KafkaError::Kafka { name, .. } = &err {
        if let Some(mapped) = refusal(name, ballast_runtime::error_chain(&err)) {
            return mapped;
        }
    }
    read_failed(kafka, err)
}

/// The cluster's error for one item of a change (a topic, an entity, a binding, a partition).
pub fn item_failed(context: &str, e: &ItemError) -> OpError {
    let details = format!("{context}: {e}");
    refusal(e.name, details.clone()).unwrap_or_else(|| match e.name {
        "UNKNOWN_TOPIC_OR_PARTITION" | "UNKNOWN_TOPIC_ID" => {
            OpError::not_found("unknown topic or partition", details)
        }
        "GROUP_ID_NOT_FOUND" => OpError::not_found("unknown consumer group", details),
        _ => OpError::cluster("cluster error", details),
    })
}

/// Kafka errors that mean "the cluster refused this request as asked".
fn refusal(name: &str, details: String) -> Option<OpError> {
    Some(match name {
        "INVALID_CONFIG"
        | "INVALID_REQUEST"
        | "POLICY_VIOLATION"
        | "INVALID_TOPIC_EXCEPTION"
        | "INVALID_COMMIT_OFFSET_SIZE"
        | "INVALID_PRINCIPAL_TYPE" => OpError::bad_input("rejected by the cluster", details),
        "NON_EMPTY_GROUP"
        | "UNKNOWN_MEMBER_ID"
        | "ILLEGAL_GENERATION"
        | "REBALANCE_IN_PROGRESS"
        | "FENCED_INSTANCE_ID" => OpError::conflict("consumer group has active members", details),
        "SECURITY_DISABLED" => OpError::conflict(
            "the cluster has no authorizer",
            format!("{details}; ACLs cannot be changed until the brokers run an authorizer"),
        ),
        _ => return None,
    })
}
