//! The `/ui` dashboard against a simulated cluster: the real observer reads it and evaluates
//! proposals into a temporary store, the web router serves the pages. Every page renders the
//! real data; forms go through the API (license, 409s, audit) and come back as a flash message;
//! bad input gives a page that says what is wrong.

use std::sync::Arc;
use std::time::Duration;

use ballast_config::{Config, RawConfig};
use ballast_kafka::{Client, ClientConfig};
use ballast_model::TopicPartition;
use ballast_observer::proposals::{evaluate, Settings};
use ballast_schema::Store;
use ballast_simcluster::{GenerateParams, Scenario, SimCluster, SimConfig, Skew};
use reqwest::header::{HeaderMap, CONTENT_TYPE, COOKIE, LOCATION, SET_COOKIE};

struct Bed {
    _sim: SimCluster,
    /// A client of the simulated cluster (to set up what a test needs, e.g. an empty group).
    client: Client,
    store: Store,
    base: String,
    http: reqwest::Client,
    /// The current proposal's id.
    proposal: String,
    _dir: tempfile::TempDir,
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Four brokers in two racks, the newest empty; observed five times and evaluated after each,
/// so the current proposal (moves onto broker 4) can be applied. `licensed`: the web process
/// has a license.
async fn bed(licensed: bool) -> Bed {
    bed_after(licensed, 5).await
}

/// [`bed`] observed and evaluated `readings` times.
async fn bed_after(licensed: bool, readings: i64) -> Bed {
    let sim = SimCluster::start(SimConfig {
        scenario: Scenario::Generate(GenerateParams {
            brokers: 4,
            racks: 2,
            topics: 3,
            partitions_per_topic: 6,
            replication_factor: 2,
            seed: 3,
            skew: Skew::NewBroker,
            mean_partition_bytes: 20e6,
            mean_msg_rate: 50.0,
            msg_bytes: 200.0,
            ..GenerateParams::default()
        }),
        base_port: 0,
        tick: Duration::from_millis(20),
        ..SimConfig::default()
    })
    .await
    .expect("simulated cluster");
    let client = Client::connect(
        ClientConfig::plaintext(&sim.bootstrap()).with_request_timeout(Duration::from_secs(5)),
    )
    .await
    .expect("connect");
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("ballast.db");
    Store::migrate(&db).expect("migrate");
    let store = Store::open(&db).expect("open");
    let raw = RawConfig::from_pairs(
        [
            ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", sim.bootstrap().as_str()),
            ("BALLAST_DATA_DIR", dir.path().to_str().expect("utf-8")),
            ("BALLAST_KAFKA_REQUEST_TIMEOUT", "5s"),
            ("BALLAST_WARMUP", "0s"),
            // The ticks below are a second apart: two measure the rates.
            ("BALLAST_SAMPLE_INTERVAL", "1s"),
            // Every tick below stores partition readings (the topic page's history charts).
            ("BALLAST_PARTITION_READINGS_INTERVAL", "1s"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string())),
        None,
    )
    .expect("raw config");
    let config = Arc::new(Config::from_raw(&raw).expect("config"));
    let settings = Settings::from_config(&config, 0);
    let mut history = None;
    let t0 = now() - 5_000;
    let mut proposal = String::new();
    for i in 0..readings {
        let at = t0 + i * 1_000;
        ballast_observer::tick(
            &client,
            &store,
            &mut history,
            ballast_observer::windows(&config.timing),
            at,
        )
        .await
        .expect("observe");
        let e = evaluate(&store, &settings, at)
            .expect("evaluate")
            .expect("a proposal");
        proposal = e.saved.id().to_string();
    }
    store
        .record_observation(&ballast_schema::Observation {
            kind: "brokers".into(),
            observed_at_ms: t0 + (readings - 1) * 1_000,
            ok: true,
            error: None,
            detail: serde_json::json!({}),
        })
        .expect("observation");
    let mut state = ballast_web::AppState::new(
        store.clone(),
        config,
        Arc::new(ballast_runtime::SystemClock),
    );
    if licensed {
        state.set_license(
            ballast_web::license::LicenseRuntime::licensed_for_tests(&store, now())
                .expect("license"),
        );
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    tokio::spawn(async move {
        let _ = axum::serve(listener, ballast_web::router(state)).await;
    });
    Bed {
        _sim: sim,
        client,
        store,
        base: format!("http://{addr}"),
        http: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client"),
        proposal,
        _dir: dir,
    }
}

/// A response as the tests look at it.
struct Page {
    status: u16,
    headers: HeaderMap,
    body: String,
}

impl Page {
    fn has(&self, text: &str) -> &Page {
        assert!(
            self.body.contains(text),
            "the page should contain {text:?}:\n{}",
            self.body
        );
        self
    }

    fn lacks(&self, text: &str) -> &Page {
        assert!(
            !self.body.contains(text),
            "the page should not contain {text:?}:\n{}",
            self.body
        );
        self
    }

    /// Where a form's redirect goes, and the flash cookie it sets.
    fn redirect(&self) -> (String, String) {
        assert_eq!(self.status, 303, "{}", self.body);
        let location = self.headers[LOCATION]
            .to_str()
            .expect("location")
            .to_string();
        let cookie = self
            .headers
            .get(SET_COOKIE)
            .and_then(|c| c.to_str().ok())
            .and_then(|c| c.split(';').next())
            .expect("a flash cookie")
            .to_string();
        (location, cookie)
    }
}

impl Bed {
    async fn get_with(&self, path: &str, cookie: Option<&str>) -> Page {
        let mut req = self.http.get(format!("{}{path}", self.base));
        if let Some(c) = cookie {
            req = req.header(COOKIE, c);
        }
        let r = req.send().await.expect("request");
        Page {
            status: r.status().as_u16(),
            headers: r.headers().clone(),
            body: r.text().await.expect("body"),
        }
    }

    async fn get(&self, path: &str) -> Page {
        self.get_with(path, None).await
    }

    /// A page expected to be 200 HTML.
    async fn page(&self, path: &str) -> Page {
        let p = self.get(path).await;
        assert_eq!(p.status, 200, "GET {path}:\n{}", p.body);
        assert_eq!(
            p.headers[CONTENT_TYPE], "text/html; charset=utf-8",
            "GET {path}"
        );
        assert!(p.body.starts_with("<!doctype html>"), "GET {path}");
        p
    }

    async fn post(&self, path: &str, form: &[(&str, &str)], headers: &[(&str, &str)]) -> Page {
        let mut req = self.http.post(format!("{}{path}", self.base)).form(form);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        // A form is posted from the dashboard's own page, and the browser says so (a test of a
        // cross-site post sends its own Origin or Sec-Fetch-Site).
        let named = |n: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(n));
        if !named("origin") && !named("sec-fetch-site") {
            req = req.header("sec-fetch-site", "same-origin");
        }
        let r = req.send().await.expect("request");
        Page {
            status: r.status().as_u16(),
            headers: r.headers().clone(),
            body: r.text().await.expect("body"),
        }
    }

    /// Posts a form and follows its redirect with the flash cookie: the page it lands on.
    async fn submit(&self, path: &str, form: &[(&str, &str)]) -> (String, Page) {
        let (to, cookie) = self.post(path, form, &[]).await.redirect();
        let page = self.get_with(&to, Some(&cookie)).await;
        (to, page)
    }
}

#[tokio::test]
async fn every_page_renders_the_observed_cluster() {
    let b = bed(true).await;
    let view = b.store.observed_view().unwrap().expect("a view");
    let topics: Vec<String> = view.topics.iter().map(|t| t.name.clone()).collect();
    assert_eq!(topics.len(), 3);
    let cluster_id = view.cluster.facts.cluster_id.clone().expect("cluster id");

    let overview = b.page("/ui").await;
    overview
        .has(&cluster_id)
        .has("Imbalanced: a proposal is ready")
        .has(&b.proposal)
        .has(r#"href="/ui/brokers/4""#)
        .has(r#"<svg class="bar""#)
        .has(r#"data-refresh="10""#);

    let proposal = b.page("/ui/proposals/current").await;
    proposal
        .has(&format!("Current proposal {}", b.proposal))
        .has(&format!(r#"action="/ui/proposals/{}/apply""#, b.proposal))
        .has("Application allowed")
        .has("Structural limits")
        .has("Moves by cost class")
        .has("inter-broker");
    // Moves go onto the empty broker 4.
    assert!(proposal.body.contains(", 4]") || proposal.body.contains("[4,"));
    // Each move says why; the list can be sorted and filtered (the API's moves page).
    proposal
        .has("<th scope=\"col\">Why</th>")
        .has("id=\"moves-sort\"");
    b.page("/ui/proposals/current?sort=bytes&brokerId=4")
        .await
        .has("matching moves")
        .has("<option value=\"bytes\" selected>");
    b.page("/ui/proposals/current?topic=no-such-topic")
        .await
        .has("No move matches.");
    b.page("/ui/proposals/current?brokerId=four")
        .await
        .has("Broker involved: &#34;four&#34; is not a broker id");
    b.page(&format!("/ui/proposals/{}", b.proposal))
        .await
        .has(&format!("Proposal {}", b.proposal));
    b.page("/ui/proposals").await.has(&b.proposal);

    let brokers = b.page("/ui/brokers").await;
    for broker in &view.brokers {
        let host = broker.host.clone().unwrap_or_default();
        brokers.has(&format!("{host}:{}", broker.port.unwrap_or_default()));
    }
    brokers
        .has("Enter maintenance")
        .has("rack-0")
        .has("Log directories");
    b.page("/ui/brokers/1")
        .await
        .has("broker 1: leader count")
        .has(r#"<svg class="chart""#)
        .has(r#"class="dot s0""#);
    b.page("/ui/history?range=6h&load=diskBytes")
        .await
        .has("disk bytes, every broker")
        .has("broker 4")
        .lacks("leader count, every broker");

    let list = b.page("/ui/topics").await;
    for t in &topics {
        list.has(&format!(r#"href="/ui/topics/{t}""#));
    }
    let topic = &topics[0];
    b.page(&format!("/ui/topics/{topic}"))
        .await
        .has("retention.ms")
        .has("6 partitions")
        .has("Browse messages")
        .has("History (7 days)")
        .has(r#"aria-label="Size""#)
        .has(r#"aria-label="Produced""#)
        .has(r#"class="dot s0""#)
        .lacks("no readings in this range");
    b.page(&format!("/ui/topics/{topic}/messages?limit=5&partition=0"))
        .await
        .has("5 messages")
        .has("key-")
        .has(&format!("/api/v1/topics/{topic}/messages/tail?partition=0"));
    b.page(&format!(
        "/ui/topics/{topic}/messages?keyFilter=no-such-key"
    ))
    .await
    .has("No message in this range matches.");

    let groups = b.page("/ui/groups").await;
    let group = &view
        .groups
        .first()
        .expect("the simulator has groups")
        .group_id;
    groups.has(&format!(r#"href="/ui/groups/{group}""#));
    b.page(&format!("/ui/groups/{group}"))
        .await
        .has("Lag per partition")
        .has("Reset offsets")
        .has("client-0");

    b.page("/ui/acls").await.has("Create a binding");
    b.page("/ui/quotas?user=alice")
        .await
        .has("Effective quotas")
        .has("producer_byte_rate");
    b.page("/ui/reassignments")
        .await
        .has("No reassignment has run yet.")
        .has("Set throttle");
    b.page("/ui/audit").await.has("No event matches.");
    b.page("/ui/healing")
        .await
        .has("Why a healing pass skips")
        .has("dry_run");
    b.page("/ui/license")
        .await
        .has("licensed")
        .has("management: every feature is on");
    b.page("/ui/notices")
        .await
        .has("Third-party notices")
        .has("tokio")
        .has("Apache License 2.0")
        .has("generated by cargo-about");
    b.page("/ui")
        .await
        .has(r#"<a href="/ui/notices">third-party notices</a>"#);

    b.page("/ui/what-if").await.has("Simulate");
    let what_if = b
        .post(
            "/ui/what-if",
            &[("type", "addBrokers"), ("count", "1")],
            &[],
        )
        .await;
    assert_eq!(what_if.status, 200, "{}", what_if.body);
    what_if
        .has("addBrokers: adds broker 5")
        .has("Moves by cost class")
        .has("added");
    let blast = b.post("/ui/blast-radius", &[("brokerId", "1")], &[]).await;
    assert_eq!(blast.status, 200, "{}", blast.body);
    blast
        .has("Partitions affected")
        .has("Brokers taking over leadership");
}

#[tokio::test]
async fn apply_and_cancel_from_the_dashboard_go_through_the_api_and_its_audit() {
    let b = bed(true).await;
    let apply = format!("/ui/proposals/{}/apply", b.proposal);
    let (to, cookie) = b
        .post(
            &apply,
            &[("from", "current")],
            &[("x-ballast-user", "ops-ana")],
        )
        .await
        .redirect();
    assert!(to.starts_with("/ui/reassignments/op-"), "{to}");
    let op = to.trim_start_matches("/ui/reassignments/").to_string();
    let page = b.get_with(&to, Some(&cookie)).await;
    assert_eq!(page.status, 200);
    page.has(&format!("Applied {}", b.proposal))
        .has(&op)
        .has("Cancel reassignment")
        .has("Pending");
    // The flash is shown once: the page clears it.
    assert!(page.headers[SET_COOKIE]
        .to_str()
        .unwrap()
        .contains("Max-Age=0"));
    b.page(&to).await.lacks("Applied ");

    // A second apply is refused while the operation is unfinished: the 409 in plain words.
    let (back, page) = b.submit(&apply, &[("from", "current")]).await;
    assert_eq!(back, "/ui/proposals/current");
    page.has("409").has("Refused by a safety check");

    let (_, page) = b.submit(&format!("{to}/cancel"), &[]).await;
    page.has("Cancel of").has("Cancel requested");
    let record = b.store.operation(&op).unwrap().expect("operation");
    assert!(record.cancel_requested);

    let audit = b.page("/ui/audit?action=reassignments.apply").await;
    audit.has("reassignments.apply").has("ops-ana");
}

#[tokio::test]
async fn without_a_license_management_forms_say_so_and_change_nothing() {
    let b = bed(false).await;
    b.page("/ui/license")
        .await
        .has("monitoring: management actions answer 403");
    // Apply is shown disabled, with the reason, instead of a button that can only fail.
    let proposal = b.page("/ui/proposals/current").await;
    proposal
        .has(r#"id="apply" disabled aria-describedby="apply-needs-license""#)
        .has("Applying needs a license; the license state is <strong>invalid</strong>")
        .lacks(&format!(r#"action="/ui/proposals/{}/apply""#, b.proposal));
    let (back, page) = b
        .submit(
            &format!("/ui/proposals/{}/apply", b.proposal),
            &[("from", "current"), ("force", "true")],
        )
        .await;
    assert_eq!(back, "/ui/proposals/current");
    page.has("403 LICENSE_INVALID").has("needs a valid license");
    assert_eq!(b.store.operations(None, 10, 0).unwrap().total, 0);
    let (_, page) = b
        .submit(
            "/ui/brokers/2/maintenance",
            &[("action", "enter"), ("drain", "true")],
        )
        .await;
    page.has("403 LICENSE_INVALID");
    assert!(b.store.maintenance().unwrap().is_empty());
    let (_, page) = b
        .submit("/ui/reassignments/throttle", &[("rateMb", "80")])
        .await;
    page.has("403 LICENSE_INVALID");
}

#[tokio::test]
async fn bad_input_gives_a_page_that_says_what_is_wrong() {
    let b = bed(true).await;
    let cases: [(&str, u16, &str); 9] = [
        ("/ui/topics?match=bogus", 400, "unknown match"),
        ("/ui/topics?offset=-1", 400, "offset must be a whole number"),
        ("/ui/topics/no-such-topic", 404, "topic not found"),
        ("/ui/brokers/99", 404, "broker"),
        ("/ui/audit/abc", 400, "not an event number"),
        ("/ui/audit/12345", 404, "audit event not found"),
        ("/ui/reassignments?state=Nope", 400, "unknown state"),
        ("/ui/reassignments/op-nope", 404, "reassignment not found"),
        ("/ui/no/such/page", 404, "no such page"),
    ];
    for (path, status, text) in cases {
        let p = b.get(path).await;
        assert_eq!(p.status, status, "GET {path}:\n{}", p.body);
        assert_eq!(
            p.headers[CONTENT_TYPE], "text/html; charset=utf-8",
            "{path}"
        );
        p.has(text);
    }
    let view = b.store.observed_view().unwrap().expect("view");
    let topic = &view.topics[0].name;
    let p = b
        .get(&format!("/ui/topics/{topic}/messages?partition=x"))
        .await;
    assert_eq!(p.status, 400);
    p.has("invalid query").has("Browse");
    let p = b
        .get(&format!("/ui/topics/{topic}/messages?timestamp=yesterday"))
        .await;
    assert_eq!(p.status, 400);
    p.has("neither milliseconds");

    let p = b.post("/ui/what-if", &[("scenarios", "[")], &[]).await;
    assert_eq!(p.status, 400);
    p.has("does not parse");
    let p = b
        .post(
            "/ui/what-if",
            &[
                ("type", "changeReplicationFactor"),
                ("topic", "ordres"),
                ("replicationFactor", "3"),
            ],
            &[],
        )
        .await;
    assert_eq!(p.status, 400);
    p.has("invalid scenario").has("ordres");
    // Said in the form's own words, not the API's field names.
    let p = b.post("/ui/blast-radius", &[], &[]).await;
    assert_eq!(p.status, 400);
    p.has("Choose exactly one of One broker, Several brokers or A rack (0 chosen)");
    let p = b
        .post(
            "/ui/blast-radius",
            &[("brokerId", "1"), ("rack", "r1")],
            &[],
        )
        .await;
    assert_eq!(p.status, 400);
    p.has("(2 chosen)");
    let group = &view.groups[0].group_id;
    let p = b
        .post(
            &format!("/ui/groups/{group}/reset"),
            &[("strategy", "earliest"), ("partitions", "a")],
            &[],
        )
        .await;
    assert_eq!(p.status, 400);
    p.has("partition numbers separated by commas");
    let p = b
        .post("/ui/brokers/1/maintenance", &[("action", "sideways")], &[])
        .await;
    assert_eq!(p.status, 400);
    p.has("unknown maintenance action");
    // The API's own validation, in its words.
    let (_, page) = b
        .submit("/ui/reassignments/throttle", &[("rateMb", "0")])
        .await;
    page.has("400");
    // A form posted from another site is refused before anything is called.
    let p = b
        .post(
            &format!("/ui/proposals/{}/apply", b.proposal),
            &[],
            &[("origin", "https://elsewhere.example")],
        )
        .await;
    assert_eq!(p.status, 403);
    p.has("cross-site form post refused");
    assert_eq!(b.store.operations(None, 10, 0).unwrap().total, 0);
}

#[tokio::test]
async fn text_from_outside_is_escaped_and_pages_carry_a_strict_policy() {
    let b = bed(true).await;
    let (_, cookie) = b
        .post(
            "/ui/reassignments/throttle",
            &[("rateMb", "80")],
            &[("x-ballast-user", "<script>alert(1)</script>")],
        )
        .await
        .redirect();
    b.get_with("/ui/reassignments", Some(&cookie))
        .await
        .has("Replication throttle set to 80 MB/s");
    let audit = b.page("/ui/audit").await;
    audit
        .has("throttle.update")
        .has("&#60;script&#62;alert(1)&#60;/script&#62;")
        .lacks("<script>alert(1)");
    let csp = audit.headers["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"));
    // A flash cookie someone crafted is text, never markup.
    let p = b
        .get_with("/ui", Some("ballast_flash=error*%3Cb%3Ehi%3C%2Fb%3E*"))
        .await;
    p.has("&#60;b&#62;hi&#60;/b&#62;").lacks("<b>hi</b>");

    for (asset, kind) in [
        ("ballast.css", "text/css"),
        ("ballast.js", "text/javascript"),
        ("favicon.svg", "image/svg+xml"),
    ] {
        let r = b.get(&format!("/ui/assets/{asset}")).await;
        assert_eq!(r.status, 200);
        assert!(r.headers[CONTENT_TYPE].to_str().unwrap().starts_with(kind));
    }
    assert_eq!(b.get("/ui/assets/other.css").await.status, 404);
}

#[tokio::test]
async fn management_forms_change_the_cluster_and_their_audit_events_can_be_reverted() {
    let b = bed(true).await;
    // ACLs: create, see it listed, delete.
    let binding = [
        ("principal", "User:ana"),
        ("resourceType", "Topic"),
        ("resourceName", "audit-me"),
        ("patternType", "Literal"),
        ("operation", "Read"),
        ("permissionType", "Allow"),
        ("host", "*"),
    ];
    let mut create = vec![("action", "create")];
    create.extend(binding);
    let (to, page) = b.submit("/ui/acls", &create).await;
    assert_eq!(to, "/ui/acls");
    page.has("Binding created").has("User:ana").has("audit-me");
    let mut delete = vec![("action", "delete")];
    delete.extend(binding);
    let (_, page) = b.submit("/ui/acls", &delete).await;
    page.has("Deleted 1 binding(s)").lacks("audit-me");

    // The audit log lists both; reverting the delete puts the binding back.
    let events = b
        .store
        .list_audit(&ballast_schema::AuditQuery {
            action: Some("acls.delete".into()),
            ..Default::default()
        })
        .unwrap();
    let event = events.events.first().expect("the delete event").id;
    let review = b.page(&format!("/ui/audit/{event}")).await;
    review
        .has("acls.delete")
        .has("What a revert would change")
        .has("Revert this change");
    let fingerprint = review
        .body
        .split(r#"name="fingerprint" value=""#)
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a fingerprint")
        .to_string();
    let (to, page) = b
        .submit(
            &format!("/ui/audit/{event}/revert"),
            &[("fingerprint", fingerprint.as_str())],
        )
        .await;
    assert_eq!(to, format!("/ui/audit/{event}"));
    page.has(&format!("Revert of event {event} accepted (completed)"));
    b.page("/ui/acls?principal=User:ana").await.has("audit-me");
    // A second revert is refused: the target changed since (the API's 409, in its words).
    let (_, page) = b
        .submit(
            &format!("/ui/audit/{event}/revert"),
            &[("fingerprint", fingerprint.as_str())],
        )
        .await;
    page.has("409");

    // Maintenance without a drain: in, shown, out.
    let (_, page) = b
        .submit(
            "/ui/brokers/2/maintenance",
            &[("action", "enter"), ("reason", "disk swap")],
        )
        .await;
    page.has("Broker 2 is in maintenance: nothing to drain")
        .has("disk swap")
        .has(r#"id="exit-2""#);
    let (_, page) = b
        .submit("/ui/brokers/2/maintenance", &[("action", "exit")])
        .await;
    page.has("maintenance ended").has(r#"id="enter-2""#);
    assert!(b.store.maintenance().unwrap().is_empty());

    // An offset reset of a group with members is refused by the API, dry run or not.
    let view = b.store.observed_view().unwrap().expect("view");
    let group = &view.groups[0].group_id;
    let (to, page) = b
        .submit(
            &format!("/ui/groups/{group}/reset"),
            &[("strategy", "earliest"), ("dryRun", "true")],
        )
        .await;
    assert_eq!(to, format!("/ui/groups/{group}"));
    page.has("active members");
}

/// The value of the hidden field `name` in the first form that has one.
fn hidden(page: &Page, name: &str) -> String {
    let raw = page
        .body
        .split(&format!(r#"name="{name}" value=""#))
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("no hidden {name}:\n{}", page.body))
        .to_string();
    // The template escapes HTML; undo what JSON can contain.
    raw.replace("&#34;", "\"")
        .replace("&#39;", "'")
        .replace("&#60;", "<")
        .replace("&#62;", ">")
        .replace("&#38;", "&")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

#[tokio::test]
async fn the_proposal_pages_live_part_is_named_after_the_proposal_it_shows_and_applies_only_it() {
    let b = bed(true).await;
    let page = b.page("/ui/proposals/current").await;
    page.has(r#"data-refresh="15""#);
    // The live part carries the proposal's id: a refresh that finds another current proposal
    // finds no part of that id, so the script never swaps in another proposal's Apply button.
    let live = page
        .body
        .split(&format!(
            r#"<section id="p-decision-{}" data-live data-gone=""#,
            b.proposal
        ))
        .nth(1)
        .unwrap_or_else(|| panic!("no live part named after {}:\n{}", b.proposal, page.body));
    let live = live.split("</section>").next().expect("the live part");
    assert!(
        live.contains(&format!(r#"action="/ui/proposals/{}/apply""#, b.proposal)),
        "{live}"
    );
    assert!(live.contains("A newer proposal than"), "{live}");
    // Its only Apply form applies the proposal shown.
    assert_eq!(page.body.matches("/apply\"").count(), 1, "{}", page.body);
}

#[tokio::test]
async fn a_dry_run_reset_applies_exactly_the_offsets_it_planned() {
    let b = bed(true).await;
    let view = b.store.observed_view().unwrap().expect("view");
    let topic = view.topics[0].name.clone();
    // An empty group (committed offsets, no members): offsets can be reset.
    let results = b
        .client
        .commit_offsets("ui-empty", &[(TopicPartition::new(topic.clone(), 0), 0)])
        .await
        .expect("commit");
    assert!(results.iter().all(|r| r.error.is_none()), "{results:?}");
    let page = b
        .post(
            "/ui/groups/ui-empty/reset",
            &[("strategy", "latest"), ("dryRun", "true")],
            &[],
        )
        .await;
    assert_eq!(page.status, 200, "{}", page.body);
    page.has("Planned reset").has("Apply this reset");
    assert_eq!(hidden(&page, "strategy"), "offsets");
    let offsets = hidden(&page, "offsets");
    let planned: serde_json::Value = serde_json::from_str(&offsets).expect("planned offsets");
    let planned_offset = planned[0]["offset"].as_i64().expect("an offset");
    assert_eq!(planned[0]["topic"], topic.as_str());
    // The log grows meanwhile: `latest` now would be another offset.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let (to, page) = b
        .submit(
            "/ui/groups/ui-empty/reset",
            &[
                ("strategy", "offsets"),
                ("reviewed", "latest"),
                ("offsets", offsets.as_str()),
            ],
        )
        .await;
    assert_eq!(to, "/ui/groups/ui-empty");
    page.has("reset to the offsets the latest dry run planned on 1 partitions");
    let committed = b
        .client
        .committed_offsets("ui-empty", None)
        .await
        .expect("committed");
    assert_eq!(committed.len(), 1);
    assert_eq!(committed[0].offset, Some(planned_offset));
}

#[tokio::test]
async fn dashboard_forms_reach_the_api_actions_that_had_none_and_show_its_words() {
    let b = bed(true).await;
    let view = b.store.observed_view().unwrap().expect("view");
    let topic = view.topics[0].name.clone();
    let topic_page = format!("/ui/topics/{topic}");

    // Topic configuration: set an override, see it, remove it; a bad key in the API's words.
    let page = b.page(&topic_page).await;
    page.has(r#"action="/ui/topics/"#)
        .has(r#"id="cfg-name""#)
        .has(r#"<option value="retention.ms">"#);
    let (to, page) = b
        .submit(
            &format!("{topic_page}/config"),
            &[("name", "retention.ms"), ("value", "3600000")],
        )
        .await;
    assert_eq!(to, topic_page);
    page.has(&format!("Configuration of {topic} changed: retention.ms:"))
        .has("→ 3600000");
    // The header says the saved retention at once (an hour), not the last reading's.
    page.has("<dt>Retention</dt><dd>1h 0m ·");
    let (_, page) = b
        .submit(
            &format!("{topic_page}/config"),
            &[("name", "retention.ms"), ("remove", "true")],
        )
        .await;
    page.has("3600000 → (no override)");
    let (_, page) = b
        .submit(
            &format!("{topic_page}/config"),
            &[("name", "retention.ms"), ("value", "soon")],
        )
        .await;
    page.has("400: ").has("soon");
    let p = b
        .post(&format!("{topic_page}/config"), &[("value", "1")], &[])
        .await;
    assert_eq!(p.status, 400);
    p.has("name the configuration entry");

    // Quotas: set for a user, listed with a Delete button, deleted.
    let (to, page) = b
        .submit(
            "/ui/quotas",
            &[
                ("action", "set"),
                ("kind", "user"),
                ("user", "ui-ana"),
                ("producer_byte_rate", "1048576"),
            ],
        )
        .await;
    assert_eq!(to, "/ui/quotas");
    page.has("Quotas of user=ui-ana set: producer_byte_rate = 1048576")
        .has(r#"value="/api/v1/quotas/user/ui-ana""#)
        .has(r#"aria-label="Delete the quotas of user=ui-ana""#);
    let (_, page) = b
        .submit(
            "/ui/quotas",
            &[
                ("action", "set"),
                ("kind", "user"),
                ("user", "ui-ana"),
                ("request_percentage", "-1"),
            ],
        )
        .await;
    page.has("400: ");
    let (_, page) = b
        .submit(
            "/ui/quotas",
            &[("action", "delete"), ("path", "/api/v1/quotas/user/ui-ana")],
        )
        .await;
    page.has("Quotas of user=ui-ana deleted")
        .lacks(r#"value="/api/v1/quotas/user/ui-ana""#);
    let p = b
        .post(
            "/ui/quotas",
            &[("action", "delete"), ("path", "/api/v1/acls")],
            &[],
        )
        .await;
    assert_eq!(p.status, 400);

    // Consumer groups: a group with members is refused in the API's words; an empty one goes.
    let busy = view.groups[0].group_id.clone();
    let (to, page) = b.submit(&format!("/ui/groups/{busy}/delete"), &[]).await;
    assert_eq!(to, format!("/ui/groups/{busy}"));
    page.has("409: consumer group has active members");
    b.client
        .commit_offsets("ui-gone", &[(TopicPartition::new(topic.clone(), 0), 0)])
        .await
        .expect("commit");
    let (to, page) = b.submit("/ui/groups/ui-gone/delete", &[]).await;
    assert_eq!(to, "/ui/groups");
    page.has("Consumer group ui-gone deleted with its 1 committed offsets");

    // Preferred leader elections, metadata refresh, proposal generate.
    let (to, page) = b.submit(&format!("{topic_page}/elect"), &[]).await;
    assert_eq!(to, topic_page);
    page.has("Preferred leader election (");
    let (to, page) = b.submit("/ui/brokers/elect", &[]).await;
    assert_eq!(to, "/ui/brokers");
    page.has("Preferred leader election (");
    let (_, page) = b.submit("/ui/brokers/refresh-metadata", &[]).await;
    page.has("Metadata refreshed: 4 brokers");
    let (to, page) = b.submit("/ui/proposals/generate", &[]).await;
    assert_eq!(to, format!("/ui/proposals/{}", b.proposal));
    page.has(&format!("The current candidate is proposal {}", b.proposal));

    // Redistribute: a preview starts nothing; Start starts only the reviewed plan.
    let preview = b
        .post(
            &format!("{topic_page}/redistribute"),
            &[("action", "preview"), ("brokers", "")],
            &[],
        )
        .await;
    assert_eq!(preview.status, 200, "{}", preview.body);
    preview.has("Planned moves (preview: nothing was started)");
    assert_eq!(b.store.operations(None, 10, 0).unwrap().total, 0);
    assert!(
        preview.body.contains("Start this redistribution"),
        "{}",
        preview.body
    );
    {
        let planned = hidden(&preview, "planned");
        let tampered = b
            .post(
                &format!("{topic_page}/redistribute"),
                &[("action", "start"), ("brokers", ""), ("planned", "[]")],
                &[],
            )
            .await;
        assert_eq!(tampered.status, 200, "{}", tampered.body);
        tampered.has("the plan changed since it was reviewed");
        assert_eq!(b.store.operations(None, 10, 0).unwrap().total, 0);
        let (to, page) = b
            .submit(
                &format!("{topic_page}/redistribute"),
                &[
                    ("action", "start"),
                    ("brokers", ""),
                    ("planned", planned.as_str()),
                ],
            )
            .await;
        assert!(
            to.starts_with("/ui/reassignments/op-"),
            "{to}: {}",
            page.body
        );
        page.has(&format!("Redistribution of {topic} started"));
    }

    // Every new form refuses a post from another site.
    for path in [
        format!("{topic_page}/config"),
        format!("{topic_page}/elect"),
        format!("{topic_page}/redistribute"),
        "/ui/quotas".to_string(),
        "/ui/groups/ui-empty/delete".to_string(),
        "/ui/brokers/elect".to_string(),
        "/ui/brokers/refresh-metadata".to_string(),
        "/ui/proposals/generate".to_string(),
    ] {
        let p = b
            .post(&path, &[], &[("sec-fetch-site", "cross-site")])
            .await;
        assert_eq!(p.status, 403, "{path}");
    }
}

#[tokio::test]
async fn the_agents_page_shows_each_agent_and_its_forms_show_the_apis_refusals() {
    let b = bed(true).await;
    b.store
        .record_agent_heartbeat(
            &ballast_schema::AgentHeartbeat {
                broker_id: 1,
                node_id: "kafka-host-1".into(),
                version: "0.0.1 (older)".into(),
                build_digest: "a".repeat(64),
                broker_process_up: Some(true),
                broker_uptime_s: Some(3600),
                agent_started_at_ms: now(),
                disks: serde_json::json!([{"path": "/var/lib/kafka", "totalBytes": 1e12, "availableBytes": 4e11}]),
                remote_addr: None,
            },
            true,
            now(),
        )
        .unwrap();
    let page = b.page("/ui/agents").await;
    page.has("kafka-host-1")
        .has("0.0.1 (older)")
        .has("another build")
        .has(r#"action="/ui/agents/1/upgrade""#)
        .has("Start a rolling restart")
        .has("No rolling restart yet.");
    // brokers 2 and 3 have no agent: the API's 409, in its words, and no roll
    let (back, page) = b
        .submit(
            "/ui/rolling-restarts",
            &[("brokers", "1,2"), ("reason", "tls")],
        )
        .await;
    assert_eq!(back, "/ui/agents");
    page.has("brokers without a running agent");
    assert_eq!(b.store.rolls(10, 0).unwrap().1, 0);
    let (_, page) = b
        .submit("/ui/rolling-restarts", &[("brokers", "one")])
        .await;
    page.has("Brokers must be ids separated by commas");
    let (_, page) = b.submit("/ui/rolling-restarts/roll-x/explode", &[]).await;
    page.has("no action");
}

#[tokio::test]
async fn loads_still_being_measured_read_measuring_never_no_traffic_on_the_overview_and_proposal_pages(
) {
    // One reading: no rate yet.
    let bed = bed_after(true, 1).await;
    for path in ["/ui", "/ui/proposals/current"] {
        let page = bed.get(path).await;
        page.has("Measuring: not applicable until every load is measured")
            .has("Being measured")
            .has("producer message rate (1 of 2 readings)");
        assert!(!page.body.contains("No traffic"), "{path}:\n{}", page.body);
    }
    let page = bed.get("/ui/proposals/current").await;
    page.has("measuring (1 of 2 readings)")
        .has("being measured");
    assert!(
        !page.body.contains("0 msg/s"),
        "an unknown rate is not shown as 0:\n{}",
        page.body
    );
}

#[tokio::test]
async fn the_operation_page_shows_before_predicted_and_realized_per_load_and_per_broker() {
    let b = bed(true).await;
    let (to, _) = b
        .post(
            &format!("/ui/proposals/{}/apply", b.proposal),
            &[("from", "current")],
            &[],
        )
        .await
        .redirect();
    let op = to.trim_start_matches("/ui/reassignments/").to_string();
    // The prediction is kept with the operation when it is queued.
    let kept = b
        .store
        .operation_realized(&op)
        .unwrap()
        .expect("a prediction");
    assert_eq!(kept.prediction.brokers.len(), 4);
    assert!(kept.counts.is_none() && kept.rates.is_none());
    let page = b.page(&to).await;
    page.has("Predicted vs realized: pending")
        .has("the operation has not completed");
    // Completed before the latest reading: the observer's pass keeps that reading's counts and
    // disk; the rates wait for a full rate window after completion.
    let reading_at = b
        .store
        .observed_view_for_planning()
        .unwrap()
        .expect("a view")
        .cluster
        .facts
        .sampled_at_ms;
    b.store
        .finish_operation(
            None,
            &op,
            ballast_schema::OperationState::Completed,
            None,
            None,
            reading_at - 1,
        )
        .unwrap();
    assert_eq!(
        ballast_observer::realized::pass(&b.store, 300_000).unwrap(),
        1
    );
    let page = b.page(&to).await;
    page.has("Predicted vs realized: pending")
        .has("rates are read once the moves have settled (BALLAST_REALIZED_SETTLE) and a full rate window (BALLAST_RATE_WINDOW) has passed after that")
        .has("Leaders")
        .has("measured")
        .has(" pts")
        .has("Predicted vs realized per broker");
    let api = b
        .get_with(&format!("/api/v1/reassignments/{op}"), None)
        .await;
    let v: serde_json::Value = serde_json::from_str(&api.body).expect("json");
    let r = &v["data"]["realized"];
    assert_eq!(r["loads"]["leaderCount"]["status"], "measured", "{r}");
    // The moves were never run here (no executor): the reading shows the placement as it was,
    // and the error says so (the simulator end-to-end test runs them and finds 0).
    assert!(
        r["loads"]["leaderCount"]["errorPercent"]
            .as_f64()
            .is_some_and(|e| e > 0.0),
        "{r}"
    );
    assert!(r["loads"]["followerCount"]["errorPercent"].is_f64(), "{r}");
    assert_eq!(r["loads"]["producerMsgRate"]["status"], "pending", "{r}");
    assert_eq!(
        r["loads"]["producerMsgRate"]["observed"],
        serde_json::Value::Null
    );
}
