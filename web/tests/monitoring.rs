//! What ships for monitoring (deploy/prometheus, deploy/grafana) names only series ballast
//! serves, and the alert rules pass `promtool check rules` (Debian's `prometheus` package).

mod observed_common;

use std::collections::BTreeSet;

use ballast_schema::NewProposal;
use observed_common::{now_ms, parse_prometheus, Harness};
use serde_json::json;

/// Every `ballast_*` series a query of `text` names.
fn named_series(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while let Some(at) = text[i..].find("ballast_") {
        let start = i + at;
        let boundary =
            start == 0 || !(bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_');
        let end = text[start..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(text.len(), |e| start + e);
        if boundary {
            out.insert(text[start..end].to_string());
        }
        i = end;
    }
    out
}

fn deploy(path: &str) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy");
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[tokio::test]
async fn every_series_the_shipped_alerts_and_dashboard_query_is_one_ballast_serves() {
    let h = Harness::with_fixture().await;
    let now = now_ms();
    h.store
        .save_proposal(
            &NewProposal {
                id: "p-1".into(),
                fingerprint: "f".into(),
                moves_digest: "d".into(),
                basis: String::new(),
                recommended: true,
                application_allowed: true,
                moves: 3,
                estimated_bytes: 3_000,
                balance_hold: false,
                plan: json!({"loads": {"diskBytes": {"maxDistanceBefore": 31.5, "maxDistanceAfter": 2.5}}}),
                decision: json!({"applicationAllowed": true}),
                detail: json!({}),
            },
            now,
            200,
        )
        .unwrap();
    let (status, text) = h.text("/metrics").await;
    assert_eq!(status, 200);
    let samples = parse_prometheus(&text);
    let served: BTreeSet<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect();
    let value = |name: &str, label: Option<(&str, &str)>| {
        samples
            .iter()
            .find(|(n, labels, _)| {
                n == name && label.is_none_or(|(k, v)| labels.iter().any(|(a, b)| a == k && b == v))
            })
            .map(|s| s.2)
    };
    assert_eq!(
        value(
            "ballast_balance_imbalance_percent",
            Some(("load", "diskBytes"))
        ),
        Some(31.5)
    );
    assert_eq!(
        value(
            "ballast_balance_imbalance_after_percent",
            Some(("load", "diskBytes"))
        ),
        Some(2.5)
    );
    assert_eq!(value("ballast_proposal_applicable", None), Some(1.0));
    assert_eq!(value("ballast_proposal_moves", None), Some(3.0));
    assert!(
        value("ballast_consumer_group_lag", None).is_some(),
        "the fixture's group has a lag"
    );
    // Series that need something the fixture has not (an agent, a licence) are served by the
    // code that names them below; the rest must be in this very answer.
    let sources = [
        include_str!("../src/metrics.rs"),
        include_str!("../src/license.rs"),
    ]
    .concat();
    for file in [
        "prometheus/ballast-alerts.yml",
        "grafana/ballast-dashboard.json",
    ] {
        let text = deploy(file);
        let named = named_series(&text);
        assert!(!named.is_empty(), "{file} names series");
        for series in named {
            let family = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|s| series.strip_suffix(s))
                .unwrap_or(&series)
                .to_string();
            let quoted = format!("\"{family}\"");
            assert!(
                served.contains(&family) || sources.contains(&quoted),
                "{file} queries {series}, which ballast does not serve"
            );
        }
    }
}

#[test]
fn the_shipped_dashboard_is_grafana_json_and_the_alert_rules_pass_promtool() {
    let dashboard: serde_json::Value =
        serde_json::from_str(&deploy("grafana/ballast-dashboard.json")).expect("JSON");
    assert_eq!(dashboard["uid"], "ballast");
    assert!(dashboard["panels"]
        .as_array()
        .is_some_and(|p| p.len() >= 10));
    let rules = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../deploy/prometheus/ballast-alerts.yml");
    match std::process::Command::new("promtool")
        .arg("check")
        .arg("rules")
        .arg(&rules)
        .output()
    {
        Ok(out) => assert!(
            out.status.success(),
            "promtool check rules: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => eprintln!(
            "SKIPPED promtool check rules: promtool is not installed ({e}); scripts/test installs Debian's prometheus package"
        ),
    }
}
