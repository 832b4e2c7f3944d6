//! The catalog keeps its doors from drifting apart: every operation is a tool the spec names, with
//! the scope its category needs, the licence flag of its REST route, a REST route that is served
//! and documented (or none, for the approval workflow), and an input schema whose every parameter
//! is described.

use ballast_web::auth::Scope;
use ballast_web::catalog::{all, Category};
use ballast_web::license::is_licensed;
use ballast_web::openapi::document;

/// The spec's MCP tools: 26 read, 18 mutate, 3 meta.
const READ: [&str; 26] = [
    "get_cluster_overview",
    "get_cluster_health",
    "get_partition_activity",
    "get_broker_racks",
    "get_topic_config",
    "search_topics",
    "search_topics_by_config",
    "list_acls",
    "list_consumer_groups",
    "describe_consumer_group",
    "get_consumer_group_lag",
    "browse_messages",
    "get_topic_watermarks",
    "list_quotas",
    "list_proposals",
    "generate_proposal",
    "get_cluster_logdirs",
    "what_if_simulate",
    "blast_radius_analyze",
    "search_audit_log",
    "get_proposal",
    "list_reassignments",
    "get_reassignment_history",
    "get_reassignment_by_id",
    "get_partition_optimization",
    "get_default_configs",
];
const MUTATE: [&str; 18] = [
    "update_topic_config",
    "bulk_update_topic_config",
    "create_acls",
    "delete_acls",
    "reset_consumer_group_offsets",
    "delete_consumer_group",
    "update_quota",
    "delete_quota",
    "redistribute_topic",
    "redistribute_partition",
    "bulk_reassign_partitions",
    "cancel_reassignment",
    "apply_proposal",
    "set_broker_maintenance",
    "remove_broker_maintenance",
    "preferred_leader_election",
    "move_broker_logdirs",
    "revert_audit_event",
];
const META: [&str; 3] = ["approve_action", "reject_action", "list_pending_actions"];

#[test]
fn every_operation_is_a_tool_the_spec_names_in_its_category_with_the_scope_it_needs() {
    assert!(!all().is_empty());
    let mut seen = std::collections::BTreeSet::new();
    for op in all() {
        assert!(seen.insert(op.name), "{} declared twice", op.name);
        let (names, scope): (&[&str], Scope) = match op.category {
            Category::Read => (&READ, Scope::Read),
            Category::Mutate => (&MUTATE, Scope::Write),
            Category::Meta => (&META, op.scope),
        };
        assert!(
            names.contains(&op.name),
            "{} is not a {:?} tool of the spec",
            op.name,
            op.category
        );
        assert_eq!(op.scope, scope, "{}", op.name);
    }
    for meta in ["approve_action", "reject_action"] {
        assert_eq!(
            all().iter().find(|o| o.name == meta).map(|o| o.scope),
            Some(Scope::Write)
        );
    }
}

#[test]
fn an_operations_licence_flag_is_its_rest_routes_and_the_route_is_documented() {
    let doc = document();
    for op in all() {
        match &op.rest {
            Some((method, path)) => {
                assert_eq!(
                    op.licensed,
                    is_licensed(method, path),
                    "{}: licence flag",
                    op.name
                );
                let documented = &doc["paths"][*path][method.as_str().to_ascii_lowercase()];
                assert!(
                    documented.is_object(),
                    "{}: {method} {path} is not a documented route",
                    op.name
                );
            }
            None => assert_eq!(op.category, Category::Meta, "{} has no REST route", op.name),
        }
    }
}

#[test]
fn every_input_is_an_object_schema_with_every_parameter_described() {
    for op in all() {
        let schema = (op.schema)();
        assert_eq!(schema["type"], "object", "{}", op.name);
        let props = schema["properties"].as_object().expect("properties");
        for (name, p) in props {
            assert!(
                p["description"].as_str().is_some_and(|d| !d.is_empty()),
                "{}.{name} has no description",
                op.name
            );
        }
        assert!(
            !op.description.is_empty() && !op.title.is_empty(),
            "{}",
            op.name
        );
    }
}

#[test]
fn a_mutations_input_is_checked_before_it_is_queued() {
    for op in all().iter().filter(|o| o.category == Category::Mutate) {
        assert!(
            (op.check)(&serde_json::json!({"unknown": 1})).is_err(),
            "{} accepts anything",
            op.name
        );
    }
}
