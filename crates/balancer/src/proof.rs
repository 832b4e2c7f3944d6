//! Proofs that no plan can bring a broker within the threshold of fair share: a structural
//! limit is reported on a placement load (leader count, follower count, disk) only with one of
//! these, naming the constraint and the numbers.
//!
//! Three constraints can prove it:
//! - **unmovable load**: replicas in cooldown or without a leader stay where they are, so a
//!   broker keeps at least their share of the load;
//! - **large partition**: whichever broker holds (or, for rates, leads) one partition carries at
//!   least its size (rates);
//! - **rack layout**: a partition with a replica in every rack must keep one in every rack, so a
//!   rack holds at least those partitions' disk, and its brokers on average at least that over
//!   their number (and at most what the other racks leave).
//!
//! The topic spread cap never proves one: a broker's cap of a topic is
//! ceil(partitions × rf / brokers), at least its fair share of the topic, so the caps always
//! leave room for fair share (see docs/planner-quality.md).

use ballast_model::Load;

use crate::model::{Bx, Model, DISK, MAX_RF};
use crate::vocab::Targets;

/// A proven limit: the constraint, its numbers in words, and the closest any plan can bring the
/// broker (or, for a rack, the rack's average broker) to fair share, in percent.
pub struct Proof {
    pub cause: &'static str,
    pub proof: String,
    pub remediation: String,
    pub bound: f64,
}

fn amount(load: usize, v: f64) -> String {
    match load {
        0 | 1 => format!("{v:.0}"),
        DISK => format!("{:.2} GiB", v / (1u64 << 30) as f64),
        _ => format!("{v:.1}/s"),
    }
}

/// Why broker `b` cannot get within the threshold of fair share of `load`, if it is proven.
pub fn prove(model: &Model, t: &Targets, b: Bx, load: usize, cooldown_min: i64) -> Option<Proof> {
    let broker = model.brokers[b as usize].id;
    let name = Load::ALL[load].name();
    let fair = t.fair[load];
    let over = t.dev(load, model.loads[b as usize][load]) > 0.0;
    if over {
        // Unmovable load.
        let (mut cooling, mut offline, mut held) = (0.0, 0.0, 0.0);
        let (mut n_cooling, mut n_offline) = (0u32, 0u32);
        for &pi in &model.broker_parts[b as usize] {
            let p = &model.parts[pi as usize];
            let share = p.share(b, load);
            if p.leader.is_none() || p.replicas.len() > MAX_RF {
                offline += share;
                n_offline += 1;
            } else if p.frozen {
                cooling += share;
                n_cooling += 1;
            }
            held = f64::max(held, share);
        }
        let fixed = cooling + offline;
        if t.dev(load, fixed) > t.threshold {
            let bound = t.dev(load, fixed);
            let proof = format!(
                "broker {broker} keeps {} of {name} in partitions that cannot move ({n_cooling} moved within the last {cooldown_min} minutes, {n_offline} without a leader or with more replicas than the planner models): {bound:.1}% above fair share {} whatever else moves",
                amount(load, fixed),
                amount(load, fair)
            );
            return Some(if cooling >= offline {
                Proof {
                    cause: "recent moves",
                    proof,
                    remediation: format!("the partitions that would help broker {broker} were moved within the last {cooldown_min} minutes; a proposal after the cooldown can move them"),
                    bound,
                }
            } else {
                Proof {
                    cause: "no move helps",
                    proof,
                    remediation: format!("partitions on broker {broker} without a leader cannot move; bringing them back online or adding capacity would help"),
                    bound,
                }
            });
        }
        // Large partition.
        if load >= DISK && t.dev(load, held) > t.threshold {
            if let Some(pi) = model.broker_parts[b as usize].iter().copied().find(|&pi| {
                let p = &model.parts[pi as usize];
                p.share(b, load) >= held
            }) {
                let p = &model.parts[pi as usize];
                let bound = t.dev(load, held);
                return Some(Proof {
                    cause: "large partition",
                    proof: format!(
                        "partition {}/{} alone is {} of {name}, {bound:.1}% above fair share {}: whichever broker holds it stays beyond the threshold",
                        model.topics[p.topic as usize],
                        p.partition,
                        amount(load, held),
                        amount(load, fair)
                    ),
                    remediation: format!("every partition broker {broker} could give or take overshoots fair share of {name}; more partitions for the largest topics (smaller partitions) would help"),
                    bound,
                });
            }
        }
    }
    if load == DISK {
        return rack_layout(model, t, b, over);
    }
    None
}

/// The rack bound on disk: what a rack must hold (partitions with a replica in every rack) and
/// at most may hold (all but what the other racks must), over its brokers that take load.
fn rack_layout(model: &Model, t: &Targets, b: Bx, over: bool) -> Option<Proof> {
    let rack_of = |x: Bx| model.brokers[x as usize].rack;
    let rack = rack_of(b)?;
    let eligible: Vec<Bx> = (0..model.nb() as Bx)
        .filter(|&x| t.eligible[x as usize])
        .collect();
    // Every broker that takes load has a rack (a broker without one is a rack of its own and
    // would need its own accounting).
    if eligible.iter().any(|&x| rack_of(x).is_none()) {
        return None;
    }
    let mut racks: Vec<u32> = eligible.iter().filter_map(|&x| rack_of(x)).collect();
    racks.sort_unstable();
    racks.dedup();
    let k = racks.len();
    if k < 2 {
        return None;
    }
    let mut must = vec![0.0f64; k];
    let mut spanning = vec![0u32; k];
    let mut total = 0.0;
    for p in &model.parts {
        let mut here: Vec<u32> = p
            .replicas
            .iter()
            .filter(|&&r| t.eligible[r as usize])
            .filter_map(|&r| rack_of(r))
            .collect();
        total += p.size
            * p.replicas
                .iter()
                .filter(|&&r| t.eligible[r as usize])
                .count() as f64;
        here.sort_unstable();
        here.dedup();
        if here.len() == k {
            for (i, m) in must.iter_mut().enumerate() {
                *m += p.size;
                spanning[i] += 1;
            }
        }
    }
    let i = racks.binary_search(&rack).ok()?;
    let brokers = eligible
        .iter()
        .filter(|&&x| rack_of(x) == Some(rack))
        .count() as f64;
    let name = model
        .rack_names
        .get(rack as usize)
        .map_or("?", String::as_str);
    let id = model.brokers[b as usize].id;
    let gib = |v: f64| v / (1u64 << 30) as f64;
    let fair = t.fair[DISK];
    if over {
        let least = must[i] / brokers;
        let bound = t.dev(DISK, least);
        (bound > t.threshold).then(|| Proof {
            cause: "rack layout",
            proof: format!(
                "rack {name} has {brokers:.0} broker(s) that take load and {} partitions keep a replica in every rack, so the rack holds at least {:.2} GiB: {:.2} GiB per broker, {bound:.1}% above fair share {:.2} GiB",
                spanning[i],
                gib(must[i]),
                gib(least),
                gib(fair)
            ),
            remediation: format!("the partitions that could leave broker {id} would lose rack diversity; adding brokers to rack {name} (the under-used racks) would help"),
            bound,
        })
    } else {
        let others: f64 = must
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, m)| m)
            .sum();
        let most = (total - others).max(0.0) / brokers;
        let bound = t.dev(DISK, most);
        (bound < -t.threshold).then(|| Proof {
            cause: "rack layout",
            proof: format!(
                "the other racks must hold {:.2} GiB of partitions with a replica in every rack, so rack {name} ({brokers:.0} broker(s) that take load) holds at most {:.2} GiB per broker, {:.1}% below fair share {:.2} GiB",
                gib(others),
                gib(most),
                -bound,
                gib(fair)
            ),
            remediation: format!("broker {id}'s rack cannot take more without other racks losing rack diversity; adding brokers to the other racks would help"),
            bound,
        })
    }
}
