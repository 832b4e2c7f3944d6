//! `ballast run` against the suite's cluster, and its HTTP API.

use std::time::Duration;

use serde_json::Value;

use crate::kafka::Kafka;
use crate::support::{dev_license, wait_for, Service};

/// A `ballast run` with a licence (management paths are licensed) and fast timings.
pub struct Ballast {
    pub service: Service,
    http: reqwest::blocking::Client,
}

impl Ballast {
    pub fn start(kafka: &Kafka, extra: &[(&str, &str)]) -> Ballast {
        let ballast = Ballast::start_unready(kafka, extra);
        // Polled slowly: every 503 before the first sample is a WARN line in the log.
        wait_for(Duration::from_secs(60), "ballast ready", || {
            let (status, _) = ballast.get("/api/v1/ready");
            if status != 200 {
                std::thread::sleep(Duration::from_millis(450));
            }
            (status == 200).then_some(())
        });
        ballast
    }

    /// As `start`, without waiting for `/api/v1/ready`.
    pub fn start_unready(kafka: &Kafka, extra: &[(&str, &str)]) -> Ballast {
        let license = dev_license();
        let mut env: Vec<(&str, &str)> = vec![
            ("LICENSE_STRING", license.as_str()),
            ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", kafka.bootstrap.as_str()),
            ("BALLAST_SAMPLE_INTERVAL", "2s"),
            ("BALLAST_SAMPLE_REQUEST_POLL", "200ms"),
            ("BALLAST_EXECUTOR_INTERVAL", "300ms"),
            ("BALLAST_WARMUP", "0s"),
        ];
        env.extend_from_slice(extra);
        let service = Service::start_with(&env);
        Ballast {
            service,
            http: reqwest::blocking::Client::builder()
                .timeout(Duration::from_secs(60))
                .build()
                .expect("http client"),
        }
    }

    fn send(&self, req: reqwest::blocking::RequestBuilder) -> (u16, Value) {
        match req.send() {
            Ok(r) => {
                let status = r.status().as_u16();
                (status, r.json().unwrap_or(Value::Null))
            }
            Err(e) => (0, Value::String(e.to_string())),
        }
    }

    pub fn get(&self, path: &str) -> (u16, Value) {
        self.send(self.http.get(self.service.url(path)))
    }

    /// The body of a GET as text (`/metrics`); empty when it fails.
    pub fn get_text(&self, path: &str) -> String {
        self.http
            .get(self.service.url(path))
            .send()
            .and_then(|r| r.text())
            .unwrap_or_default()
    }

    /// POST with `body` as JSON; `Value::Null` sends no body.
    pub fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let req = self.http.post(self.service.url(path));
        if body.is_null() {
            self.send(req)
        } else {
            self.send(req.json(body))
        }
    }

    pub fn put(&self, path: &str, body: &Value) -> (u16, Value) {
        self.send(self.http.put(self.service.url(path)).json(body))
    }

    pub fn delete(&self, path: &str) -> (u16, Value) {
        self.send(self.http.delete(self.service.url(path)))
    }

    /// `data` of a 2xx answer; panics with the answer otherwise.
    pub fn ok(&self, (status, body): (u16, Value)) -> Value {
        assert!((200..300).contains(&status), "HTTP {status}: {body}");
        body["data"].clone()
    }

    /// Asks the observer for a sample now and waits until the observed view is newer than
    /// before the call.
    pub fn fresh_sample(&self) {
        let before = self.get("/api/v1/cluster").1["data"]["observedAt"].clone();
        let _ = self.post("/api/v1/cluster/refresh-metadata", &Value::Null);
        wait_for(Duration::from_secs(60), "a fresh sample", || {
            let now = self.get("/api/v1/cluster").1["data"]["observedAt"].clone();
            (!now.is_null() && now != before).then_some(())
        });
    }

    /// Waits until the operation `id` ends and returns its record (`Completed` expected).
    pub fn wait_operation(&self, id: &str, timeout: Duration) -> Value {
        wait_for(timeout, "the operation ends", || {
            let (_, r) = self.get(&format!("/api/v1/reassignments/{id}"));
            let state = r["data"]["state"].as_str()?.to_string();
            matches!(state.as_str(), "Completed" | "Failed" | "Cancelled")
                .then(|| r["data"].clone())
        })
    }
}
