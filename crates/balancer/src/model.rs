//! The planner's compact working state: brokers and partitions by index, per-broker loads kept
//! up to date move by move, per-topic replica and leader counts for the spread cap.

use std::collections::HashMap;

use ballast_model::snapshot::Snapshot;
use ballast_model::{BrokerId, BrokerState};

use crate::time::parse_rfc3339_ms;

/// Index of a broker in [`Model::brokers`].
pub type Bx = u16;

pub const DISK: usize = 2;

pub struct BrokerSlot {
    pub id: BrokerId,
    /// Rack index; `None` when the broker has no rack.
    pub rack: Option<u32>,
    pub state: BrokerState,
}

impl BrokerSlot {
    pub fn eligible(&self) -> bool {
        self.state.takes_load()
    }
}

/// The most replicas the planner models per partition; partitions with more are never moved.
pub const MAX_RF: usize = 16;

/// A replica set stored inline (no heap): the planner touches millions of these per plan.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Slots {
    len: u8,
    items: [Bx; MAX_RF],
}

impl Slots {
    pub fn from_slice(ids: &[Bx]) -> Slots {
        Slots::first_of(ids.iter().copied())
    }

    /// The first [`MAX_RF`] of `ids`.
    pub fn first_of(ids: impl Iterator<Item = Bx>) -> Slots {
        let mut s = Slots {
            len: 0,
            items: [0; MAX_RF],
        };
        for b in ids.take(MAX_RF) {
            s.push(b);
        }
        s
    }

    pub fn as_slice(&self) -> &[Bx] {
        &self.items[..self.len as usize]
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Bx> {
        self.as_slice().iter()
    }

    pub fn contains(&self, b: &Bx) -> bool {
        self.as_slice().contains(b)
    }

    pub fn first(&self) -> Option<&Bx> {
        self.as_slice().first()
    }

    pub fn position(&self, b: Bx) -> Option<usize> {
        self.as_slice().iter().position(|&x| x == b)
    }

    pub fn push(&mut self, b: Bx) {
        if (self.len as usize) < MAX_RF {
            self.items[self.len as usize] = b;
            self.len += 1;
        }
    }

    pub fn set(&mut self, i: usize, b: Bx) {
        self.items[i] = b;
    }

    pub fn retain(&mut self, keep: impl Fn(Bx) -> bool) {
        let kept: Vec<Bx> = self.iter().copied().filter(|&b| keep(b)).collect();
        *self = Slots::from_slice(&kept);
    }

    /// Moves the replica at `i` to the front, keeping the others' order.
    pub fn move_to_front(&mut self, i: usize) {
        self.items[..=i].rotate_right(1);
    }
}

impl<'a> IntoIterator for &'a Slots {
    type Item = &'a Bx;
    type IntoIter = std::slice::Iter<'a, Bx>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl std::ops::Index<usize> for Slots {
    type Output = Bx;
    fn index(&self, i: usize) -> &Bx {
        &self.as_slice()[i]
    }
}

/// The fields a search step reads for every partition it samples come first and fill two cache
/// lines of the 64-byte aligned struct (size, rates, topic, leader, frozen, replicas, in-sync
/// replicas): a step samples hundreds of partitions scattered over the whole array, and each
/// costs the lines it touches.
#[repr(C, align(64))]
pub struct Part {
    pub size: f64,
    /// producer msg, producer bytes, consumer msg, consumer bytes (per second).
    pub rates: [f64; 4],
    pub topic: u32,
    pub leader: Option<Bx>,
    /// Moved within the cooldown: not moved again.
    pub frozen: bool,
    pub replicas: Slots,
    pub isr: Slots,
    pub partition: i32,
    pub min_isr: i32,
    pub original_replicas: Slots,
    pub original_leader: Option<Bx>,
    pub original_isr: Slots,
    /// Why the partition first changed (the move's `reason`).
    pub why: Option<Why>,
}

/// The goal a change serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// A leadership change that evens the load at this index of [`ballast_model::Load::ALL`].
    Leadership(u8),
    /// Evens the load at this index of [`ballast_model::Load::ALL`] on one broker.
    Load(u8),
    /// One half of a replica exchange on `load`: this partition's replica went `from` → `to`
    /// and partition `with`'s the other way.
    Exchange {
        load: u8,
        with: u32,
        from: Bx,
        to: Bx,
    },
    /// Restores a replica lost with a down broker.
    Repair,
    /// Moves a replica off a broker in maintenance.
    Drain,
    /// Moves a surplus copy out of a doubled rack: the partition sat on too few racks.
    RackRepair,
}

impl Part {
    /// What this partition adds to a broker that leads it.
    pub fn leader_vec(&self) -> [f64; 7] {
        [
            1.0,
            0.0,
            self.size,
            self.rates[0],
            self.rates[1],
            self.rates[2],
            self.rates[3],
        ]
    }

    /// What this partition adds to a broker that holds a follower replica.
    pub fn follower_vec(&self) -> [f64; 7] {
        [0.0, 1.0, self.size, 0.0, 0.0, 0.0, 0.0]
    }

    /// What this partition adds to `load` of broker `b`, one of its replicas (its leader's
    /// share, else a follower's).
    pub fn share(&self, b: Bx, load: usize) -> f64 {
        if self.leader == Some(b) {
            self.leader_vec()[load]
        } else {
            self.follower_vec()[load]
        }
    }

    pub fn holds(&self, b: Bx) -> bool {
        self.replicas.contains(&b)
    }

    pub fn changed(&self) -> bool {
        self.replicas != self.original_replicas || self.leader != self.original_leader
    }

    /// Replicas the current placement adds to the snapshot's (each one a copy).
    pub fn added(&self) -> Vec<Bx> {
        self.replicas
            .iter()
            .copied()
            .filter(|r| !self.original_replicas.contains(r))
            .collect()
    }

    /// Replicas of the snapshot the current placement drops.
    pub fn removed(&self) -> Vec<Bx> {
        self.original_replicas
            .iter()
            .copied()
            .filter(|r| !self.replicas.contains(r))
            .collect()
    }
}

pub struct Model {
    pub brokers: Vec<BrokerSlot>,
    pub rack_names: Vec<String>,
    pub topics: Vec<String>,
    /// Partitions per topic.
    pub topic_partitions: Vec<u32>,
    /// Replication factor per topic (largest seen).
    pub topic_rf: Vec<u32>,
    pub parts: Vec<Part>,
    pub loads: Vec<[f64; 7]>,
    /// Partitions each broker holds a replica of.
    pub broker_parts: Vec<Vec<u32>>,
    /// Replicas of topic t on broker b at `t * nb + b`.
    pub topic_replicas: Vec<u32>,
    /// Leaders of topic t on broker b at `t * nb + b`.
    pub topic_leaders: Vec<u32>,
    /// Distinct racks among the brokers that take load; 0 when rack awareness is not assessed
    /// (no racks, or a broker that takes load has none).
    pub racks: usize,
}

impl Model {
    /// Each load summed over every broker.
    pub fn load_totals(&self) -> [f64; 7] {
        let mut total = [0.0; 7];
        for (l, sum) in total.iter_mut().enumerate() {
            *sum = self.loads.iter().map(|v| v[l]).sum();
        }
        total
    }

    pub fn nb(&self) -> usize {
        self.brokers.len()
    }

    pub fn build(snapshot: &Snapshot, now_ms: i64, cooldown_ms: i64) -> Model {
        let mut brokers: Vec<&ballast_model::snapshot::SnapshotBroker> =
            snapshot.brokers.iter().collect();
        brokers.sort_by_key(|b| b.id);
        let mut rack_names: Vec<String> = brokers.iter().filter_map(|b| b.rack.clone()).collect();
        rack_names.sort();
        rack_names.dedup();
        let index: HashMap<BrokerId, Bx> = brokers
            .iter()
            .enumerate()
            .map(|(i, b)| (b.id, i as Bx))
            .collect();
        let slots: Vec<BrokerSlot> = brokers
            .iter()
            .map(|b| BrokerSlot {
                id: b.id,
                rack: b
                    .rack
                    .as_ref()
                    .and_then(|r| rack_names.binary_search(r).ok())
                    .map(|i| i as u32),
                state: b.state,
            })
            .collect();
        let nb = slots.len();

        let mut sorted: Vec<&ballast_model::snapshot::SnapshotPartition> =
            snapshot.partitions.iter().collect();
        sorted
            .sort_by(|a, b| (a.topic.as_str(), a.partition).cmp(&(b.topic.as_str(), b.partition)));
        let mut topics: Vec<String> = Vec::new();
        let mut topic_partitions: Vec<u32> = Vec::new();
        let mut topic_rf: Vec<u32> = Vec::new();
        let mut parts = Vec::with_capacity(sorted.len());
        let lookup = Lookup::new(&index);
        for p in sorted {
            if topics.last().map(String::as_str) != Some(p.topic.as_str()) {
                topics.push(p.topic.clone());
                topic_partitions.push(0);
                topic_rf.push(0);
            }
            let t = topics.len() - 1;
            topic_partitions[t] += 1;
            // The known brokers of `ids` in order (the first MAX_RF), with no list between.
            let map =
                |ids: &[BrokerId]| Slots::first_of(ids.iter().filter_map(|&id| lookup.get(id)));
            let replicas = map(&p.replicas);
            topic_rf[t] = topic_rf[t].max(replicas.len() as u32);
            // `Snapshot::validate` refuses an unreadable `lastMovedAt`; one that gets here anyway
            // keeps its partition in place rather than lifting the cooldown.
            let cooling = match p.last_moved_at.as_deref() {
                None => false,
                Some(text) => {
                    parse_rfc3339_ms(text).is_none_or(|at| now_ms.saturating_sub(at) < cooldown_ms)
                }
            };
            let frozen = cooling || p.replicas.len() > MAX_RF;
            let leader = p.leader.and_then(|l| lookup.get(l));
            let isr = map(p.isr_or_replicas());
            parts.push(Part {
                topic: t as u32,
                partition: p.partition,
                isr,
                original_isr: isr,
                original_replicas: replicas,
                replicas,
                original_leader: leader,
                leader,
                size: p.size_bytes as f64,
                rates: [
                    p.producer_msg_rate,
                    p.producer_byte_rate,
                    p.consumer_msg_rate,
                    p.consumer_byte_rate,
                ],
                min_isr: p.min_insync_replicas,
                frozen,
                why: None,
            });
        }

        let racks = {
            let eligible: Vec<&BrokerSlot> = slots.iter().filter(|b| b.eligible()).collect();
            let mut seen: Vec<u32> = eligible.iter().filter_map(|b| b.rack).collect();
            seen.sort_unstable();
            seen.dedup();
            if eligible.iter().any(|b| b.rack.is_none()) {
                0
            } else {
                seen.len()
            }
        };
        let mut model = Model {
            racks,
            brokers: slots,
            rack_names,
            topic_partitions,
            topic_rf,
            topic_replicas: vec![0; topics.len() * nb],
            topic_leaders: vec![0; topics.len() * nb],
            topics,
            loads: vec![[0.0; 7]; nb],
            broker_parts: vec![Vec::new(); nb],
            parts,
        };
        for pi in 0..model.parts.len() {
            model.attach(pi as u32);
        }
        model
    }

    /// Adds partition `pi`'s current placement to the per-broker tallies.
    fn attach(&mut self, pi: u32) {
        let nb = self.nb();
        let p = &self.parts[pi as usize];
        let t = p.topic as usize;
        let (lv, fv) = (p.leader_vec(), p.follower_vec());
        for &b in &p.replicas {
            let add = if Some(b) == p.leader { &lv } else { &fv };
            for (l, v) in add.iter().enumerate() {
                self.loads[b as usize][l] += v;
            }
            self.broker_parts[b as usize].push(pi);
            self.topic_replicas[t * nb + b as usize] += 1;
        }
        if let Some(l) = p.leader {
            self.topic_leaders[t * nb + l as usize] += 1;
        }
    }

    /// Removes partition `pi`'s current placement from the per-broker tallies (the inverse of
    /// [`Model::attach`]).
    fn detach(&mut self, pi: u32) {
        let nb = self.nb();
        let p = &self.parts[pi as usize];
        let t = p.topic as usize;
        let (lv, fv) = (p.leader_vec(), p.follower_vec());
        for &b in &p.replicas {
            let sub = if Some(b) == p.leader { &lv } else { &fv };
            for (l, v) in sub.iter().enumerate() {
                self.loads[b as usize][l] -= v;
            }
            let list = &mut self.broker_parts[b as usize];
            if let Some(pos) = list.iter().position(|&x| x == pi) {
                list.remove(pos);
            }
            self.topic_replicas[t * nb + b as usize] -= 1;
        }
        if let Some(l) = p.leader {
            self.topic_leaders[t * nb + l as usize] -= 1;
        }
    }

    /// Places partition `pi` on `replicas` (in that order, all in sync) led by `leader`: a
    /// given plan's move, carried out as it was planned ([`crate::assess`]).
    pub fn place(&mut self, pi: u32, replicas: &[Bx], leader: Option<Bx>, why: Why) {
        self.detach(pi);
        let p = &mut self.parts[pi as usize];
        p.replicas = Slots::from_slice(replicas);
        p.isr = Slots::from_slice(replicas);
        p.leader = leader;
        p.why = Some(why);
        self.attach(pi);
    }

    /// Puts partition `pi`'s replicas back where the snapshot has them (and its in-sync
    /// replicas), led by `leader`: the snapshot's leader, which forgets why it changed, or
    /// another of its replicas, which moves to the front and leaves a leadership change that
    /// evens leader count.
    pub fn restore(&mut self, pi: u32, leader: Option<Bx>) {
        self.detach(pi);
        let p = &mut self.parts[pi as usize];
        p.replicas = p.original_replicas;
        p.isr = p.original_isr;
        p.leader = leader;
        if leader == p.original_leader {
            p.why = None;
        } else {
            if let Some(pos) = leader.and_then(|l| p.replicas.position(l)) {
                p.replicas.move_to_front(pos);
            }
            p.why = Some(Why::Leadership(0));
        }
        self.attach(pi);
    }

    /// Distinct racks among `replicas` (a broker without a rack counts as a rack of its own).
    pub fn rack_spread(&self, replicas: &[Bx]) -> usize {
        // On the stack: the search asks this for every candidate of a partition on too few
        // racks, and the repair for every partition in every pass.
        let mut seen = [0u32; MAX_RF];
        let (mut n, mut own) = (0, 0);
        for &r in replicas.iter().take(MAX_RF) {
            match self.brokers[r as usize].rack {
                Some(x) if !seen[..n].contains(&x) => {
                    seen[n] = x;
                    n += 1;
                }
                Some(_) => {}
                None => own += 1,
            }
        }
        n + own
    }

    /// Whether `replicas` sit on fewer racks than `min(replication factor, racks)`: Kafka's
    /// rack awareness broken. Never true when rack awareness is not assessed.
    pub fn too_few_racks(&self, replicas: &[Bx]) -> bool {
        self.racks > 0 && self.rack_spread(replicas) < replicas.len().min(self.racks)
    }

    fn apply_effect(&mut self, e: &Effect) {
        for (b, dv) in &e.items[..e.len] {
            for (l, x) in dv.iter().enumerate() {
                self.loads[*b as usize][l] += x;
            }
        }
    }

    fn move_leader_count(&mut self, pi: u32, from: Option<Bx>, to: Option<Bx>) {
        let nb = self.nb();
        let t = self.parts[pi as usize].topic as usize;
        if from != to {
            if let Some(f) = from {
                self.topic_leaders[t * nb + f as usize] -= 1;
            }
            if let Some(x) = to {
                self.topic_leaders[t * nb + x as usize] += 1;
            }
        }
    }

    /// Moves leadership of `pi` to replica `to` (which moves to the front of the replica list).
    pub fn apply_leader_swap(&mut self, pi: u32, to: Bx) {
        let e = effect(self, Action::Leader { pi, to });
        self.apply_effect(&e);
        let p = &mut self.parts[pi as usize];
        let from = p.leader;
        p.leader = Some(to);
        if let Some(pos) = p.replicas.position(to) {
            p.replicas.move_to_front(pos);
        }
        self.move_leader_count(pi, from, Some(to));
    }

    /// Replaces the replica of `pi` on `from` with one on `to`, at the same position. When the
    /// leader's replica moves, leadership goes where Kafka's controller puts it once the move
    /// completes: the first replica of the new list.
    pub fn apply_replica_move(&mut self, pi: u32, from: Bx, to: Bx) {
        let e = effect(self, Action::Replica { pi, from, to });
        self.apply_effect(&e);
        let nb = self.nb();
        let p = &mut self.parts[pi as usize];
        if let Some(pos) = p.replicas.position(from) {
            p.replicas.set(pos, to);
        }
        p.isr.retain(|r| r != from);
        p.isr.push(to);
        let old_leader = p.leader;
        if old_leader == Some(from) {
            p.leader = p.replicas.first().copied();
        }
        let new_leader = p.leader;
        let t = p.topic as usize;
        self.topic_replicas[t * nb + from as usize] -= 1;
        self.topic_replicas[t * nb + to as usize] += 1;
        self.move_leader_count(pi, old_leader, new_leader);
        let list = &mut self.broker_parts[from as usize];
        if let Some(pos) = list.iter().position(|&x| x == pi) {
            list.remove(pos);
        }
        self.broker_parts[to as usize].push(pi);
    }

    /// Whether replacing `from` with `to` in `pi`'s replicas keeps its rack spread: the racks
    /// are the same, or `from`'s rack keeps another replica, or `to`'s rack is new to the
    /// partition. (A broker without a rack counts as a rack of its own.)
    pub fn keeps_rack_spread(&self, pi: u32, from: Bx, to: Bx) -> bool {
        if self.rack_names.is_empty() {
            return true;
        }
        let rack = |b: Bx| self.brokers[b as usize].rack;
        let (rf, rt) = (rack(from), rack(to));
        if rf.is_some() && rf == rt {
            return true;
        }
        let others = self.parts[pi as usize]
            .replicas
            .iter()
            .filter(|&&r| r != from);
        let mut from_rack_kept = false;
        let mut to_rack_present = false;
        for &r in others {
            let x = rack(r);
            from_rack_kept |= rf.is_some() && x == rf;
            to_rack_present |= rt.is_some() && x == rt;
        }
        from_rack_kept || !to_rack_present
    }

    /// The most replicas of topic `t` a broker should hold: ceil(partitions × rf / eligible).
    pub fn replica_cap(&self, t: usize, eligible: usize) -> u32 {
        let total = self.topic_partitions[t] * self.topic_rf[t];
        total.div_ceil(eligible.max(1) as u32)
    }

    /// The most leaders of topic `t` a broker should hold: ceil(partitions / eligible).
    pub fn leader_cap(&self, t: usize, eligible: usize) -> u32 {
        self.topic_partitions[t].div_ceil(eligible.max(1) as u32)
    }
}

/// Broker ids to indexes, as the map of [`Model::build`] gives them (the last broker of an
/// id wins, as in the map): a table by id when the ids are dense enough, else the map.
enum Lookup<'a> {
    Table {
        first: BrokerId,
        at: Vec<Option<Bx>>,
    },
    Map(&'a HashMap<BrokerId, Bx>),
}

impl<'a> Lookup<'a> {
    fn new(index: &'a HashMap<BrokerId, Bx>) -> Lookup<'a> {
        let (Some(&lo), Some(&hi)) = (index.keys().min(), index.keys().max()) else {
            return Lookup::Map(index);
        };
        let span = i64::from(hi) - i64::from(lo) + 1;
        if span > 4 * index.len() as i64 + 1024 {
            return Lookup::Map(index);
        }
        let mut at = vec![None; span as usize];
        for (&id, &b) in index {
            at[(i64::from(id) - i64::from(lo)) as usize] = Some(b);
        }
        Lookup::Table { first: lo, at }
    }

    fn get(&self, id: BrokerId) -> Option<Bx> {
        match self {
            Lookup::Table { first, at } => {
                let i = i64::from(id) - i64::from(*first);
                usize::try_from(i)
                    .ok()
                    .and_then(|i| at.get(i).copied().flatten())
            }
            Lookup::Map(index) => index.get(&id).copied(),
        }
    }
}

/// A change to one partition's placement, or to two at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Make in-sync replica `to` the leader (and the preferred replica).
    Leader { pi: u32, to: Bx },
    /// Replace the replica on `from` with one on `to`.
    Replica { pi: u32, from: Bx, to: Bx },
    /// A replica exchange: `pi`'s replica goes from `from` to `to` and `qi`'s from `to` to
    /// `from`, each keeping its role (follower, or leader in the preferred position), so both
    /// brokers keep their replica and leader counts while disk moves.
    Exchange { pi: u32, from: Bx, to: Bx, qi: u32 },
    /// Two leadership changes at once: in-sync replica `to` leads `pi` and `qto` leads `qi`.
    /// The second gives back (or takes back) the leadership the first gave a third broker, so
    /// that broker keeps its leader count while the rates it carries change: a leadership
    /// exchange (`qto` the first's broker: both keep their counts, the rates move) or a
    /// leadership passed on (one broker's leadership ends on another through a third). Looked
    /// for only when no single move helps, in the search's full mode (`Mode::Full`, `View::leader_pairs`).
    LeaderPair { pi: u32, to: Bx, qi: u32, qto: Bx },
}

impl Action {
    pub fn partition(self) -> u32 {
        match self {
            Action::Leader { pi, .. }
            | Action::Replica { pi, .. }
            | Action::Exchange { pi, .. }
            | Action::LeaderPair { pi, .. } => pi,
        }
    }

    /// The second partition an exchange changes.
    pub fn partner(self) -> Option<u32> {
        match self {
            Action::Exchange { qi, .. } | Action::LeaderPair { qi, .. } => Some(qi),
            _ => None,
        }
    }

    /// A total order for ties: partition, then kind, then brokers.
    pub(crate) fn key(self) -> (u32, u8, Bx, Bx, u32) {
        match self {
            Action::Leader { pi, to } => (pi, 0, to, to, 0),
            Action::Replica { pi, from, to } => (pi, 1, from, to, 0),
            Action::Exchange { pi, from, to, qi } => (pi, 2, from, to, qi),
            Action::LeaderPair { pi, to, qi, qto } => (pi, 3, to, qto, qi),
        }
    }
}

/// Load changes of up to six brokers (an exchange of two leaders that are not preferred).
#[derive(Clone, Copy)]
pub struct Effect {
    pub items: [(Bx, [f64; 7]); 6],
    pub len: usize,
}

impl Effect {
    pub(crate) fn new() -> Self {
        Self {
            items: [(0, [0.0; 7]); 6],
            len: 0,
        }
    }

    pub(crate) fn add(&mut self, b: Bx, v: [f64; 7], sign: f64) {
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
        Action::Leader { pi, to } => leader_effect(model, &mut e, pi, to),
        Action::Replica { pi, from, to } => replica_effect(model, &mut e, pi, from, to),
        Action::Exchange { pi, from, to, qi } => {
            replica_effect(model, &mut e, pi, from, to);
            replica_effect(model, &mut e, qi, to, from);
        }
        Action::LeaderPair { pi, to, qi, qto } => {
            let mut first = Effect::new();
            leader_effect(model, &mut first, pi, to);
            let mut second = Effect::new();
            leader_effect(model, &mut second, qi, qto);
            for &(b, v) in first.items[..first.len]
                .iter()
                .chain(&second.items[..second.len])
            {
                e.add(b, v, 1.0);
            }
        }
    }
    e
}

/// A leadership change's effect, written into an empty `e`.
fn leader_effect(model: &Model, e: &mut Effect, pi: u32, to: Bx) {
    let p = &model.parts[pi as usize];
    if let Some(from) = p.leader {
        let (lv, fv) = (p.leader_vec(), p.follower_vec());
        if from == to {
            e.add(from, lv, -1.0);
            e.add(from, fv, 1.0);
            e.add(to, fv, -1.0);
            e.add(to, lv, 1.0);
        } else {
            // What the four `add`s above give for two brokers, written out (the same
            // operations in the same order, so the same bits): a search scores tens of
            // leadership changes a step.
            let (mut gives, mut takes) = ([0.0; 7], [0.0; 7]);
            for l in 0..7 {
                gives[l] = (0.0 + -lv[l]) + fv[l];
                takes[l] = (0.0 + -fv[l]) + lv[l];
            }
            e.items[0] = (from, gives);
            e.items[1] = (to, takes);
            e.len = 2;
        }
    }
}

fn replica_effect(model: &Model, e: &mut Effect, pi: u32, from: Bx, to: Bx) {
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

#[cfg(test)]
mod layout_tests {
    use super::*;

    #[test]
    fn what_a_search_step_reads_of_a_partition_fits_two_cache_lines() {
        let p = std::mem::offset_of!(Part, isr) + std::mem::size_of::<Slots>();
        assert!(p <= 128, "the hot fields end at byte {p}");
        assert_eq!(std::mem::align_of::<Part>(), 64);
    }

    #[test]
    fn broker_ids_are_looked_up_as_the_map_has_them() {
        for ids in [vec![3, 1, 2, 7], vec![5, 1_000_000, -4], vec![]] {
            let index: HashMap<BrokerId, Bx> = ids
                .iter()
                .enumerate()
                .map(|(i, &id)| (id, i as Bx))
                .collect();
            let lookup = Lookup::new(&index);
            for id in -10..20 {
                assert_eq!(lookup.get(id), index.get(&id).copied(), "{id} in {ids:?}");
            }
            for &id in &ids {
                assert_eq!(lookup.get(id), index.get(&id).copied());
            }
            assert_eq!(lookup.get(i32::MAX), None);
            assert_eq!(lookup.get(i32::MIN), None);
        }
    }
}
