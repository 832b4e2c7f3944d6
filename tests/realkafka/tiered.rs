//! Tiered storage (KIP-405) on the suite's 4.1.0 bed. Kafka 4.1.0 has the remote-log machinery
//! and the topic-based metadata manager but no storage plugin: the suite compiles its own
//! (`LocalFolderRemoteStorageManager.java`, test tooling, never shipped) against the
//! distribution's `libs/` with the machine's `javac` and turns
//! `remote.log.storage.system.enable` on for the brokers. Without `javac`, or on a version
//! before 3.6 (no EARLIEST_LOCAL ListOffsets), the bed runs as before and the tiered path says
//! what it skipped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The compile started before the nodes are formatted (it runs beside them) and the broker
/// properties that use its result.
pub struct Tiered {
    compile: Option<Child>,
    jar: PathBuf,
    classes: PathBuf,
    /// Broker properties to append (empty when tiered storage is off on this bed).
    pub properties: String,
    /// A dedicated controller's: the controller validates a topic's `remote.storage.enable`
    /// against its own `remote.log.storage.system.enable` (it runs no remote log manager).
    pub controller_properties: String,
}

/// Where the remote "storage" keeps offloaded segments: `<dir>/<topic>-<partition>/`.
pub fn remote_dir(cluster_dir: &Path) -> PathBuf {
    cluster_dir.join("tiered").join("remote")
}

/// The plugin's jar, present once the bed started with tiered storage on.
pub fn jar(cluster_dir: &Path) -> PathBuf {
    cluster_dir.join("tiered").join("rsm.jar")
}

/// Starts compiling the storage plugin for `version`'s bed in `cluster_dir`; `Tiered::ready`
/// waits for it. Only the 4.1.0 bed gets tiered storage.
pub fn prepare(version: &str, cluster_dir: &Path, home: &Path) -> Tiered {
    let dir = cluster_dir.join("tiered");
    let classes = dir.join("classes");
    if version != crate::kafka::V4_1 {
        return Tiered {
            compile: None,
            jar: jar(cluster_dir),
            classes,
            properties: String::new(),
            controller_properties: String::new(),
        };
    }
    let off = |why: &str| {
        crate::kafka::say(&format!(
            "real Kafka {version}: tiered storage off on this bed: {why}"
        ));
        Tiered {
            compile: None,
            jar: jar(cluster_dir),
            classes: classes.clone(),
            properties: String::new(),
            controller_properties: String::new(),
        }
    };
    if std::fs::create_dir_all(&classes).is_err() {
        return off("cannot make its folder");
    }
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/realkafka/LocalFolderRemoteStorageManager.java");
    let compile = Command::new("javac")
        .arg("-nowarn")
        .arg("-d")
        .arg(&classes)
        .arg("-cp")
        .arg(format!("{}/libs/*", home.display()))
        .arg(&source)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let compile = match compile {
        Ok(c) => c,
        Err(e) => return off(&format!("javac: {e}")),
    };
    let jar = jar(cluster_dir);
    let properties = format!(
        "remote.log.storage.system.enable=true\n\
         remote.log.storage.manager.class.name=ballasttest.LocalFolderRemoteStorageManager\n\
         remote.log.storage.manager.class.path={jar}\n\
         rsm.config.dir={remote}\n\
         remote.log.metadata.manager.listener.name=PLAINTEXT\n\
         rlmm.config.remote.log.metadata.topic.num.partitions=3\n\
         rlmm.config.remote.log.metadata.topic.replication.factor=3\n\
         remote.log.manager.task.interval.ms=1000\n\
         log.retention.check.interval.ms=2000\n",
        jar = jar.display(),
        remote = remote_dir(cluster_dir).display(),
    );
    Tiered {
        compile: Some(compile),
        jar,
        classes,
        properties,
        controller_properties: "remote.log.storage.system.enable=true\n".to_string(),
    }
}

impl Tiered {
    /// Waits for the compile and packs the jar the brokers load. An error stops the bed: its
    /// brokers' properties already name the plugin.
    pub fn ready(mut self) -> Result<(), String> {
        let Some(child) = self.compile.take() else {
            return Ok(());
        };
        let out = child
            .wait_with_output()
            .map_err(|e| format!("javac: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "javac LocalFolderRemoteStorageManager.java failed: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let packed = Command::new("jar")
            .arg("cf")
            .arg(&self.jar)
            .arg("-C")
            .arg(&self.classes)
            .arg(".")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("jar: {e}"))?;
        if !packed.status.success() {
            return Err(format!(
                "jar cf rsm.jar failed: {}",
                String::from_utf8_lossy(&packed.stderr)
            ));
        }
        Ok(())
    }
}
