//! Generated clusters of the four kinds operators meet, and a lower bound on the bytes any plan
//! that balances them must copy. Used by `examples/bench` (docs/planner-quality.md) and by tests;
//! pure and deterministic like the planner: the same kind, size and seed give the same snapshot.
//!
//! Every kind starts from a **balanced rack-aware placement**: partitions of 50 per topic,
//! replication factor `rf`, one replica per rack (racks `r0..` round-robin over broker ids),
//! each replica on the broker of its rack that holds the fewest replicas so far and the leader on
//! the broker that leads the fewest (ties broken by the seed), so replica, leader and follower
//! counts are even. Sizes are log-normal-ish (1 MB to about 400 MB, mean about 68 MB); message
//! rates follow size, with a message size per topic (200 B to 2.6 kB). The kinds then skew it:
//!
//! - [`Kind::NewBroker`]: the last broker is left out of the placement (an empty new broker).
//! - [`Kind::HotBroker`]: partitions with a replica on broker 1 are twice as large, so broker 1
//!   holds about twice the disk of the others while every count stays even.
//! - [`Kind::Leaders`]: every partition with a replica on the first sixth of the brokers is led
//!   (and preferred-led) by it: leadership concentrated on a sixth of the brokers.
//! - [`Kind::Random`]: uniform random placement (a random broker per rack, a random leader) with
//!   about 3% of partitions breaking rack awareness (two replicas in one rack).
//!
//! [`Spec::rack_violations_pct`] breaks rack awareness on about that share of the partitions of
//! any kind (the last replica joins the first one's rack), for the rack repair.

use std::fmt;

use ballast_model::snapshot::{Snapshot, SnapshotBroker, SnapshotPartition, SNAPSHOT_FORMAT};
use ballast_model::BrokerState;

/// Partitions per generated topic.
pub const PER_TOPIC: usize = 50;

/// One of the four generated kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    NewBroker,
    HotBroker,
    Leaders,
    Random,
}

impl Kind {
    pub const ALL: [Kind; 4] = [
        Kind::NewBroker,
        Kind::HotBroker,
        Kind::Leaders,
        Kind::Random,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::NewBroker => "new-broker",
            Kind::HotBroker => "hot-broker",
            Kind::Leaders => "leaders",
            Kind::Random => "random",
        }
    }

    pub fn parse(text: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == text)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The size and shape of a generated cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    pub kind: Kind,
    pub brokers: i32,
    pub partitions: usize,
    pub rf: usize,
    /// 0: no rack layout.
    pub racks: i32,
    pub seed: u64,
    /// Percent of partitions that break rack awareness (two replicas in one rack); `None`: the
    /// kind's own (3% for [`Kind::Random`], none for the others).
    pub rack_violations_pct: Option<u32>,
}

impl Spec {
    pub fn new(kind: Kind, brokers: i32, partitions: usize, seed: u64) -> Spec {
        Spec {
            kind,
            brokers,
            partitions,
            rf: 3,
            racks: 3,
            seed,
            rack_violations_pct: None,
        }
    }
}

/// xorshift64: small, fast, and the same everywhere.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        for _ in 0..4 {
            r.next();
        }
        r
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The generated snapshot of `spec`.
pub fn generate(spec: &Spec) -> Snapshot {
    let mut rng = Rng::new(spec.seed);
    let mut breaker = Rng::new(spec.seed ^ 0x0005_EED0_FBAD_5EED);
    let n = spec.brokers.max(1);
    let rack_of = |id: i32| (spec.racks > 0).then(|| (id - 1) % spec.racks);
    let brokers: Vec<SnapshotBroker> = (1..=n)
        .map(|id| SnapshotBroker {
            id,
            rack: rack_of(id).map(|r| format!("r{r}")),
            state: BrokerState::Alive,
        })
        .collect();
    let placeable: Vec<i32> = if spec.kind == Kind::NewBroker {
        (1..n).collect()
    } else {
        (1..=n).collect()
    };
    // Brokers of each rack (one group of all brokers without racks).
    let groups: Vec<Vec<i32>> = if spec.racks > 0 {
        (0..spec.racks)
            .map(|r| {
                placeable
                    .iter()
                    .copied()
                    .filter(|&b| rack_of(b) == Some(r))
                    .collect::<Vec<i32>>()
            })
            .filter(|g| !g.is_empty())
            .collect()
    } else {
        vec![placeable.clone()]
    };
    let rf = spec.rf.clamp(1, placeable.len().max(1));
    let mut replica_count = vec![0u32; n as usize + 1];
    let mut leader_count = vec![0u32; n as usize + 1];
    let hot_leaders = (n / 6).max(1);
    let mut partitions = Vec::with_capacity(spec.partitions);
    for i in 0..spec.partitions {
        let topic = i / PER_TOPIC;
        let mut replicas: Vec<i32> = Vec::with_capacity(rf);
        if spec.kind == Kind::Random {
            // A random broker per rack, racks in a random rotation.
            let start = rng.below(groups.len() as u64) as usize;
            let mut g = start;
            while replicas.len() < rf {
                let group = &groups[g % groups.len()];
                let free: Vec<i32> = group
                    .iter()
                    .copied()
                    .filter(|b| !replicas.contains(b))
                    .collect();
                if !free.is_empty() {
                    replicas.push(free[rng.below(free.len() as u64) as usize]);
                }
                g += 1;
                if g - start > groups.len() * (rf + 1) {
                    break;
                }
            }
            // About 3% break rack awareness: the last replica joins the first one's rack.
            let pct = u64::from(spec.rack_violations_pct.unwrap_or(3));
            if rng.below(100) < pct && replicas.len() >= 2 && spec.racks > 0 {
                let rack = rack_of(replicas[0]);
                let same: Vec<i32> = placeable
                    .iter()
                    .copied()
                    .filter(|&b| rack_of(b) == rack && !replicas.contains(&b))
                    .collect();
                if !same.is_empty() {
                    let last = replicas.len() - 1;
                    replicas[last] = same[rng.below(same.len() as u64) as usize];
                }
            }
            let lead = rng.below(replicas.len() as u64) as usize;
            replicas.swap(0, lead);
        } else {
            // Balanced: the leader's rack rotates; in each rack the least-loaded broker.
            let mut g = i % groups.len();
            let mut first = true;
            while replicas.len() < rf {
                let group = &groups[g % groups.len()];
                let salt = rng.next();
                // The broker with the fewest (leaders, replicas), or replicas; ties go to the
                // smallest of a salted hash, which differs for every broker. Counts are compared
                // first and the hash is computed only for a broker that ties or beats the best:
                // this loop runs once per replica over a whole rack.
                let mut pick: Option<(u64, u64, i32)> = None;
                for &b in group {
                    if replicas.contains(&b) {
                        continue;
                    }
                    let counts = if first {
                        (u64::from(leader_count[b as usize]) << 32)
                            | u64::from(replica_count[b as usize])
                    } else {
                        u64::from(replica_count[b as usize]) << 32
                    };
                    if pick.is_some_and(|(c, _, _)| counts > c) {
                        continue;
                    }
                    let tie =
                        (salt ^ (b as u64).wrapping_mul(0x2545_F491_4F6C_DD1D)).rotate_left(23);
                    if pick.is_none_or(|(c, t, _)| counts < c || tie < t) {
                        pick = Some((counts, tie, b));
                    }
                }
                let pick = pick.map(|(_, _, b)| b);
                if let Some(b) = pick {
                    replicas.push(b);
                    replica_count[b as usize] += 1;
                    if first {
                        leader_count[b as usize] += 1;
                    }
                    first = false;
                }
                g += 1;
            }
        }
        // Rack violations on the balanced kinds, from a generator of their own so that the
        // placement is otherwise the kind's.
        let pct = spec.rack_violations_pct.unwrap_or(0);
        if spec.kind != Kind::Random
            && pct > 0
            && replicas.len() >= 2
            && spec.racks > 0
            && breaker.below(100) < u64::from(pct)
        {
            let rack = rack_of(replicas[0]);
            let same: Vec<i32> = placeable
                .iter()
                .copied()
                .filter(|&b| rack_of(b) == rack && !replicas.contains(&b))
                .collect();
            if !same.is_empty() {
                let last = replicas.len() - 1;
                replica_count[replicas[last] as usize] -= 1;
                replicas[last] = same[breaker.below(same.len() as u64) as usize];
                replica_count[replicas[last] as usize] += 1;
            }
        }
        if spec.kind == Kind::Leaders {
            if let Some(pos) = replicas.iter().position(|&r| r <= hot_leaders) {
                let hot = replicas.remove(pos);
                replicas.insert(0, hot);
            }
        }
        let mut size = (1e6 * (rng.unit() * 6.0).exp()) as u64 + 1_000_000;
        if spec.kind == Kind::HotBroker && replicas.contains(&1) {
            size *= 2;
        }
        let msg_size = 200.0 + (topic % 17) as f64 * 150.0;
        let msgs = size as f64 / 2e6 * (0.5 + rng.unit());
        partitions.push(SnapshotPartition {
            topic: format!("topic-{topic:05}"),
            partition: (i % PER_TOPIC) as i32,
            leader: replicas.first().copied(),
            isr: None,
            replicas,
            size_bytes: size,
            compacted: false,
            min_insync_replicas: 2,
            producer_msg_rate: msgs,
            producer_byte_rate: msgs * msg_size,
            consumer_msg_rate: msgs * 2.0,
            consumer_byte_rate: msgs * 2.0 * msg_size,
            last_moved_at: None,
        });
    }
    Snapshot {
        format: SNAPSHOT_FORMAT.to_string(),
        taken_at: "2026-11-21T10:00:00Z".into(),
        cluster_id: None,
        brokers,
        partitions,
    }
}

/// A lower bound on the bytes every plan must copy to bring all brokers that take load within
/// `threshold_pct` of fair share of disk, replica count and leader count, from a relaxation
/// that ignores every other rule. Every copy lands on one broker and leaves one broker, so the
/// bound is the larger of:
///
/// - **into** the brokers: each broker must receive at least its disk deficit below
///   (1 - t) × fair disk, and at least as many replicas as its replica deficit below
///   (1 - t) × fair replicas (each at least as large as the smallest partitions it does not hold);
///   the larger of the two, summed;
/// - **out of** the brokers: each must give at least its disk excess above (1 + t) × fair disk,
///   and at least its replica excess in replicas (each at least as large as its smallest ones).
///
/// Leadership moves copy nothing, so leader counts add nothing to the bound.
///
/// The targets bind only a plan that balances: one where disk, leader count or follower count
/// has a broker beyond the trigger (twice the threshold) before. Where none has, a plan only
/// repairs rack awareness, and the bound is [`rack_repair_bytes`].
pub fn lower_bound_bytes(s: &Snapshot, threshold_pct: f64) -> f64 {
    if !placement_triggers(s, threshold_pct) {
        return rack_repair_bytes(s);
    }
    let takes: Vec<i32> = s
        .brokers
        .iter()
        .filter(|b| b.state.takes_load())
        .map(|b| b.id)
        .collect();
    if takes.is_empty() {
        return 0.0;
    }
    let at = positions(&takes);
    let idx = |id: i32| at.get(&id).copied();
    let nb = takes.len();
    let mut disk = vec![0.0f64; nb];
    let mut held: Vec<Vec<f64>> = vec![Vec::new(); nb];
    let mut total_disk = 0.0;
    let mut total_replicas = 0usize;
    let mut all_sizes: Vec<f64> = Vec::with_capacity(s.partitions.len());
    for p in &s.partitions {
        let size = p.size_bytes as f64;
        all_sizes.push(size);
        for &r in &p.replicas {
            total_disk += size;
            total_replicas += 1;
            if let Some(i) = idx(r) {
                disk[i] += size;
                held[i].push(size);
            }
        }
    }
    all_sizes.sort_by(f64::total_cmp);
    let t = threshold_pct / 100.0;
    let fair_disk = total_disk / nb as f64;
    let fair_count = total_replicas as f64 / nb as f64;
    let (mut into, mut out) = (0.0, 0.0);
    let mut need: Vec<(f64, f64)> = Vec::with_capacity(nb);
    for (i, sizes) in held.iter_mut().enumerate() {
        sizes.sort_by(f64::total_cmp);
        let count = sizes.len() as f64;
        let need_in = ((1.0 - t) * fair_count - count).ceil().max(0.0) as usize;
        let need_out = (count - (1.0 + t) * fair_count).ceil().max(0.0) as usize;
        // The smallest partitions anywhere: the broker may receive any of them (a lower bound
        // even when it holds some already).
        let smallest_in: f64 = all_sizes.iter().take(need_in).sum();
        let smallest_out: f64 = sizes.iter().take(need_out).sum();
        let need_in = ((1.0 - t) * fair_disk - disk[i]).max(0.0).max(smallest_in);
        let need_out = (disk[i] - (1.0 + t) * fair_disk).max(0.0).max(smallest_out);
        into += need_in;
        out += need_out;
        need.push((need_in, need_out));
    }
    f64::max(into, out)
        .max(rack_bound(s, &takes, &need))
        .max(kept_in_rack_bound(s, &takes, &need))
        .max(rack_repair_bytes(s))
        .max(repair_and_balance_bound(s, &takes, &need))
}

/// Each broker's position in `takes` (a replica's broker is looked up once per replica).
fn positions(takes: &[i32]) -> std::collections::HashMap<i32, usize> {
    takes.iter().enumerate().map(|(i, &b)| (b, i)).collect()
}

/// Whether disk, leader count or follower count has a broker that takes load beyond twice
/// `threshold_pct` from fair share (the planner's trigger for evening them).
fn placement_triggers(s: &Snapshot, threshold_pct: f64) -> bool {
    let takes: Vec<i32> = s
        .brokers
        .iter()
        .filter(|b| b.state.takes_load())
        .map(|b| b.id)
        .collect();
    if takes.is_empty() {
        return false;
    }
    let at = positions(&takes);
    // Disk, leaders, followers per broker that takes load.
    let mut v = vec![[0.0f64; 3]; takes.len()];
    let mut total = [0.0f64; 3];
    for p in &s.partitions {
        let size = p.size_bytes as f64;
        for &r in &p.replicas {
            let led = p.leader == Some(r);
            total[0] += size;
            total[if led { 1 } else { 2 }] += 1.0;
            if let Some(i) = at.get(&r).copied() {
                v[i][0] += size;
                v[i][if led { 1 } else { 2 }] += 1.0;
            }
        }
    }
    let trigger = 2.0 * threshold_pct / 100.0;
    (0..3).any(|l| {
        let fair = total[l] / takes.len() as f64;
        fair > 0.0 && v.iter().any(|x| (x[l] - fair).abs() > trigger * fair)
    })
}

/// Repairs and balance together. Every copy leaves one broker and lands on one, and a repair
/// copy of partition `p` (one per rack it lacks, [`rack_repair_bytes`]) leaves a broker that
/// holds `p` in a rack holding more than one of its replicas (when the replication factor is at
/// most the racks: each such rack keeps one) and lands on a broker of a rack `p` lacks. So what
/// leaves broker `b` is at least the larger of what `b` must give and the repair bytes that leave
/// it, and the sum over brokers of the larger is at least what they must give plus the repair
/// bytes, less what repairs can take off brokers that must give: at most, for each broker, the
/// smaller of what it must give and the repair bytes of the partitions that may leave it (a cut
/// of the flow from repairs to brokers). The same holds for what lands. Where repairs cannot
/// serve the balance (the brokers that must give hold none of the doubled copies), this is the
/// sum of the two, not the larger.
fn repair_and_balance_bound(s: &Snapshot, takes: &[i32], need: &[(f64, f64)]) -> f64 {
    let at = positions(takes);
    let (racks, rack_of) = rack_layout(s);
    if racks == 0 {
        return 0.0;
    }
    let rack = |id: i32| rack_of.get(&id).cloned().flatten();
    let take_racks: Vec<Option<String>> = takes.iter().map(|&b| rack(b)).collect();
    let (mut leave, mut land) = (vec![0.0f64; takes.len()], vec![0.0f64; takes.len()]);
    let mut repair = 0.0;
    for p in &s.partitions {
        let lacking = p
            .replicas
            .len()
            .min(racks)
            .saturating_sub(spread(&p.replicas, &rack_of));
        if lacking == 0 {
            continue;
        }
        let size = p.size_bytes as f64;
        repair += size * lacking as f64;
        let held: Vec<Option<String>> = p.replicas.iter().map(|&r| rack(r)).collect();
        for (&r, here) in p.replicas.iter().zip(&held) {
            let doubled = here.is_some() && held.iter().filter(|&x| x == here).count() > 1;
            if p.replicas.len() > racks || doubled {
                if let Some(i) = at.get(&r).copied() {
                    leave[i] += size;
                }
            }
        }
        for (i, tr) in take_racks.iter().enumerate() {
            if tr.is_some() && !held.contains(tr) {
                land[i] += size;
            }
        }
    }
    let (mut into, mut out, mut served_in, mut served_out) = (0.0, 0.0, 0.0, 0.0);
    for (i, &(need_in, need_out)) in need.iter().enumerate() {
        into += need_in;
        out += need_out;
        served_in += need_in.min(land[i]);
        served_out += need_out.min(leave[i]);
    }
    f64::max(
        out + repair - served_out.min(repair),
        into + repair - served_in.min(repair),
    )
}

/// Partitions whose replicas sit on fewer racks than `min(replication factor, racks)`, the
/// racks being those of the brokers that take load (none when one of those has no rack).
pub fn rack_violations(s: &Snapshot) -> usize {
    let (racks, rack_of) = rack_layout(s);
    if racks == 0 {
        return 0;
    }
    s.partitions
        .iter()
        .filter(|p| spread(&p.replicas, &rack_of) < p.replicas.len().min(racks))
        .count()
}

/// What repairing rack awareness copies at least: one replica of the partition's size for every
/// rack it lacks. Every plan that repairs it copies this much, whatever else it does.
pub fn rack_repair_bytes(s: &Snapshot) -> f64 {
    let (racks, rack_of) = rack_layout(s);
    if racks == 0 {
        return 0.0;
    }
    s.partitions
        .iter()
        .map(|p| {
            let lacking = p
                .replicas
                .len()
                .min(racks)
                .saturating_sub(spread(&p.replicas, &rack_of));
            p.size_bytes as f64 * lacking as f64
        })
        .sum()
}

/// Racks of the brokers that take load (0 when one of them has no rack), and every broker's rack.
fn rack_layout(s: &Snapshot) -> (usize, std::collections::HashMap<i32, Option<String>>) {
    let rack_of: std::collections::HashMap<i32, Option<String>> =
        s.brokers.iter().map(|b| (b.id, b.rack.clone())).collect();
    let takes: Vec<&SnapshotBroker> = s.brokers.iter().filter(|b| b.state.takes_load()).collect();
    if takes.iter().any(|b| b.rack.is_none()) {
        return (0, rack_of);
    }
    let mut names: Vec<&String> = takes.iter().filter_map(|b| b.rack.as_ref()).collect();
    names.sort();
    names.dedup();
    (names.len(), rack_of)
}

/// Distinct racks of `replicas` (a broker without a rack counts as one of its own).
fn spread(replicas: &[i32], rack_of: &std::collections::HashMap<i32, Option<String>>) -> usize {
    let mut seen: Vec<&String> = Vec::new();
    let mut own = 0;
    for r in replicas {
        match rack_of.get(r).and_then(Option::as_ref) {
            Some(x) if !seen.contains(&x) => seen.push(x),
            Some(_) => {}
            None => own += 1,
        }
    }
    seen.len() + own
}

/// Whether `p` has exactly one replica in every rack of `racks` (the racks of `takes`, sorted):
/// it cannot copy a replica to another rack without losing rack spread, so every replica it
/// gives up in a rack is replaced in the same rack.
/// Each broker's rack by id (the first broker listed with an id, as a search of the list finds).
fn racks_by_id(s: &Snapshot) -> std::collections::HashMap<i32, &Option<String>> {
    s.brokers.iter().rev().map(|b| (b.id, &b.rack)).collect()
}

fn one_per_rack(
    p: &SnapshotPartition,
    rack_of: &impl Fn(i32) -> Option<String>,
    racks: usize,
) -> bool {
    let mut here: Vec<Option<String>> = p.replicas.iter().map(|&r| rack_of(r)).collect();
    let n = here.len();
    here.sort();
    here.dedup();
    n == racks && here.len() == n && here.iter().all(Option::is_some)
}

/// A second rack-by-rack bound: the sum over racks of the larger of what the rack's brokers must
/// receive and what they must give beyond their replicas that could cross racks. Only a
/// broker's replicas of partitions that are not one-per-rack can be matched by a copy in
/// another rack, so the rest of what it must give is copied within its rack; a rack's copies in
/// are its within-rack copies plus those that cross into it, so they are at least what its
/// brokers must receive, and at least what they must give within it. Every copy lands in one
/// rack, so the sum over racks is a bound. (Unlike [`rack_bound`], a partition that could cross
/// helps only the broker that holds it.)
fn kept_in_rack_bound(s: &Snapshot, takes: &[i32], need: &[(f64, f64)]) -> f64 {
    let at = positions(takes);
    let by_id = racks_by_id(s);
    let rack_of = |id: i32| by_id.get(&id).and_then(|r| (*r).clone());
    let racks: Vec<Option<String>> = takes.iter().map(|&b| rack_of(b)).collect();
    if racks.iter().any(Option::is_none) {
        return 0.0;
    }
    let mut names: Vec<&String> = racks.iter().flatten().collect();
    names.sort();
    names.dedup();
    if names.len() < 2 {
        return 0.0;
    }
    let mut can_cross = vec![0.0f64; takes.len()];
    for p in &s.partitions {
        if one_per_rack(p, &rack_of, names.len()) {
            continue;
        }
        for &r in &p.replicas {
            if let Some(i) = at.get(&r).copied() {
                can_cross[i] += p.size_bytes as f64;
            }
        }
    }
    names
        .iter()
        .map(|name| {
            let (mut i, mut o) = (0.0, 0.0);
            for ((r, (ni, no)), cross) in racks.iter().zip(need).zip(&can_cross) {
                if r.as_ref() == Some(*name) {
                    i += ni;
                    o += (no - cross).max(0.0);
                }
            }
            f64::max(i, o)
        })
        .sum()
}

/// The same bound rack by rack. A partition with exactly one replica in every rack cannot copy
/// a replica to another rack (it would lose rack spread), so only the others' copies cross
/// racks: the bytes are at least the sum over racks of the larger of what the rack's brokers
/// must receive and give, less everything that could cross (every replica of every partition
/// that is not one-per-rack).
fn rack_bound(s: &Snapshot, takes: &[i32], need: &[(f64, f64)]) -> f64 {
    let by_id = racks_by_id(s);
    let rack_of = |id: i32| by_id.get(&id).and_then(|r| (*r).clone());
    let racks: Vec<Option<String>> = takes.iter().map(|&b| rack_of(b)).collect();
    if racks.iter().any(Option::is_none) {
        return 0.0;
    }
    let mut names: Vec<&String> = racks.iter().flatten().collect();
    names.sort();
    names.dedup();
    if names.len() < 2 {
        return 0.0;
    }
    let mut crossing = 0.0;
    for p in &s.partitions {
        if !one_per_rack(p, &rack_of, names.len()) {
            crossing += p.size_bytes as f64 * p.replicas.len() as f64;
        }
    }
    let per_rack: f64 = names
        .iter()
        .map(|name| {
            let (i, o) = racks
                .iter()
                .zip(need)
                .filter(|(r, _)| r.as_ref() == Some(*name))
                .fold((0.0, 0.0), |(i, o), (_, (ni, no))| (i + ni, o + no));
            f64::max(i, o)
        })
        .sum();
    (per_rack - crossing).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(s: &Snapshot) -> (Vec<u32>, Vec<u32>) {
        let n = s.brokers.len() + 1;
        let (mut replicas, mut leaders) = (vec![0; n], vec![0; n]);
        for p in &s.partitions {
            for &r in &p.replicas {
                replicas[r as usize] += 1;
            }
            if let Some(l) = p.leader {
                leaders[l as usize] += 1;
            }
        }
        (replicas, leaders)
    }

    #[test]
    fn the_same_spec_generates_the_same_snapshot_and_another_seed_another() {
        let spec = Spec::new(Kind::Random, 12, 600, 7);
        assert_eq!(generate(&spec), generate(&spec));
        assert_ne!(generate(&spec), generate(&Spec { seed: 8, ..spec }));
    }

    #[test]
    fn every_generated_snapshot_is_valid() {
        for kind in Kind::ALL {
            let s = generate(&Spec::new(kind, 24, 1200, 1));
            assert_eq!(s.validate(), Ok(()), "{kind}");
            assert_eq!(s.partitions.len(), 1200);
        }
    }

    #[test]
    fn the_balanced_kinds_have_replica_and_leader_counts_within_one_of_even() {
        let off_by_one = |c: &[u32]| {
            c.iter()
                .max()
                .zip(c.iter().min())
                .is_some_and(|(a, b)| a - b <= 2)
        };
        for kind in [Kind::HotBroker, Kind::Leaders] {
            let (replicas, _) = counts(&generate(&Spec::new(kind, 24, 6000, 1)));
            assert!(off_by_one(&replicas[1..]), "{kind}: {replicas:?}");
        }
        let (_, leaders) = counts(&generate(&Spec::new(Kind::HotBroker, 24, 6000, 1)));
        assert!(off_by_one(&leaders[1..]), "{leaders:?}");
    }

    #[test]
    fn the_new_broker_holds_nothing_and_the_leaders_kind_leads_from_a_sixth_of_the_brokers() {
        let (replicas, _) = counts(&generate(&Spec::new(Kind::NewBroker, 24, 6000, 1)));
        assert_eq!(replicas[24], 0);
        let (_, leaders) = counts(&generate(&Spec::new(Kind::Leaders, 24, 6000, 1)));
        let hot: u32 = leaders[1..=4].iter().sum();
        assert!(hot > 2500, "brokers 1-4 lead {hot} of 6000");
    }

    #[test]
    fn the_hot_broker_holds_about_twice_the_disk_of_the_others() {
        let s = generate(&Spec::new(Kind::HotBroker, 24, 6000, 1));
        let mut disk = [0.0f64; 25];
        for p in &s.partitions {
            for &r in &p.replicas {
                disk[r as usize] += p.size_bytes as f64;
            }
        }
        let others = disk[2..].iter().sum::<f64>() / 23.0;
        let ratio = disk[1] / others;
        assert!((1.6..2.2).contains(&ratio), "{ratio}");
    }

    #[test]
    fn about_3_percent_of_random_partitions_break_rack_awareness() {
        let s = generate(&Spec::new(Kind::Random, 24, 6000, 1));
        let broken = s
            .partitions
            .iter()
            .filter(|p| {
                let mut racks: Vec<i32> = p.replicas.iter().map(|r| (r - 1) % 3).collect();
                racks.sort();
                racks.dedup();
                racks.len() < p.replicas.len()
            })
            .count();
        assert!((120..=240).contains(&broken), "{broken} of 6000");
    }

    #[test]
    fn any_kind_can_break_rack_awareness_at_a_given_rate() {
        for (kind, pct) in [
            (Kind::NewBroker, 1),
            (Kind::HotBroker, 10),
            (Kind::Leaders, 3),
        ] {
            let clean = generate(&Spec::new(kind, 24, 6000, 1));
            assert_eq!(rack_violations(&clean), 0, "{kind}");
            let broken = generate(&Spec {
                rack_violations_pct: Some(pct),
                ..Spec::new(kind, 24, 6000, 1)
            });
            let n = rack_violations(&broken);
            let want = 60 * pct as usize;
            assert!(n * 2 > want && n < want * 2, "{kind} {pct}%: {n} of 6000");
            assert_eq!(broken.validate(), Ok(()));
        }
        let random = generate(&Spec {
            rack_violations_pct: Some(10),
            ..Spec::new(Kind::Random, 24, 6000, 1)
        });
        assert!((400..=800).contains(&rack_violations(&random)));
        // Repairing copies at least one replica per missing rack.
        assert!(rack_repair_bytes(&random) > 0.0);
        assert_eq!(
            rack_repair_bytes(&generate(&Spec::new(Kind::HotBroker, 24, 600, 1))),
            0.0
        );
    }

    #[test]
    fn with_one_replica_per_rack_the_lower_bound_counts_each_rack_on_its_own() {
        // Racks a = {1, 2}, b = {3, 4}; RF 2 with one replica per rack, 1 GB each: no copy
        // can cross racks, so what each rack must give and receive adds up rack by rack.
        let mut s = generate(&Spec::new(Kind::NewBroker, 4, 0, 1));
        for b in &mut s.brokers {
            b.rack = Some(if b.id <= 2 { "a" } else { "b" }.to_string());
        }
        let place = [
            [1, 3],
            [1, 4],
            [1, 3],
            [1, 4],
            [1, 3],
            [1, 4],
            [2, 3],
            [2, 4],
        ];
        for (i, r) in place.iter().enumerate() {
            s.partitions
                .push(crate::fixtures::partition("t", i as i32, r, 1_000_000_000));
        }
        let takes = [1, 2, 3, 4];
        // Broker 1 must give 2 GB and broker 2 receive 2 GB: one rack, 2 GB.
        let need = [(0.0, 2e9), (2e9, 0.0), (0.0, 0.0), (0.0, 0.0)];
        assert_eq!(rack_bound(&s, &takes, &need), 2e9);
        // Broker 1 gives and broker 3 (the other rack) receives: 2 GB in each rack.
        let need = [(0.0, 2e9), (0.0, 0.0), (2e9, 0.0), (0.0, 0.0)];
        assert_eq!(rack_bound(&s, &takes, &need), 4e9);
        // One partition with both replicas in rack b could cross: 2 GB less.
        s.partitions[0].replicas = vec![3, 4];
        assert_eq!(rack_bound(&s, &takes, &need), 2e9);
    }

    #[test]
    fn what_a_broker_must_give_beyond_its_replicas_that_could_cross_racks_is_copied_in_its_rack() {
        // Racks a = {1, 2}, b = {3, 4}; RF 2, one replica per rack, 1 GB each, except partition 0
        // with both replicas in rack b. Broker 1 must give 2 GB and broker 3 receive 2 GB.
        let mut s = generate(&Spec::new(Kind::NewBroker, 4, 0, 1));
        for b in &mut s.brokers {
            b.rack = Some(if b.id <= 2 { "a" } else { "b" }.to_string());
        }
        let place = [
            [3, 4],
            [1, 4],
            [1, 3],
            [1, 4],
            [1, 3],
            [1, 4],
            [2, 3],
            [2, 4],
        ];
        for (i, r) in place.iter().enumerate() {
            s.partitions
                .push(crate::fixtures::partition("t", i as i32, r, 1_000_000_000));
        }
        let takes = [1, 2, 3, 4];
        let need = [(0.0, 2e9), (0.0, 0.0), (2e9, 0.0), (0.0, 0.0)];
        // Partition 0 could cross, so the first rack bound allows 2 GB less than 4 GB; but it is
        // not on broker 1, whose 2 GB stay in rack a while broker 3's 2 GB land in rack b.
        assert_eq!(rack_bound(&s, &takes, &need), 2e9);
        assert_eq!(kept_in_rack_bound(&s, &takes, &need), 4e9);
        // Once broker 1 holds a partition that could cross, 1 GB of its 2 GB may leave rack a.
        s.partitions[1].replicas = vec![1, 2];
        assert_eq!(kept_in_rack_bound(&s, &takes, &need), 3e9);
    }

    #[test]
    fn repair_copies_count_towards_the_balance_only_on_brokers_that_must_give_or_receive() {
        // Racks a = {1, 2}, b = {3, 4}; RF 2, 1 GB each. Partition 0 sits on 1 and 2 (rack a
        // only): its repair copies 1 GB out of broker 1 or 2 into rack b.
        let mut s = generate(&Spec::new(Kind::NewBroker, 4, 0, 1));
        for b in &mut s.brokers {
            b.rack = Some(if b.id <= 2 { "a" } else { "b" }.to_string());
        }
        s.partitions
            .push(crate::fixtures::partition("t", 0, &[1, 2], 1_000_000_000));
        s.partitions
            .push(crate::fixtures::partition("t", 1, &[1, 3], 1_000_000_000));
        let takes = [1, 2, 3, 4];
        // Broker 3 must give 2 GB and broker 4 receive 2 GB: the repair copy can land on 4 but
        // cannot leave 3, so at least 2 GB leave broker 3 and 1 GB more leaves rack a.
        let need = [(0.0, 0.0), (0.0, 0.0), (0.0, 2e9), (2e9, 0.0)];
        assert_eq!(repair_and_balance_bound(&s, &takes, &need), 3e9);
        // Broker 1 must give 2 GB and broker 4 receive 2 GB: the repair copy can do 1 GB of both.
        let need = [(0.0, 2e9), (0.0, 0.0), (0.0, 0.0), (2e9, 0.0)];
        assert_eq!(repair_and_balance_bound(&s, &takes, &need), 2e9);
        // Without a partition on too few racks, nothing beyond the balance.
        s.partitions[0].replicas = vec![1, 4];
        assert_eq!(repair_and_balance_bound(&s, &takes, &need), 2e9);
    }

    #[test]
    fn the_lower_bound_is_the_disk_a_new_broker_must_receive() {
        // Two brokers hold 10 partitions of 1 GB each; a third holds nothing. Fair share is
        // 20/3 GB of disk and 20/3 replicas: the new one must receive 95% of both.
        let mut s = generate(&Spec::new(Kind::NewBroker, 3, 0, 1));
        s.brokers.iter_mut().for_each(|b| b.rack = None);
        for i in 0..10 {
            s.partitions.push(SnapshotPartition {
                topic: "t".into(),
                partition: i,
                replicas: vec![1, 2],
                leader: Some(1),
                isr: None,
                size_bytes: 1_000_000_000,
                compacted: false,
                min_insync_replicas: 1,
                producer_msg_rate: 0.0,
                producer_byte_rate: 0.0,
                consumer_msg_rate: 0.0,
                consumer_byte_rate: 0.0,
                last_moved_at: None,
            });
        }
        let lb = lower_bound_bytes(&s, 5.0);
        // Disk: 0.95 × 20/3 GB = 6.33 GB; replicas: ceil(0.95 × 20/3) = 7 of 1 GB = 7 GB.
        assert!((lb - 7e9).abs() < 1.0, "{lb}");
    }
}
