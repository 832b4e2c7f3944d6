//! Bytes a plan copies, on small hand-built clusters where the cheapest plan is known.

mod common;

use ballast_balancer::Policy;
use common::{load, Cluster};

const MB: u64 = 1_000_000;

#[test]
fn replica_counts_are_evened_with_the_smallest_replicas() {
    // Brokers 1-3 hold 600 partitions of RF 2 (400 replicas each), sized 1, 2, ... 600 MB;
    // broker 4 is new and empty. Disk is below its floor, so only the counts are evened: broker
    // 4 must take at least 285 replicas (95% of 300), and any replica counts the same, so the
    // cheapest plan copies the smallest partitions (the 285 smallest: 40,755 MB).
    let pairs = [[1, 2], [2, 3], [3, 1]];
    let mut c = Cluster::new(4, 0);
    for i in 0..600u64 {
        c = c.part("t", i as i32, &pairs[i as usize % 3], (i + 1) * MB);
    }
    let policy = Policy {
        floor_disk_bytes: 1e15,
        ..Policy::default()
    };
    let p = c.plan_with(&policy);
    assert!(p.recommended, "{:?}", p.reason_text);
    for name in ["leaderCount", "followerCount"] {
        assert!(load(&p, name).max_distance_after <= 5.0, "{name}");
    }
    let copies = p.moves.iter().filter(|m| m.bytes > 0).count() as u64;
    assert!(copies >= 285, "{copies} copies");
    // The copies are the smallest partitions a source could give: at most the `copies`
    // smallest, within 5% (which broker gives which leaves some slack).
    let smallest: u64 = (1..=copies).map(|s| s * MB).sum();
    assert!(
        p.estimated_bytes <= smallest + smallest / 20,
        "{} MB copied, the {copies} smallest are {} MB",
        p.estimated_bytes / MB,
        smallest / MB
    );
}

#[test]
fn a_broker_is_brought_just_inside_the_threshold_not_towards_fair_share() {
    // No racks, RF 1, 1 GB partitions: broker 1 holds 115, brokers 2 and 3 hold 95 each (fair
    // share 101.67). Broker 1 must give at least 8.25 GB to come within 5% (106.75), brokers 2
    // and 3 must take at least 1.58 GB each: nine copies are the fewest. Evening towards fair
    // share would copy more than that.
    let mut c = Cluster::new(3, 0);
    let mut i = 0;
    for (broker, count) in [(1, 115), (2, 95), (3, 95)] {
        for _ in 0..count {
            c = c.part("t", i, &[broker], 1_000_000_000);
            i += 1;
        }
    }
    let p = c.plan();
    assert!(p.recommended, "{:?}", p.reason_text);
    assert!(load(&p, "diskBytes").max_distance_after <= 5.0);
    assert_eq!(p.estimated_bytes, 9_000_000_000, "{:?}", p.moves);
}

#[test]
fn eight_broker_instances_that_copied_too_much_copy_at_most_1_15_times_the_bound() {
    // The 8-broker instances (four racks) that missed the target: `leaders` seeds 1 and 10
    // (an exchange where one smaller copy does) and `random` seeds 5 and 6 (rack repairs that
    // copied off brokers that need not give, to keep leadership loads that leadership changes
    // even anyway).
    use ballast_balancer::instances::{generate, lower_bound_bytes, Kind, Spec};
    use ballast_balancer::plan;
    for (kind, seed) in [
        (Kind::Leaders, 1),
        (Kind::Leaders, 10),
        (Kind::Random, 5),
        (Kind::Random, 6),
    ] {
        let spec = Spec {
            racks: 4,
            ..Spec::new(kind, 8, 1000, seed)
        };
        let s = generate(&spec);
        let policy = Policy::default();
        let bound = lower_bound_bytes(&s, policy.threshold_pct);
        let p = plan(&s, &policy, common::NOW_MS);
        let ratio = p.estimated_bytes as f64 / bound;
        assert!(ratio <= 1.15, "{kind} seed {seed}: {ratio:.3}");
    }
}

#[test]
fn an_exchange_one_copy_can_replace_is_replaced_by_a_copy_large_enough_for_the_taker() {
    // `leaders` at 8 brokers without racks, seed 6 (8x2000) and seed 9 (8x1000): the last
    // step for the broker below fair share on disk was an exchange (0.39 GB in, 0.15 GB out).
    // The take-back tried the giver's 16 smallest partitions in its place, all far too small
    // to bring the taker within 5%; it now tries only those at least as large as the taker
    // needs, and one copy replaces the exchange (1.31 -> 1.01 GB and 2.62 -> 2.34 GB).
    use ballast_balancer::instances::{generate, lower_bound_bytes, Kind, Spec};
    use ballast_balancer::plan;
    for (partitions, seed) in [(2000, 6), (1000, 9)] {
        let s = generate(&Spec {
            racks: 0,
            ..Spec::new(Kind::Leaders, 8, partitions, seed)
        });
        let policy = Policy::default();
        let bound = lower_bound_bytes(&s, policy.threshold_pct);
        let p = plan(&s, &policy, common::NOW_MS);
        let ratio = p.estimated_bytes as f64 / bound;
        assert!(ratio <= 1.05, "8x{partitions} seed {seed}: {ratio:.3}");
        assert!(load(&p, "diskBytes").max_distance_after <= 5.0);
        assert!(!p.moves.iter().any(|m| m.reason.starts_with("exchange")));
    }
}

#[test]
fn eight_broker_instances_of_every_kind_copy_at_most_1_15_times_the_bound_where_they_end_within_5_percent(
) {
    // Every kind at 8 brokers on four racks (three racks leave one rack two brokers: a proven
    // rack layout limit), seeds 1-5: where disk, leader and follower count end within 5%, the
    // plan copies at most 1.15 times the lower bound; where one does not (`random` seed 4:
    // leader count at 13.6%, held by the message rates), structuralLimits names it.
    use ballast_balancer::instances::{generate, lower_bound_bytes, Kind, Spec};
    use ballast_balancer::plan;
    for kind in Kind::ALL {
        for seed in 1..=5 {
            let s = generate(&Spec {
                racks: 4,
                ..Spec::new(kind, 8, 1000, seed)
            });
            let policy = Policy::default();
            let bound = lower_bound_bytes(&s, policy.threshold_pct);
            let p = plan(&s, &policy, common::NOW_MS);
            let mut within = true;
            for name in ["diskBytes", "leaderCount", "followerCount"] {
                let l = load(&p, name);
                if l.max_distance_after > 5.0 {
                    within = false;
                    assert!(
                        p.structural_limits.iter().any(|x| x.load.name() == name),
                        "{kind} seed {seed} {name}: {l:?}"
                    );
                }
            }
            if !within {
                continue;
            }
            if bound > 0.0 {
                let ratio = p.estimated_bytes as f64 / bound;
                assert!(ratio <= 1.15, "{kind} seed {seed}: {ratio:.3}");
            } else {
                assert_eq!(p.estimated_bytes, 0, "{kind} seed {seed}");
            }
        }
    }
    // The rows of seeds 1-10 at 8x500, 8x1000 and 8x2000 (four racks, none, two) that copied
    // more than 1.15 times the bound with disk, leader and follower count within 5%, and no
    // longer do (docs/planner-quality.md gives each with what an exact solver needs).
    for (racks, kind, partitions, seed) in [
        (4, Kind::Leaders, 500, 2),
        (4, Kind::Leaders, 500, 3),
        (4, Kind::Leaders, 500, 4),
        (0, Kind::HotBroker, 500, 3),
        (2, Kind::Random, 500, 8),
        (2, Kind::Leaders, 1000, 7),
        (2, Kind::Leaders, 500, 2),
        (2, Kind::Random, 1000, 9),
    ] {
        let s = generate(&Spec {
            racks,
            ..Spec::new(kind, 8, partitions, seed)
        });
        let policy = Policy::default();
        let bound = lower_bound_bytes(&s, policy.threshold_pct);
        let p = plan(&s, &policy, common::NOW_MS);
        for name in ["diskBytes", "leaderCount", "followerCount"] {
            assert!(
                load(&p, name).max_distance_after <= 5.0,
                "{kind} 8x{partitions} seed {seed} racks {racks}: {name}"
            );
        }
        let ratio = p.estimated_bytes as f64 / bound;
        assert!(
            ratio <= 1.15,
            "{kind} 8x{partitions} seed {seed} racks {racks}: {ratio:.3}"
        );
    }
}

#[test]
fn copies_one_smaller_partition_can_replace_are_replaced_by_it_from_any_broker_to_any_broker() {
    // `leaders` 8x500 seed 2, four racks: broker 4 had to give 136 MB and gave 95 and 60 MB,
    // broker 3 had to give 73 MB and gave 110 MB (a copy whose own trip no smaller partition
    // of broker 3 could make within the topic caps): 0.26 GB where an exact solver over disk,
    // the counts and rack spread needs 0.209 GB. Two copies are replaced by one, and a copy
    // by a smaller one between other brokers, every rule kept: 0.23 GB.
    // `leaders` 8x1000 seed 7, two racks: 0.02 GB where 0.011 GB do.
    use ballast_balancer::instances::{generate, lower_bound_bytes, Kind, Spec};
    use ballast_balancer::plan;
    for (racks, partitions, seed, most) in [(4, 500, 2, 1.10), (2, 1000, 7, 1.05)] {
        let s = generate(&Spec {
            racks,
            ..Spec::new(Kind::Leaders, 8, partitions, seed)
        });
        let policy = Policy::default();
        let bound = lower_bound_bytes(&s, policy.threshold_pct);
        let p = plan(&s, &policy, common::NOW_MS);
        let ratio = p.estimated_bytes as f64 / bound;
        assert!(ratio <= most, "8x{partitions} seed {seed}: {ratio:.3}");
        for name in ["diskBytes", "leaderCount", "followerCount"] {
            assert!(load(&p, name).max_distance_after <= 5.0, "{name}");
        }
        let t = &p.topic_spread;
        assert!(t.projected_excess_replicas <= t.excess_replicas, "{t:?}");
        assert!(t.projected_excess_leaders <= t.excess_leaders, "{t:?}");
        assert!(t.projected_over_cap <= t.over_cap, "{t:?}");
    }
}
