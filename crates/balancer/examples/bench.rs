//! Planner quality and speed on generated clusters ([`ballast_balancer::instances`]): one row
//! per instance (docs/planner-quality.md shows its output).
//!
//!   cargo run --release -p ballast-balancer --example bench -- [--sizes 24x6000,200x300000]
//!       [--kinds new-broker,hot-broker,leaders,random] [--seeds 1,2,3] [--rf 3] [--racks 3]
//!       [--workers 1] [--threshold 5] [--rack-violations PCT] [--dump DIR] [--moves PREFIX]
//!       [--stats] [--proofs] [--min-chunk N]
//!
//! Columns: `disk%`, `lead%`, `foll%` are the farthest broker's distance from fair share of disk,
//! leader count and follower count, before and after the plan (the targets are 5%). `replica`
//! and `leader` count the plan's moves that copy data and those that only change the leader;
//! `xchg` the replica exchanges among them (pairs). `moved_GB` is the data the plan copies and
//! `LB_GB` a lower bound on what any balancing plan must copy
//! ([`ballast_balancer::instances::lower_bound_bytes`]); `ratio` their quotient (target 1.15).
//! `limits` counts proven structural limits (the lines under the row show them). `rackV` counts
//! partitions on fewer racks than min(replication factor, racks) before and after the plan;
//! `xLead` the leaders beyond their topic's leader cap and `overCap` the topic/broker pairs over
//! the replica cap (`topicSpread`), before and after. `plan_s` is
//! the plan's wall time, `cpu_s` its CPU time (user + system, every thread; 10 ms ticks), `peakMiB` the process's peak resident memory while planning (snapshot
//! included; reset before each plan through /proc/self/clear_refs).
//!
//! `--rack-violations PCT` breaks rack awareness on about PCT% of the partitions of every kind
//! ([`ballast_balancer::instances::Spec::rack_violations_pct`]; `random` has 3% without it).
//!
//! `--threshold` sets `BALLAST_BALANCE_THRESHOLD` (percent; the trigger is twice it), for the
//! targets and the bound alike.
//!
//! `--moves PREFIX` writes each plan's moves to `PREFIX.<kind>.<brokers>x<partitions>.<seed>.json`
//! (to compare plans made with different `--workers`); `--dump DIR` writes each snapshot.
//! `--stats` prints the search's counters under each row (steps, candidates evaluated, moves
//! applied, threads used). `--proofs` prints each structural limit's proof (or the search's
//! reading) under it. Every load beyond the threshold after the plan gets a `stop:` line (where
//! it stops and why). `--min-chunk N` sets `Policy::parallel_min_chunk` (a step's candidates
//! are split over the workers only when each gets at least N).

use std::time::Instant;

use ballast_balancer::instances::{generate, lower_bound_bytes, rack_violations, Kind, Spec};
use ballast_balancer::{apply_plan, plan, Policy};
use ballast_model::{CostClass, Load};

struct Args {
    sizes: Vec<(i32, usize)>,
    kinds: Vec<Kind>,
    seeds: Vec<u64>,
    rf: usize,
    racks: i32,
    workers: usize,
    threshold: f64,
    rack_violations: Option<u32>,
    dump: Option<String>,
    moves_out: Option<String>,
    stats: bool,
    proofs: bool,
    min_chunk: usize,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        sizes: vec![(24, 6000)],
        kinds: Kind::ALL.to_vec(),
        seeds: vec![1],
        rf: 3,
        racks: 3,
        workers: 1,
        threshold: Policy::default().threshold_pct,
        rack_violations: None,
        dump: None,
        moves_out: None,
        stats: false,
        proofs: false,
        min_chunk: Policy::default().parallel_min_chunk,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--stats" {
            a.stats = true;
            continue;
        }
        if flag == "--proofs" {
            a.proofs = true;
            continue;
        }
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let num = |v: &str| v.parse::<usize>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--sizes" => {
                a.sizes = value
                    .split(',')
                    .map(|s| {
                        let (b, p) = s.split_once('x').ok_or(format!("{flag}: {s}: want BxP"))?;
                        Ok((num(b)? as i32, num(p)?))
                    })
                    .collect::<Result<_, String>>()?
            }
            "--kinds" | "--shapes" => {
                a.kinds = value
                    .split(',')
                    .map(|k| Kind::parse(k).ok_or(format!("{flag}: unknown kind {k}")))
                    .collect::<Result<_, String>>()?
            }
            "--seeds" => {
                a.seeds = value
                    .split(',')
                    .map(|s| num(s).map(|n| n as u64))
                    .collect::<Result<_, String>>()?
            }
            "--rf" => a.rf = num(&value)?,
            "--racks" => a.racks = num(&value)? as i32,
            "--workers" => a.workers = num(&value)?,
            "--min-chunk" => a.min_chunk = num(&value)?,
            "--threshold" => {
                a.threshold = value.parse::<f64>().map_err(|e| format!("{flag}: {e}"))?
            }
            "--rack-violations" => a.rack_violations = Some(num(&value)? as u32),
            "--dump" => a.dump = Some(value),
            "--moves" => a.moves_out = Some(value),
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(a)
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

/// CPU time (user + system) of the whole process so far, helper threads included, in seconds
/// (Linux: fields 14 and 15 of /proc/self/stat, in clock ticks of 10 ms).
fn cpu_secs() -> f64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            // The command name may hold spaces: fields are counted after its closing ')'.
            let rest = &s[s.rfind(')')? + 1..];
            let f: Vec<&str> = rest.split_whitespace().collect();
            let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok());
            Some((ticks(11)? + ticks(12)?) / 100.0)
        })
        .unwrap_or(0.0)
}

/// Resets the peak resident memory to the current (Linux: "5" to clear_refs).
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn write_json<T: serde::Serialize>(path: &str, value: &T) {
    if let Err(e) = serde_json::to_string(value)
        .map_err(|e| e.to_string())
        .and_then(|t| std::fs::write(path, t).map_err(|e| e.to_string()))
    {
        eprintln!("bench: cannot write {path}: {e}");
    }
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
        parallel_min_chunk: a.min_chunk,
        threshold_pct: a.threshold,
        ..Policy::default()
    };
    println!(
        "{:<10} {:>14} {:>4} {:>15} {:>15} {:>15} {:>7} {:>6} {:>5} {:>9} {:>9} {:>6} {:>6} {:>11} {:>11} {:>9} {:>7} {:>6} {:>8}",
        "kind",
        "size",
        "seed",
        "disk% bef>aft",
        "lead% bef>aft",
        "foll% bef>aft",
        "replica",
        "leader",
        "xchg",
        "moved_GB",
        "LB_GB",
        "ratio",
        "limits",
        "rackV b>a",
        "xLead b>a",
        "overCap",
        "plan_s",
        "cpu_s",
        "peakMiB"
    );
    for &(brokers, partitions) in &a.sizes {
        for &kind in &a.kinds {
            for &seed in &a.seeds {
                let spec = Spec {
                    rf: a.rf,
                    racks: a.racks,
                    rack_violations_pct: a.rack_violations,
                    ..Spec::new(kind, brokers, partitions, seed)
                };
                let s = generate(&spec);
                let tag = format!("{kind}.{brokers}x{partitions}.{seed}");
                if let Some(dir) = &a.dump {
                    write_json(&format!("{dir}/{tag}.json"), &s);
                }
                let lb = lower_bound_bytes(&s, policy.threshold_pct);
                reset_peak();
                let started = Instant::now();
                let cpu_before = cpu_secs();
                let p = plan(&s, &policy, 1_795_255_200_000);
                let secs = started.elapsed().as_secs_f64();
                let cpu = cpu_secs() - cpu_before;
                let peak = peak_rss_mib();
                let rack_v = format!(
                    "{}>{}",
                    rack_violations(&s),
                    rack_violations(&apply_plan(&s, &p, None))
                );
                let t = &p.topic_spread;
                let x_lead = format!("{}>{}", t.excess_leaders, t.projected_excess_leaders);
                let over_cap = format!("{}>{}", t.over_cap, t.projected_over_cap);
                let dist = |load: Load| {
                    p.loads
                        .0
                        .iter()
                        .find(|(l, _)| *l == load)
                        .map_or((0.0, 0.0), |(_, x)| {
                            (x.max_distance_before, x.max_distance_after)
                        })
                };
                let pair = |(b, a): (f64, f64)| format!("{b:.1}>{a:.1}");
                let leader_only = p
                    .moves
                    .iter()
                    .filter(|m| m.cost_class == CostClass::LeaderOnly)
                    .count();
                let exchanges = p
                    .moves
                    .iter()
                    .filter(|m| m.reason.starts_with("exchange"))
                    .count()
                    / 2;
                let ratio = if lb > 0.0 {
                    format!("{:.3}", p.estimated_bytes as f64 / lb)
                } else if p.estimated_bytes == 0 {
                    "0/0".into()
                } else {
                    "inf".into()
                };
                println!(
                    "{:<10} {:>14} {:>4} {:>15} {:>15} {:>15} {:>7} {:>6} {:>5} {:>9.2} {:>9.2} {:>6} {:>6} {:>11} {:>11} {:>9} {:>7.3} {:>6.2} {:>8.0}",
                    kind.name(),
                    format!("{brokers}x{partitions}"),
                    seed,
                    pair(dist(Load::DiskBytes)),
                    pair(dist(Load::LeaderCount)),
                    pair(dist(Load::FollowerCount)),
                    p.moves.len() - leader_only,
                    leader_only,
                    exchanges,
                    p.estimated_bytes as f64 / 1e9,
                    lb / 1e9,
                    ratio,
                    p.structural_limits.len(),
                    rack_v,
                    x_lead,
                    over_cap,
                    secs,
                    cpu,
                    peak
                );
                if a.stats {
                    let st = &p.search;
                    println!(
                        "    search: {} steps, {} candidates evaluated, {} applied, {} workers, {} threads at most, {} parallel steps",
                        st.iterations,
                        st.candidates_evaluated,
                        st.steps_applied,
                        st.workers,
                        st.threads_used,
                        st.parallel_steps
                    );
                }
                // Every load beyond the threshold after the plan: where it stops and why (a
                // `limit`, or a load that triggered, must name its load in structuralLimits).
                for (load, x) in &p.loads.0 {
                    if x.max_distance_after <= policy.threshold_pct {
                        continue;
                    }
                    let named = p.structural_limits.iter().any(|l| l.load == *load);
                    println!(
                        "    stop: {} {:.1}>{:.1}% {}{}: {}",
                        load.name(),
                        x.max_distance_before,
                        x.max_distance_after,
                        x.stop,
                        if (x.stop == "limit" || (x.triggered && x.stop == "within_trigger"))
                            && !named
                        {
                            " (NOT in structuralLimits)"
                        } else {
                            ""
                        },
                        x.stop_reason
                    );
                }
                for l in &p.structural_limits {
                    println!(
                        "    limit: broker {} {} {:.1}% ({}): {}",
                        l.broker_id,
                        l.load.name(),
                        l.distance,
                        l.cause,
                        l.remediation
                    );
                    if a.proofs {
                        println!("      proof: {}", l.proof.as_deref().unwrap_or("none"));
                    }
                }
                if let Some(prefix) = &a.moves_out {
                    write_json(&format!("{prefix}.{tag}.json"), &p.moves);
                }
            }
        }
    }
}
