//! The real-Kafka suite: the real `ballast` binary against real Apache Kafka clusters on
//! loopback (`kafka.rs`: 4.1.0 with dedicated controllers, 3.5.1 KRaft, 3.5.1 on ZooKeeper),
//! every cluster-changing path checked with Kafka's own view (confluent-kafka's Admin API
//! through `kafka_tool.py`, or the distribution's tools), never with ballast's answers.
//!
//! One cluster per bed serves the whole suite; a path holds its cluster while it runs and uses
//! topics and groups of its own. Every path runs on one bed at least; the read side and a
//! throttled apply on all three. The paths of Kafka 4 (KIP-848 groups, dedicated controllers,
//! ELR, tiered storage), cancel, the MCP door, self-healing, the secure listeners and the
//! predicted-vs-realized check run on 4.1.0; 3.5.1 KRaft adds a move whose destination stops,
//! the rolling restart, the topic lifecycle, maintenance, log-dir moves, topic configs and
//! quotas; 3.5.1 on ZooKeeper a classic group, an operator's reassignment across an executor
//! restart, preferred and cluster elections and the redistributions. The beds run side by
//! side, so the paths are spread to even out their
//! times (the suite's wall time is the longest bed's). Without Java or a
//! distribution each path says on stderr what it skipped and why, and passes. Each path prints
//! `real Kafka <bed>: <path> ok (<seconds> s)` when it passed, so CI's output is the suite's
//! report.

#[allow(dead_code)]
#[path = "../e2e/support.rs"]
mod support;

mod api;
mod kafka;
mod paths;
mod tiered;

use kafka::{suite, SuitePath, V3_5, V3_5_ZK, V4_1};

/// A path of the suite: its name (what it proves) and its function.
macro_rules! paths {
    ($($name:ident),* $(,)?) => {
        &[$((stringify!($name), paths::$name as fn(&kafka::Kafka))),*]
    };
}

/// Kafka 4's paths and most of the others, against Kafka 4.1.0 (or `BALLAST_TEST_KAFKA_HOME`).
const FULL: &[SuitePath] = paths![
    read_side_agrees_with_kafka_and_names_the_quorum_leader_as_controller,
    proposal_apply_throttles_exactly_the_moving_replicas_survives_a_killed_executor_and_leaves_no_throttle,
    a_completed_plans_realized_loads_match_its_prediction_while_a_producer_writes_at_a_fixed_rate,
    acl_create_and_delete_are_what_kafka_shows,
    consumer_group_offset_reset_and_delete_are_what_kafka_shows,
    kip848_consumer_group_is_listed_described_reset_and_deleted_as_kafka_shows,
    an_mcp_change_runs_on_kafka_only_after_a_second_person_approves_it,
    self_healing_moves_replicas_off_a_broker_stopped_past_its_grace,
    rolling_restart_through_agents_restarts_the_quorum_leader_last_with_no_partition_offline,
    secure_listeners_serve_reads_and_a_throttled_move_and_name_a_failed_authentication,
    a_stopped_controller_shows_in_health_as_2_of_3_voters_and_recovers,
    topic_lifecycle_creates_grows_re_replicates_and_deletes_as_kafka_shows,
    tiered_topic_disk_and_move_cost_are_local_bytes_and_remote_offsets_are_kafkas,
    partition_rows_show_the_eligible_leader_replicas_kafka_reports_while_a_broker_is_down,
    cancel_puts_the_replicas_back_in_their_order_and_removes_the_throttles,
];

/// The read side, a throttled apply, a move whose destination stops (where it was first seen
/// read as running), the rolling restart, the topic lifecycle, maintenance, a log-dir move,
/// topic configs and quotas, against Kafka 3.5.1 KRaft (combined nodes).
const OLDER: &[SuitePath] = paths![
    read_side_agrees_with_kafka_and_names_the_quorum_leader_as_controller,
    proposal_apply_throttles_exactly_the_moving_replicas_survives_a_killed_executor_and_leaves_no_throttle,
    a_move_whose_destination_broker_is_stopped_reads_stalled_naming_it_and_completes_once_it_returns,
    rolling_restart_through_agents_restarts_the_quorum_leader_last_with_no_partition_offline,
    topic_lifecycle_creates_grows_re_replicates_and_deletes_as_kafka_shows,
    maintenance_drains_a_broker_and_its_exit_returns_it,
    log_dir_move_puts_the_replica_in_the_brokers_other_directory,
    topic_config_changes_are_audited_as_kafka_holds_them_and_revert,
    quota_changes_are_audited_as_kafka_holds_them_and_revert,
];

/// The read side (the controller as ZooKeeper's `/controller` holds it), a throttled apply, a
/// classic group's offsets reset and deleted, an operator's reassignment across an
/// executor restart, preferred and cluster elections and the redistributions, against Kafka
/// 3.5.1 in ZooKeeper mode.
const ZOOKEEPER: &[SuitePath] = paths![
    read_side_agrees_with_kafka_and_names_the_quorum_leader_as_controller,
    proposal_apply_throttles_exactly_the_moving_replicas_survives_a_killed_executor_and_leaves_no_throttle,
    consumer_group_offset_reset_and_delete_are_what_kafka_shows,
    a_restarted_executor_keeps_the_throttles_of_an_operators_reassignment_in_progress,
    preferred_leader_election_moves_leadership_to_the_first_replica,
    topic_and_bulk_redistribution_and_a_cluster_election_are_what_kafka_shows,
];

// One test per bed: the clusters run side by side (as many at once as test threads), each
// bed's paths one after another on its own cluster. The test harness starts tests in the
// order of their names: 4.1.0 (the longest) sorts before the ZooKeeper bed, so with two
// threads (CI's two cores) 4.1.0 and 3.5.1 start at once and the ZooKeeper bed follows 3.5.1.
// `BALLAST_REALKAFKA_PATHS=part,part` runs only the paths whose names contain one of the parts.

#[test]
fn kafka_4_1_every_cluster_changing_path_agrees_with_kafkas_own_view() {
    if std::env::var_os("BALLAST_TEST_KAFKA_HOME").is_some() {
        // Another distribution has one bed: it gets every path of the three (the stalled move,
        // written for 3.5.1's reassignment states, aside).
        let mut every: Vec<SuitePath> = Vec::new();
        for p in FULL.iter().chain(OLDER).chain(ZOOKEEPER) {
            if !p.0.starts_with("a_move_whose_destination") && !every.iter().any(|e| e.0 == p.0) {
                every.push(*p);
            }
        }
        suite(V4_1, &every);
    } else {
        suite(V4_1, FULL);
    }
}

#[test]
fn kafka_3_5_read_side_throttled_apply_and_rolling_restart_agree_with_kafkas_own_view() {
    suite(V3_5, OLDER);
}

#[test]
fn kafka_zookeeper_3_5_read_side_throttled_apply_and_groups_agree_with_kafkas_own_view() {
    suite(V3_5_ZK, ZOOKEEPER);
}
