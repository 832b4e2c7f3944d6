//! The errors of the cluster client. Every variant says which broker (or endpoint) and which API it
//! concerns; a `Display` never repeats its source (log the whole chain).

use std::io;
use std::time::Duration;

use serde::Serialize;

use crate::codes;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The client configuration cannot be used (a TLS file that does not load, an empty bootstrap
    /// list, a reserved SASL extension key).
    #[error("invalid kafka client configuration: {0}")]
    Config(String),

    /// An argument of an operation is not valid (before anything is sent).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// The TCP connection could not be opened.
    #[error("cannot connect to broker {broker}")]
    Connect {
        broker: String,
        #[source]
        source: io::Error,
    },

    /// The TCP or TLS connection was not established within the connect timeout.
    #[error("connecting to broker {broker} timed out after {after:?}")]
    ConnectTimeout { broker: String, after: Duration },

    /// The TLS handshake failed; `reason` says why in words (e.g. the broker certificate is not
    /// trusted by the configured CA).
    #[error("tls handshake with broker {broker} failed: {reason}")]
    Tls {
        broker: String,
        reason: String,
        #[source]
        source: io::Error,
    },

    /// SASL authentication was refused (wrong password, unknown user, expired token, mechanism
    /// not enabled on the broker). `message` is the broker's own message when it sent one.
    #[error("authentication with broker {broker} using {mechanism} failed: {message}")]
    Authentication {
        broker: String,
        mechanism: String,
        message: String,
    },

    /// The OAUTHBEARER token endpoint did not give a token.
    #[error("oauth token request to {endpoint} failed: {detail}")]
    OAuth { endpoint: String, detail: String },

    /// A read or write on an established connection failed.
    #[error("network error with broker {broker} during {api}")]
    Io {
        broker: String,
        api: &'static str,
        #[source]
        source: io::Error,
    },

    /// The broker closed the connection before answering.
    #[error("broker {broker} closed the connection during {api}")]
    Disconnected { broker: String, api: &'static str },

    /// The broker did not answer within the request timeout; the connection is dropped.
    #[error("{api} to broker {broker} got no answer within {after:?}")]
    Timeout {
        broker: String,
        api: &'static str,
        after: Duration,
    },

    /// The broker does not offer a version of `api` that this client (and kafka-protocol) speaks.
    #[error("broker {broker} does not support {api} in a version this client speaks (broker {}, client {}..{})", broker_versions.map_or_else(|| "none".to_string(), |(a, b)| format!("{a}..{b}")), client_versions.0, client_versions.1)]
    UnsupportedVersion {
        api: &'static str,
        broker: String,
        broker_versions: Option<(i16, i16)>,
        client_versions: (i16, i16),
    },

    /// The broker sent something that does not decode as the expected answer.
    #[error("malformed answer from broker {broker}: {detail}")]
    Protocol { broker: String, detail: String },

    /// The broker answered with a Kafka error code for the whole request.
    #[error("{api} failed: {name}{}", message.as_deref().map(|m| format!(" ({m})")).unwrap_or_default())]
    Kafka {
        api: &'static str,
        code: i16,
        name: &'static str,
        message: Option<String>,
    },

    /// The topic or partition is not in the cluster's metadata.
    #[error("unknown topic or partition {topic}{}", partition.map(|p| format!("-{p}")).unwrap_or_default())]
    UnknownTopicOrPartition {
        topic: String,
        partition: Option<i32>,
    },

    /// The broker id is not in the cluster's metadata.
    #[error("unknown broker {0}")]
    UnknownBroker(i32),

    /// No broker could be reached to bootstrap or refresh metadata; `source` is the last failure.
    #[error("no broker reachable (tried {tried})")]
    NoBrokerReachable {
        tried: String,
        #[source]
        source: Box<Error>,
    },
}

impl Error {
    pub(crate) fn kafka(api: &'static str, code: i16, message: Option<String>) -> Error {
        Error::Kafka {
            api,
            code,
            name: codes::error_name(code),
            message: message.filter(|m| !m.is_empty()),
        }
    }

    /// The Kafka error code, if this is an error the broker answered with.
    pub fn kafka_code(&self) -> Option<i16> {
        match self {
            Error::Kafka { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// Whether trying again (after a backoff, possibly elsewhere) may succeed: network errors,
    /// timeouts and the error codes Kafka marks retriable.
    pub fn is_retriable(&self) -> bool {
        match self {
            Error::Connect { .. }
            | Error::ConnectTimeout { .. }
            | Error::Io { .. }
            | Error::Disconnected { .. }
            | Error::Timeout { .. }
            | Error::NoBrokerReachable { .. } => true,
            Error::Kafka { code, .. } => codes::is_retriable(*code),
            _ => false,
        }
    }

    /// Whether the error means the cached metadata (leaders, controller, brokers) may be stale.
    pub(crate) fn invalidates_metadata(&self) -> bool {
        match self {
            Error::Connect { .. }
            | Error::ConnectTimeout { .. }
            | Error::Io { .. }
            | Error::Disconnected { .. }
            | Error::Timeout { .. } => true,
            Error::Kafka { code, .. } => code_invalidates_metadata(*code),
            _ => false,
        }
    }

    /// Whether the error means the cached group coordinator is no longer right.
    pub(crate) fn invalidates_coordinator(&self) -> bool {
        match self {
            Error::Connect { .. }
            | Error::ConnectTimeout { .. }
            | Error::Io { .. }
            | Error::Disconnected { .. }
            | Error::Timeout { .. } => true,
            Error::Kafka { code, .. } => {
                *code == codes::NOT_COORDINATOR || *code == codes::COORDINATOR_NOT_AVAILABLE
            }
            _ => false,
        }
    }
}

/// Error codes after which the client refreshes metadata before trying again.
pub(crate) fn code_invalidates_metadata(code: i16) -> bool {
    matches!(
        code,
        codes::UNKNOWN_TOPIC_OR_PARTITION
            | codes::LEADER_NOT_AVAILABLE
            | codes::NOT_LEADER_OR_FOLLOWER
            | codes::REPLICA_NOT_AVAILABLE
            | codes::NOT_CONTROLLER
            | codes::KAFKA_STORAGE_ERROR
            | codes::FENCED_LEADER_EPOCH
            | codes::UNKNOWN_LEADER_EPOCH
            | codes::UNKNOWN_TOPIC_ID
            | codes::REBOOTSTRAP_REQUIRED
    )
}

/// A Kafka error attached to one item of a batch answer (a topic, a partition, a group, a
/// resource). Batch operations report these per item instead of failing as a whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ItemError {
    pub code: i16,
    /// The protocol name, e.g. `TOPIC_ALREADY_EXISTS`.
    pub name: &'static str,
    pub message: Option<String>,
}

impl ItemError {
    /// `None` for code 0.
    pub(crate) fn from_code(code: i16, message: Option<String>) -> Option<ItemError> {
        if code == 0 {
            return None;
        }
        Some(ItemError {
            code,
            name: codes::error_name(code),
            message: message.filter(|m| !m.is_empty()),
        })
    }

    pub fn is_retriable(&self) -> bool {
        codes::is_retriable(self.code)
    }

    /// This item error as a whole-operation error of `api`.
    pub fn into_error(self, api: &'static str) -> Error {
        Error::Kafka {
            api,
            code: self.code,
            name: self.name,
            message: self.message,
        }
    }
}

impl std::fmt::Display for ItemError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)?;
        if let Some(message) = &self.message {
            write!(f, " ({message})")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retriable_codes_follow_kafka_classification() {
        for code in [3, 5, 6, 7, 14, 15, 16, 19, 41, 56, 74, 89] {
            assert!(codes::is_retriable(code), "{code} should be retriable");
            assert!(Error::kafka("Test", code, None).is_retriable());
        }
        for code in [-1, 1, 10, 29, 31, 35, 36, 37, 40, 42, 58, 68, 69, 85] {
            assert!(!codes::is_retriable(code), "{code} should not be retriable");
            assert!(!Error::kafka("Test", code, None).is_retriable());
        }
        assert!(!codes::is_retriable(0));
        assert!(
            !codes::is_retriable(9999),
            "unknown codes are not retriable"
        );
    }

    #[test]
    fn network_errors_are_retriable_and_configuration_errors_are_not() {
        let io = Error::Io {
            broker: "b".into(),
            api: "Metadata",
            source: io::Error::other("reset"),
        };
        assert!(io.is_retriable());
        assert!(Error::Timeout {
            broker: "b".into(),
            api: "Metadata",
            after: Duration::from_secs(1)
        }
        .is_retriable());
        assert!(!Error::Config("x".into()).is_retriable());
        assert!(!Error::Authentication {
            broker: "b".into(),
            mechanism: "PLAIN".into(),
            message: "bad".into()
        }
        .is_retriable());
    }

    #[test]
    fn kafka_errors_carry_the_protocol_name_and_message() {
        let e = Error::kafka("CreateTopics", 36, Some("Topic 'a' already exists.".into()));
        assert_eq!(
            e.to_string(),
            "CreateTopics failed: TOPIC_ALREADY_EXISTS (Topic 'a' already exists.)"
        );
        assert_eq!(codes::error_name(6), "NOT_LEADER_OR_FOLLOWER");
        assert_eq!(codes::error_name(0), "NONE");
        assert_eq!(codes::error_name(31000), "UNKNOWN_ERROR_CODE");
        assert_eq!(ItemError::from_code(0, None), None);
        assert_eq!(
            ItemError::from_code(85, Some(String::new())),
            Some(ItemError {
                code: 85,
                name: "NO_REASSIGNMENT_IN_PROGRESS",
                message: None
            })
        );
    }
}
