//! The real-Kafka suite: the real `ballast` binary against a real Apache Kafka cluster (three
//! KRaft nodes on loopback, `kafka.rs`), every cluster-changing path checked with Kafka's own
//! view (confluent-kafka's Admin API through `kafka_tool.py`, or the distribution's tools), never
//! with ballast's answers.
//!
//! One cluster per version serves the whole suite; a path holds its cluster while it runs and
//! uses topics and groups of its own. Kafka 4.1.0 gets every path, 3.5.1 the read side, a
//! throttled apply and the rolling restart. Without Java or a distribution each path says on
//! stderr what it skipped and why, and passes. Each path prints `real Kafka <version>: <path>
//! ok (<seconds> s)` when it passed, so CI's output is the suite's report.

#[allow(dead_code)]
#[path = "../e2e/support.rs"]
mod support;

mod api;
mod kafka;
mod paths;

use kafka::{path, V3_5, V4_1};

macro_rules! suite {
    ($version:ident: $($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                path($version, stringify!($name), paths::$name);
            }
        )*
    };
}

mod kafka_4_1 {
    use super::*;
    suite!(V4_1:
        read_side_agrees_with_kafka_and_names_the_quorum_leader_as_controller,
        proposal_apply_throttles_exactly_the_moving_replicas_survives_a_killed_executor_and_leaves_no_throttle,
        cancel_puts_the_replicas_back_in_their_order_and_removes_the_throttles,
        preferred_leader_election_moves_leadership_to_the_first_replica,
        topic_config_changes_are_audited_as_kafka_holds_them_and_revert,
        quota_changes_are_audited_as_kafka_holds_them_and_revert,
        acl_create_and_delete_are_what_kafka_shows,
        consumer_group_offset_reset_and_delete_are_what_kafka_shows,
        secure_listeners_serve_reads_and_a_throttled_move_and_name_a_failed_authentication,
        rolling_restart_through_agents_restarts_the_quorum_leader_last_with_no_partition_offline,
        log_dir_move_puts_the_replica_in_the_brokers_other_directory,
        topic_and_bulk_redistribution_and_a_cluster_election_are_what_kafka_shows,
        maintenance_drains_a_broker_and_its_exit_returns_it,
        an_mcp_change_runs_on_kafka_only_after_a_second_person_approves_it,
        self_healing_moves_replicas_off_a_broker_stopped_past_its_grace,
    );
}

mod kafka_3_5 {
    use super::*;
    suite!(V3_5:
        read_side_agrees_with_kafka_and_names_the_quorum_leader_as_controller,
        proposal_apply_throttles_exactly_the_moving_replicas_survives_a_killed_executor_and_leaves_no_throttle,
        rolling_restart_through_agents_restarts_the_quorum_leader_last_with_no_partition_offline,
    );
}
