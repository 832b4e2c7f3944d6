//! Client quotas and ACLs read live from a simulated cluster, after creating them with the
//! cluster client.

mod live_common;

use std::collections::BTreeMap;

use ballast_kafka::{
    AclBinding, AclOperation, AclPatternType, AclPermissionType, AclResourceType, QuotaAlteration,
    QuotaEntity, QuotaName,
};
use live_common::{assert_error, Harness};
use serde_json::{json, Value};

fn name(n: &str) -> Option<QuotaName> {
    Some(if n == "<default>" {
        QuotaName::Default
    } else {
        QuotaName::name(n)
    })
}

/// user alice + client app: producer 1000; alice: producer 2000, consumer 3000; bob + default
/// client: producer 11; default user + default client: producer 5; default user: request 50;
/// client app: consumer 9000, controller mutation 4; default client: consumer 7; an IP entity.
async fn cluster_with_quotas() -> Harness {
    let h = Harness::start().await;
    let q = |user: Option<&str>, client: Option<&str>, values: &[(&str, f64)]| QuotaAlteration {
        entity: QuotaEntity {
            user: user.and_then(name),
            client_id: client.and_then(name),
            ip: None,
        },
        ops: values
            .iter()
            .map(|(k, v)| (k.to_string(), Some(*v)))
            .collect(),
    };
    let mut ip = q(None, None, &[("connection_creation_rate", 10.0)]);
    ip.entity.ip = name("10.0.0.1");
    let results = h
        .kafka
        .alter_client_quotas(
            &[
                q(
                    Some("alice"),
                    Some("app"),
                    &[("producer_byte_rate", 1000.0)],
                ),
                q(
                    Some("alice"),
                    None,
                    &[
                        ("producer_byte_rate", 2000.0),
                        ("consumer_byte_rate", 3000.0),
                    ],
                ),
                q(
                    Some("bob"),
                    Some("<default>"),
                    &[("producer_byte_rate", 11.0)],
                ),
                q(
                    Some("<default>"),
                    Some("<default>"),
                    &[("producer_byte_rate", 5.0)],
                ),
                q(Some("<default>"), None, &[("request_percentage", 50.0)]),
                q(
                    None,
                    Some("app"),
                    &[
                        ("consumer_byte_rate", 9000.0),
                        ("controller_mutation_rate", 4.0),
                    ],
                ),
                q(None, Some("<default>"), &[("consumer_byte_rate", 7.0)]),
                ip,
            ],
            false,
        )
        .await
        .expect("alter quotas");
    assert!(results.iter().all(|r| r.error.is_none()), "{results:?}");
    h
}

fn values(data: &Value) -> BTreeMap<String, f64> {
    data["values"]
        .as_object()
        .expect("values")
        .iter()
        .map(|(k, v)| (k.clone(), v.as_f64().unwrap()))
        .collect()
}

fn map(pairs: &[(&str, f64)]) -> BTreeMap<String, f64> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

#[tokio::test]
async fn the_quota_list_has_every_entity_with_its_type_path_and_values() {
    let h = cluster_with_quotas().await;
    let data = h.data("/api/v1/quotas").await;
    assert_eq!(data["count"], 8);
    let quotas = data["quotas"].as_array().unwrap();
    let find = |entity: Value| {
        quotas
            .iter()
            .find(|q| q["entity"] == entity)
            .unwrap_or_else(|| panic!("no {entity} in {data}"))
    };
    let pair = find(json!({"user": "alice", "clientId": "app"}));
    assert_eq!(pair["entityType"], "user+client-id");
    assert_eq!(pair["path"], "/api/v1/quotas/user/alice/app");
    assert_eq!(values(pair), map(&[("producer_byte_rate", 1000.0)]));
    let bob = find(json!({"user": "bob", "clientId": "<default>"}));
    assert_eq!(bob["entityType"], "user+default-client-id");
    assert_eq!(bob["path"], "/api/v1/quotas/user/bob/<default>");
    assert_eq!(
        find(json!({"user": "<default>"}))["path"],
        "/api/v1/quotas/default-user"
    );
    assert_eq!(
        find(json!({"clientId": "<default>"}))["entityType"],
        "default-client-id"
    );
    let ip = find(json!({"ip": "10.0.0.1"}));
    assert_eq!(ip["entityType"], "ip");
    assert_eq!(ip["path"], Value::Null);
}

#[tokio::test]
async fn each_entity_path_shows_exactly_that_entitys_quotas() {
    let h = cluster_with_quotas().await;
    let cases: [(&str, &[(&str, f64)]); 7] = [
        (
            "/api/v1/quotas/user/alice",
            &[
                ("producer_byte_rate", 2000.0),
                ("consumer_byte_rate", 3000.0),
            ],
        ),
        (
            "/api/v1/quotas/user/alice/app",
            &[("producer_byte_rate", 1000.0)],
        ),
        (
            "/api/v1/quotas/user/bob/%3Cdefault%3E",
            &[("producer_byte_rate", 11.0)],
        ),
        (
            "/api/v1/quotas/client-id/app",
            &[
                ("consumer_byte_rate", 9000.0),
                ("controller_mutation_rate", 4.0),
            ],
        ),
        ("/api/v1/quotas/default", &[("producer_byte_rate", 5.0)]),
        (
            "/api/v1/quotas/default-user",
            &[("request_percentage", 50.0)],
        ),
        (
            "/api/v1/quotas/default-client-id",
            &[("consumer_byte_rate", 7.0)],
        ),
    ];
    for (path, expected) in cases {
        let data = h.data(path).await;
        assert_eq!(values(&data), map(expected), "{path}");
        assert_eq!(data["configured"], true, "{path}");
    }
    let none = h.data("/api/v1/quotas/user/carol").await;
    assert_eq!(none["configured"], false);
    assert_eq!(none["entity"], json!({"user": "carol"}));
    assert_eq!(values(&none), BTreeMap::new());
}

async fn resolve(h: &Harness, body: Value) -> BTreeMap<String, (Option<f64>, Option<String>)> {
    let (status, answer) = h.post("/api/v1/quotas/resolve", &body.to_string()).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["data"]["levels"].as_array().map(Vec::len), Some(8));
    answer["data"]["quotas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| {
            (
                q["key"].as_str().unwrap().to_string(),
                (q["value"].as_f64(), q["level"].as_str().map(str::to_string)),
            )
        })
        .collect()
}

fn at(v: f64, level: &str) -> (Option<f64>, Option<String>) {
    (Some(v), Some(level.to_string()))
}

#[tokio::test]
async fn resolve_takes_each_key_from_the_most_specific_level_in_kafkas_order() {
    let h = cluster_with_quotas().await;
    let alice = resolve(&h, json!({"user": "alice", "clientId": "app"})).await;
    assert_eq!(alice["producer_byte_rate"], at(1000.0, "user+client-id"));
    assert_eq!(alice["consumer_byte_rate"], at(3000.0, "user"));
    assert_eq!(alice["request_percentage"], at(50.0, "default-user"));
    assert_eq!(alice["controller_mutation_rate"], at(4.0, "client-id"));

    let bob = resolve(&h, json!({"user": "bob", "clientId": "other"})).await;
    assert_eq!(
        bob["producer_byte_rate"],
        at(11.0, "user+default-client-id")
    );
    assert_eq!(bob["consumer_byte_rate"], at(7.0, "default-client-id"));
    assert_eq!(bob["controller_mutation_rate"], (None, None), "unlimited");

    let anyone = resolve(&h, json!({"clientId": "app"})).await;
    assert_eq!(
        anyone["producer_byte_rate"],
        at(5.0, "default-user+default-client-id")
    );
    assert_eq!(anyone["consumer_byte_rate"], at(9000.0, "client-id"));
}

#[tokio::test]
async fn the_acl_list_uses_the_spec_field_names_in_resource_order() {
    let h = cluster_with_acls().await;
    let data = h.data("/api/v1/acls").await;
    assert_eq!(data["total"], 6);
    assert_eq!(data["count"], 6);
    assert_eq!(data["truncated"], false);
    assert_eq!(data["authorizerEnabled"], true);
    let bindings = data["bindings"].as_array().unwrap();
    let order: Vec<(String, String, String)> = bindings
        .iter()
        .map(|b| {
            (
                b["resourceType"].as_str().unwrap().into(),
                b["resourceName"].as_str().unwrap().into(),
                b["principal"].as_str().unwrap().into(),
            )
        })
        .collect();
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(order, sorted);
    assert!(bindings.contains(&json!({
        "resourceType": "TransactionalId", "resourceName": "tx-", "patternType": "Prefixed",
        "principal": "User:alice", "host": "10.0.0.1", "operation": "Write", "permissionType": "Allow"
    })));
}

#[tokio::test]
async fn acl_filters_narrow_the_bindings() {
    let h = cluster_with_acls().await;
    let cases = [
        ("principal=User:alice", 4),
        ("resourceType=topic", 3),
        (
            "resourceType=Topic&resourceName=web-orders&patternType=Literal",
            2,
        ),
        ("patternType=Prefixed", 2),
        ("operation=Write", 2),
        ("permissionType=Deny", 1),
        ("host=10.0.0.1", 1),
        ("resourceType=Topic&resourceName=pay-x&patternType=Match", 1),
        ("resourceType=Topic&principal=User:alice&operation=Read", 1),
    ];
    for (query, expected) in cases {
        let data = h.data(&format!("/api/v1/acls?{query}")).await;
        assert_eq!(data["total"], expected, "{query}: {data}");
    }
    let limited = h.data("/api/v1/acls?limit=2").await;
    assert_eq!(limited["count"], 2);
    assert_eq!(limited["total"], 6);
    assert_eq!(limited["truncated"], true);
    assert!(limited["hint"].is_string());
}

#[tokio::test]
async fn bad_acl_filters_and_quota_requests_are_400_and_writes_405() {
    let h = cluster_with_acls().await;
    for path in [
        "/api/v1/acls?resourceType=Table",
        "/api/v1/acls?patternType=Suffixed",
        "/api/v1/acls?operation=Eat",
        "/api/v1/acls?permissionType=Maybe",
        "/api/v1/acls?principal=alice",
        "/api/v1/acls?limit=-1",
        "/api/v1/acls?user=alice",
        "/api/v1/quotas?user=alice",
        "/api/v1/quotas/default?x=1",
    ] {
        let (status, body) = h.get(path).await;
        assert_error(status, &body, 400);
    }
    for body in [
        "not json",
        "{\"usr\": \"alice\"}",
        "{\"user\": \"\"}",
        "[]",
        "",
    ] {
        let (status, answer) = h.post("/api/v1/quotas/resolve", body).await;
        assert_error(status, &answer, 400);
    }
    let put = h
        .http
        .put(h.url("/api/v1/quotas"))
        .body("{}")
        .send()
        .await
        .unwrap();
    // The collection itself takes no writes (entities are written at their own paths).
    let status = put.status().as_u16();
    let body: Value = put.json().await.unwrap();
    assert_error(status, &body, 405);
    let (status, body) = h.get("/api/v1/quotas/resolve").await;
    assert_error(status, &body, 405);
}

/// Six bindings over topics, a group, the cluster and transactional ids.
async fn cluster_with_acls() -> Harness {
    let h = Harness::start().await;
    let b = |rt, name: &str, pt, principal: &str, host: &str, op, perm| AclBinding {
        resource_type: rt,
        resource_name: name.into(),
        pattern_type: pt,
        principal: principal.into(),
        host: host.into(),
        operation: op,
        permission_type: perm,
    };
    use AclOperation as O;
    use AclPatternType::{Literal, Prefixed};
    use AclPermissionType::{Allow, Deny};
    use AclResourceType as R;
    let results = h
        .kafka
        .create_acls(&[
            b(
                R::Topic,
                "web-orders",
                Literal,
                "User:alice",
                "*",
                O::Read,
                Allow,
            ),
            b(
                R::Topic,
                "web-orders",
                Literal,
                "User:bob",
                "*",
                O::Write,
                Deny,
            ),
            b(
                R::Topic,
                "pay-",
                Prefixed,
                "User:alice",
                "*",
                O::Describe,
                Allow,
            ),
            b(R::Group, "g1", Literal, "User:alice", "*", O::Read, Allow),
            b(
                R::Cluster,
                "kafka-cluster",
                Literal,
                "User:admin",
                "*",
                O::All,
                Allow,
            ),
            b(
                R::TransactionalId,
                "tx-",
                Prefixed,
                "User:alice",
                "10.0.0.1",
                O::Write,
                Allow,
            ),
        ])
        .await
        .expect("create acls");
    assert!(results.iter().all(|r| r.error.is_none()), "{results:?}");
    h
}
