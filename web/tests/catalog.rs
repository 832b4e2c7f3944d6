//! The catalog keeps its doors from drifting apart: every operation is a tool the spec names, with
//! the scope its category needs, the licence flag of its REST route, a REST route that is served
//! and documented (or none, for the approval workflow), an input schema whose every parameter
//! is described, and its output and errors.

use ballast_web::auth::Scope;
use ballast_web::catalog::{all, Category, Run};
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
const MUTATE: [&str; 22] = [
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
    // Beyond the spec's list: the topic lifecycle (issue 42).
    "create_topic",
    "add_partitions",
    "change_replication_factor",
    "delete_topic",
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
                let verb = axum::http::Method::from_bytes(method.as_bytes()).expect("a method");
                assert_eq!(
                    op.licensed,
                    is_licensed(&verb, path),
                    "{}: licence flag",
                    op.name
                );
                let documented = &doc["paths"][*path][method.to_ascii_lowercase()];
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

/// Every `.rs` file under `dir`, with its text.
fn sources(dir: &std::path::Path) -> Vec<(std::path::PathBuf, String)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("read a source file");
            out.push((path, text));
        }
    }
    out
}

/// The body of the first function defined after `from` in `text`, braces included.
fn body_after(text: &str, from: usize) -> &str {
    let start = from
        + text[from..]
            .find("fn ")
            .expect("a function after the annotation");
    // The body opens at the first `{` after the signature's closing `)`, at depth 0.
    let mut depth = 0i32;
    let mut open = None;
    for (i, c) in text[start..].char_indices() {
        match c {
            '(' | '<' | '[' => depth += 1,
            ')' | '>' | ']' => depth -= 1,
            '{' if depth <= 0 => {
                open = Some(start + i);
                break;
            }
            _ => {}
        }
    }
    let open = open.expect("a function body");
    let mut braces = 0;
    for (i, c) in text[open..].char_indices() {
        match c {
            '{' => braces += 1,
            '}' => {
                braces -= 1;
                if braces == 0 {
                    return &text[open..=open + i];
                }
            }
            _ => {}
        }
    }
    &text[open..]
}

#[test]
fn an_operations_rules_live_in_one_function_its_rest_handler_and_the_catalog_both_call() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let ops_root = root.join("../../crates/ops/src");
    // The catalog: its declarations and runs in ballast-ops, the agent doors' entry in web.
    let catalog: String = sources(&root.join("catalog"))
        .into_iter()
        .chain(sources(&ops_root.join("catalog")))
        .map(|(_, text)| text)
        .collect();
    assert!(
        !catalog.contains("for_caller") && !catalog.contains("oneshot"),
        "the catalog reaches no rule through HTTP"
    );
    let handlers: Vec<(std::path::PathBuf, String)> = sources(&root)
        .into_iter()
        .filter(|(path, _)| !path.starts_with(root.join("catalog")))
        .collect();
    // The operations moved out of web (issue 27) are defined in ballast-ops, outside its
    // catalog.
    let ops_sources: Vec<(std::path::PathBuf, String)> = sources(&ops_root)
        .into_iter()
        .filter(|(path, _)| !path.starts_with(ops_root.join("catalog")))
        .collect();
    assert!(!ops_sources.is_empty(), "crates/ops/src is read");
    // Every file of web, the catalog's entry included.
    let web_sources = sources(&root);
    for op in all() {
        // No operation function in web: an operation whose function lives in an adapter holds
        // its rules there.
        let in_web = format!("async fn {}(", op.name);
        let in_adapters: Vec<&std::path::PathBuf> = web_sources
            .iter()
            .filter(|(_, text)| text.contains(&in_web))
            .map(|(path, _)| path)
            .collect();
        assert!(
            in_adapters.is_empty(),
            "{}: the operation function is defined in web, an adapter: {in_adapters:?}",
            op.name
        );
        let Some((method, path)) = &op.rest else {
            continue;
        };
        // One HTTP-free function named after the tool, in ballast-ops outside its catalog.
        let in_ops = format!("pub async fn {}(", op.name);
        let defined: Vec<&(std::path::PathBuf, String)> = ops_sources
            .iter()
            .filter(|(_, text)| text.contains(&in_ops))
            .collect();
        assert_eq!(
            defined.len(),
            1,
            "{}: one operation function `{in_ops}` in ballast-ops",
            op.name
        );
        let (file, text) = defined[0];
        let definition = &in_ops;
        let at = text.find(definition.as_str()).expect("found above");
        let function = body_after(text, at);
        let signature = &text[at..text[at..].find('{').map_or(text.len(), |i| at + i)];
        for http in [
            "State<",
            "Path<",
            "Query<",
            "Json<",
            "HeaderMap",
            "Response",
        ] {
            assert!(
                !signature.contains(http),
                "{}: the operation function takes no HTTP type ({http} in {})",
                op.name,
                file.display()
            );
        }
        assert!(!function.is_empty());
        // The catalog calls it.
        assert!(
            catalog.contains(&format!("::{}(", op.name)),
            "{}: the catalog entry calls the operation function",
            op.name
        );
        // The REST handler (the function the route's annotation documents) is an adapter: it
        // calls the function of an operation on its route, in a few lines.
        let annotation = format!(
            "    {},\n    path = \"{path}\",",
            method.to_ascii_lowercase()
        );
        let (_, route_file) = handlers
            .iter()
            .find(|(_, text)| text.contains(&annotation))
            .unwrap_or_else(|| panic!("{}: the handler of {method} {path}", op.name));
        let from = route_file.find(&annotation).expect("found above");
        let handler = body_after(route_file, from);
        let on_route: Vec<&str> = all()
            .iter()
            .filter(|other| other.rest.as_ref() == Some(&(*method, *path)))
            .map(|other| other.name)
            .collect();
        assert!(
            on_route
                .iter()
                .any(|name| handler.contains(&format!("{name}("))),
            "{}: the handler of {method} {path} calls one of {on_route:?}:\n{handler}",
            op.name
        );
        assert!(
            handler.lines().count() <= 20,
            "{}: the handler of {method} {path} is an adapter (at most 20 lines):\n{handler}",
            op.name
        );
    }
}

/// Issue 27: every operation is declared once, in ballast-ops, and every one but the approval
/// workflow (answered by the MCP door) runs there over the operation context, reads and changes
/// alike: no door binds or runs an operation of its own.
#[test]
fn every_operation_is_declared_in_ops_and_every_change_runs_there() {
    for op in all() {
        match (op.category, op.run) {
            (Category::Meta, Run::Meta) => {}
            (Category::Meta, _) => panic!("{}: a meta tool is the MCP door's", op.name),
            (_, Run::Context(_)) => {}
            (_, Run::Meta) => panic!(
                "{}: a read or a change runs over the operation context",
                op.name
            ),
        }
        if op.before_queue.is_some() {
            assert_eq!(op.category, Category::Mutate, "{}", op.name);
        }
    }
    // No declaration outside ballast-ops.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for (path, text) in sources(&root) {
        assert!(
            !text.contains("Operation {") && !text.contains("static OPERATIONS"),
            "{}: operations are declared in ballast_ops::catalog only",
            path.display()
        );
    }
}

/// The success status and the statuses of its own each operation's REST route documented when
/// they were written in the handlers' annotations, before the operations declared them (issue
/// 27): a declaration may add refusals, never lose one of these.
const DOCUMENTED_BEFORE: [(&str, u16, &[u16]); 48] = [
    ("get_cluster_overview", 200, &[400, 503]),
    ("get_cluster_health", 200, &[503]),
    ("list_proposals", 200, &[]),
    ("get_proposal", 200, &[404]),
    ("generate_proposal", 200, &[404]),
    ("get_broker_racks", 200, &[503]),
    ("get_topic_config", 200, &[404, 502, 503]),
    ("search_topics", 200, &[503]),
    ("list_acls", 200, &[502, 503]),
    ("list_consumer_groups", 200, &[502, 503]),
    ("describe_consumer_group", 200, &[404, 502, 503]),
    ("get_topic_watermarks", 200, &[404, 502, 503]),
    ("search_audit_log", 200, &[]),
    ("list_reassignments", 200, &[]),
    ("get_reassignment_history", 200, &[]),
    ("get_reassignment_by_id", 200, &[404]),
    ("get_default_configs", 200, &[404, 502, 503]),
    ("get_partition_optimization", 200, &[404, 503]),
    ("delete_consumer_group", 200, &[404, 409, 502, 503]),
    ("cancel_reassignment", 200, &[404, 409]),
    ("set_broker_maintenance", 200, &[404, 409, 503]),
    ("remove_broker_maintenance", 200, &[404]),
    ("redistribute_topic", 200, &[404, 409, 503]),
    ("preferred_leader_election", 200, &[400, 404, 409, 502, 503]),
    ("update_topic_config", 200, &[404, 400, 502, 503]),
    ("apply_proposal", 200, &[404, 409, 503]),
    ("get_partition_activity", 200, &[404, 503]),
    ("search_topics_by_config", 200, &[400, 502, 503]),
    ("get_consumer_group_lag", 200, &[404, 502, 503]),
    ("browse_messages", 200, &[404, 502, 503]),
    ("list_quotas", 200, &[502, 503]),
    ("get_cluster_logdirs", 200, &[404, 503]),
    ("what_if_simulate", 200, &[400, 503]),
    ("blast_radius_analyze", 200, &[400, 503]),
    ("bulk_update_topic_config", 200, &[404, 400, 502, 503]),
    ("create_acls", 200, &[400, 502, 503]),
    ("delete_acls", 200, &[400, 404, 502, 503]),
    ("reset_consumer_group_offsets", 200, &[404, 409, 502, 503]),
    ("update_quota", 200, &[400, 502, 503]),
    ("delete_quota", 200, &[404, 502, 503]),
    ("redistribute_partition", 200, &[400, 404, 409, 503]),
    ("bulk_reassign_partitions", 200, &[400, 404, 409, 503]),
    ("move_broker_logdirs", 200, &[400, 404, 409, 503]),
    ("revert_audit_event", 202, &[400, 404, 409, 502, 503]),
    // Issue 42: declared with their routes.
    ("create_topic", 200, &[400, 409, 502, 503]),
    ("add_partitions", 200, &[400, 404, 502, 503]),
    ("change_replication_factor", 200, &[400, 404, 409, 503]),
    ("delete_topic", 200, &[404, 409, 502, 503]),
];

/// Issue 27: every operation with a REST route declares what it answers (a schema of
/// `ballast_ops::catalog::outputs`) and at least the refusals its route documented; the
/// approval workflow, answered by the MCP door itself, declares neither.
#[test]
fn every_operation_declares_its_output_and_at_least_the_errors_its_route_documented() {
    for op in all() {
        if op.rest.is_none() {
            assert_eq!(op.category, Category::Meta, "{}", op.name);
            assert!(
                op.output.is_none() && op.errors.is_empty(),
                "{}: the approval workflow is the MCP door's",
                op.name
            );
            continue;
        }
        let output = op
            .output
            .unwrap_or_else(|| panic!("{}: declares no output", op.name));
        let schema = output
            .json_schema()
            .unwrap_or_else(|| panic!("{}: output {} is not a schema", op.name, output.schema));
        assert_eq!(schema["type"], "object", "{}", op.name);
        assert!(!output.description.is_empty(), "{}", op.name);
        let (_, status, before) = DOCUMENTED_BEFORE
            .iter()
            .find(|(name, _, _)| *name == op.name)
            .unwrap_or_else(|| panic!("{}: not in DOCUMENTED_BEFORE", op.name));
        assert_eq!(output.status, *status, "{}", op.name);
        for s in *before {
            assert!(
                op.errors.iter().any(|e| e.status == *s),
                "{}: its route documented {s}; the declaration lost it",
                op.name
            );
        }
        let mut statuses: Vec<u16> = op.errors.iter().map(|e| e.status).collect();
        statuses.sort_unstable();
        statuses.dedup();
        assert_eq!(
            statuses.len(),
            op.errors.len(),
            "{}: one refusal per status",
            op.name
        );
        assert!(
            op.errors
                .iter()
                .all(|e| (400..600).contains(&e.status) && !e.when.is_empty()),
            "{}: {:?}",
            op.name,
            op.errors
        );
    }
}
