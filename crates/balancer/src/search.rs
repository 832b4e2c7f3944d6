//! The search: repeatedly take the broker farthest from its fair share of a load that must be
//! evened, and apply the move that makes the cluster most even per unit of cost. Deterministic:
//! candidates are generated in a fixed order and compared with a total order, so the number of
//! worker threads never changes the result.

use std::collections::BTreeSet;

use crate::model::{Bx, Model};

/// A change to one partition's placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Make in-sync replica `to` the leader (and the preferred replica).
    Leader { pi: u32, to: Bx },
    /// Replace the replica on `from` with one on `to`.
    Replica { pi: u32, from: Bx, to: Bx },
}

impl Action {
    pub fn partition(self) -> u32 {
        match self {
            Action::Leader { pi, .. } | Action::Replica { pi, .. } => pi,
        }
    }

    /// A total order for ties: partition, then kind, then brokers.
    fn key(self) -> (u32, u8, Bx, Bx) {
        match self {
            Action::Leader { pi, to } => (pi, 0, to, to),
            Action::Replica { pi, from, to } => (pi, 1, from, to),
        }
    }
}

/// Load changes of up to three brokers.
#[derive(Clone, Copy)]
pub struct Effect {
    pub items: [(Bx, [f64; 7]); 3],
    pub len: usize,
}

impl Effect {
    fn new() -> Self {
        Self {
            items: [(0, [0.0; 7]); 3],
            len: 0,
        }
    }

    fn add(&mut self, b: Bx, v: [f64; 7], sign: f64) {
        let slot = match self.items[..self.len].iter().position(|(x, _)| *x == b) {
            Some(i) => i,
            None => {
                self.items[self.len] = (b, [0.0; 7]);
                self.len += 1;
                self.len - 1
            }
        };
        for (l, x) in v.iter().enumerate() {
            self.items[slot].1[l] += sign * x;
        }
    }

    pub fn delta(&self, b: Bx, load: usize) -> f64 {
        self.items[..self.len]
            .iter()
            .find(|(x, _)| *x == b)
            .map_or(0.0, |(_, v)| v[load])
    }
}

pub fn effect(model: &Model, action: Action) -> Effect {
    let mut e = Effect::new();
    match action {
        Action::Leader { pi, to } => {
            let p = &model.parts[pi as usize];
            if let Some(from) = p.leader {
                let (lv, fv) = (p.leader_vec(), p.follower_vec());
                e.add(from, lv, -1.0);
                e.add(from, fv, 1.0);
                e.add(to, fv, -1.0);
                e.add(to, lv, 1.0);
            }
        }
        Action::Replica { pi, from, to } => {
            let p = &model.parts[pi as usize];
            let (lv, fv) = (p.leader_vec(), p.follower_vec());
            if p.leader == Some(from) {
                e.add(from, lv, -1.0);
                let first = if p.replicas.first() == Some(&from) {
                    to
                } else {
                    p.replicas[0]
                };
                if first == to {
                    e.add(to, lv, 1.0);
                } else {
                    e.add(to, fv, 1.0);
                    e.add(first, fv, -1.0);
                    e.add(first, lv, 1.0);
                }
            } else {
                e.add(from, fv, -1.0);
                e.add(to, fv, 1.0);
            }
        }
    }
    e
}

/// What the search knows about the loads it evens.
#[derive(Clone)]
pub struct Targets {
    pub fair: [f64; 7],
    /// Loads that count (have traffic and are above their floor).
    pub counted: [bool; 7],
    /// Counted loads that triggered: they are evened to within the threshold.
    pub active: [bool; 7],
    /// Loads left alone because their imbalance is below `BALLAST_BALANCE_FLOOR`, with that
    /// floor: moves must not push them past both the floor and the trigger.
    pub floor: [Option<f64>; 7],
    pub threshold: f64,
    pub trigger: f64,
    pub eligible: Vec<bool>,
    pub eligible_count: usize,
}

impl Targets {
    /// Distance in percent of a load value from fair share.
    pub fn dev(&self, load: usize, value: f64) -> f64 {
        let f = self.fair[load];
        if f <= 0.0 {
            0.0
        } else {
            (value - f) / f * 100.0
        }
    }
}

/// Why candidates for one (broker, load) were refused; decides the structural-limit cause.
#[derive(Debug, Default, Clone, Copy)]
pub struct Tally {
    pub cooldown: u32,
    pub rack: u32,
    pub spread: u32,
    pub overshoot: u32,
    pub conflict: u32,
    pub evaluated: u64,
}

impl Tally {
    fn merge(&mut self, o: &Tally) {
        self.cooldown += o.cooldown;
        self.rack += o.rack;
        self.spread += o.spread;
        self.overshoot += o.overshoot;
        self.conflict += o.conflict;
        self.evaluated += o.evaluated;
    }
}

#[derive(Debug, Clone, Copy)]
struct Scored {
    action: Action,
    score: f64,
}

fn better(a: &Scored, b: &Scored) -> bool {
    match a.score.total_cmp(&b.score) {
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Less => false,
        std::cmp::Ordering::Equal => a.action.key() < b.action.key(),
    }
}

/// The outcome of a search.
pub struct SearchResult {
    pub iterations: u64,
    pub evaluated: u64,
    pub applied: u64,
    /// (broker index, load) pairs left beyond the threshold, with why.
    pub stuck: Vec<(Bx, usize, Tally)>,
    pub capped: bool,
}

pub struct Search<'a> {
    pub model: &'a mut Model,
    pub targets: &'a Targets,
    pub max_partitions: Option<usize>,
    pub workers: usize,
    /// Typical replica size, to price copies.
    pub typical_size: f64,
}

/// Candidate destinations or sources considered per step.
const FANOUT: usize = 8;

impl Search<'_> {
    pub fn run(mut self) -> SearchResult {
        let mut stuck: Vec<(Bx, usize, Tally)> = Vec::new();
        let mut stuck_set: BTreeSet<(Bx, usize)> = BTreeSet::new();
        let mut touched: BTreeSet<u32> = BTreeSet::new();
        let mut result = SearchResult {
            iterations: 0,
            evaluated: 0,
            applied: 0,
            stuck: Vec::new(),
            capped: false,
        };
        let limit = 4 * self.model.parts.len() as u64 + 1000;
        // Rounds: a pair found stuck may become movable after later moves, so once a round ends
        // with progress, the stuck marks are cleared and the search goes again. Every applied
        // move strictly lowers the objective, so this ends.
        loop {
            let applied_before = result.applied;
            stuck.clear();
            stuck_set.clear();
            while result.iterations < limit {
                result.iterations += 1;
                let Some((b, load)) = self.worst(&stuck_set) else {
                    break;
                };
                let full = self.max_partitions.is_some_and(|cap| touched.len() >= cap);
                let (best, tally) = self.best_move(b, load, full.then_some(&touched));
                result.evaluated += tally.evaluated;
                match best {
                    Some(s) => {
                        touched.insert(s.action.partition());
                        self.apply(s.action);
                        result.applied += 1;
                    }
                    None => {
                        if full {
                            result.capped = true;
                        }
                        stuck_set.insert((b, load));
                        stuck.push((b, load, tally));
                    }
                }
            }
            if result.applied == applied_before || result.iterations >= limit {
                break;
            }
        }
        // Only pairs still beyond the threshold are limits; a later move may have fixed one.
        result.stuck = stuck
            .into_iter()
            .filter(|(b, l, _)| {
                let v = self.model.loads[*b as usize][*l];
                self.targets.dev(*l, v).abs() > self.targets.threshold
            })
            .collect();
        result
    }

    /// The eligible broker and active load farthest from fair share beyond the threshold.
    /// Overloaded brokers go first: a broker that gives load picks the cheapest destination
    /// (same rack) among equals; underloaded brokers pull only when nobody is over.
    fn worst(&self, stuck: &BTreeSet<(Bx, usize)>) -> Option<(Bx, usize)> {
        let t = self.targets;
        let mut over: Option<(f64, Bx, usize)> = None;
        let mut under: Option<(f64, Bx, usize)> = None;
        for (b, loads) in self.model.loads.iter().enumerate() {
            if !t.eligible[b] {
                continue;
            }
            for (l, v) in loads.iter().enumerate() {
                if !t.active[l] || stuck.contains(&(b as Bx, l)) {
                    continue;
                }
                let d = t.dev(l, *v);
                let slot = if d > 0.0 { &mut over } else { &mut under };
                if d.abs() > t.threshold && slot.is_none_or(|(bd, _, _)| d.abs() > bd) {
                    *slot = Some((d.abs(), b as Bx, l));
                }
            }
        }
        over.or(under).map(|(_, b, l)| (b, l))
    }

    fn apply(&mut self, action: Action) {
        match action {
            Action::Leader { pi, to } => self.model.apply_leader_swap(pi, to),
            Action::Replica { pi, from, to } => self.model.apply_replica_move(pi, from, to),
        }
    }

    /// Brokers ordered by distance on `load`: most underloaded first (`ascending`) or most
    /// overloaded first; eligible only, `exclude` left out.
    fn ranked(&self, load: usize, ascending: bool, exclude: Bx) -> Vec<Bx> {
        let mut v: Vec<Bx> = (0..self.model.nb() as Bx)
            .filter(|&b| b != exclude && self.targets.eligible[b as usize])
            .collect();
        v.sort_by(|&a, &b| {
            let (la, lb) = (
                self.model.loads[a as usize][load],
                self.model.loads[b as usize][load],
            );
            let o = la.total_cmp(&lb);
            let o = if ascending { o } else { o.reverse() };
            o.then(a.cmp(&b))
        });
        v
    }

    /// Every candidate move for broker `b` on `load`, in a fixed order.
    fn candidates(&self, b: Bx, load: usize) -> Vec<Action> {
        let m = &*self.model;
        let over = self.targets.dev(load, m.loads[b as usize][load]) > 0.0;
        let mut out = Vec::new();
        if over {
            let dests: Vec<Bx> = self
                .ranked(load, true, b)
                .into_iter()
                .take(FANOUT)
                .collect();
            for &pi in &m.broker_parts[b as usize] {
                let p = &m.parts[pi as usize];
                if p.leader.is_none() {
                    continue;
                }
                if p.leader == Some(b) {
                    for &f in &p.isr {
                        if f != b && p.holds(f) && self.targets.eligible[f as usize] {
                            out.push(Action::Leader { pi, to: f });
                        }
                    }
                } else if let Some(l) = p.leader {
                    // Taking leadership onto b's follower relieves b's followers.
                    if p.isr.contains(&b) && self.targets.eligible[b as usize] && l != b {
                        out.push(Action::Leader { pi, to: b });
                    }
                }
                for &d in &dests {
                    if !p.holds(d) {
                        out.push(Action::Replica { pi, from: b, to: d });
                    }
                }
            }
        } else {
            let sources: Vec<Bx> = self
                .ranked(load, false, b)
                .into_iter()
                .take(FANOUT)
                .collect();
            for &pi in &m.broker_parts[b as usize] {
                let p = &m.parts[pi as usize];
                if let Some(l) = p.leader {
                    if l != b && p.isr.contains(&b) {
                        out.push(Action::Leader { pi, to: b });
                    }
                    if l == b {
                        for &f in &p.isr {
                            if f != b && p.holds(f) && self.targets.eligible[f as usize] {
                                out.push(Action::Leader { pi, to: f });
                            }
                        }
                    }
                }
            }
            for &s in &sources {
                for &pi in &m.broker_parts[s as usize] {
                    let p = &m.parts[pi as usize];
                    if p.leader.is_some() && !p.holds(b) {
                        out.push(Action::Replica { pi, from: s, to: b });
                    }
                }
            }
        }
        out
    }

    /// The best admissible candidate for (b, load), or why there is none.
    fn best_move(
        &self,
        b: Bx,
        load: usize,
        only: Option<&BTreeSet<u32>>,
    ) -> (Option<Scored>, Tally) {
        let mut actions = self.candidates(b, load);
        if let Some(only) = only {
            actions.retain(|a| only.contains(&a.partition()));
        }
        let workers = self.workers.max(1);
        if workers == 1 || actions.len() < 4096 {
            return self.evaluate_chunk(b, load, &actions);
        }
        let chunk = actions.len().div_ceil(workers);
        let results: Vec<(Option<Scored>, Tally)> = std::thread::scope(|scope| {
            let handles: Vec<_> = actions
                .chunks(chunk)
                .map(|c| scope.spawn(move || self.evaluate_chunk(b, load, c)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or((None, Tally::default())))
                .collect()
        });
        let mut best: Option<Scored> = None;
        let mut tally = Tally::default();
        for (s, t) in results {
            tally.merge(&t);
            if let Some(s) = s {
                if best.as_ref().is_none_or(|cur| better(&s, cur)) {
                    best = Some(s);
                }
            }
        }
        (best, tally)
    }

    fn evaluate_chunk(&self, b: Bx, load: usize, actions: &[Action]) -> (Option<Scored>, Tally) {
        let mut best: Option<Scored> = None;
        let mut tally = Tally::default();
        for &a in actions {
            tally.evaluated += 1;
            if let Some(s) = self.evaluate(b, load, a, &mut tally) {
                if best.as_ref().is_none_or(|cur| better(&s, cur)) {
                    best = Some(s);
                }
            }
        }
        (best, tally)
    }

    /// Scores one candidate; `None` (with the reason tallied) when it is not admissible.
    fn evaluate(&self, b: Bx, load: usize, action: Action, tally: &mut Tally) -> Option<Scored> {
        let m = &*self.model;
        let t = self.targets;
        let e = effect(m, action);
        // The move must bring broker b closer to fair share on this load.
        let before = m.loads[b as usize][load];
        let after = before + e.delta(b, load);
        let (db, da) = (t.dev(load, before).abs(), t.dev(load, after).abs());
        if da >= db - 1e-9 {
            tally.overshoot += u32::from(e.delta(b, load) != 0.0);
            return None;
        }
        let pi = action.partition();
        let p = &m.parts[pi as usize];
        if p.frozen {
            tally.cooldown += 1;
            return None;
        }
        let nb = m.nb();
        let topic = p.topic as usize;
        match action {
            Action::Replica { from, to, .. } => {
                if !m.keeps_rack_spread(pi, from, to) {
                    tally.rack += 1;
                    return None;
                }
                let cap = m.replica_cap(topic, t.eligible_count);
                if m.topic_replicas[topic * nb + to as usize] + 1 > cap {
                    tally.spread += 1;
                    return None;
                }
            }
            Action::Leader { to, .. } => {
                let cap = m.leader_cap(topic, t.eligible_count);
                if m.topic_leaders[topic * nb + to as usize] + 1 > cap {
                    tally.spread += 1;
                    return None;
                }
            }
        }
        // Objective: squared distances of every counted load on every eligible broker.
        let mut delta_obj = 0.0;
        let mut worsened_sibling = false;
        for &(x, ref dv) in &e.items[..e.len] {
            if !t.eligible[x as usize] {
                continue;
            }
            for (l, &dl) in dv.iter().enumerate() {
                if dl == 0.0 {
                    continue;
                }
                let v = m.loads[x as usize][l];
                if let Some(floor) = t.floor[l] {
                    let (d0, d1) = (t.dev(l, v), t.dev(l, v + dl));
                    let now_far = (v + dl - t.fair[l]).abs() >= floor && d1.abs() > t.trigger;
                    if now_far && d1.abs() > d0.abs() {
                        tally.conflict += 1;
                        return None;
                    }
                }
                if !t.counted[l] {
                    continue;
                }
                let (d0, d1) = (t.dev(l, v) / 100.0, t.dev(l, v + dl) / 100.0);
                delta_obj += d1 * d1 - d0 * d0;
                // A load that did not trigger must not be pushed past the trigger.
                if !t.active[l] && d1.abs() * 100.0 > t.trigger && d1.abs() > d0.abs() {
                    tally.conflict += 1;
                    return None;
                }
                if l != load && d1.abs() > d0.abs() {
                    worsened_sibling = true;
                }
            }
        }
        if delta_obj >= -1e-12 {
            if worsened_sibling {
                tally.conflict += 1;
            } else {
                tally.overshoot += 1;
            }
            return None;
        }
        let cost = match action {
            Action::Leader { .. } => 1.0,
            Action::Replica { from, to, .. } => {
                let cross = match (m.brokers[from as usize].rack, m.brokers[to as usize].rack) {
                    (Some(a), Some(b)) => a != b,
                    _ => false,
                };
                let copy = 1.0 + p.size / self.typical_size.max(1.0);
                if cross {
                    1.25 * copy + 0.5
                } else {
                    copy + 0.5
                }
            }
        };
        Some(Scored {
            action,
            score: -delta_obj / cost,
        })
    }
}
