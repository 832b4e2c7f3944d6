//! Full observer ticks against the simulated cluster, written to a real store: the view and
//! readings it leaves behind, and how it rides out outages, new and deleted topics.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ballast_kafka::{Client, ClientConfig};
use ballast_model::Load;
use ballast_observer::derive::{History, Windows};
use ballast_observer::tick;
use ballast_schema::{ObservedView, Store};
use ballast_simcluster::{GenerateParams, NewTopic, Scenario, SimCluster, SimConfig};

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

const WINDOWS: Windows = Windows {
    rate_window_ms: 60_000,
    retention_ms: 7 * 24 * 3_600_000,
    // Every tick writes partition readings.
    partition_reading_ms: 1,
};

fn close(measured: f64, configured: f64, relative: f64) -> bool {
    (measured - configured).abs() <= relative * configured + 1.0
}

struct Setup {
    sim: SimCluster,
    client: Client,
    store: Store,
    history: Option<History>,
    _dir: tempfile::TempDir,
}

impl Setup {
    async fn start(params: GenerateParams) -> Setup {
        Setup::start_with(params, SimConfig::default().link_speed).await
    }

    /// With replica copies (catch-up, moves) at `link_speed` bytes per second.
    async fn start_with(params: GenerateParams, link_speed: f64) -> Setup {
        let sim = SimCluster::start(SimConfig {
            scenario: Scenario::Generate(params),
            tick: Duration::from_millis(20),
            link_speed,
            ..SimConfig::default()
        })
        .await
        .expect("simulated cluster starts");
        let client = Client::connect(ClientConfig::plaintext(&sim.bootstrap()))
            .await
            .expect("client connects");
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("ballast.db");
        Store::migrate(&path).expect("migrate");
        let store = Store::open(&path).expect("open");
        Setup {
            sim,
            client,
            store,
            history: None,
            _dir: dir,
        }
    }

    async fn tick(&mut self) -> ObservedView {
        tick(
            &self.client,
            &self.store,
            &mut self.history,
            WINDOWS,
            now_ms(),
        )
        .await
        .expect("tick");
        self.store.observed_view().unwrap().expect("a view")
    }
}

fn no_negative_rates(view: &ObservedView) {
    for p in &view.partitions {
        if let Some(r) = p.rates {
            for v in [
                r.producer_msg_rate,
                r.producer_byte_rate,
                r.consumer_msg_rate,
                r.consumer_byte_rate,
            ] {
                assert!(
                    v.is_finite() && v >= 0.0,
                    "{}-{}: {r:?}",
                    p.topic,
                    p.partition
                );
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rolling_rates_in_the_store_match_the_simulators_configured_rates() {
    let mut s = Setup::start(GenerateParams {
        brokers: 3,
        racks: 3,
        topics: 3,
        partitions_per_topic: 4,
        replication_factor: 2,
        mean_partition_bytes: 50e6,
        mean_msg_rate: 200.0,
        msg_bytes: 500.0,
        ..GenerateParams::default()
    })
    .await;
    let configured = s.sim.snapshot();
    let first = s.tick().await;
    assert!(first.partitions.iter().all(|p| p.rates.is_none()));
    tokio::time::sleep(Duration::from_secs(2)).await;
    s.tick().await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let view = s.tick().await;
    assert_eq!(view.cluster.generation, 3);
    assert_eq!(view.partitions.len(), configured.partitions.len());
    for c in &configured.partitions {
        let m = view
            .partitions
            .iter()
            .find(|m| m.topic == c.topic && m.partition == c.partition)
            .expect("every partition observed");
        let r = m.rates.expect("rates after three readings");
        assert!(
            close(r.producer_msg_rate, c.producer_msg_rate, 0.05),
            "{}-{} producer {r:?} vs {}",
            c.topic,
            c.partition,
            c.producer_msg_rate
        );
        assert!(
            close(r.consumer_msg_rate, c.consumer_msg_rate, 0.05),
            "{}-{} consumer {r:?} vs {}",
            c.topic,
            c.partition,
            c.consumer_msg_rate
        );
        if !c.compacted {
            assert!(
                close(r.producer_byte_rate, c.producer_byte_rate, 0.10),
                "{}-{} bytes {r:?} vs {}",
                c.topic,
                c.partition,
                c.producer_byte_rate
            );
        }
        if !c.compacted {
            assert!(
                close(r.consumer_byte_rate, c.consumer_byte_rate, 0.10),
                "{}-{} consumer bytes {r:?} vs {}",
                c.topic,
                c.partition,
                c.consumer_byte_rate
            );
        }
        assert!(r.window_ms >= 3_500, "{r:?}");
        // The stored partition reading of this sample carries the same rates.
        let readings = s
            .store
            .partition_readings(&c.topic, Some(c.partition), 0, i64::MAX)
            .unwrap();
        assert_eq!(readings.len(), 3, "one per tick");
        let last = &readings[2];
        assert_eq!(last.values[1], Some(r.producer_msg_rate));
        assert_eq!(last.values[3], Some(r.consumer_msg_rate));
        assert_eq!(last.values[0], m.avg_size_bytes);
    }
    // Every broker has a reading of every load; leaders add up to the partitions.
    assert_eq!(view.latest_readings.len(), 3);
    let leaders: f64 = view
        .latest_readings
        .iter()
        .map(|r| r.get(Load::LeaderCount).unwrap())
        .sum();
    assert_eq!(leaders as usize, view.partitions.len());
    assert!(view
        .latest_readings
        .iter()
        .all(|r| r.values.iter().all(Option::is_some)));
    let produced: f64 = view
        .latest_readings
        .iter()
        .map(|r| r.get(Load::ProducerMsgRate).unwrap())
        .sum();
    let configured_total: f64 = configured
        .partitions
        .iter()
        .map(|p| p.producer_msg_rate)
        .sum();
    assert!(close(produced, configured_total, 0.05));
    // The rest of the view: replicas with log dirs and lag, groups and their offsets.
    assert!(view
        .replicas
        .iter()
        .all(|r| r.log_dir.is_some() && r.offset_lag.is_some()));
    assert!(!view.groups.is_empty());
    assert!(view.group_offsets.iter().all(|o| o.lag.is_some()));
    assert_eq!(view.cluster.facts.log_dirs_read, 3);
    s.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outages_new_and_deleted_topics_give_no_failures_or_negative_rates() {
    let mut s = Setup::start(GenerateParams {
        brokers: 3,
        racks: 3,
        topics: 2,
        partitions_per_topic: 3,
        replication_factor: 3,
        mean_partition_bytes: 10e6,
        ..GenerateParams::default()
    })
    .await;
    s.tick().await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    s.tick().await;

    // A broker goes down: the tick still succeeds, the broker reads as down with its replicas.
    s.sim.stop_broker(3).await.expect("stop broker");
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let view = s.tick().await;
    no_negative_rates(&view);
    let b3 = view
        .brokers
        .iter()
        .find(|b| b.broker_id == 3)
        .expect("kept");
    assert!(!b3.alive);
    assert!(!b3.log_dirs_read);
    assert!(view.partitions.iter().all(|p| !p.isr.contains(&3)));
    assert!(view.replicas.iter().any(|r| r.broker_id == 3));
    assert_eq!(view.cluster.facts.brokers, 2);

    // A topic is created: its partitions have no rate until their second reading.
    s.sim
        .add_topic(&NewTopic {
            name: "fresh".into(),
            partitions: 2,
            replication_factor: 2,
            size_bytes: 1000,
            producer_msg_rate: 50.0,
            producer_byte_rate: 5000.0,
            consumer_msg_rate: 0.0,
            consumer_byte_rate: 0.0,
            configs: Default::default(),
        })
        .expect("add topic");
    let view = s.tick().await;
    let fresh: Vec<_> = view
        .partitions
        .iter()
        .filter(|p| p.topic == "fresh")
        .collect();
    assert_eq!(fresh.len(), 2);
    assert!(fresh.iter().all(|p| p.rates.is_none()));
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let view = s.tick().await;
    no_negative_rates(&view);
    assert!(view
        .partitions
        .iter()
        .filter(|p| p.topic == "fresh")
        .all(|p| p.rates.is_some()));

    // The broker returns and a topic is deleted.
    s.sim.start_broker(3).await.expect("start broker");
    s.client
        .delete_topics(&["fresh".to_string()])
        .await
        .expect("delete topic");
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let view = s.tick().await;
    no_negative_rates(&view);
    assert!(view.partitions.iter().all(|p| p.topic != "fresh"));
    assert!(view.brokers.iter().all(|b| b.alive));
    assert!(s
        .store
        .partition_counters()
        .unwrap()
        .iter()
        .all(|c| c.topic != "fresh"));

    // A restarted observer (no history in memory) carries on from the store.
    s.history = None;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let view = s.tick().await;
    no_negative_rates(&view);
    assert!(view
        .partitions
        .iter()
        .filter(|p| p.topic != "fresh")
        .all(|p| p.rates.is_some()));
    s.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broker_configs_acls_and_quotas_are_stored_without_sensitive_values() {
    use ballast_kafka::{
        AclBinding, AclOperation, AclPatternType, AclPermissionType, AclResourceType,
        QuotaAlteration, QuotaEntity, QuotaName,
    };
    use ballast_observer::settings_pass;
    let setup = Setup::start(GenerateParams {
        brokers: 3,
        topics: 2,
        partitions_per_topic: 2,
        ..GenerateParams::default()
    })
    .await;
    let binding = AclBinding {
        resource_type: AclResourceType::Topic,
        resource_name: "orders".into(),
        pattern_type: AclPatternType::Literal,
        principal: "User:alice".into(),
        host: "*".into(),
        operation: AclOperation::Read,
        permission_type: AclPermissionType::Allow,
    };
    setup.client.create_acls(&[binding]).await.expect("acl");
    let entity = QuotaEntity {
        user: Some(QuotaName::name("alice")),
        ..QuotaEntity::default()
    };
    setup
        .client
        .alter_client_quotas(
            &[QuotaAlteration {
                entity,
                ops: vec![("producer_byte_rate".into(), Some(1_048_576.0))],
            }],
            false,
        )
        .await
        .expect("quota");
    // A KRaft broker (and the simulator) shows a quota a moment after it was accepted; the
    // observer reads it at a later pass.
    let mut waited = 0;
    while setup
        .client
        .describe_client_quotas(&ballast_kafka::QuotaFilter::all())
        .await
        .expect("describe quotas")
        .is_empty()
    {
        waited += 1;
        assert!(waited < 100, "the quota never showed");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let now = now_ms();
    let o = settings_pass::broker_configs(&setup.client, &setup.store, &[1, 2, 3], now).await;
    assert!(o.ok, "{o:?}");
    let configs = setup.store.broker_configs(Some(2)).unwrap();
    assert!(!configs.is_empty());
    assert!(configs.iter().all(|c| c.broker_id == 2));
    assert!(configs
        .iter()
        .filter(|c| c.sensitive)
        .all(|c| c.value.is_none()));
    let o = settings_pass::security(&setup.client, &setup.store, now).await;
    assert!(o.ok, "{o:?}");
    let acls = setup.store.stored_acls().unwrap();
    assert_eq!(acls.len(), 1);
    assert_eq!(acls[0].principal, "User:alice");
    let quotas = setup.store.stored_quotas().unwrap();
    assert_eq!(quotas.len(), 1);
    assert_eq!(quotas[0].entity, "user=alice");
    assert_eq!(quotas[0].values["producer_byte_rate"], 1_048_576.0);
    setup.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stored_controller_is_the_quorum_leader_with_the_kafka_the_brokers_run() {
    let mut s = Setup::start(GenerateParams {
        brokers: 3,
        racks: 3,
        topics: 1,
        partitions_per_topic: 3,
        replication_factor: 3,
        ..GenerateParams::default()
    })
    .await;
    s.sim.move_controller(3).expect("quorum leader 3");
    for _ in 0..3 {
        // Metadata names a broker per answer; the stored controller is the quorum's leader.
        let view = s.tick().await;
        let c = &view.cluster.facts;
        assert_eq!(c.controller_id, Some(3));
        assert_eq!(c.controller_source.as_deref(), Some("quorum"));
        assert_eq!(c.metadata_mode.as_deref(), Some("kraft"));
        assert_eq!(c.kafka_version_min.as_deref(), Some("4.1"));
        assert_eq!(c.kafka_version_max, None);
        let quorum = c.quorum.as_ref().expect("the quorum is stored");
        assert_eq!(quorum["leaderId"], 3);
        assert_eq!(quorum["voters"].as_array().map(Vec::len), Some(3));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_catching_up_after_a_restart_lags_its_leader_by_the_bytes_it_misses() {
    // Copies at 1 byte/s: a restarted follower stays behind for the whole test.
    let mut s = Setup::start_with(
        GenerateParams {
            brokers: 3,
            racks: 3,
            topics: 1,
            partitions_per_topic: 3,
            replication_factor: 3,
            mean_partition_bytes: 1e6,
            mean_msg_rate: 200.0,
            msg_bytes: 1000.0,
            ..GenerateParams::default()
        },
        1.0,
    )
    .await;
    let view = s.tick().await;
    // Brokers' log dirs are read a few milliseconds apart while the logs grow: an in-sync
    // follower may differ from its leader by what was produced in between, no more.
    for r in &view.replicas {
        let lag = r.lag_bytes.expect("every size was read");
        assert!(
            lag < 50_000,
            "an in-sync follower is close to its leader: {r:?}"
        );
    }
    s.sim.stop_broker(3).await.expect("stop 3");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    s.sim.start_broker(3).await.expect("start 3");
    let view = s.tick().await;
    let mut behind = 0;
    for p in &view.partitions {
        let size = |b: i32| {
            view.replicas
                .iter()
                .find(|r| r.topic == p.topic && r.partition == p.partition && r.broker_id == b)
                .and_then(|r| r.size_bytes)
        };
        for r in view
            .replicas
            .iter()
            .filter(|r| r.topic == p.topic && r.partition == p.partition && !r.is_future)
        {
            assert_eq!(r.offset_lag, Some(0), "Kafka's offset lag of a current log");
            let leader = p.leader.expect("a leader");
            let expected = if r.broker_id == leader {
                0
            } else {
                (size(leader).expect("leader size") - r.size_bytes.expect("size")).max(0)
            };
            assert_eq!(
                r.lag_bytes,
                Some(expected),
                "{}-{} on {}",
                p.topic,
                p.partition,
                r.broker_id
            );
            if r.broker_id == 3 && expected > 100_000 {
                behind += 1;
                assert!(!p.isr.contains(&3), "a follower behind is out of the ISR");
            }
        }
    }
    assert!(behind > 0, "broker 3's replicas are behind their leaders");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sample_planned_while_it_is_written_is_planned_as_the_view_read_back() {
    use ballast_observer::proposals::{finish, plan_parts, Settings};
    use ballast_runtime::topology::ViewParts;
    let mut s = Setup::start(GenerateParams {
        brokers: 4,
        racks: 2,
        topics: 3,
        partitions_per_topic: 6,
        replication_factor: 2,
        mean_partition_bytes: 10e6,
        ..GenerateParams::default()
    })
    .await;
    let settings = Settings {
        policy: ballast_balancer::Policy::default(),
        started_at_ms: 0,
        warmup_ms: 0,
        max_gap_ms: i64::MAX,
        throttles_managed: true,
        readings_kept: 100,
        proposals_kept: 200,
        hold_ms: 0,
        sample_interval_ms: 1_000,
        rate_window_ms: WINDOWS.rate_window_ms,
    };
    for round in 0..3 {
        if round == 2 {
            // A broker that went down keeps its rack in the view, and the plan drains it.
            s.sim.stop_broker(4).await.expect("stop broker");
        }
        let report = ballast_observer::tick_planned(
            &s.client,
            &s.store,
            &mut s.history,
            WINDOWS,
            now_ms(),
            Some(settings.clone()),
        )
        .await
        .expect("tick");
        let planned = report.planned.expect("planned while written");
        let view = s
            .store
            .observed_view_for_planning()
            .unwrap()
            .expect("a view");
        let read_back = plan_parts(
            &s.store,
            &settings,
            &ViewParts {
                facts: &view.cluster.facts,
                brokers: &view.brokers,
                topics: &view.topics,
                partitions: &view.partitions,
            },
            view.cluster.facts.sampled_at_ms,
        )
        .expect("planned");
        assert_eq!(planned.snapshot, read_back.snapshot, "round {round}");
        assert_eq!(planned.fingerprint, read_back.fingerprint);
        assert_eq!(planned.moves_digest, read_back.moves_digest);
        assert_eq!(planned.detail, read_back.detail);
        assert_eq!(planned.basis, read_back.basis);
        if round == 2 {
            let b4 = planned.snapshot.brokers.iter().find(|b| b.id == 4);
            assert_eq!(
                b4.map(|b| (b.state, b.rack.is_some())),
                Some((ballast_model::BrokerState::Down, true))
            );
        }
        let evaluation = finish(&s.store, &settings, planned, now_ms()).expect("finished");
        let current = s.store.current_proposal().unwrap().expect("current");
        assert_eq!(current.id, evaluation.saved.id());
        assert_ne!(current.detail, serde_json::Value::Null);
        tokio::time::sleep(Duration::from_millis(1200)).await;
    }
}
