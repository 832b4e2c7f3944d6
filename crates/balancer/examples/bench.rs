//! Planner quality and speed on generated clusters. Prints one table row per shape:
//!
//!   cargo run --release -p ballast-balancer --example bench -- [--brokers 60] [--partitions 60000]
//!       [--rf 3] [--racks 3] [--workers 0] [--shapes new-broker,hot-broker,leaders,random]
//!       [--dump DIR] [--moves PREFIX]
//!
//! `--moves PREFIX` writes each plan's moves to `PREFIX.<shape>.json` (to compare plans made with
//! different `--workers`). `steps` is the search's steps, `par` how many of them split their
//! candidates over threads, `thr` the most threads a step used.
//!
//! `trig%` is the farthest broker after the plan over the loads that triggered (the spec evens
//! those to within the threshold, 5%); `all%` the same over every counted load (a load that never
//! triggered is left within the trigger; the lines under a row name every counted load beyond 5%
//! and why). `bytes/LB` compares the data the plan copies with a lower bound: every plan that ends with
//! all brokers within the threshold of fair disk share must copy at least the disk above
//! (1 + threshold) x fair share off the overloaded brokers, and at least the disk below
//! (1 - threshold) x fair share onto the underloaded ones.

use std::time::Instant;

use ballast_balancer::{plan, Policy};
use ballast_model::snapshot::{Snapshot, SnapshotBroker, SnapshotPartition, SNAPSHOT_FORMAT};
use ballast_model::BrokerState;

struct Rng(u64);

impl Rng {
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

struct Args {
    brokers: i32,
    partitions: usize,
    rf: usize,
    racks: i32,
    workers: usize,
    shapes: Vec<String>,
    dump: Option<String>,
    moves_out: Option<String>,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        brokers: 60,
        partitions: 60_000,
        rf: 3,
        racks: 3,
        workers: 0,
        shapes: ["new-broker", "hot-broker", "leaders", "random"]
            .map(String::from)
            .to_vec(),
        dump: None,
        moves_out: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let num = || value.parse::<usize>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--brokers" => a.brokers = num()? as i32,
            "--partitions" => a.partitions = num()?,
            "--rf" => a.rf = num()?,
            "--racks" => a.racks = num()? as i32,
            "--workers" => a.workers = num()?,
            "--shapes" => a.shapes = value.split(',').map(String::from).collect(),
            "--dump" => a.dump = Some(value),
            "--moves" => a.moves_out = Some(value),
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(a)
}

/// Partitions spread over `brokers` (rack-aware round robin), sizes log-normal-ish, rates
/// proportional to size with per-topic message sizes. Shapes then skew it.
fn generate(a: &Args, shape: &str) -> Snapshot {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let brokers: Vec<SnapshotBroker> = (1..=a.brokers)
        .map(|id| SnapshotBroker {
            id,
            rack: (a.racks > 0).then(|| format!("r{}", (id - 1) % a.racks)),
            state: BrokerState::Alive,
        })
        .collect();
    // The new broker shape leaves the last broker out of the placement.
    let placeable = if shape == "new-broker" {
        a.brokers - 1
    } else {
        a.brokers
    };
    const PER_TOPIC: usize = 50;
    let mut partitions = Vec::with_capacity(a.partitions);
    for i in 0..a.partitions {
        let topic = i / PER_TOPIC;
        let msg_size = 200.0 + (topic % 17) as f64 * 150.0;
        // Balanced base: consecutive brokers from a rotating start; rack-aware when racks
        // divide the brokers evenly.
        let start = (i as i32) % placeable;
        let mut replicas = Vec::with_capacity(a.rf);
        let mut k = 0;
        while replicas.len() < a.rf.min(placeable as usize) {
            let b = if shape == "random" {
                1 + rng.below(placeable as u64) as i32
            } else {
                1 + (start + k) % placeable
            };
            k += 1;
            if !replicas.contains(&b) {
                replicas.push(b);
            }
        }
        // One hot broker: it also holds a replica of every fourth partition.
        if shape == "hot-broker" && i % 4 == 0 && !replicas.contains(&1) {
            replicas[a.rf - 1] = 1;
        }
        // Concentrated leaders: brokers 1..=5 lead every partition they hold.
        if shape == "leaders" {
            if let Some(pos) = replicas.iter().position(|&r| r <= 5) {
                let hot = replicas.remove(pos);
                replicas.insert(0, hot);
            }
        }
        let size = (1e6 * (rng.unit() * 6.0).exp()) as u64 + 1_000_000;
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

fn disk_lower_bound(s: &Snapshot, threshold: f64) -> f64 {
    let mut disk = std::collections::BTreeMap::new();
    for b in &s.brokers {
        disk.insert(b.id, 0.0f64);
    }
    for p in &s.partitions {
        for r in &p.replicas {
            *disk.entry(*r).or_default() += p.size_bytes as f64;
        }
    }
    let fair = disk.values().sum::<f64>() / disk.len() as f64;
    let t = threshold / 100.0;
    let out: f64 = disk.values().map(|d| (d - (1.0 + t) * fair).max(0.0)).sum();
    let into: f64 = disk.values().map(|d| ((1.0 - t) * fair - d).max(0.0)).sum();
    out.max(into)
}

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|v| v.parse::<f64>().ok())
            })
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn main() {
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("bench: {e}");
            std::process::exit(2);
        }
    };
    let policy = Policy {
        workers: a.workers,
        ..Policy::default()
    };
    println!(
        "{:<11} {:>7} {:>9} {:>9} {:>9} {:>7} {:>10} {:>10} {:>8} {:>7} {:>8} {:>8} {:>8} {:>7} {:>7} {:>4}",
        "shape",
        "brokers",
        "replicas",
        "plan_s",
        "moves",
        "rec",
        "moved_GB",
        "LB_GB",
        "bytes/LB",
        "limits",
        "trig%",
        "all%",
        "peakMiB",
        "steps",
        "par",
        "thr"
    );
    for shape in &a.shapes {
        let s = generate(&a, shape);
        if let Some(dir) = &a.dump {
            let path = format!("{dir}/{shape}.json");
            if let Err(e) = serde_json::to_string(&s)
                .map_err(|e| e.to_string())
                .and_then(|t| std::fs::write(&path, t).map_err(|e| e.to_string()))
            {
                eprintln!("bench: cannot write {path}: {e}");
            }
        }
        let replicas: usize = s.partitions.iter().map(|p| p.replicas.len()).sum();
        let lb = disk_lower_bound(&s, policy.threshold_pct);
        let started = Instant::now();
        let p = plan(&s, &policy, 1_795_255_200_000);
        let secs = started.elapsed().as_secs_f64();
        // The spec evens a load that triggered (a broker beyond twice the threshold) to within
        // the threshold; loads that never triggered are left within the trigger.
        let worst = p
            .loads
            .0
            .iter()
            .filter(|(_, l)| l.triggered)
            .map(|(_, l)| l.max_distance_after)
            .fold(0.0, f64::max);
        // Every counted load, triggered or not (the lines under the row explain any beyond 5%).
        let worst_counted = p
            .loads
            .0
            .iter()
            .filter(|(_, l)| l.counted)
            .map(|(_, l)| l.max_distance_after)
            .fold(0.0, f64::max);
        let ratio = if lb > 0.0 {
            format!("{:.2}", p.estimated_bytes as f64 / lb)
        } else {
            "-".into()
        };
        println!(
            "{:<11} {:>7} {:>9} {:>9.2} {:>9} {:>7} {:>10.1} {:>10.1} {:>8} {:>7} {:>8.2} {:>8.2} {:>8.0} {:>7} {:>7} {:>4}",
            shape,
            a.brokers,
            replicas,
            secs,
            p.moves.len(),
            p.recommended,
            p.estimated_bytes as f64 / 1e9,
            lb / 1e9,
            ratio,
            p.structural_limits.len(),
            worst,
            worst_counted,
            peak_rss_mib(),
            p.search.iterations,
            p.search.parallel_steps,
            p.search.threads_used
        );
        if let Some(path) = &a.moves_out {
            let path = format!("{path}.{shape}.json");
            if let Err(e) = serde_json::to_string(&p.moves)
                .map_err(|e| e.to_string())
                .and_then(|t| std::fs::write(&path, t).map_err(|e| e.to_string()))
            {
                eprintln!("bench: cannot write {path}: {e}");
            }
        }
        for (load, l) in p
            .loads
            .0
            .iter()
            .filter(|(_, l)| l.counted && l.max_distance_after > policy.threshold_pct)
        {
            let explained = p.structural_limits.iter().any(|x| x.load == *load);
            let verdict = if !l.triggered {
                "never triggered: left within the trigger, as the spec says"
            } else if explained {
                "triggered: structural limit says why"
            } else {
                "TRIGGERED AND NOT EXPLAINED"
            };
            println!(
                "    {:<17} {:>6.2}% -> {:>6.2}%  {verdict}",
                load.name(),
                l.max_distance_before,
                l.max_distance_after
            );
        }
    }
}
