//! What Kafka a broker runs, from its ApiVersions answer alone: the metadata mode (KRaft brokers
//! offer DescribeQuorum, ZooKeeper brokers do not) and the range of Apache Kafka releases whose
//! API versions fit. Pure functions, no IO.
//!
//! Each marker is an API or API version a release introduced and every later release keeps
//! (ZooKeeper and KRaft brokers alike), taken from the `// Version N ...` notes of Kafka's
//! `clients/src/main/resources/common/message/*.json` and the KIP each names. Releases with no
//! marker of their own (2.5, 3.2, 3.4, 3.6, 3.8) are only ever inside a range. Checked against
//! the brokers of Kafka 3.5.1 (3.5 to 3.6) and 4.1.0 (4.1 or newer); `crates/kafka/README.md`
//! lists the markers.

use crate::types::{KafkaVersionRange, MetadataMode};

/// DescribeQuorum: offered by KRaft brokers (forwarded to the controller quorum), never by
/// ZooKeeper-based ones.
pub const DESCRIBE_QUORUM: i16 = 55;

/// Every release from the one before the oldest marker on, in order (what a range's ends are
/// made of).
const RELEASES: &[&str] = &[
    "2.3", "2.4", "2.5", "2.6", "2.7", "2.8", "3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6",
    "3.7", "3.8", "3.9", "4.0", "4.1",
];

/// What a broker must offer to be at least a release.
#[derive(Debug, Clone, Copy)]
enum Marker {
    /// The API key is offered.
    Api(i16),
    /// The API's highest version is at least this.
    MaxAtLeast(i16, i16),
    /// The API's lowest version is at least this (old versions removed).
    MinAtLeast(i16, i16),
}

/// (release, marker, why): the release introduced what the marker checks.
const MARKERS: &[(&str, Marker, &str)] = &[
    (
        "2.4",
        Marker::Api(46),
        "ListPartitionReassignments (KIP-455)",
    ),
    ("2.6", Marker::Api(48), "DescribeClientQuotas (KIP-546)"),
    (
        "2.7",
        Marker::Api(50),
        "DescribeUserScramCredentials (KIP-554)",
    ),
    ("2.8", Marker::Api(60), "DescribeCluster (KIP-700)"),
    ("3.0", Marker::Api(65), "DescribeTransactions (KIP-664)"),
    (
        "3.1",
        Marker::MaxAtLeast(1, 13),
        "Fetch v13, topic ids (KIP-516)",
    ),
    (
        "3.3",
        Marker::MaxAtLeast(35, 4),
        "DescribeLogDirs v4, volume sizes (KIP-827)",
    ),
    (
        "3.5",
        Marker::MaxAtLeast(1, 15),
        "Fetch v15, replica state (KIP-903)",
    ),
    (
        "3.7",
        Marker::MaxAtLeast(1, 16),
        "Fetch v16, leader discovery (KIP-951)",
    ),
    (
        "3.9",
        Marker::MaxAtLeast(1, 17),
        "Fetch v17, directory ids (KIP-853)",
    ),
    (
        "4.0",
        Marker::MinAtLeast(1, 4),
        "Fetch v0-3 removed (KIP-896)",
    ),
    (
        "4.1",
        Marker::MaxAtLeast(1, 18),
        "Fetch v18, high watermark (KIP-1166)",
    ),
];

fn range_of(versions: &[(i16, i16, i16)], key: i16) -> Option<(i16, i16)> {
    versions
        .iter()
        .find(|(k, _, _)| *k == key)
        .map(|&(_, lo, hi)| (lo, hi))
}

fn holds(versions: &[(i16, i16, i16)], marker: Marker) -> bool {
    match marker {
        Marker::Api(key) => range_of(versions, key).is_some(),
        Marker::MaxAtLeast(key, v) => range_of(versions, key).is_some_and(|(_, hi)| hi >= v),
        Marker::MinAtLeast(key, v) => range_of(versions, key).is_some_and(|(lo, _)| lo >= v),
    }
}

/// KRaft when the broker offers DescribeQuorum, else ZooKeeper.
pub fn metadata_mode(versions: &[(i16, i16, i16)]) -> MetadataMode {
    if range_of(versions, DESCRIBE_QUORUM).is_some() {
        MetadataMode::Kraft
    } else {
        MetadataMode::Zookeeper
    }
}

/// The releases whose API versions fit `versions` (key, min, max): at least the newest release
/// whose marker holds, and older than the first release above it whose marker does not (the
/// range ends at the release before it). A marker missing below the lower end (a broker that
/// leaves an API out) does not narrow the range.
pub fn infer_kafka_version(versions: &[(i16, i16, i16)]) -> KafkaVersionRange {
    let newest = MARKERS.iter().rposition(|(_, m, _)| holds(versions, *m));
    let from = newest.map_or(0, |i| i + 1);
    let max = MARKERS[from..]
        .iter()
        .find(|(_, m, _)| !holds(versions, *m))
        .and_then(|(first_missing, _, _)| {
            let i = RELEASES.iter().position(|r| r == first_missing)?;
            i.checked_sub(1).map(|j| RELEASES[j])
        });
    KafkaVersionRange {
        min: newest.map(|i| MARKERS[i].0.to_string()),
        max: max.map(str::to_string),
    }
}

/// The markers, for the README and the tests: (release, what introduced it).
pub fn markers() -> Vec<(&'static str, &'static str)> {
    MARKERS.iter().map(|(r, _, why)| (*r, *why)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kafka 3.5.1's broker as `kafka-broker-api-versions.sh` printed it (3 KRaft nodes).
    pub(crate) const KAFKA_3_5_1: &[(i16, i16, i16)] = &[
        (0, 0, 9),
        (1, 0, 15),
        (2, 0, 8),
        (3, 0, 12),
        (8, 0, 8),
        (9, 0, 8),
        (10, 0, 4),
        (11, 0, 9),
        (12, 0, 4),
        (13, 0, 5),
        (14, 0, 5),
        (15, 0, 5),
        (16, 0, 4),
        (17, 0, 1),
        (18, 0, 3),
        (19, 0, 7),
        (20, 0, 6),
        (21, 0, 2),
        (22, 0, 4),
        (23, 0, 4),
        (24, 0, 3),
        (25, 0, 3),
        (26, 0, 3),
        (27, 0, 1),
        (28, 0, 3),
        (29, 0, 3),
        (30, 0, 3),
        (31, 0, 3),
        (32, 0, 4),
        (33, 0, 2),
        (34, 0, 2),
        (35, 0, 4),
        (36, 0, 2),
        (37, 0, 3),
        (42, 0, 2),
        (43, 0, 2),
        (44, 0, 1),
        (45, 0, 0),
        (46, 0, 0),
        (47, 0, 0),
        (48, 0, 1),
        (49, 0, 1),
        (50, 0, 0),
        (51, 0, 0),
        (55, 0, 1),
        (57, 0, 1),
        (60, 0, 0),
        (61, 0, 0),
        (64, 0, 0),
        (65, 0, 0),
        (66, 0, 0),
    ];

    /// Kafka 4.1.0's broker as `kafka-broker-api-versions.sh` printed it (3 KRaft nodes).
    pub(crate) const KAFKA_4_1_0: &[(i16, i16, i16)] = &[
        (0, 0, 13),
        (1, 4, 18),
        (2, 1, 10),
        (3, 0, 13),
        (8, 2, 9),
        (9, 1, 9),
        (10, 0, 6),
        (11, 0, 9),
        (12, 0, 4),
        (13, 0, 5),
        (14, 0, 5),
        (15, 0, 6),
        (16, 0, 5),
        (17, 0, 1),
        (18, 0, 4),
        (19, 2, 7),
        (20, 1, 6),
        (21, 0, 2),
        (22, 0, 5),
        (23, 2, 4),
        (24, 0, 5),
        (25, 0, 4),
        (26, 0, 5),
        (27, 1, 1),
        (28, 0, 5),
        (29, 1, 3),
        (30, 1, 3),
        (31, 1, 3),
        (32, 1, 4),
        (33, 0, 2),
        (34, 1, 2),
        (35, 1, 4),
        (36, 0, 2),
        (37, 0, 3),
        (38, 1, 3),
        (39, 1, 2),
        (40, 1, 2),
        (41, 1, 3),
        (42, 0, 2),
        (43, 0, 2),
        (44, 0, 1),
        (45, 0, 1),
        (46, 0, 0),
        (47, 0, 0),
        (48, 0, 1),
        (49, 0, 1),
        (50, 0, 0),
        (51, 0, 0),
        (55, 0, 2),
        (57, 0, 2),
        (60, 0, 2),
        (61, 0, 0),
        (64, 0, 0),
        (65, 0, 0),
        (66, 0, 2),
        (68, 0, 1),
        (69, 0, 1),
        (74, 0, 1),
        (75, 0, 0),
        (76, 1, 1),
        (77, 1, 1),
        (78, 1, 1),
        (79, 1, 1),
        (80, 0, 0),
        (81, 0, 0),
        (83, 0, 0),
        (84, 0, 0),
        (85, 0, 0),
        (86, 0, 0),
        (87, 0, 0),
        (90, 0, 0),
        (91, 0, 0),
        (92, 0, 0),
    ];

    fn range(min: Option<&str>, max: Option<&str>) -> KafkaVersionRange {
        KafkaVersionRange {
            min: min.map(str::to_string),
            max: max.map(str::to_string),
        }
    }

    #[test]
    fn kafka_3_5_1_is_inferred_as_3_5_to_3_6_on_kraft() {
        assert_eq!(
            infer_kafka_version(KAFKA_3_5_1),
            range(Some("3.5"), Some("3.6"))
        );
        assert_eq!(metadata_mode(KAFKA_3_5_1), MetadataMode::Kraft);
        assert_eq!(infer_kafka_version(KAFKA_3_5_1).to_string(), "3.5 to 3.6");
    }

    #[test]
    fn kafka_4_1_0_is_inferred_as_4_1_or_newer_on_kraft() {
        assert_eq!(infer_kafka_version(KAFKA_4_1_0), range(Some("4.1"), None));
        assert_eq!(metadata_mode(KAFKA_4_1_0), MetadataMode::Kraft);
        assert_eq!(infer_kafka_version(KAFKA_4_1_0).to_string(), "4.1 or newer");
    }

    #[test]
    fn a_broker_without_describe_quorum_is_zookeeper_based() {
        let zk: Vec<_> = KAFKA_3_5_1
            .iter()
            .copied()
            .filter(|(k, _, _)| *k != DESCRIBE_QUORUM)
            .collect();
        assert_eq!(metadata_mode(&zk), MetadataMode::Zookeeper);
        assert_eq!(infer_kafka_version(&zk), range(Some("3.5"), Some("3.6")));
    }

    #[test]
    fn a_broker_older_than_every_marker_is_2_3_or_older() {
        let old = [(0, 0, 7), (1, 0, 11), (3, 0, 8), (18, 0, 2)];
        assert_eq!(infer_kafka_version(&old), range(None, Some("2.3")));
        assert_eq!(infer_kafka_version(&old).to_string(), "2.3 or older");
    }

    #[test]
    fn each_marker_release_is_the_lower_end_of_a_broker_that_just_reaches_it() {
        // A 2.8 broker: DescribeCluster but no DescribeTransactions, Fetch v12.
        let v2_8 = [
            (1, 0, 12),
            (35, 0, 2),
            (46, 0, 0),
            (48, 0, 0),
            (50, 0, 0),
            (60, 0, 0),
        ];
        assert_eq!(infer_kafka_version(&v2_8), range(Some("2.8"), Some("2.8")));
        // A 3.3/3.4 broker: DescribeLogDirs v4 but Fetch v13.
        let v3_3 = [
            (1, 0, 13),
            (35, 0, 4),
            (46, 0, 0),
            (48, 0, 1),
            (50, 0, 0),
            (60, 0, 0),
            (65, 0, 0),
        ];
        assert_eq!(infer_kafka_version(&v3_3), range(Some("3.3"), Some("3.4")));
    }

    #[test]
    fn a_missing_api_below_the_lower_end_does_not_narrow_the_range() {
        // The simulator leaves DescribeUserScramCredentials and DescribeTransactions out.
        let sim = [
            (1, 4, 18),
            (35, 1, 4),
            (46, 0, 0),
            (48, 0, 1),
            (55, 0, 2),
            (60, 0, 2),
        ];
        assert_eq!(infer_kafka_version(&sim), range(Some("4.1"), None));
    }

    #[test]
    fn every_marker_release_is_a_known_release_in_order() {
        let mut last = 0;
        for (release, _) in markers() {
            let i = RELEASES.iter().position(|r| *r == release).expect("known");
            assert!(i >= last, "markers in release order");
            last = i;
        }
    }
}
