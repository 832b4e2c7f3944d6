//! Domain types shared by every ballast crate: broker and partition identities and the seven loads.
//!
//! This crate does no IO. It is the vocabulary of the planner, the store and the API.

pub mod acls;
pub mod configs;
pub mod snapshot;
pub mod time;
pub mod units;

use std::fmt;

use serde::{Deserialize, Serialize};

/// A Kafka broker id (node id in KRaft).
pub type BrokerId = i32;

/// A topic partition.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct TopicPartition {
    pub topic: String,
    pub partition: i32,
}

impl TopicPartition {
    pub fn new(topic: impl Into<String>, partition: i32) -> Self {
        Self {
            topic: topic.into(),
            partition,
        }
    }
}

impl fmt::Display for TopicPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.topic, self.partition)
    }
}

/// The seven loads a broker carries, named exactly as in every API field, metric label and plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Load {
    #[serde(rename = "leaderCount")]
    LeaderCount,
    #[serde(rename = "followerCount")]
    FollowerCount,
    #[serde(rename = "diskBytes")]
    DiskBytes,
    #[serde(rename = "producerMsgRate")]
    ProducerMsgRate,
    #[serde(rename = "producerByteRate")]
    ProducerByteRate,
    #[serde(rename = "consumerMsgRate")]
    ConsumerMsgRate,
    #[serde(rename = "consumerByteRate")]
    ConsumerByteRate,
}

/// What kind of quantity a load measures; decides its `No traffic` threshold and its floor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadKind {
    Count,
    Disk,
    MessageRate,
    ByteRate,
}

impl Load {
    pub const ALL: [Load; 7] = [
        Load::LeaderCount,
        Load::FollowerCount,
        Load::DiskBytes,
        Load::ProducerMsgRate,
        Load::ProducerByteRate,
        Load::ConsumerMsgRate,
        Load::ConsumerByteRate,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Load::LeaderCount => "leaderCount",
            Load::FollowerCount => "followerCount",
            Load::DiskBytes => "diskBytes",
            Load::ProducerMsgRate => "producerMsgRate",
            Load::ProducerByteRate => "producerByteRate",
            Load::ConsumerMsgRate => "consumerMsgRate",
            Load::ConsumerByteRate => "consumerByteRate",
        }
    }

    pub fn from_name(name: &str) -> Option<Load> {
        Load::ALL.into_iter().find(|l| l.name() == name)
    }

    pub fn kind(self) -> LoadKind {
        match self {
            Load::LeaderCount | Load::FollowerCount => LoadKind::Count,
            Load::DiskBytes => LoadKind::Disk,
            Load::ProducerMsgRate | Load::ConsumerMsgRate => LoadKind::MessageRate,
            Load::ProducerByteRate | Load::ConsumerByteRate => LoadKind::ByteRate,
        }
    }
}

impl fmt::Display for Load {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether a broker can take load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BrokerState {
    Alive,
    Down,
    Maintenance,
}

impl BrokerState {
    /// Fair share is computed over brokers that are alive and not in maintenance.
    pub fn takes_load(self) -> bool {
        self == BrokerState::Alive
    }
}

/// How expensive a partition move is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum CostClass {
    #[serde(rename = "leader-only")]
    LeaderOnly,
    #[serde(rename = "inter-broker")]
    InterBroker,
    #[serde(rename = "cross-rack")]
    CrossRack,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_names_round_trip_and_match_the_contract() {
        let names: Vec<&str> = Load::ALL.iter().map(|l| l.name()).collect();
        assert_eq!(
            names,
            [
                "leaderCount",
                "followerCount",
                "diskBytes",
                "producerMsgRate",
                "producerByteRate",
                "consumerMsgRate",
                "consumerByteRate"
            ]
        );
        for load in Load::ALL {
            assert_eq!(Load::from_name(load.name()), Some(load));
            let json = serde_json::to_string(&load).expect("serialize");
            assert_eq!(json, format!("\"{}\"", load.name()));
        }
        assert_eq!(Load::from_name("bogus"), None);
    }

    #[test]
    fn only_alive_brokers_take_load() {
        assert!(BrokerState::Alive.takes_load());
        assert!(!BrokerState::Down.takes_load());
        assert!(!BrokerState::Maintenance.takes_load());
    }

    #[test]
    fn cost_classes_serialize_as_the_contract_names() {
        let json = serde_json::to_string(&[
            CostClass::LeaderOnly,
            CostClass::InterBroker,
            CostClass::CrossRack,
        ])
        .expect("serialize");
        assert_eq!(json, r#"["leader-only","inter-broker","cross-rack"]"#);
    }
}
