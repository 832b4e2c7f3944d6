//! Building snapshots for planner tests.
#![allow(dead_code)]

use ballast_balancer::{plan, Plan, Policy};
use ballast_model::snapshot::{Snapshot, SnapshotBroker, SnapshotPartition, SNAPSHOT_FORMAT};
use ballast_model::BrokerState;

pub const NOW: &str = "2026-11-21T10:00:00Z";
pub const NOW_MS: i64 = 1_795_255_200_000;
pub const GIB: u64 = 1 << 30;

pub struct Cluster {
    pub snapshot: Snapshot,
}

impl Cluster {
    /// Brokers 1..=n, racks r1..rk round-robin (no racks when `racks` is 0).
    pub fn new(brokers: i32, racks: i32) -> Cluster {
        Cluster {
            snapshot: Snapshot {
                format: SNAPSHOT_FORMAT.to_string(),
                taken_at: NOW.to_string(),
                cluster_id: None,
                brokers: (1..=brokers)
                    .map(|id| SnapshotBroker {
                        id,
                        rack: (racks > 0).then(|| format!("r{}", (id - 1) % racks + 1)),
                        state: BrokerState::Alive,
                    })
                    .collect(),
                partitions: Vec::new(),
            },
        }
    }

    pub fn state(mut self, broker: i32, state: BrokerState) -> Cluster {
        for b in &mut self.snapshot.brokers {
            if b.id == broker {
                b.state = state;
            }
        }
        self
    }

    /// A partition led by `replicas[0]` with `size` bytes and no traffic.
    pub fn part(mut self, topic: &str, partition: i32, replicas: &[i32], size: u64) -> Cluster {
        self.snapshot.partitions.push(SnapshotPartition {
            topic: topic.to_string(),
            partition,
            replicas: replicas.to_vec(),
            leader: replicas.first().copied(),
            isr: None,
            size_bytes: size,
            compacted: false,
            min_insync_replicas: 1,
            producer_msg_rate: 0.0,
            producer_byte_rate: 0.0,
            consumer_msg_rate: 0.0,
            consumer_byte_rate: 0.0,
            last_moved_at: None,
        });
        self
    }

    /// `count` partitions of `topic`, replicas chosen by `place(i)`.
    pub fn topic(
        mut self,
        topic: &str,
        count: i32,
        size: u64,
        place: impl Fn(i32) -> Vec<i32>,
    ) -> Cluster {
        for i in 0..count {
            self = self.part(topic, i, &place(i), size);
        }
        self
    }

    pub fn rates(mut self, topic: &str, msg: f64, bytes: f64) -> Cluster {
        for p in self
            .snapshot
            .partitions
            .iter_mut()
            .filter(|p| p.topic == topic)
        {
            p.producer_msg_rate = msg;
            p.producer_byte_rate = bytes;
            p.consumer_msg_rate = msg;
            p.consumer_byte_rate = bytes;
        }
        self
    }

    pub fn moved_at(mut self, topic: &str, when: &str) -> Cluster {
        for p in self
            .snapshot
            .partitions
            .iter_mut()
            .filter(|p| p.topic == topic)
        {
            p.last_moved_at = Some(when.to_string());
        }
        self
    }

    pub fn plan(&self) -> Plan {
        self.plan_with(&Policy::default())
    }

    pub fn plan_with(&self, policy: &Policy) -> Plan {
        self.snapshot.validate().expect("test snapshot is valid");
        plan(&self.snapshot, policy, NOW_MS)
    }
}

pub fn load<'a>(plan: &'a Plan, name: &str) -> &'a ballast_balancer::LoadSummary {
    &plan
        .loads
        .0
        .iter()
        .find(|(l, _)| l.name() == name)
        .expect("load present")
        .1
}
