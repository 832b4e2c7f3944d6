//! Reading proposals: the answer a person or an agent can use, built once per check and served
//! from memory.
//!
//! A proposal's moves never change for its id (a new plan is a new proposal); its check time,
//! decision and figures (its moves assessed on each reading) change with every reading. So the
//! plan is parsed once per check ([`Prepared`]: its moves, their sort orders, the totals per cost
//! class, keyed by id and check time) and each answer is rendered once per check
//! ([`Prepared::rendered`], keyed by the check). A request reads one small row (the
//! proposal's head: id, times, decision) and serves the rendered text.
//!
//! The proposal answer carries the summary (decision, fair shares, per-load before and after,
//! totals) and the first [`EMBEDDED_MOVES`] moves in the planner's order; the whole list is paged
//! by [`moves_page`] (`GET /api/v1/proposals/{id}/moves`), in a documented order.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use ballast_runtime::format_rfc3339_ms;
use ballast_schema::ProposalRecord;
use serde_json::{json, Map, Value};

use crate::context::Context;
use crate::error::OpError;

/// Moves embedded in a proposal answer (the first ones in the planner's order).
pub const EMBEDDED_MOVES: usize = 100;
/// Topic/broker pairs embedded in `topicSpread.atLimit` and `benefitEvidence.topicBreaches`
/// (a cluster of 600 topics on 60 brokers has tens of thousands: megabytes no one reads); the
/// totals count every pair.
pub const EMBEDDED_PAIRS: usize = ballast_schema::DETAIL_PAIRS;
/// Default and largest page of [`moves_page`].
pub const DEFAULT_MOVES_LIMIT: usize = 100;
pub const MAX_MOVES_LIMIT: usize = 1000;
/// Proposals whose parsed plan is kept (the current one and a few an operator looks back at).
const KEPT: usize = 4;
/// Rendered answers kept per check (pages beyond are rendered for each request).
const RENDERED: usize = 256;

/// The orders of the move list.
pub const MOVE_SORTS: [&str; 3] = ["plan", "bytes", "partition"];

/// A proposal's plan, parsed once: the plan without its moves, the detail, the moves, and
/// what is derived from them.
pub struct Prepared {
    pub id: String,
    /// The check whose plan and detail these are (`checked_at_ms`).
    pub checked_at_ms: i64,
    /// The stored plan with `moves` taken out.
    pub plan: Value,
    pub detail: Value,
    pub moves: Vec<Value>,
    /// Moves and bytes per cost class, every move counted.
    pub cost_classes: Value,
    orders: Mutex<HashMap<&'static str, Arc<Vec<usize>>>>,
    /// Rendered answers of one check (`checked_at_ms`, `current`): replaced by the next check's.
    rendered: ByCheck<String>,
    /// Answers of one check shaped as values for a door that takes values (MCP).
    shaped: ByCheck<crate::kept::Kept>,
}

/// Answers kept for one check of a proposal (`checked_at_ms`, `current`), by key: the next
/// check's replace them; at most [`RENDERED`] are kept (the others are made for each request).
struct ByCheck<T> {
    inner: Mutex<(i64, bool, HashMap<String, Arc<T>>)>,
}

impl<T> ByCheck<T> {
    fn new() -> ByCheck<T> {
        ByCheck {
            inner: Mutex::new((i64::MIN, false, HashMap::new())),
        }
    }

    fn of(head: &ProposalRecord, cache: &(i64, bool, HashMap<String, Arc<T>>)) -> bool {
        cache.0 == head.checked_at_ms && cache.1 == head.current
    }

    /// The answer of the check `head` names under `key`, made once by `make`.
    fn get(&self, head: &ProposalRecord, key: &str, make: impl FnOnce() -> T) -> Arc<T> {
        {
            let mut cache = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            if !Self::of(head, &cache) {
                *cache = (head.checked_at_ms, head.current, HashMap::new());
            }
            if let Some(hit) = cache.2.get(key) {
                return hit.clone();
            }
        }
        // Made outside the lock: other answers are not held up by a large one.
        let made = Arc::new(make());
        let mut cache = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if Self::of(head, &cache) && cache.2.len() < RENDERED {
            cache.2.entry(key.to_string()).or_insert(made).clone()
        } else {
            made
        }
    }

    /// The answer of the check `head` names under `key`, when it was made.
    fn cached(&self, head: &ProposalRecord, key: &str) -> Option<Arc<T>> {
        let cache = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        Self::of(head, &cache)
            .then(|| cache.2.get(key).cloned())
            .flatten()
    }
}

impl Prepared {
    fn new(id: String, checked_at_ms: i64, mut plan: Value, detail: Value) -> Prepared {
        let moves = match plan.as_object_mut().and_then(|o| o.remove("moves")) {
            Some(Value::Array(moves)) => moves,
            _ => Vec::new(),
        };
        let mut classes: BTreeMap<String, (u64, f64)> = BTreeMap::new();
        for m in &moves {
            let class = m
                .get("costClass")
                .and_then(Value::as_str)
                .unwrap_or("unknown");
            let e = classes.entry(class.to_string()).or_default();
            e.0 += 1;
            e.1 += m.get("bytes").and_then(Value::as_f64).unwrap_or(0.0);
        }
        let cost_classes = Value::Object(
            classes
                .into_iter()
                .map(|(class, (moves, bytes))| (class, json!({"moves": moves, "bytes": bytes})))
                .collect(),
        );
        Prepared {
            id,
            checked_at_ms,
            plan,
            detail,
            moves,
            cost_classes,
            orders: Mutex::new(HashMap::new()),
            rendered: ByCheck::new(),
            shaped: ByCheck::new(),
        }
    }

    /// The moves' indexes in one of [`MOVE_SORTS`], made once.
    fn order(&self, sort: &'static str) -> Arc<Vec<usize>> {
        let mut cache = self.orders.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .entry(sort)
            .or_insert_with(|| {
                let mut idx: Vec<usize> = (0..self.moves.len()).collect();
                let key = |i: usize| {
                    let m = &self.moves[i];
                    (
                        m.get("topic").and_then(Value::as_str).unwrap_or(""),
                        m.get("partition").and_then(Value::as_i64).unwrap_or(0),
                    )
                };
                let bytes = |i: usize| {
                    self.moves[i]
                        .get("bytes")
                        .and_then(Value::as_f64)
                        .unwrap_or(0.0)
                };
                match sort {
                    "bytes" => idx.sort_by(|&a, &b| {
                        bytes(b)
                            .total_cmp(&bytes(a))
                            .then_with(|| key(a).cmp(&key(b)))
                            .then(a.cmp(&b))
                    }),
                    "partition" => idx.sort_by(|&a, &b| key(a).cmp(&key(b)).then(a.cmp(&b))),
                    _ => {}
                }
                Arc::new(idx)
            })
            .clone()
    }

    /// An answer of the check `head` names, rendered once by `make`.
    pub fn rendered(
        &self,
        head: &ProposalRecord,
        key: &str,
        make: impl FnOnce() -> String,
    ) -> Arc<String> {
        self.rendered.get(head, key, make)
    }

    /// An answer of the check `head` names shaped as a value, made once by `make`.
    pub fn shaped(
        &self,
        head: &ProposalRecord,
        key: &str,
        make: impl FnOnce() -> Value,
    ) -> Arc<crate::kept::Kept> {
        self.shaped
            .get(head, key, || crate::kept::Kept::new(make()))
    }

    /// An answer of the check `head` names, when it was rendered.
    pub fn cached(&self, head: &ProposalRecord, key: &str) -> Option<Arc<String>> {
        self.rendered.cached(head, key)
    }
}

#[derive(Default)]
struct Slot {
    kept: Mutex<Vec<Arc<Prepared>>>,
    loading: tokio::sync::Mutex<()>,
}

impl Slot {
    fn find(&self, id: &str, checked_at_ms: i64) -> Option<Arc<Prepared>> {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.iter()
            .find(|p| p.id == id && p.checked_at_ms == checked_at_ms)
            .cloned()
    }

    fn keep(&self, p: Arc<Prepared>) {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.retain(|k| k.id != p.id);
        kept.insert(0, p);
        kept.truncate(KEPT);
    }
}

/// One cache per database file (tests run several services in one process).
fn slot(path: &std::path::Path) -> Arc<Slot> {
    static SLOTS: OnceLock<Mutex<HashMap<PathBuf, Arc<Slot>>>> = OnceLock::new();
    let slots = SLOTS.get_or_init(|| Mutex::new(HashMap::new()));
    let mut slots = slots.lock().unwrap_or_else(|e| e.into_inner());
    slots.entry(path.to_path_buf()).or_default().clone()
}

/// The proposal `id` (None: the current one): its head (one small row) and its parsed plan,
/// None when there is no such proposal.
pub async fn load(
    ctx: &Context,
    id: Option<&str>,
) -> Result<Option<(ProposalRecord, Arc<Prepared>)>, OpError> {
    let key = id.map(str::to_string);
    let head = ctx
        .db(move |s| match key {
            Some(id) => s.proposal_head(&id),
            None => s.current_proposal_head(),
        })
        .await?;
    let Some(head) = head else {
        return Ok(None);
    };
    let slot = slot(ctx.store.path());
    if let Some(p) = slot.find(&head.id, head.checked_at_ms) {
        return Ok(Some((head, p)));
    }
    // One request parses a plan; the others wait for it rather than parse it again.
    let _guard = slot.loading.lock().await;
    if let Some(p) = slot.find(&head.id, head.checked_at_ms) {
        return Ok(Some((head, p)));
    }
    let id = head.id.clone();
    let checked = head.checked_at_ms;
    let parsed = ctx
        .db(move |s| {
            Ok(s.proposal_plan(&id)?
                .map(|(plan, detail)| Prepared::new(id, checked, plan, detail)))
        })
        .await?;
    Ok(parsed.map(|p| {
        let p = Arc::new(p);
        slot.keep(p.clone());
        (head, p)
    }))
}

fn candidate_available(p: &ProposalRecord) -> bool {
    p.current && p.moves > 0
}

/// A list row: the summary columns and the proposal's own decision.
pub fn summary(p: &ProposalRecord) -> Value {
    json!({
        "id": p.id,
        "createdAt": format_rfc3339_ms(p.created_at_ms),
        "checkedAt": format_rfc3339_ms(p.checked_at_ms),
        "current": p.current,
        "superseded": !p.current,
        "candidateAvailable": candidate_available(p),
        "recommended": p.recommended,
        "totalReassignments": p.moves,
        "estimatedBytes": p.estimated_bytes,
        "balanceHold": p.balance_hold,
        "fingerprint": p.fingerprint,
        "decision": p.decision,
    })
}

/// Where the next page of a proposal's moves is.
pub fn moves_path(id: &str, offset: usize, limit: usize) -> String {
    format!("/api/v1/proposals/{id}/moves?offset={offset}&limit={limit}")
}

/// The proposal answer: the spec's named fields from the stored plan, decision and detail, and
/// the first [`EMBEDDED_MOVES`] moves in the planner's order.
pub fn full(head: &ProposalRecord, p: &Prepared) -> Value {
    let plan = &p.plan;
    let field = |name: &str| plan.get(name).cloned().unwrap_or(Value::Null);
    let total = p.moves.len();
    let mut balance = Map::new();
    if let Some(loads) = plan.get("loads").and_then(Value::as_object) {
        for (name, l) in loads {
            let get = |k: &str| l.get(k).cloned().unwrap_or(Value::Null);
            balance.insert(
                name.clone(),
                json!({
                    "imbalance": get("maxDistanceBefore"),
                    "imbalanceAfter": get("maxDistanceAfter"),
                    "counted": get("counted"),
                    "noTraffic": get("noTraffic"),
                    "measuring": get("measuring"),
                    "belowFloor": get("belowFloor"),
                    "triggered": get("triggered"),
                    "largestDifference": get("largestDifference"),
                    "busiestBroker": get("busiestBroker"),
                    "quietestBroker": get("quietestBroker"),
                    "stop": get("stop"),
                    "stopReason": get("stopReason"),
                }),
            );
        }
    }
    let detail = |name: &str, empty: Value| p.detail.get(name).cloned().unwrap_or(empty);
    // The cap counts, before and after the plan (`null` in proposals stored before they were).
    let spread = |name: &str| {
        plan.get("topicSpread")
            .and_then(|s| s.get(name))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let embedded: Vec<Value> = p.moves.iter().take(EMBEDDED_MOVES).cloned().collect();
    // The pairs at their topic's cap, first ones by key (`topic@broker`), and the breaches,
    // most replicas beyond the cap first.
    // The observer keeps only the pairs shown and counts every one (`DETAIL_PAIRS`); a proposal
    // stored before it did holds them all.
    let counted = |name: &str, all: usize| {
        p.detail
            .get(name)
            .and_then(Value::as_u64)
            .map_or(all, |n| n as usize)
    };
    let at_limit = detail("topicSpreadAtLimit", json!({}));
    let at_limit_total = counted(
        "topicSpreadAtLimitTotal",
        at_limit.as_object().map_or(0, Map::len),
    );
    let at_limit = match at_limit {
        Value::Object(pairs) => Value::Object(pairs.into_iter().take(EMBEDDED_PAIRS).collect()),
        other => other,
    };
    let mut breaches = match detail("topicBreaches", json!([])) {
        Value::Array(rows) => rows,
        _ => Vec::new(),
    };
    let breaches_total = counted("topicBreachesTotal", breaches.len());
    let excess = |b: &Value| {
        b.get("replicas").and_then(Value::as_i64).unwrap_or(0)
            - b.get("cap").and_then(Value::as_i64).unwrap_or(0)
    };
    breaches.sort_by(|a, b| {
        excess(b).cmp(&excess(a)).then_with(|| {
            let key = |v: &Value| {
                (
                    v.get("topic")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    v.get("brokerId").and_then(Value::as_i64).unwrap_or(0),
                )
            };
            key(a).cmp(&key(b))
        })
    });
    breaches.truncate(EMBEDDED_PAIRS);
    json!({
        "id": head.id,
        "createdAt": format_rfc3339_ms(head.created_at_ms),
        "checkedAt": format_rfc3339_ms(head.checked_at_ms),
        "current": head.current,
        "superseded": !head.current,
        "candidateAvailable": candidate_available(head),
        "recommended": head.recommended,
        "reason": field("reason"),
        "reasonText": field("reasonText"),
        "decision": head.decision,
        "fingerprint": head.fingerprint,
        "fairShare": {
            "shares": detail("shares", json!([])),
            "loads": field("loads"),
        },
        "topicSpread": {
            "atLimit": at_limit,
            "atLimitTotal": at_limit_total,
            "atLimitTruncated": at_limit_total > EMBEDDED_PAIRS,
            "overCap": spread("overCap"),
            "projectedOverCap": spread("projectedOverCap"),
            "excessLeaders": spread("excessLeaders"),
            "projectedExcessLeaders": spread("projectedExcessLeaders"),
            "excessReplicas": spread("excessReplicas"),
            "projectedExcessReplicas": spread("projectedExcessReplicas"),
        },
        // Partitions on fewer racks than min(replication factor, racks), before and after, and
        // why any stay (`null` in proposals stored before plans reported it).
        "rackAwareness": field("rackAwareness"),
        "benefitEvidence": {
            "tripped": plan.get("tripped").cloned().unwrap_or_else(|| json!([])),
            "topicBreaches": breaches,
            "topicBreachesTotal": breaches_total,
            "topicBreachesTruncated": breaches_total > EMBEDDED_PAIRS,
        },
        "structuralLimits": plan.get("structuralLimits").cloned().unwrap_or_else(|| json!([])),
        "metrics": {
            "effective": field("effectiveAfter"),
            "effectiveBefore": field("effectiveBefore"),
            "evennessBefore": field("evennessBefore"),
            "evennessAfter": field("evennessAfter"),
        },
        "movement": {
            "estimatedBytes": head.estimated_bytes,
            "costClasses": p.cost_classes,
            "search": field("search"),
            "planningMs": field("elapsedMs"),
        },
        "balance": balance,
        "balanceHold": head.balance_hold,
        "downBrokers": plan.get("downBrokers").cloned().unwrap_or_else(|| json!([])),
        "reassignments": embedded,
        "totalReassignments": total,
        "reassignmentsTruncated": total > EMBEDDED_MOVES,
        "reassignmentsNext": (total > EMBEDDED_MOVES)
            .then(|| moves_path(&head.id, EMBEDDED_MOVES, DEFAULT_MOVES_LIMIT)),
    })
}

/// What [`moves_page`] is asked for.
#[derive(Debug, Clone, Default)]
pub struct MovesQuery {
    pub limit: Option<usize>,
    pub offset: Option<usize>,
    /// One of [`MOVE_SORTS`]; default `plan`.
    pub sort: Option<String>,
    /// Only moves of this topic.
    pub topic: Option<String>,
    /// Only moves whose replicas before or after include this broker.
    pub broker_id: Option<i64>,
}

impl MovesQuery {
    /// The key naming this page among a check's rendered answers.
    pub fn key(&self) -> String {
        format!(
            "moves:{:?}:{:?}:{:?}:{:?}:{:?}",
            self.limit, self.offset, self.sort, self.topic, self.broker_id
        )
    }
}

fn involves(m: &Value, broker: i64) -> bool {
    ["replicasBefore", "replicasAfter"].iter().any(|k| {
        m.get(*k)
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|b| b.as_i64() == Some(broker)))
    })
}

/// A page of a proposal's moves in one of [`MOVE_SORTS`] (`plan`: the planner's order, which
/// is the order the executor submits them in; `bytes`: most bytes first; `partition`: by topic
/// and partition), optionally only one topic's or one broker's; ties end in the planner's order.
pub fn moves_page(head: &ProposalRecord, p: &Prepared, q: &MovesQuery) -> Result<Value, OpError> {
    let limit = match q.limit {
        None | Some(0) => DEFAULT_MOVES_LIMIT,
        Some(n) if n > MAX_MOVES_LIMIT => {
            return Err(OpError::bad_input(
                "invalid query",
                format!("limit: at most {MAX_MOVES_LIMIT}, got {n}"),
            ))
        }
        Some(n) => n,
    };
    let offset = q.offset.unwrap_or(0);
    let sort: &'static str = match q.sort.as_deref() {
        None | Some("") => "plan",
        Some(s) => MOVE_SORTS
            .iter()
            .find(|k| **k == s)
            .copied()
            .ok_or_else(|| {
                OpError::bad_input(
                    "invalid query",
                    format!("sort: expected one of {}, got {s:?}", MOVE_SORTS.join(", ")),
                )
            })?,
    };
    let order = p.order(sort);
    let selected = order.iter().map(|&i| &p.moves[i]).filter(|m| {
        q.topic
            .as_deref()
            .is_none_or(|t| m.get("topic").and_then(Value::as_str) == Some(t))
            && q.broker_id.is_none_or(|b| involves(m, b))
    });
    let mut total = 0usize;
    let mut rows = Vec::new();
    for m in selected {
        if total >= offset && rows.len() < limit {
            rows.push(m.clone());
        }
        total += 1;
    }
    let count = rows.len();
    let next = (offset + count < total).then(|| {
        let mut path = moves_path(&head.id, offset + count, limit);
        if sort != "plan" {
            path.push_str(&format!("&sort={sort}"));
        }
        if let Some(t) = &q.topic {
            path.push_str(&format!("&topic={}", url_encode(t)));
        }
        if let Some(b) = q.broker_id {
            path.push_str(&format!("&brokerId={b}"));
        }
        path
    });
    Ok(json!({
        "proposalId": head.id,
        "checkedAt": format_rfc3339_ms(head.checked_at_ms),
        "sort": sort,
        "total": total,
        "offset": offset,
        "limit": limit,
        "count": count,
        "truncated": offset + count < total,
        "next": next,
        "moves": rows,
    }))
}

/// Percent-encodes a query value (topic names are ASCII letters, digits, `.`, `_` and `-`, which
/// need none, but a filter value is whatever the caller sent).
fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'_' | b'-' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
