//! The `/ui` dashboard in a real browser: headless Chromium (Debian's `chromium`, driven over the
//! DevTools protocol on a pipe) against a real `ballast demo`. Every page is opened and checked
//! against the API's data, the proposal is applied and the resulting reassignment cancelled by
//! clicking the buttons, the message tail runs over server-sent events, and every page is kept as
//! a screenshot in `target/ui-screenshots/`.
//!
//! Skips (passing, with a message) only when no Chromium is installed; `scripts/test` installs it.

pub(crate) mod cdp;
mod login;
mod reviewer;

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::{free_port, wait_for};
use cdp::Browser;

/// The demo, stopped (with its workers, which follow their supervisor) when the test ends.
struct Demo {
    child: Child,
    port: u16,
    _tmp: tempfile::TempDir,
}

impl Demo {
    fn start() -> Demo {
        Demo::start_with::<&str, &str>(free_port(), &[])
    }

    /// The demo on `port` with more settings (`extra`, e.g. the login providers).
    fn start_with<K: AsRef<OsStr>, V: AsRef<OsStr>>(port: u16, extra: &[(K, V)]) -> Demo {
        let tmp = tempfile::tempdir().expect("tmp");
        let child = crate::support::ballast()
            .args(["demo", "--port", &port.to_string()])
            // Proposals within seconds; small moves at 1 MB/s, so a reassignment is still
            // running when the test cancels it.
            .env("BALLAST_WARMUP", "0s")
            .env("BALLAST_SAMPLE_INTERVAL", "1s")
            .env("BALLAST_PROPOSAL_MAX_PARTITIONS", "4")
            .env("BALLAST_THROTTLE_RATE_MB", "1")
            .env("BALLAST_EXECUTOR_INTERVAL", "300ms")
            .env("TMPDIR", tmp.path())
            .envs(extra.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start demo");
        Demo {
            child,
            port,
            _tmp: tmp,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// The API's `data`, when it answers with success.
    fn api(&self, path: &str) -> Option<Value> {
        let body: Value = reqwest::blocking::get(self.url(path)).ok()?.json().ok()?;
        (body["success"] == true).then(|| body["data"].clone())
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        crate::support::terminate(&mut self.child, Duration::from_secs(10));
    }
}

/// `target/ui-screenshots/` next to the test binary's `target/<profile>/deps/`.
fn screenshot_dir() -> PathBuf {
    let dir = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.parent()?.to_path_buf()))
        .unwrap_or_else(std::env::temp_dir)
        .join("ui-screenshots");
    std::fs::create_dir_all(&dir).expect("screenshot dir");
    dir
}

/// Opens `path`, checks the page's heading and that the page says `expect` (each a piece of the
/// API's data), keeps a screenshot named `name`.
fn visit(b: &mut Browser, demo: &Demo, path: &str, heading: &str, expect: &[&str], name: &str) {
    b.goto(&demo.url(path));
    let h1 = b.text_of("h1");
    assert!(
        h1.contains(heading),
        "{path}: heading {h1:?}, expected {heading:?}"
    );
    let text = b.text();
    for e in expect {
        assert!(text.contains(e), "{path} should show {e:?}:\n{text}");
    }
    // Every visible form control has a label.
    let unlabelled = b.eval(
        "Array.from(document.querySelectorAll('input:not([type=hidden]), select, textarea'))\
         .filter(el => el.labels.length === 0 && !el.getAttribute('aria-label')).map(el => el.name)",
    );
    assert_eq!(
        unlabelled,
        serde_json::json!([]),
        "{path}: controls without a label"
    );
    b.screenshot(&screenshot_dir().join(format!("{name}.png")));
}

#[test]
fn the_dashboard_in_chromium_shows_the_demo_cluster_and_applies_and_cancels_a_proposal() {
    let Some(chromium) = cdp::find_chromium() else {
        eprintln!(
            "SKIPPED browser test: no chromium on PATH (Debian: apt-get install chromium; scripts/test installs it), or set BALLAST_CHROMIUM"
        );
        return;
    };
    let demo = Demo::start();
    wait_for(Duration::from_secs(60), "the demo's observer", || {
        demo.api("/api/v1/cluster/health")
    });
    let cluster = demo.api("/api/v1/cluster").expect("cluster");
    let cluster_id = cluster["clusterId"]
        .as_str()
        .expect("cluster id")
        .to_string();
    let mut b = Browser::start(&chromium);
    b.color_scheme("dark");
    // Live refreshes within a second instead of 3-15 s.
    b.fast_timers(700);

    // The overview: the cluster as the API reports it, every broker's loads as bars.
    visit(
        &mut b,
        &demo,
        "/ui",
        "Overview",
        &[&cluster_id, "Health", "broker 6"],
        "01-overview",
    );
    // Keyboard: the first Tab reaches the skip link, which leads to the page's content.
    b.press_tab();
    assert_eq!(
        b.eval("document.activeElement.className"),
        serde_json::json!("skip")
    );
    // Keyboard focus inside a live part survives the refresh: the part is kept as it is.
    b.focus("#ov-ops a");
    b.wait_for(
        "document.getElementById('live-status').textContent.includes('paused')",
        Duration::from_secs(10),
    );
    assert_eq!(
        b.eval(
            "document.activeElement.closest('#ov-ops') !== null && document.activeElement.tagName"
        ),
        serde_json::json!("A"),
        "the focused link of a live part keeps the focus"
    );
    let proposal = wait_for(Duration::from_secs(30), "an applicable proposal", || {
        let p = demo.api("/api/v1/proposals/current")?;
        (p["decision"]["applicationAllowed"] == true).then_some(p)
    });
    let id = proposal["id"].as_str().expect("proposal id").to_string();
    b.goto(&demo.url("/ui"));
    assert_eq!(
        b.count("table svg.bar"),
        6 * 7,
        "six brokers, seven loads each"
    );

    let search: Value = reqwest::blocking::Client::new()
        .post(demo.url("/api/v1/topics/search"))
        .json(&serde_json::json!({}))
        .send()
        .and_then(|r| r.json())
        .expect("topics");
    let names: Vec<String> = search["data"]["topics"]
        .as_array()
        .expect("topics")
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect();
    let topic = names.first().expect("a topic").clone();
    let groups = demo.api("/api/v1/consumer-groups").expect("groups");
    let group = groups["groups"][0]["groupId"]
        .as_str()
        .expect("a group")
        .to_string();

    visit(
        &mut b,
        &demo,
        "/ui/proposals",
        "Proposals",
        &[&id],
        "03-proposals",
    );
    visit(
        &mut b,
        &demo,
        &format!("/ui/proposals/{id}"),
        &format!("Proposal {id}"),
        &["Decision", "Moves by cost class", "Structural limits", &id],
        "03b-proposal-by-id",
    );
    visit(
        &mut b,
        &demo,
        "/ui/brokers",
        "Brokers",
        &["rack-0", "Enter maintenance", "Log directories"],
        "04-brokers",
    );
    visit(
        &mut b,
        &demo,
        "/ui/brokers/6",
        "Broker 6",
        &["broker 6: disk bytes"],
        "05-broker-6",
    );
    assert_eq!(b.count("svg.chart"), 7);
    visit(
        &mut b,
        &demo,
        "/ui/history",
        "Load history",
        &["leader count, every broker"],
        "06-history",
    );
    let names_ref: Vec<&str> = names.iter().map(String::as_str).collect();
    visit(
        &mut b,
        &demo,
        "/ui/topics",
        "Topics",
        &names_ref,
        "07-topics",
    );
    visit(
        &mut b,
        &demo,
        &format!("/ui/topics/{topic}"),
        &format!("Topic {topic}"),
        &["retention.ms", "12 partitions"],
        "08-topic",
    );
    visit(
        &mut b,
        &demo,
        &format!("/ui/topics/{topic}/messages?limit=10"),
        "Messages of",
        &["10 messages", "key-"],
        "09-messages",
    );
    visit(
        &mut b,
        &demo,
        "/ui/groups",
        "Consumer groups",
        &[&group],
        "11-groups",
    );
    visit(
        &mut b,
        &demo,
        &format!("/ui/groups/{group}"),
        &format!("Consumer group {group}"),
        &["Members", "Lag per partition", "Reset offsets"],
        "12-group",
    );
    // A consumer group of KIP-848 (the demo has one beside its classic groups): its type, its
    // epochs, each member's epoch and assigned and target partitions.
    visit(
        &mut b,
        &demo,
        "/ui/groups/billing-kip848",
        "Consumer group billing-kip848",
        &[
            "consumer (KIP-848)",
            "Epochs",
            "group 1, target assignment 1",
            "Target",
            "= assigned",
        ],
        "12b-group-kip848",
    );
    // Topic configuration, changed with the form on the topic page.
    b.goto(&demo.url(&format!("/ui/topics/{topic}")));
    b.fill("#cfg-name", "retention.ms");
    b.fill("#cfg-value", "7200000");
    b.click_and_wait("#cfg-save");
    let flash = b.text_of("#flash");
    assert!(
        flash.contains(&format!("Configuration of {topic} changed: retention.ms:"))
            && flash.contains("→ 7200000"),
        "{flash}"
    );
    let config = demo
        .api(&format!(
            "/api/v1/topics/{topic}/config?keyFilter=retention.ms"
        ))
        .expect("topic config");
    assert!(config.to_string().contains("7200000"), "{config}");
    b.screenshot(&screenshot_dir().join("08b-topic-config-changed.png"));

    // ACLs: a binding created with the form is listed, with a Delete button naming it.
    visit(
        &mut b,
        &demo,
        "/ui/acls",
        "ACLs",
        &["Create a binding"],
        "13-acls",
    );
    b.fill("#c-principal", "User:browser-ana");
    b.fill("#c-resourceName", "browser-orders");
    b.click_and_wait("#h-create ~ form button[type=submit]");
    let flash = b.text_of("#flash");
    assert!(flash.contains("Binding created"), "{flash}");
    let acls = demo
        .api("/api/v1/acls?principal=User:browser-ana")
        .expect("acls");
    assert_eq!(acls["count"], 1, "{acls}");
    let text = b.text();
    assert!(
        text.contains("User:browser-ana") && text.contains("browser-orders"),
        "{text}"
    );
    assert_eq!(
        b.count("button[aria-label^='Delete the binding: User:browser-ana Topic browser-orders']"),
        1
    );
    b.screenshot(&screenshot_dir().join("13b-acls-created.png"));

    // Quotas: set with the form, then listed as the API lists them.
    visit(
        &mut b,
        &demo,
        "/ui/quotas",
        "Quotas",
        &["Resolve", "Set quotas"],
        "14-quotas",
    );
    b.eval("document.querySelector('#q-kind').value = 'user'");
    b.fill("#q-user", "browser-ana");
    b.fill("#q-producer_byte_rate", "2048");
    b.click_and_wait("#q-set");
    let flash = b.text_of("#flash");
    assert!(
        flash.contains("Quotas of user=browser-ana set: producer_byte_rate = 2048"),
        "{flash}"
    );
    let quota = demo
        .api("/api/v1/quotas/user/browser-ana")
        .expect("the user's quotas");
    assert!(quota.to_string().contains("2048"), "{quota}");
    let text = b.text();
    assert!(
        text.contains("user=browser-ana") && text.contains("/api/v1/quotas/user/browser-ana"),
        "{text}"
    );
    b.goto(&demo.url("/ui/quotas?user=browser-ana&clientId=any"));
    let text = b.text();
    assert!(
        text.contains("Effective quotas") && text.contains("2048"),
        "{text}"
    );
    b.screenshot(&screenshot_dir().join("14b-quotas-set.png"));

    // One audit event: the configuration change, with its revert preview.
    let events = demo
        .api("/api/v1/audit-log?action=topics.config.update")
        .expect("audit events");
    let event = events["events"][0]["id"].as_i64().expect("an event id");
    visit(
        &mut b,
        &demo,
        &format!("/ui/audit/{event}"),
        &format!("Audit event {event}"),
        &[
            "topics.config.update",
            "What a revert would change",
            "7200000",
            "Revert this change",
        ],
        "23b-audit-event",
    );

    visit(
        &mut b,
        &demo,
        "/ui/healing",
        "Self-healing",
        &["dry run", "dry_run"],
        "15-healing",
    );
    visit(
        &mut b,
        &demo,
        "/ui/license",
        "License",
        &["trial", &cluster_id],
        "16-license",
    );
    visit(
        &mut b,
        &demo,
        "/ui/what-if",
        "What-if",
        &["Simulate"],
        "17-what-if",
    );
    b.fill("#count", "2");
    b.click_and_wait("#simulate");
    let text = b.text();
    assert!(text.contains("adds brokers 7 (rack"), "{text}");
    assert!(text.contains("Moves by cost class"), "{text}");
    b.screenshot(&screenshot_dir().join("18-what-if-result.png"));
    visit(
        &mut b,
        &demo,
        "/ui/blast-radius",
        "Blast radius",
        &["Analyze"],
        "19-blast-radius",
    );
    b.eval("document.querySelector('#rack').value = 'rack-0'");
    b.click_and_wait("#analyze");
    let text = b.text();
    assert!(text.contains("Brokers taking over leadership"), "{text}");
    assert!(text.contains("Brokers failing"), "{text}");
    b.screenshot(&screenshot_dir().join("20-blast-radius-result.png"));

    // Apply the proposal by clicking its button (the confirm dialog is accepted).
    visit(
        &mut b,
        &demo,
        "/ui/proposals/current",
        "Current proposal",
        &[
            "Application allowed",
            "Structural limits",
            "Moves by cost class",
        ],
        "02-proposal",
    );
    // A page whose proposal is replaced never swaps in the other proposal's Apply button: the
    // live part is named after its proposal; a refresh that lacks it says so and stops.
    // (Simulated by renaming the part as if the page showed an older proposal.)
    b.eval(
        "(() => { const s = document.querySelector('section[id^=p-decision-]'); s.id = 'p-decision-old'; \
          s.querySelector('form').setAttribute('action', '/ui/proposals/old/apply'); })()",
    );
    b.wait_for(
        "document.getElementById('stale-notice') !== null",
        Duration::from_secs(10),
    );
    assert!(b.text_of("#stale-notice").contains("A newer proposal than"));
    assert_eq!(
        b.eval("document.querySelector('#p-decision-old form').getAttribute('action')"),
        serde_json::json!("/ui/proposals/old/apply"),
        "the shown proposal's form is kept, never replaced by another proposal's"
    );
    b.goto(&demo.url("/ui/proposals/current"));
    // The demo re-plans every second: a proposal replaced between loading the page and the
    // click is refused (409, not current) and the page says so; review the new one and retry.
    // On a loaded machine a reading can come late, and the proposal is then refused while it is
    // confirming again (409, naming the readings): wait until it may be applied, then retry.
    let mut url = String::new();
    for _ in 0..5 {
        b.click_and_wait("#apply");
        url = b.url();
        if url.contains("/ui/reassignments/op-") {
            break;
        }
        let flash = b.text_of("#flash");
        assert!(
            flash.contains("409: proposal is not current") || flash.contains("confirming"),
            "{url}: {flash}"
        );
        wait_for(
            Duration::from_secs(60),
            "an applicable proposal again",
            || {
                let p = demo.api("/api/v1/proposals/current")?;
                (p["decision"]["applicationAllowed"] == true).then_some(())
            },
        );
        b.goto(&demo.url("/ui/proposals/current"));
    }
    assert!(
        url.contains("/ui/reassignments/op-"),
        "{url}: {}",
        b.text_of("#flash")
    );
    let op = url.rsplit('/').next().expect("operation id").to_string();
    let flash = b.text_of("#flash");
    assert!(flash.contains("Applied"), "{flash}");
    assert!(b.text().contains("Cancel reassignment"));
    b.screenshot(&screenshot_dir().join("21-applied.png"));
    visit(
        &mut b,
        &demo,
        "/ui/reassignments",
        "Reassignments",
        &[&op, "Replication throttle"],
        "22-reassignments",
    );
    visit(
        &mut b,
        &demo,
        "/ui/audit",
        "Audit log",
        &["reassignments.apply"],
        "23-audit",
    );

    // Cancel it while it runs. The running operation's page refreshes itself (progress, rate).
    b.goto(&demo.url(&format!("/ui/reassignments/{op}")));
    b.wait_for(
        "document.getElementById('live-status').textContent.includes('updated')",
        Duration::from_secs(10),
    );
    // A keyboard user on the Cancel button keeps the focus through the refreshes.
    b.focus("#cancel");
    b.wait_for(
        "document.getElementById('live-status').textContent.includes('paused')",
        Duration::from_secs(10),
    );
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(
        b.eval("document.activeElement.id"),
        serde_json::json!("cancel"),
        "focus stays on Cancel across live refreshes"
    );
    b.click_and_wait("#cancel");
    let flash = b.text_of("#flash");
    assert!(flash.contains("Cancel of"), "{flash}");
    wait_for(Duration::from_secs(20), "the operation cancelled", || {
        let r = demo.api(&format!("/api/v1/reassignments/{op}"))?;
        (r["state"] == "Cancelled").then_some(())
    });
    b.goto(&demo.url(&format!("/ui/reassignments/{op}")));
    let state = b.text();
    assert!(state.contains("Cancelled"), "{state}");
    assert_eq!(
        b.count("#cancel"),
        0,
        "no cancel button on a finished operation"
    );
    b.screenshot(&screenshot_dir().join("24-cancelled.png"));

    // The API documentation pages render the description (from the binary's own assets).
    b.goto(&demo.url("/docs/swagger/"));
    b.wait_for(
        "document.querySelectorAll('.opblock').length > 50 && document.body.innerText.includes('/api/v1/proposals/current')",
        Duration::from_secs(20),
    );
    b.screenshot(&screenshot_dir().join("26-swagger.png"));
    b.goto(&demo.url("/docs/redoc/"));
    b.wait_for(
        "document.body.innerText.includes('This API description (OpenAPI 3.1, JSON)') && document.querySelectorAll('[data-section-id]').length > 50",
        Duration::from_secs(20),
    );
    b.screenshot(&screenshot_dir().join("27-redoc.png"));

    // The same page in the light scheme, and the overview once more with live data.
    b.color_scheme("light");
    b.goto(&demo.url("/ui"));
    b.screenshot(&screenshot_dir().join("25-overview-light.png"));

    // The live tail: server-sent events from the API, rows added by the script.
    b.color_scheme("dark");
    b.goto(&demo.url(&format!("/ui/topics/{topic}/messages?limit=3")));
    b.click("#tail-start");
    b.wait_for(
        "document.querySelectorAll('#tail-rows tr').length >= 3",
        Duration::from_secs(15),
    );
    b.click("#tail-stop");
    b.screenshot(&screenshot_dir().join("10-live-tail.png"));

    assert!(
        b.errors.is_empty(),
        "the pages raised errors in the browser: {:#?}",
        b.errors
    );
}

#[test]
fn the_chat_panel_streams_an_answer_shows_tool_cards_and_approves_a_change_in_chromium() {
    use crate::chat::{openai_text, openai_tool_call, ScriptedProvider};
    use serde_json::json;
    let Some(chromium) = cdp::find_chromium() else {
        eprintln!("SKIPPED browser chat test: no chromium on PATH");
        return;
    };
    let provider = ScriptedProvider::start();
    let base = format!("{}/v1", provider.base);
    let demo = Demo::start_with(
        free_port(),
        &[
            ("BALLAST_CHAT_ENABLED", "true"),
            ("BALLAST_CHAT_PROVIDER", "openai"),
            ("BALLAST_CHAT_BASE_URL", base.as_str()),
            ("BALLAST_CHAT_MODEL", "test-model"),
        ],
    );
    wait_for(Duration::from_secs(60), "the demo's observer", || {
        demo.api("/api/v1/cluster/health")
    });
    let topic = demo
        .api("/api/v1/cluster/comprehensive?summary=true")
        .and_then(|c| c["topics"][0]["name"].as_str().map(str::to_string))
        .expect("a topic");
    provider.then(openai_tool_call(
        "call_health",
        "get_cluster_health",
        &json!({}),
    ));
    provider.then(openai_text("The cluster is healthy."));
    provider.then(openai_tool_call(
        "call_retention",
        "update_topic_config",
        &json!({"topic": topic, "configs": {"retention.ms": 7_200_000}}),
    ));
    provider.then(openai_text("Done: retention is two hours."));

    let mut b = Browser::start(&chromium);
    b.goto(&demo.url("/ui/brokers"));
    b.click("#chat-toggle");
    b.wait_for(
        "!document.getElementById('chat-panel').hidden",
        Duration::from_secs(5),
    );
    b.fill("#chat-input", "How is the cluster?");
    b.click("#chat-send");
    b.wait_for(
        "document.getElementById('chat-log').textContent.includes('The cluster is healthy.')",
        Duration::from_secs(30),
    );
    assert_eq!(
        b.count("#chat-log details.chat-tool.ok"),
        1,
        "a finished tool card"
    );
    assert!(b
        .text_of("#chat-log details.chat-tool summary")
        .contains("get_cluster_health"));

    b.fill(
        "#chat-input",
        &format!("Set the retention of {topic} to two hours"),
    );
    b.click("#chat-send");
    b.wait_for(
        "!!document.querySelector('#chat-log button[data-approve]')",
        Duration::from_secs(30),
    );
    assert!(b.text_of("#chat-log").contains("retention.ms"));
    b.screenshot(&screenshot_dir().join("30-chat-approval.png"));
    b.click("#chat-log button[data-approve]");
    b.wait_for(
        "document.getElementById('chat-log').textContent.includes('Done: retention is two hours.')",
        Duration::from_secs(60),
    );
    b.screenshot(&screenshot_dir().join("31-chat-done.png"));
    assert_eq!(b.count("#chat-log details.chat-tool.ok"), 2);
    let audit = demo
        .api("/api/v1/audit-log?action=topics.config.update")
        .expect("audit");
    let event = &audit["events"][0];
    assert_eq!(event["method"], "CHAT", "{audit}");
    assert_eq!(event["target"], topic.as_str());

    // the panel follows the operator to another page with the conversation
    b.goto(&demo.url("/ui/topics"));
    b.click("#chat-toggle");
    b.wait_for(
        "document.getElementById('chat-log').textContent.includes('Done: retention is two hours.')",
        Duration::from_secs(10),
    );
}

/// Issue 42: the topic lifecycle forms, each previewed before it changes anything, on the
/// demo's simulated cluster: create a topic (topics page), add partitions, change the
/// replication factor, delete it (topic page). The cluster is read through the API after each.
#[test]
fn the_topic_forms_preview_then_create_grow_re_replicate_and_delete_a_topic_in_chromium() {
    let Some(chromium) = cdp::find_chromium() else {
        eprintln!(
            "SKIPPED browser test: no chromium on PATH (Debian: apt-get install chromium; scripts/test installs it), or set BALLAST_CHROMIUM"
        );
        return;
    };
    let demo = Demo::start_with(free_port(), &[("BALLAST_THROTTLE_RATE_MB", "100")]);
    wait_for(Duration::from_secs(60), "the demo's trial", || {
        let l = demo.api("/api/v1/license")?;
        (l["state"] == "trial").then_some(())
    });
    let partitions = |demo: &Demo| -> Option<usize> {
        demo.api("/api/v1/topics/browser-made/watermarks")
            .and_then(|w| w["partitions"].as_array().map(Vec::len))
    };
    let mut b = Browser::start(&chromium);
    b.goto(&demo.url("/ui/topics"));
    b.fill("#new-name", "browser-made");
    b.fill("#new-partitions", "6");
    b.fill("#new-rf", "3");
    b.fill("#new-configs", "retention.ms=7200000");
    b.click_and_wait("#create-preview");
    let text = b.text();
    assert!(
        text.contains("Placement") && text.contains("Leaders and replicas per broker"),
        "{text}"
    );
    assert!(text.contains("nothing was created yet"), "{text}");
    assert_eq!(partitions(&demo), None, "a preview creates nothing");
    b.screenshot(&screenshot_dir().join("30-topic-create-preview.png"));
    b.click_and_wait("#change-confirm");
    assert!(b.url().ends_with("/ui/topics/browser-made"), "{}", b.url());
    assert_eq!(partitions(&demo), Some(6));

    b.fill("#add-count", "9");
    b.click_and_wait("#add-preview");
    assert!(b.text().contains("Cannot be undone"), "{}", b.text());
    b.click_and_wait("#change-confirm");
    assert_eq!(partitions(&demo), Some(9));

    // The preview plans on the latest reading: once it shows the nine partitions.
    wait_for(
        Duration::from_secs(30),
        "a reading of the nine partitions",
        || {
            let p = demo.api("/api/v1/partitions?topic=browser-made")?;
            (p["partitions"].as_array()?.len() == 9).then_some(())
        },
    );
    b.goto(&demo.url("/ui/topics/browser-made"));
    b.fill("#rf-value", "2");
    b.click_and_wait("#rf-preview");
    let text = b.text();
    assert!(text.contains("Moves (throttled reassignments"), "{text}");
    b.screenshot(&screenshot_dir().join("31-topic-rf-preview.png"));
    b.click_and_wait("#change-confirm");
    let url = b.url();
    let op = url.rsplit('/').next().expect("operation page").to_string();
    assert!(op.starts_with("op-"), "{url}");
    wait_for(
        Duration::from_secs(60),
        "the replication-factor change",
        || {
            let r = demo.api(&format!("/api/v1/reassignments/{op}"))?;
            (r["state"] == "Completed").then_some(())
        },
    );

    b.goto(&demo.url("/ui/topics/browser-made"));
    b.click_and_wait("#delete-preview");
    let text = b.text();
    assert!(text.contains("Disk freed (every replica)"), "{text}");
    b.screenshot(&screenshot_dir().join("32-topic-delete-preview.png"));
    b.click_and_wait("#change-confirm");
    assert!(b.url().ends_with("/ui/topics"), "{}", b.url());
    assert_eq!(partitions(&demo), None, "deleted");
}
