//! The mutation slot across real processes.
//!
//! The test binary re-executes itself: the parent tests spawn copies of this binary that run only
//! one `*_child` test function, selected with `--exact` and enabled by an environment variable
//! (without it the child functions return at once, so a normal `cargo test` run skips them).

mod common;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use ballast_schema::Store;
use common::{db_path, fresh_store, wall_ms, wall_us};

const CONTENDER_DB: &str = "BALLAST_SLOT_CONTENDER_DB";
const CONTENDER_ID: &str = "BALLAST_SLOT_CONTENDER_ID";
const CONTENDER_ROUNDS: &str = "BALLAST_SLOT_CONTENDER_ROUNDS";
const CONTENDER_START_US: &str = "BALLAST_SLOT_CONTENDER_START_US";

const PAUSE_DB: &str = "BALLAST_SLOT_PAUSE_DB";
const PAUSE_SIGNAL: &str = "BALLAST_SLOT_PAUSE_SIGNAL";

/// Acquisitions per contender.
const ROUNDS: u32 = 200;
/// Lease ttl in the contenders: far longer than a hold, so only release frees the slot.
const CONTENDER_TTL_MS: i64 = 5_000;
/// Lease ttl of the child that pauses.
const PAUSE_TTL_MS: i64 = 300;
/// Every child gives up after this long, and the parent kills children that outlive it.
const CHILD_DEADLINE: Duration = Duration::from_secs(20);

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} must be set"))
}

/// One child run: its exit status and what it printed.
struct ChildRun {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

/// Spawns this test binary running only `test_name`, with `vars` set; output goes to files in
/// `dir` so a chatty child never blocks on a full pipe.
struct Spawned {
    child: std::process::Child,
    stdout: PathBuf,
    stderr: PathBuf,
}

fn spawn_child(dir: &Path, label: &str, test_name: &str, vars: &[(&str, String)]) -> Spawned {
    let stdout = dir.join(format!("{label}.stdout"));
    let stderr = dir.join(format!("{label}.stderr"));
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", test_name, "--nocapture", "--test-threads=1"])
        .stdin(Stdio::null())
        .stdout(File::create(&stdout).unwrap())
        .stderr(File::create(&stderr).unwrap());
    for (k, v) in vars {
        cmd.env(k, v);
    }
    Spawned {
        child: cmd.spawn().unwrap(),
        stdout,
        stderr,
    }
}

fn wait_child(mut s: Spawned) -> ChildRun {
    let deadline = Instant::now() + CHILD_DEADLINE + Duration::from_secs(5);
    let status = loop {
        if let Some(status) = s.child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = s.child.kill();
            let _ = s.child.wait();
            panic!(
                "child did not finish in time; stdout:\n{}",
                std::fs::read_to_string(&s.stdout).unwrap_or_default()
            );
        }
        sleep(Duration::from_millis(5));
    };
    ChildRun {
        status,
        stdout: std::fs::read_to_string(&s.stdout).unwrap(),
        stderr: std::fs::read_to_string(&s.stderr).unwrap(),
    }
}

/// The fields after `tag` on every line that contains it (the test harness may print its own
/// text on the same line).
fn tagged<'a>(out: &'a str, tag: &str) -> Vec<Vec<&'a str>> {
    out.lines()
        .filter_map(|l| l.find(tag).map(|i| &l[i + tag.len()..]))
        .map(|rest| rest.split_whitespace().collect())
        .collect()
}

/// A child: takes the slot `ROUNDS` times and increments a counter under it, with a
/// read-modify-write that loses updates if two processes ever hold the slot at once.
#[test]
fn slot_contender_child() {
    let Some(db) = std::env::var_os(CONTENDER_DB) else {
        return;
    };
    let id = env(CONTENDER_ID);
    let rounds: u32 = env(CONTENDER_ROUNDS).parse().unwrap();
    let start_us: u128 = env(CONTENDER_START_US).parse().unwrap();
    let deadline = Instant::now() + CHILD_DEADLINE;
    let store = Store::open(Path::new(&db)).unwrap();
    let holder = format!("contender-{id}-{}", std::process::id());

    // Start together with the other contender.
    while wall_us() < start_us {
        sleep(Duration::from_micros(200));
    }

    let mut done = 0u32;
    let mut refused = 0u64;
    'rounds: while done < rounds {
        let lease = loop {
            if Instant::now() > deadline {
                break 'rounds;
            }
            match store
                .acquire_slot(&holder, "test", None, wall_ms(), CONTENDER_TTL_MS)
                .unwrap()
            {
                Some(lease) => break lease,
                None => {
                    refused += 1;
                    sleep(Duration::from_micros(50));
                }
            }
        };
        let acquired_us = wall_us();
        let counter: u64 = store
            .setting("counter")
            .unwrap()
            .map(|v| v.parse().unwrap())
            .unwrap_or(0);
        sleep(Duration::from_millis(1));
        store
            .put_setting_fenced(&lease, "counter", &(counter + 1).to_string(), wall_ms())
            .unwrap();
        let releasing_us = wall_us();
        assert!(store.release_slot(&lease).unwrap(), "the lease was ours");
        println!("INTERVAL {id} {acquired_us} {releasing_us}");
        done += 1;
        // Give the other contender a chance between holds.
        sleep(Duration::from_micros(300));
    }
    println!("DONE {id} {done} {refused}");
}

#[test]
fn two_processes_never_both_hold_the_slot() {
    let (dir, store) = fresh_store();
    let db = db_path(&dir).display().to_string();
    let start_us = wall_us() + 300_000;
    let ids = ["a", "b"];
    let spawned: Vec<Spawned> = ids
        .iter()
        .map(|id| {
            spawn_child(
                dir.path(),
                &format!("contender-{id}"),
                "slot_contender_child",
                &[
                    (CONTENDER_DB, db.clone()),
                    (CONTENDER_ID, id.to_string()),
                    (CONTENDER_ROUNDS, ROUNDS.to_string()),
                    (CONTENDER_START_US, start_us.to_string()),
                ],
            )
        })
        .collect();
    let runs: Vec<ChildRun> = spawned.into_iter().map(wait_child).collect();

    let mut intervals: Vec<(u128, u128, String)> = Vec::new();
    let mut total_done = 0u64;
    for (id, run) in ids.iter().zip(&runs) {
        assert!(
            run.status.success(),
            "contender {id} failed: {}\nstdout:\n{}\nstderr:\n{}",
            run.status,
            run.stdout,
            run.stderr
        );
        let done = tagged(&run.stdout, "DONE ");
        assert_eq!(
            done.len(),
            1,
            "contender {id} printed no summary:\n{}",
            run.stdout
        );
        assert_eq!(done[0][0], *id);
        let n: u64 = done[0][1].parse().unwrap();
        assert_eq!(n, u64::from(ROUNDS), "contender {id} hit its deadline");
        total_done += n;
        for f in tagged(&run.stdout, "INTERVAL ") {
            intervals.push((
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                f[0].to_string(),
            ));
        }
    }
    assert_eq!(intervals.len() as u64, total_done);

    // No lost update: every increment happened under an exclusive hold.
    let counter: u64 = store.setting("counter").unwrap().unwrap().parse().unwrap();
    assert_eq!(
        counter, total_done,
        "lost updates: the slot was held twice at once"
    );

    // No two holds overlap in wall-clock time.
    intervals.sort();
    for pair in intervals.windows(2) {
        let (prev, next) = (&pair[0], &pair[1]);
        assert!(
            next.0 >= prev.1,
            "hold of {} [{}, {}] overlaps hold of {} [{}, {}]",
            prev.2,
            prev.0,
            prev.1,
            next.2,
            next.0,
            next.1
        );
    }
    // The contenders really interleaved (otherwise the test proves little).
    let switches = intervals.windows(2).filter(|p| p[0].2 != p[1].2).count();
    assert!(switches >= 2, "the contenders never interleaved");
    // The slot ends free.
    assert_eq!(store.slot(wall_ms()).unwrap(), None);
}

/// A child: takes the slot with a short ttl, prints it, waits for the parent's signal file (long
/// past its expiry) and then tries to write. It must be fenced; a successful write panics, which
/// makes the child exit non-zero.
#[test]
fn pause_holder_child() {
    let Some(db) = std::env::var_os(PAUSE_DB) else {
        return;
    };
    let signal = PathBuf::from(env(PAUSE_SIGNAL));
    let store = Store::open(Path::new(&db)).unwrap();
    let lease = store
        .acquire_slot("paused-child", "test", None, wall_ms(), PAUSE_TTL_MS)
        .unwrap()
        .expect("the slot is free");
    println!("ACQUIRED {} {}", lease.token, lease.expires_at_ms);

    let deadline = Instant::now() + CHILD_DEADLINE;
    while !signal.exists() {
        assert!(Instant::now() < deadline, "no signal from the parent");
        sleep(Duration::from_millis(5));
    }

    match store.put_setting_fenced(&lease, "paused-write", "written", wall_ms()) {
        Err(e) if e.is_fenced() => println!("FENCED {e}"),
        other => panic!("a stale holder was allowed to write: {other:?}"),
    }
    let renewal = store.renew_slot(&lease, wall_ms(), PAUSE_TTL_MS);
    assert!(
        renewal.as_ref().is_err_and(|e| e.is_fenced()),
        "{renewal:?}"
    );
    assert!(
        !store.release_slot(&lease).unwrap(),
        "the slot is no longer ours"
    );
    println!("RENEW-AND-RELEASE-REFUSED");
}

#[test]
fn stale_holder_after_pause_is_rejected_across_processes() {
    let (dir, store) = fresh_store();
    let signal = dir.path().join("go");
    let child = spawn_child(
        dir.path(),
        "paused",
        "pause_holder_child",
        &[
            (PAUSE_DB, db_path(&dir).display().to_string()),
            (PAUSE_SIGNAL, signal.display().to_string()),
        ],
    );

    // Wait until the child holds the slot.
    let deadline = Instant::now() + CHILD_DEADLINE;
    let (child_token, child_expires_ms): (i64, i64) = loop {
        let out = std::fs::read_to_string(&child.stdout).unwrap_or_default();
        if let Some(f) = tagged(&out, "ACQUIRED ").first() {
            break (f[0].parse().unwrap(), f[1].parse().unwrap());
        }
        assert!(
            Instant::now() < deadline,
            "the child never acquired the slot"
        );
        sleep(Duration::from_millis(5));
    };
    assert_eq!(
        store
            .acquire_slot("parent", "test", None, wall_ms(), 60_000)
            .unwrap(),
        None,
        "the child's lease is live"
    );

    // The child "pauses" past its expiry; the parent takes over.
    while wall_ms() <= child_expires_ms + 20 {
        sleep(Duration::from_millis(10));
    }
    let lease = store
        .acquire_slot("parent", "test", None, wall_ms(), 60_000)
        .unwrap()
        .expect("the child's lease expired");
    assert!(lease.token > child_token);

    // Wake the child: its write must be refused.
    File::create(&signal).unwrap();
    let run = wait_child(child);
    assert!(
        run.status.success(),
        "the stale child was not fenced: {}\nstdout:\n{}\nstderr:\n{}",
        run.status,
        run.stdout,
        run.stderr
    );
    assert!(run.stdout.contains("FENCED "), "{}", run.stdout);
    assert!(
        run.stdout.contains("RENEW-AND-RELEASE-REFUSED"),
        "{}",
        run.stdout
    );
    assert_eq!(
        store.setting("paused-write").unwrap(),
        None,
        "nothing was written"
    );
    let holder = store
        .slot(wall_ms())
        .unwrap()
        .expect("the parent holds the slot");
    assert_eq!(holder.token, lease.token);
    assert!(store.release_slot(&lease).unwrap());
}
