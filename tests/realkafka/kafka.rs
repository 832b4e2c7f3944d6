//! A real Apache Kafka cluster on loopback, started once per bed for the whole suite, as
//! production clusters run: Kafka 4.1.0 with three dedicated controllers
//! (`process.roles=controller`, ids 101–103) and three brokers (ids 1–3); 3.5.1 with three nodes
//! in combined mode (broker + controller); 3.5.1 in ZooKeeper mode (the distribution's ZooKeeper
//! 3.6.4 and three brokers, `3.5.1-zk`). Brokers have racks r1–r3 and two log dirs each; the
//! StandardAuthorizer with super users for ballast (`User:ANONYMOUS` on the plaintext listener,
//! `User:ballast` over SASL; on ZooKeeper the AclAuthorizer and the plaintext listener only),
//! from a binary distribution (`../shared/kafka/`, or `BALLAST_TEST_KAFKA_HOME`).
//!
//! The nodes run in process groups of their own; a watchdog shell kills them and removes their
//! files when the test process is gone, however it ends (statics are never dropped).

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The versions the suite knows, newest first: 4.1.0 gets every path, 3.5.1 the read side, a
/// throttled apply and the rolling restart.
pub const V4_1: &str = "4.1.0";
pub const V3_5: &str = "3.5.1";
/// Kafka 3.5.1 with its metadata in ZooKeeper: the read side, a throttled apply and the groups.
pub const V3_5_ZK: &str = "3.5.1-zk";

/// The distribution's version of a bed (`3.5.1-zk` runs 3.5.1).
fn release_of(bed: &str) -> &str {
    bed.strip_suffix("-zk").unwrap_or(bed)
}

/// The SCRAM-SHA-512 user created at format time (a super user).
pub const SCRAM_USER: &str = "ballast";
pub const SCRAM_PASSWORD: &str = "ballast-scram-secret";

/// A certificate authority the suite makes, a certificate for the brokers (127.0.0.1) and one
/// for ballast as a client (`CN=ballast`, a super user on the SSL listener).
pub struct Certs {
    pub ca: PathBuf,
    pub broker_keystore: PathBuf,
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
}

impl Certs {
    fn make(dir: &Path) -> Result<Certs, String> {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        let run = |args: &[&str]| -> Result<(), String> {
            let out = Command::new("openssl")
                .args(args)
                .current_dir(dir)
                .stdin(Stdio::null())
                .output()
                .map_err(|e| format!("openssl: {e}"))?;
            if out.status.success() {
                Ok(())
            } else {
                Err(format!(
                    "openssl {args:?}: {}",
                    String::from_utf8_lossy(&out.stderr)
                ))
            }
        };
        run(&[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "3",
            "-subj",
            "/CN=ballast-suite-ca",
        ])?;
        // X.509 v3 certificates (extensions make them v3; webpki refuses v1).
        std::fs::write(
            dir.join("broker.ext"),
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n",
        )
        .map_err(|e| e.to_string())?;
        std::fs::write(
            dir.join("client.ext"),
            "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n",
        )
        .map_err(|e| e.to_string())?;
        for (name, subject) in [("broker", "/CN=localhost"), ("client", "/CN=ballast")] {
            let (key, csr, crt) = (
                format!("{name}.key"),
                format!("{name}.csr"),
                format!("{name}.crt"),
            );
            run(&[
                "req", "-newkey", "rsa:2048", "-nodes", "-keyout", &key, "-out", &csr, "-subj",
                subject,
            ])?;
            let ext = format!("{name}.ext");
            run(&[
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                &crt,
                "-days",
                "3",
                "-extfile",
                &ext,
            ])?;
        }
        // Kafka's PEM key store: the private key (PKCS#8, unencrypted) and its certificate.
        let key = std::fs::read_to_string(dir.join("broker.key")).map_err(|e| e.to_string())?;
        let crt = std::fs::read_to_string(dir.join("broker.crt")).map_err(|e| e.to_string())?;
        std::fs::write(dir.join("broker-keystore.pem"), format!("{key}{crt}"))
            .map_err(|e| e.to_string())?;
        Ok(Certs {
            ca: dir.join("ca.pem"),
            broker_keystore: dir.join("broker-keystore.pem"),
            client_cert: dir.join("client.crt"),
            client_key: dir.join("client.key"),
        })
    }
}

/// One node of the cluster.
pub struct Node {
    pub id: i32,
    /// `process.roles`: a broker, a controller (a voter of the metadata quorum), or both.
    pub broker: bool,
    pub controller: bool,
    pub rack: String,
    pub port: u16,
    pub controller_port: u16,
    /// SASL_SSL (SCRAM-SHA-512) and SSL (client certificate required) listeners.
    pub sasl_ssl_port: u16,
    pub ssl_port: u16,
    pub config: PathBuf,
    pub log_dirs: [PathBuf; 2],
}

pub struct Kafka {
    /// The bed: the distribution's version, `-zk` after it for the ZooKeeper-mode bed (the name
    /// in every line the suite prints and in its topics' names).
    pub version: String,
    /// The distribution's version (`3.5.1`).
    pub release: String,
    /// ZooKeeper's client port on the ZooKeeper-mode bed (its metadata there); None on KRaft.
    pub zookeeper: Option<u16>,
    pub home: PathBuf,
    pub dir: PathBuf,
    pub bootstrap: String,
    pub sasl_ssl_bootstrap: String,
    pub ssl_bootstrap: String,
    pub certs: Certs,
    pub nodes: Vec<Node>,
    /// Held by a path that changes the cluster, so paths never interfere.
    lock: Mutex<()>,
}

/// Writes a line the test harness does not capture: the suite's report and its skips are read
/// in CI's output.
pub fn say(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// Where the distribution of bed `version` is, or why the suite cannot run it.
fn locate(version: &str) -> Result<PathBuf, String> {
    if let Ok(home) = std::env::var("BALLAST_TEST_KAFKA_HOME") {
        if version != V4_1 {
            return Err(format!(
                "BALLAST_TEST_KAFKA_HOME={home} is tested with the whole suite in place of {V4_1}"
            ));
        }
        let home = PathBuf::from(home);
        return if home.join("bin/kafka-server-start.sh").is_file() {
            Ok(home)
        } else {
            Err(format!(
                "BALLAST_TEST_KAFKA_HOME={} holds no bin/kafka-server-start.sh",
                home.display()
            ))
        };
    }
    let release = release_of(version);
    let home = repo_root()
        .join("../shared/kafka")
        .join(format!("kafka_2.13-{release}"));
    if !home.join("bin/kafka-server-start.sh").is_file() {
        return Err(format!(
            "no Kafka {release} distribution at {} (set BALLAST_TEST_KAFKA_HOME to use another)",
            home.display()
        ));
    }
    let java = Command::new("java")
        .arg("-version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !java.is_ok_and(|s| s.success()) {
        return Err("no working `java` on PATH (Kafka needs Java 17)".into());
    }
    Ok(home)
}

static CLUSTERS: OnceLock<Mutex<BTreeMap<String, &'static Result<Kafka, String>>>> =
    OnceLock::new();

/// The shared cluster of `version`, started on first use; `Err` says why it cannot run here.
pub fn cluster(version: &str) -> &'static Result<Kafka, String> {
    let map = CLUSTERS.get_or_init(|| Mutex::new(BTreeMap::new()));
    // Starting one holds the map: two versions never start at once (2 cores).
    let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(c) = map.get(version) {
        return c;
    }
    let started: &'static Result<Kafka, String> = Box::leak(Box::new(
        locate(version).and_then(|home| Kafka::start(version, home)),
    ));
    map.insert(version.to_string(), started);
    started
}

/// A path of the suite: its name and its function.
pub type SuitePath = (&'static str, fn(&Kafka));

/// Runs `paths` against `version`'s cluster one after another, each reported as it ends; a
/// failed path does not stop the others, and the test fails at the end naming every failed
/// one. A cluster that cannot run here (no Java, no distribution) is reported as skipped.
pub fn suite(version: &str, paths: &[SuitePath]) {
    let only = std::env::var("BALLAST_REALKAFKA_PATHS").ok();
    let chosen: Vec<&SuitePath> = paths
        .iter()
        .filter(|(name, _)| {
            only.as_deref()
                .is_none_or(|o| o.split(',').any(|part| name.contains(part.trim())))
        })
        .collect();
    if let Err(why) = locate(version) {
        for (name, _) in &chosen {
            say(&format!("real Kafka {version}: SKIPPED {name}: {why}"));
        }
        return;
    }
    let started = Instant::now();
    let mut failed = Vec::new();
    for (name, f) in &chosen {
        let run =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| path(version, name, *f)));
        if let Err(payload) = run {
            let why = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            say(&format!("real Kafka {version}: {name} FAILED: {why}"));
            failed.push(*name);
        }
    }
    // Its cluster is done: its JVMs no longer take the cores the other beds' paths use.
    if let Some(Ok(kafka)) = CLUSTERS.get().and_then(|m| {
        m.lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(version)
            .copied()
    }) {
        let _held = kafka.hold();
        kafka.kill_all();
    }
    say(&format!(
        "real Kafka {version}: {} of {} paths passed in {:.0} s",
        chosen.len() - failed.len(),
        chosen.len(),
        started.elapsed().as_secs_f64()
    ));
    assert!(
        failed.is_empty(),
        "real Kafka {version}: failed paths: {failed:?}"
    );
}

/// Runs one path against `version`'s cluster, holding it for the path's whole length.
fn path(version: &str, name: &str, f: fn(&Kafka)) {
    let kafka = match cluster(version) {
        Ok(k) => k,
        Err(why) => panic!("real Kafka {version} did not start: {why}"),
    };
    let _held = kafka.hold();
    // A path that failed half-way may have left a node stopped.
    if let Err(e) = kafka.ensure_all_up() {
        panic!("real Kafka {version}: {e}");
    }
    say(&format!("real Kafka {}: {name} ...", kafka.version));
    let started = Instant::now();
    f(kafka);
    say(&format!(
        "real Kafka {}: {name} ok ({:.0} s)",
        kafka.version,
        started.elapsed().as_secs_f64()
    ));
}

/// What every broker's configuration holds, KRaft or ZooKeeper.
const BROKER_COMMON: &str = "num.partitions=1\n\
     default.replication.factor=3\n\
     min.insync.replicas=1\n\
     offsets.topic.replication.factor=2\n\
     offsets.topic.num.partitions=6\n\
     transaction.state.log.replication.factor=2\n\
     transaction.state.log.min.isr=1\n\
     group.initial.rebalance.delay.ms=0\n\
     auto.create.topics.enable=false\n\
     num.network.threads=2\n\
     num.io.threads=2\n\
     background.threads=2\n\
     num.recovery.threads.per.data.dir=1\n";

/// `n` distinct free loopback ports: every listener is held until all are taken, so the system
/// cannot hand the same port out twice.
fn free_ports(n: usize) -> Vec<u16> {
    let listeners: Vec<std::net::TcpListener> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").expect("a free loopback port"))
        .collect();
    listeners
        .iter()
        .map(|l| l.local_addr().map(|a| a.port()).expect("local address"))
        .collect()
}

/// A Kafka cluster id: 16 bytes, URL-safe base64 without padding.
fn cluster_id() -> String {
    use base64::Engine;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut bytes = (nanos ^ (u128::from(std::process::id()) << 64)).to_le_bytes();
    bytes[0] |= 1;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

impl Kafka {
    fn start(version: &str, home: PathBuf) -> Result<Kafka, String> {
        let dir = tempfile::Builder::new()
            .prefix(&format!("ballast-kafka-{version}-"))
            .tempdir()
            .map_err(|e| e.to_string())?
            .keep();
        std::fs::create_dir_all(dir.join("pids")).map_err(|e| e.to_string())?;
        let mut nodes = Vec::new();
        let mut ports = free_ports(24).into_iter();
        let mut port = move || ports.next().expect("24 ports for 6 nodes");
        // 4.1.0 as production runs it: three dedicated controllers (101–103) beside the three
        // brokers; 3.5.1 in combined mode, or three brokers beside ZooKeeper.
        let dedicated = version == V4_1;
        let zookeeper = (version == V3_5_ZK).then(&mut port);
        let ids: Vec<(i32, bool, bool)> = if dedicated {
            vec![
                (101, false, true),
                (102, false, true),
                (103, false, true),
                (1, true, false),
                (2, true, false),
                (3, true, false),
            ]
        } else if zookeeper.is_some() {
            vec![(1, true, false), (2, true, false), (3, true, false)]
        } else {
            vec![(1, true, true), (2, true, true), (3, true, true)]
        };
        for (id, broker, controller) in ids {
            let node_dir = dir.join(format!("node{id}"));
            nodes.push(Node {
                id,
                broker,
                controller,
                rack: format!("r{}", id % 100),
                port: port(),
                controller_port: port(),
                sasl_ssl_port: port(),
                ssl_port: port(),
                config: node_dir.join("server.properties"),
                log_dirs: [node_dir.join("data-a"), node_dir.join("data-b")],
            });
        }
        // Tiered storage (4.1.0): its plugin compiles while the certificates are made and the
        // nodes formatted.
        let tiered = crate::tiered::prepare(version, &dir, &home);
        let certs = Certs::make(&dir.join("certs"))?;
        let voters = nodes
            .iter()
            .filter(|n| n.controller)
            .map(|n| format!("{}@127.0.0.1:{}", n.id, n.controller_port))
            .collect::<Vec<_>>()
            .join(",");
        for n in &nodes {
            std::fs::create_dir_all(n.config.parent().unwrap_or(&dir))
                .map_err(|e| e.to_string())?;
            if let Some(zk) = zookeeper {
                // A ZooKeeper-mode broker: `broker.id`, `zookeeper.connect`, no `process.roles`;
                // the plaintext listener only (no path of this bed speaks SASL or SSL).
                let config = format!(
                    "broker.id={id}\n\
                     zookeeper.connect=127.0.0.1:{zk}\n\
                     listeners=PLAINTEXT://127.0.0.1:{port}\n\
                     advertised.listeners=PLAINTEXT://127.0.0.1:{port}\n\
                     broker.rack={rack}\n\
                     log.dirs={a},{b}\n\
                     {common}\
                     authorizer.class.name=kafka.security.authorizer.AclAuthorizer\n\
                     super.users=User:ANONYMOUS\n",
                    id = n.id,
                    port = n.port,
                    rack = n.rack,
                    a = n.log_dirs[0].display(),
                    b = n.log_dirs[1].display(),
                    common = BROKER_COMMON,
                );
                std::fs::write(&n.config, config).map_err(|e| e.to_string())?;
                continue;
            }
            if !n.broker {
                // A dedicated controller: only its CONTROLLER listener and the metadata log.
                let config = format!(
                    "process.roles=controller\n\
                     node.id={id}\n\
                     controller.quorum.voters={voters}\n\
                     listeners=CONTROLLER://127.0.0.1:{cport}\n\
                     listener.security.protocol.map=CONTROLLER:PLAINTEXT\n\
                     controller.listener.names=CONTROLLER\n\
                     log.dirs={a}\n\
                     num.network.threads=2\n\
                     num.io.threads=2\n\
                     background.threads=2\n\
                     authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer\n\
                     super.users=User:ANONYMOUS;User:ballast;User:CN=ballast\n",
                    id = n.id,
                    cport = n.controller_port,
                    a = n.log_dirs[0].display(),
                );
                let config = config + &tiered.controller_properties;
                std::fs::write(&n.config, config).map_err(|e| e.to_string())?;
                continue;
            }
            let roles = if n.controller {
                "broker,controller"
            } else {
                "broker"
            };
            let controller_listener = if n.controller {
                format!(",CONTROLLER://127.0.0.1:{}", n.controller_port)
            } else {
                String::new()
            };
            let config = format!(
                "process.roles={roles}\n\
                 node.id={id}\n\
                 controller.quorum.voters={voters}\n\
                 listeners=PLAINTEXT://127.0.0.1:{port}{controller_listener},SASL_SSL://127.0.0.1:{sport},SSL://127.0.0.1:{tport}\n\
                 advertised.listeners=PLAINTEXT://127.0.0.1:{port},SASL_SSL://127.0.0.1:{sport},SSL://127.0.0.1:{tport}\n\
                 listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL,SSL:SSL\n\
                 sasl.enabled.mechanisms=SCRAM-SHA-512\n\
                 listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;\n\
                 ssl.keystore.type=PEM\n\
                 ssl.keystore.location={keystore}\n\
                 ssl.truststore.type=PEM\n\
                 ssl.truststore.location={ca}\n\
                 listener.name.ssl.ssl.client.auth=required\n\
                 controller.listener.names=CONTROLLER\n\
                 inter.broker.listener.name=PLAINTEXT\n\
                 broker.rack={rack}\n\
                 log.dirs={a},{b}\n\
                 {common}\
                 authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer\n\
                 super.users=User:ANONYMOUS;User:ballast;User:CN=ballast\n",
                id = n.id,
                port = n.port,
                sport = n.sasl_ssl_port,
                tport = n.ssl_port,
                keystore = certs.broker_keystore.display(),
                ca = certs.ca.display(),
                rack = n.rack,
                a = n.log_dirs[0].display(),
                b = n.log_dirs[1].display(),
                common = BROKER_COMMON,
            );
            let config = config + &tiered.properties;
            std::fs::write(&n.config, config).map_err(|e| e.to_string())?;
        }
        let bootstrap = nodes
            .iter()
            .filter(|n| n.broker)
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect::<Vec<_>>()
            .join(",");
        let sasl_ssl_bootstrap = nodes
            .iter()
            .filter(|n| n.broker)
            .map(|n| format!("127.0.0.1:{}", n.sasl_ssl_port))
            .collect::<Vec<_>>()
            .join(",");
        let ssl_bootstrap = nodes
            .iter()
            .filter(|n| n.broker)
            .map(|n| format!("127.0.0.1:{}", n.ssl_port))
            .collect::<Vec<_>>()
            .join(",");
        let kafka = Kafka {
            version: version.to_string(),
            release: release_of(version).to_string(),
            zookeeper,
            home,
            dir,
            bootstrap,
            sasl_ssl_bootstrap,
            ssl_bootstrap,
            certs,
            nodes,
            lock: Mutex::new(()),
        };
        kafka.watchdog()?;
        kafka.write_scripts()?;
        let started = Instant::now();
        if let Some(zk) = zookeeper {
            // ZooKeeper first: a broker gives up when it cannot reach it within 18 s.
            let data = kafka.dir.join("zookeeper");
            std::fs::create_dir_all(&data).map_err(|e| e.to_string())?;
            std::fs::write(
                kafka.dir.join("zookeeper.properties"),
                format!(
                    "dataDir={}\nclientPort={zk}\nclientPortAddress=127.0.0.1\nmaxClientCnxns=0\nadmin.enableServer=false\n",
                    data.display()
                ),
            )
            .map_err(|e| e.to_string())?;
            kafka.run_script("start", "zk")?;
            let deadline = Instant::now() + Duration::from_secs(60);
            while std::net::TcpStream::connect(("127.0.0.1", zk)).is_err() {
                if Instant::now() > deadline {
                    return Err(format!(
                        "ZooKeeper did not listen on 127.0.0.1:{zk} in 60 s"
                    ));
                }
                std::thread::sleep(Duration::from_millis(200));
            }
            for n in &kafka.nodes {
                kafka.start_node(n.id)?;
            }
            kafka.wait_brokers(3, Duration::from_secs(240))?;
            say(&format!(
                "real Kafka {version}: ZooKeeper (127.0.0.1:{zk}) and 3 brokers (ZooKeeper mode) ready in {:.0} s at {} ({})",
                started.elapsed().as_secs_f64(),
                kafka.bootstrap,
                kafka.home.display()
            ));
            return Ok(kafka);
        }
        let id = cluster_id();
        let formats: Vec<_> = kafka
            .nodes
            .iter()
            .map(|n| {
                kafka
                    .tool("kafka-storage")
                    .args(["format", &format!("--cluster-id={id}"), "-c"])
                    .arg(&n.config)
                    .args([
                        "--add-scram",
                        &format!("SCRAM-SHA-512=[name={SCRAM_USER},password={SCRAM_PASSWORD}]"),
                    ])
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
            })
            .collect();
        for f in formats {
            let out = f
                .and_then(|c| c.wait_with_output())
                .map_err(|e| format!("kafka-storage format: {e}"))?;
            if !out.status.success() {
                return Err(format!(
                    "kafka-storage format failed: {}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
        tiered.ready()?;
        let started = Instant::now();
        for n in &kafka.nodes {
            kafka.start_node(n.id)?;
        }
        kafka.wait_brokers(3, Duration::from_secs(240))?;
        say(&format!(
            "real Kafka {version}: {} ready in {:.0} s at {} ({})",
            if dedicated {
                "3 dedicated KRaft controllers (101-103) and 3 brokers"
            } else {
                "3 KRaft nodes (broker and controller)"
            },
            started.elapsed().as_secs_f64(),
            kafka.bootstrap,
            kafka.home.display()
        ));
        Ok(kafka)
    }

    /// A shell that outlives this process for as long as it runs, then kills every node and
    /// removes the cluster's files.
    fn watchdog(&self) -> Result<(), String> {
        let script = format!(
            "while kill -0 {pid} 2>/dev/null; do sleep 1; done; \
             for f in '{dir}'/pids/*; do [ -f \"$f\" ] && kill -s KILL -- -\"$(cat \"$f\")\" 2>/dev/null; done; \
             sleep 1; [ -f '{dir}/keep' ] || rm -rf '{dir}'",
            pid = std::process::id(),
            dir = self.dir.display()
        );
        Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .map(|_| ())
            .map_err(|e| format!("watchdog: {e}"))
    }

    /// Kills every process of the cluster (SIGKILL to each process group): the suite is done
    /// with it. The watchdog removes its files when the test process ends.
    fn kill_all(&self) {
        let script = format!(
            "for f in '{dir}'/pids/*; do [ -f \"$f\" ] && kill -s KILL -- -\"$(cat \"$f\")\" 2>/dev/null; rm -f \"$f\"; done",
            dir = self.dir.display()
        );
        let _ = Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::null())
            .status();
    }

    fn hold(&self) -> MutexGuard<'_, ()> {
        self.lock.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A command of the distribution's `bin/` (`kafka-topics`, `kafka-configs`, …) with a small
    /// heap and its logs in the cluster's folder (the distribution may be read-only).
    pub fn tool(&self, name: &str) -> Command {
        let mut cmd = Command::new(self.home.join("bin").join(format!("{name}.sh")));
        cmd.env_remove("LD_LIBRARY_PATH")
            .env("KAFKA_HEAP_OPTS", "-Xmx256m -Xms64m")
            .env("KAFKA_JMX_OPTS", " ")
            .env("LOG_DIR", self.dir.join("tool-logs"));
        cmd
    }

    /// Runs a Kafka tool against the cluster and returns its standard output; panics with its
    /// output when it fails.
    pub fn run_tool(&self, name: &str, args: &[&str]) -> String {
        let out = self
            .tool(name)
            .args(["--bootstrap-server", &self.bootstrap])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            out.status.success(),
            "{name} {args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The nodes that are brokers (all of them in combined mode).
    pub fn brokers(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter().filter(|n| n.broker)
    }

    /// Whether node `id` is a broker (a dedicated controller is not).
    pub fn is_broker(&self, id: i32) -> bool {
        self.nodes.iter().any(|n| n.id == id && n.broker)
    }

    /// Kafka's own view of the quorum's voters: `kafka-metadata-quorum.sh describe --status
    /// --replication` as printed, with each replica's `NodeId`, `LogEndOffset`, `Lag`,
    /// `LastFetchTimestamp` and `Status` parsed from the replication table.
    pub fn quorum_replication(&self) -> (String, Vec<BTreeMap<String, String>>) {
        let status = self.run_tool("kafka-metadata-quorum", &["describe", "--status"]);
        let table = self.run_tool("kafka-metadata-quorum", &["describe", "--replication"]);
        let mut lines = table.lines().filter(|l| !l.trim().is_empty());
        let header: Vec<String> = lines
            .next()
            .map(|h| h.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default();
        let rows = lines
            .map(|l| {
                header
                    .iter()
                    .cloned()
                    .zip(l.split_whitespace().map(str::to_string))
                    .collect()
            })
            .collect();
        (format!("{status}{table}"), rows)
    }

    pub fn node(&self, id: i32) -> &Node {
        self.nodes
            .iter()
            .find(|n| n.id == id)
            .unwrap_or_else(|| panic!("no node {id}"))
    }

    /// The node's scripts: `start-N.sh` (in a session of its own, its process group recorded in
    /// `pids/N`), `stop-N.sh` (SIGTERM, a controlled shutdown; SIGKILL after 60 s), `restart-N.sh`
    /// and `status-N.sh` (exit 0 while it runs). A `ballast agent` runs the last two as its
    /// restart and status commands, as it would run `systemctl restart kafka`.
    fn write_scripts(&self) -> Result<(), String> {
        use std::os::unix::fs::PermissionsExt;
        // Each node, and ZooKeeper (`zk`) on the ZooKeeper-mode bed: (id, start script, config, heap).
        let mut processes: Vec<(String, &str, PathBuf, &str)> = self
            .nodes
            .iter()
            .map(|n| {
                let heap = if n.broker {
                    "-Xmx512m -Xms512m"
                } else {
                    "-Xmx384m -Xms384m"
                };
                (
                    n.id.to_string(),
                    "kafka-server-start.sh",
                    n.config.clone(),
                    heap,
                )
            })
            .collect();
        if self.zookeeper.is_some() {
            processes.push((
                "zk".into(),
                "zookeeper-server-start.sh",
                self.dir.join("zookeeper.properties"),
                "-Xmx256m -Xms256m",
            ));
        }
        for (id, start, cfg, heap) in processes {
            let dir = self.dir.display();
            let scripts = [
                (
                    format!("start-{id}.sh"),
                    format!(
                        "#!/bin/sh\n\
                         KAFKA_HEAP_OPTS='{heap}' KAFKA_JMX_OPTS=' ' LOG_DIR='{dir}/node{id}-logs' \\\n\
                         setsid '{home}/bin/{start}' '{cfg}' >>'{dir}/node{id}.out' 2>&1 </dev/null &\n\
                         echo $! >'{dir}/pids/{id}'\n",
                        home = self.home.display(),
                        cfg = cfg.display(),
                    ),
                ),
                (
                    format!("stop-{id}.sh"),
                    format!(
                        "#!/bin/sh\n\
                         [ -f '{dir}/pids/{id}' ] || exit 0\n\
                         PG=$(cat '{dir}/pids/{id}')\n\
                         kill -s TERM -- -$PG 2>/dev/null\n\
                         i=0; while kill -s 0 -- -$PG 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n\
                         kill -s KILL -- -$PG 2>/dev/null\n\
                         rm -f '{dir}/pids/{id}'\n"
                    ),
                ),
                (
                    format!("restart-{id}.sh"),
                    format!("#!/bin/sh\n'{dir}/stop-{id}.sh' && exec '{dir}/start-{id}.sh'\n"),
                ),
                (
                    format!("status-{id}.sh"),
                    format!(
                        "#!/bin/sh\n[ -f '{dir}/pids/{id}' ] && kill -s 0 -- -$(cat '{dir}/pids/{id}') 2>/dev/null\n"
                    ),
                ),
            ];
            for (name, text) in scripts {
                let path = self.dir.join(name);
                std::fs::write(&path, text).map_err(|e| e.to_string())?;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                    .map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    }

    /// A node's script (`start`, `stop`, `restart`, `status`).
    pub fn script(&self, what: &str, id: impl std::fmt::Display) -> PathBuf {
        self.dir.join(format!("{what}-{id}.sh"))
    }

    fn run_script(&self, what: &str, id: impl std::fmt::Display) -> Result<(), String> {
        let id = id.to_string();
        let status = Command::new(self.script(what, &id))
            .stdin(Stdio::null())
            .status()
            .map_err(|e| format!("{what}-{id}.sh: {e}"))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("{what}-{id}.sh: {status}"))
        }
    }

    /// Starts node `id` (again).
    pub fn start_node(&self, id: i32) -> Result<(), String> {
        self.run_script("start", id)
    }

    /// Stops node `id`: a controlled shutdown, SIGKILL after 60 s.
    pub fn stop_node(&self, id: i32) {
        if let Err(e) = self.run_script("stop", id) {
            say(&format!("stopping node {id}: {e}"));
        }
    }

    /// Starts every node that is not running and waits for three brokers.
    pub fn ensure_all_up(&self) -> Result<(), String> {
        if self.zookeeper.is_some() && self.run_script("status", "zk").is_err() {
            say(&format!(
                "real Kafka {}: ZooKeeper was stopped: starting it",
                self.version
            ));
            self.run_script("start", "zk")?;
        }
        for n in &self.nodes {
            if self.run_script("status", n.id).is_err() {
                say(&format!(
                    "real Kafka {}: node {} was stopped: starting it",
                    self.version, n.id
                ));
                self.start_node(n.id)?;
            }
        }
        self.wait_brokers(3, Duration::from_secs(180))
    }

    /// Waits until Kafka reports `count` registered brokers.
    pub fn wait_brokers(&self, count: usize, timeout: Duration) -> Result<(), String> {
        let deadline = Instant::now() + timeout;
        let mut last = String::new();
        while Instant::now() < deadline {
            match self.py(&["cluster"]) {
                Ok(v) if v["brokers"].as_array().is_some_and(|b| b.len() == count) => return Ok(()),
                Ok(v) => last = v.to_string(),
                Err(e) => last = e,
            }
            std::thread::sleep(Duration::from_secs(1));
        }
        // Keep the files for a look, and show the end of each node's output.
        let _ = std::fs::write(self.dir.join("keep"), "");
        let tails: String = self
            .nodes
            .iter()
            .map(|n| {
                let out = std::fs::read_to_string(self.dir.join(format!("node{}.out", n.id)))
                    .unwrap_or_default();
                let lines: Vec<&str> = out.lines().collect();
                format!(
                    "\n--- node {} ---\n{}",
                    n.id,
                    lines[lines.len().saturating_sub(15)..].join("\n")
                )
            })
            .collect();
        Err(format!(
            "Kafka {} did not show {count} brokers in {timeout:?} (last: {last}); files kept in {}{tails}",
            self.version,
            self.dir.display()
        ))
    }

    /// Kafka's view through confluent-kafka (`kafka_tool.py`): the parsed JSON it prints.
    pub fn py(&self, args: &[&str]) -> Result<Value, String> {
        let script = repo_root().join("tests/realkafka/kafka_tool.py");
        let out: Output = Command::new("python3")
            .arg(script)
            .arg(&self.bootstrap)
            .args(args)
            .env_remove("LD_LIBRARY_PATH")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("python3: {e}"))?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
        }
        serde_json::from_slice(&out.stdout).map_err(|e| format!("kafka_tool output: {e}"))
    }

    /// `kafka_tool.py` started in the background (a consumer that stays in its group), its
    /// standard output piped for the caller to read.
    pub fn py_spawn(&self, args: &[&str]) -> std::process::Child {
        Command::new("python3")
            .arg(repo_root().join("tests/realkafka/kafka_tool.py"))
            .arg(&self.bootstrap)
            .args(args)
            .env_remove("LD_LIBRARY_PATH")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("python3: {e}"))
    }

    /// As `py`, panicking with the tool's error.
    pub fn truth(&self, args: &[&str]) -> Value {
        self.py(args)
            .unwrap_or_else(|e| panic!("kafka_tool {args:?}: {e}"))
    }

    /// Creates `topic` with replicas placed exactly as given (first = preferred leader).
    pub fn create_topic(&self, topic: &str, assignment: &[&[i32]], configs: &[(&str, &str)]) {
        let assignment = serde_json::to_string(assignment).unwrap_or_default();
        let configs: serde_json::Map<String, Value> = configs
            .iter()
            .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
            .collect();
        self.truth(&[
            "create-topic",
            topic,
            &assignment,
            &Value::Object(configs).to_string(),
        ]);
        // Every partition led and fully in sync before anyone uses it.
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let parts = self.partitions(topic);
            if parts.len() == assignment_len(&assignment)
                && parts
                    .iter()
                    .all(|p| p.leader >= 0 && p.isr.len() == p.replicas.len())
            {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "topic {topic} not ready: {parts:?}"
            );
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    /// Kafka's partitions of `topic`: replicas in order, leader, ISR.
    pub fn partitions(&self, topic: &str) -> Vec<PartitionView> {
        let v = self.py(&["topics", topic]).unwrap_or(Value::Null);
        v[topic]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| PartitionView {
                partition: p["partition"].as_i64().unwrap_or(-1) as i32,
                leader: p["leader"].as_i64().unwrap_or(-1) as i32,
                replicas: ids(&p["replicas"]),
                isr: ids(&p["isr"]),
            })
            .collect()
    }

    /// Writes `mb` MB of incompressible records into each of the first `partitions`
    /// partitions of `topic`.
    pub fn produce(&self, topic: &str, partitions: usize, mb: f64) {
        self.truth(&["produce", topic, &partitions.to_string(), &mb.to_string()]);
    }

    /// Starts writing `per_second` records of `record` bytes a second into each of the first
    /// `partitions` partitions of `topic` for `seconds` (`kafka_tool.py produce-rate`): a
    /// producer at a fixed rate, in the background. Kill the child when done.
    pub fn produce_at_rate(
        &self,
        topic: &str,
        partitions: usize,
        per_second: f64,
        record: usize,
        seconds: u64,
    ) -> std::process::Child {
        Command::new("python3")
            .arg(repo_root().join("tests/realkafka/kafka_tool.py"))
            .arg(&self.bootstrap)
            .args([
                "produce-rate",
                topic,
                &partitions.to_string(),
                &per_second.to_string(),
                &record.to_string(),
                &seconds.to_string(),
            ])
            .env_remove("LD_LIBRARY_PATH")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("python3 kafka_tool.py produce-rate")
    }

    /// The throttle configs Kafka holds on `topic` (dynamic ones only).
    pub fn topic_configs(&self, topic: &str) -> BTreeMap<String, String> {
        string_map(&self.truth(&["topic-configs", topic]))
    }

    /// The dynamic configs Kafka holds on broker `id`.
    pub fn broker_configs(&self, id: i32) -> BTreeMap<String, String> {
        string_map(&self.truth(&["broker-configs", &id.to_string()]))
    }

    /// Moves partitions with Kafka's own tool (`kafka-reassign-partitions.sh --execute`), as an
    /// operator would, optionally throttled (bytes per second).
    pub fn reassign(&self, moves: &[(&str, i32, &[i32])], throttle: Option<u64>) {
        let partitions: Vec<Value> = moves
            .iter()
            .map(|(t, p, r)| serde_json::json!({"topic": t, "partition": p, "replicas": r}))
            .collect();
        let plan = serde_json::json!({"version": 1, "partitions": partitions});
        let file = self.dir.join(format!(
            "reassign-{}.json",
            moves.first().map_or("none", |m| m.0)
        ));
        std::fs::write(&file, plan.to_string()).expect("write the reassignment plan");
        let file = file.to_string_lossy().into_owned();
        let rate = throttle.map(|t| t.to_string());
        let mut args = vec!["--execute", "--reassignment-json-file", file.as_str()];
        if let Some(rate) = &rate {
            args.extend(["--throttle", rate.as_str()]);
        }
        self.run_tool("kafka-reassign-partitions", &args);
    }

    /// Kafka's own description of `topic`'s partitions (`kafka-topics.sh --describe`): each
    /// partition line's `Key: value` fields (`Partition`, `Leader`, `Replicas`, `Isr`, and from
    /// Kafka 3.8 `Elr` and `LastKnownElr`), with the tool's output as printed.
    pub fn describe_partitions(&self, topic: &str) -> (String, Vec<BTreeMap<String, String>>) {
        let out = self.run_tool("kafka-topics", &["--describe", "--topic", topic]);
        let rows = out
            .lines()
            .filter(|l| l.contains("Partition:"))
            .map(|l| {
                l.split('\t')
                    .filter_map(|f| f.split_once(':'))
                    .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                    .collect()
            })
            .collect();
        (out, rows)
    }

    /// The controller as ZooKeeper holds it: the broker id in `/controller`
    /// (`zookeeper-shell.sh 127.0.0.1:PORT get /controller`), with the tool's line as printed.
    pub fn zookeeper_controller(&self) -> (i32, String) {
        let zk = self.zookeeper.expect("the ZooKeeper-mode bed");
        let out = self
            .tool("zookeeper-shell")
            .args([&format!("127.0.0.1:{zk}"), "get", "/controller"])
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("zookeeper-shell: {e}"));
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with('{'))
            .unwrap_or_else(|| panic!("no /controller in zookeeper-shell's output: {text}"));
        let id = serde_json::from_str::<Value>(line)
            .ok()
            .and_then(|v| v["brokerid"].as_i64())
            .unwrap_or_else(|| panic!("no brokerid in /controller: {line}"));
        (id as i32, line.trim().to_string())
    }

    /// The active controller as the metadata quorum says (`kafka-metadata-quorum.sh`).
    pub fn quorum_leader(&self) -> i32 {
        let out = self.run_tool("kafka-metadata-quorum", &["describe", "--status"]);
        out.lines()
            .find_map(|l| l.trim().strip_prefix("LeaderId:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no LeaderId in {out}"))
    }
}

fn assignment_len(json: &str) -> usize {
    serde_json::from_str::<Vec<Value>>(json).map_or(0, |v| v.len())
}

fn ids(v: &Value) -> Vec<i32> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| x.as_i64().map(|x| x as i32))
        .collect()
}

fn string_map(v: &Value) -> BTreeMap<String, String> {
    v.as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
        .collect()
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionView {
    pub partition: i32,
    pub leader: i32,
    pub replicas: Vec<i32>,
    pub isr: Vec<i32>,
}
