//! Any JSON the API stores or answers (an audit event's summary, before and after, a worker's
//! report, a revert's items) shown for people: no braces, no quotes, no camelCase field names.
//! Names become words (`estimatedBytes` → "Estimated bytes"; Kafka's own names such as
//! `retention.ms` stay as Kafka spells them), numbers get their unit from the name (bytes, rates,
//! durations, times), a topic and partition read `orders-3`, lists of records become tables.

use serde_json::{Map, Value};

use super::fmt;
use super::svg::esc;

/// "estimatedBytes" → "Estimated bytes", "topic_id" → "Topic id"; a name with a dot or a dash
/// (a Kafka setting, a topic) is kept as it is.
pub fn words(key: &str) -> String {
    if key.contains('.') || key.contains('-') || key.is_empty() {
        return key.to_string();
    }
    let mut out = String::new();
    let mut prev_lower = false;
    for c in key.chars() {
        if c == '_' {
            out.push(' ');
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower {
            out.push(' ');
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        out.push(c.to_ascii_lowercase());
    }
    // A time or duration in milliseconds is shown with its own unit: the name drops "ms"
    // (`lastPassAtMs` → "Last pass at", `sampleMs` → "Sample").
    let out = match out.strip_suffix(" ms") {
        Some(stem) if !stem.is_empty() => stem.to_string(),
        _ => out,
    };
    // Common abbreviations read as people write them.
    let out = out
        .split(' ')
        .map(|w| match w {
            "id" => "id",
            "ids" => "ids",
            "url" => "URL",
            "acl" | "acls" => "ACL",
            "ms" => "ms",
            other => other,
        })
        .collect::<Vec<_>>()
        .join(" ");
    let mut chars = out.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().collect::<String>() + chars.as_str(),
        None => out,
    }
}

/// Whether the names inside `parent` are data (topic names, settings, group ids), shown as they
/// are, rather than field names turned into words.
fn names_are_data(parent: &str) -> bool {
    matches!(
        parent,
        "topics" | "configs" | "groups" | "brokers" | "quotas" | "users" | "clients" | "entities"
    )
}

/// The label of `key` inside `parent`.
fn label(parent: &str, key: &str) -> String {
    if names_are_data(parent) {
        key.to_string()
    } else {
        words(key)
    }
}

/// A number shown with the unit its name implies.
fn number(key: &str, n: f64) -> String {
    let k = key.to_ascii_lowercase();
    if k.ends_with("bytespersecond") || k.ends_with("byterate") || k.ends_with("bytes_per_second") {
        fmt::byte_rate(n)
    } else if k.ends_with("bytes") || k == "size" || k.ends_with("sizebytes") {
        fmt::bytes(n)
    } else if k.ends_with("msgrate") || k.ends_with("messagespersecond") {
        fmt::msg_rate(n)
    } else if (k.ends_with("atms") || k.ends_with("untilms") || k.ends_with("sincems")) && n > 1e11
    {
        // A Unix-ms time.
        fmt::time(&crate::fmt::rfc3339_ms(n as i64))
    } else if k.ends_with("ms") && !k.contains('.') {
        if n.abs() < 1000.0 {
            format!("{n:.0} ms")
        } else {
            fmt::duration_s(n / 1000.0)
        }
    } else if k.ends_with("seconds") || k.ends_with("secs") {
        fmt::duration_s(n)
    } else if k.ends_with("percent") || k.ends_with("pct") {
        fmt::pct_plain(n)
    } else if n.fract() == 0.0 && n.abs() < 1e15 {
        // Ids, counts, partitions: thousands separators only where they help (5 digits up).
        if n.abs() >= 10_000.0 {
            fmt::count(n)
        } else {
            format!("{n:.0}")
        }
    } else {
        format!("{n:.2}")
    }
}

/// A string: times as the dashboard writes them, the rest as it is.
fn string(key: &str, s: &str) -> String {
    let k = key.to_ascii_lowercase();
    let iso = s.len() >= 20 && s.as_bytes().get(10) == Some(&b'T') && s.ends_with('Z');
    if iso && (k.ends_with("at") || k == "at" || k.ends_with("time") || k.is_empty()) {
        fmt::time(s)
    } else {
        s.to_string()
    }
}

/// `{topic, partition}` (and nothing else but a broker list) as `orders-3`.
fn topic_partition(o: &Map<String, Value>) -> Option<String> {
    let topic = o.get("topic")?.as_str()?;
    let partition = o.get("partition")?.as_i64()?;
    (o.len() == 2).then(|| format!("{topic}-{partition}"))
}

/// One line for any value: records as `Name: value; …`, lists comma-separated.
pub fn inline(key: &str, v: &Value) -> String {
    match v {
        Value::Null => fmt::UNKNOWN.to_string(),
        Value::Bool(b) => if *b { "yes" } else { "no" }.to_string(),
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), |f| number(key, f)),
        Value::String(s) => string(key, s),
        Value::Array(items) if items.is_empty() => "none".to_string(),
        Value::Array(items) => items
            .iter()
            .map(|i| inline(key, i))
            .collect::<Vec<_>>()
            .join(if items.iter().any(Value::is_object) {
                "; "
            } else {
                ", "
            }),
        Value::Object(o) if o.is_empty() => "none".to_string(),
        Value::Object(o) => topic_partition(o).unwrap_or_else(|| {
            o.iter()
                .map(|(k, v)| {
                    let inner = inline(k, v);
                    if v.as_object().is_some_and(|m| topic_partition(m).is_none()) {
                        format!("{} ({inner})", label(key, k))
                    } else {
                        format!("{}: {inner}", label(key, k))
                    }
                })
                .collect::<Vec<_>>()
                .join("; ")
        }),
    }
}

/// Rows beyond this many are summarised in one line (an apply of 5,000 moves stays readable).
const MAX_ROWS: usize = 200;

/// HTML (escaped) for a value as a block: records as a list of names and values, lists of records
/// as a table, anything else as one line.
pub fn block(key: &str, v: &Value) -> String {
    match v {
        Value::Object(o) if !o.is_empty() && topic_partition(o).is_none() => {
            let mut out = String::from("<dl class=\"facts\">");
            for (k, v) in o {
                out.push_str(&format!(
                    "<dt>{}</dt><dd>{}</dd>",
                    esc(&label(key, k)),
                    block(k, v)
                ));
            }
            out.push_str("</dl>");
            out
        }
        Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object) => {
            table(key, items)
        }
        other => esc(&inline(key, other)),
    }
}

/// A table of records: one column per name any record has, in first-seen order.
fn table(key: &str, items: &[Value]) -> String {
    let mut columns: Vec<&str> = Vec::new();
    for i in items {
        for k in i.as_object().into_iter().flat_map(|o| o.keys()) {
            if !columns.contains(&k.as_str()) {
                columns.push(k);
            }
        }
    }
    // A topic and a partition read as one column, `orders-3`.
    let merged = columns.contains(&"topic") && columns.contains(&"partition");
    let mut shown: Vec<&str> = columns
        .iter()
        .copied()
        .filter(|c| !(merged && *c == "partition"))
        .collect();
    if merged {
        // The partition first: it names the row.
        shown.retain(|c| *c != "topic");
        shown.insert(0, "topic");
    }
    let mut out = String::from("<div class=\"table-wrap\"><table>");
    if !key.is_empty() {
        out.push_str(&format!("<caption>{}</caption>", esc(&words(key))));
    }
    out.push_str("<thead><tr>");
    for c in &shown {
        let head = if merged && *c == "topic" {
            "Partition".to_string()
        } else {
            words(c)
        };
        out.push_str(&format!("<th scope=\"col\">{}</th>", esc(&head)));
    }
    out.push_str("</tr></thead><tbody>");
    for i in items.iter().take(MAX_ROWS) {
        out.push_str("<tr>");
        for c in &shown {
            let cell = if merged && *c == "topic" {
                match (i["topic"].as_str(), i["partition"].as_i64()) {
                    (Some(t), Some(p)) => format!("{t}-{p}"),
                    _ => inline(c, &i[*c]),
                }
            } else {
                inline(c, &i[*c])
            };
            out.push_str(&format!("<td>{}</td>", esc(&cell)));
        }
        out.push_str("</tr>");
    }
    if items.len() > MAX_ROWS {
        out.push_str(&format!(
            "<tr><td class=\"empty\" colspan=\"{}\">and {} more (the API's audit log has every one)</td></tr>",
            shown.len(),
            fmt::count((items.len() - MAX_ROWS) as f64)
        ));
    }
    out.push_str("</tbody></table></div>");
    out
}

/// One line for an election's answer.
pub fn election_message(d: &Value) -> String {
    let mut msg = format!(
        "Preferred leader election ({}): {} elected, {} not needed, {} failed",
        s(d, "scope"),
        text(&d["elected"]),
        text(&d["notNeeded"]),
        text(&d["failed"])
    );
    let failures: Vec<String> = fmt::arr(d, "results")
        .iter()
        .filter(|r| s(r, "outcome") == "failed")
        .take(5)
        .map(|r| {
            format!(
                "{}-{}: {}",
                s(r, "topic"),
                text(&r["partition"]),
                s(r, "error")
            )
        })
        .collect();
    if !failures.is_empty() {
        msg.push_str(&format!(" ({})", failures.join("; ")));
    }
    msg
}

// ----------------------------------------------------------------------------- JSON readers

/// The text of a JSON value: strings as they are, numbers and booleans printed, `null` as `—`,
/// arrays of scalars comma-separated, records as names and values ([`inline`]).
pub fn text(v: &Value) -> String {
    match v {
        Value::Null => fmt::UNKNOWN.to_string(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => if *b { "yes" } else { "no" }.to_string(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.to_string(),
            None => n
                .as_f64()
                .map_or_else(|| n.to_string(), |f| format!("{f:.2}")),
        },
        Value::Array(items) if items.iter().all(|i| !i.is_object() && !i.is_array()) => {
            items.iter().map(text).collect::<Vec<_>>().join(", ")
        }
        // Records and lists of records in words, never as JSON.
        other => inline("", other),
    }
}

/// A string field, or `""`.
pub fn s(v: &Value, key: &str) -> String {
    match &v[key] {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => text(other),
    }
}

/// A list of broker ids as `1, 2, 3`.
pub fn ids(v: &Value) -> String {
    match v.as_array() {
        Some(items) => items.iter().map(text).collect::<Vec<_>>().join(", "),
        None => text(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn field_names_read_as_words_and_kafka_names_stay_as_kafka_spells_them() {
        assert_eq!(words("estimatedBytes"), "Estimated bytes");
        assert_eq!(words("proposalId"), "Proposal id");
        assert_eq!(words("retention.ms"), "retention.ms");
        assert_eq!(words("moves"), "Moves");
        assert_eq!(words("brokerIds"), "Broker ids");
        assert_eq!(words("lastPassAtMs"), "Last pass at");
        assert_eq!(words("sampleMs"), "Sample");
    }

    #[test]
    fn numbers_carry_the_unit_their_name_implies() {
        assert_eq!(inline("estimatedBytes", &json!(2377843943u64)), "2.21 GiB");
        assert_eq!(
            inline("rateBytesPerSecond", &json!(42962962.9)),
            "41.0 MiB/s"
        );
        assert_eq!(inline("moves", &json!(6)), "6");
        assert_eq!(inline("partitions", &json!(60000)), "60,000");
        assert_eq!(inline("elapsedMs", &json!(125000)), "2m 5s");
        assert_eq!(inline("sampleMs", &json!(120)), "120 ms");
        assert_eq!(
            inline("cooldownUntilMs", &json!(1795768747828i64)),
            "2026-11-27 08:39:07 UTC"
        );
        assert_eq!(
            inline("createdAt", &json!("2026-11-27T07:40:41.551Z")),
            "2026-11-27 07:40:41 UTC"
        );
        // A Kafka setting's value is the setting's own: no unit guessed from `.ms`.
        assert_eq!(inline("retention.ms", &json!("7200000")), "7200000");
    }

    #[test]
    fn a_record_reads_as_names_and_values_and_a_partition_as_topic_dash_number() {
        assert_eq!(
            inline("item", &json!({"topic": "clicks", "partition": 1})),
            "clicks-1"
        );
        assert_eq!(inline("replicas", &json!([6, 4, 2])), "6, 4, 2");
        assert_eq!(
            inline(
                "",
                &json!({"moves": 6, "skipped": [], "source": "proposal"})
            ),
            "Moves: 6; Skipped: none; Source: proposal"
        );
        assert_eq!(inline("", &json!(null)), "—");
    }

    #[test]
    fn a_list_of_records_is_a_table_with_one_partition_column_and_no_json() {
        let html = block(
            "",
            &json!([
                {"topic": "alerts", "partition": 0, "replicas": [1, 2, 3]},
                {"topic": "audit", "partition": 1, "replicas": [2, 3, 4]},
            ]),
        );
        assert!(
            html.contains("<th scope=\"col\">Partition</th><th scope=\"col\">Replicas</th>"),
            "{html}"
        );
        assert!(html.contains("<td>alerts-0</td><td>1, 2, 3</td>"), "{html}");
        assert!(!html.contains('{'), "{html}");
        assert!(!html.contains("&quot;"), "{html}");
    }

    #[test]
    fn nested_records_are_lists_of_names_and_values_and_text_is_escaped() {
        let html = block(
            "",
            &json!({"topics": {"orders": {"retention.ms": "<b>7200000</b>"}}}),
        );
        assert_eq!(
            html,
            "<dl class=\"facts\"><dt>Topics</dt><dd><dl class=\"facts\"><dt>orders</dt><dd><dl class=\"facts\"><dt>retention.ms</dt><dd>&lt;b&gt;7200000&lt;/b&gt;</dd></dl></dd></dl></dd></dl>"
        );
    }
}
