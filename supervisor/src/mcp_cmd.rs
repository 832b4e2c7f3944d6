//! `ballast mcp call|tools`: a small MCP client over streamable HTTP, for people trying the agent
//! door from a terminal (the demo's agent-approval walk-through, README). It speaks the protocol
//! as any MCP client does: `initialize`, `notifications/initialized`, then `tools/list` or
//! `tools/call` in that session, and ends the session. Answers may come as JSON or as one
//! server-sent event; the tool's text is printed (JSON pretty-printed).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Subcommand;
use serde_json::{json, Value};

/// Where the service is and who is calling.
#[derive(Debug, clap::Args)]
pub struct Target {
    /// The service's MCP endpoint (default: http://127.0.0.1:PORT/api/v1/mcp)
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// The service's port on this machine, when --url is left out
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// A file holding a personal access token (pat_...): the identity the call is made as
    /// (`ballast demo` writes two); BALLAST_MCP_TOKEN works too
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Call one tool and print its answer (exit 1 when the tool reports an error)
    Call {
        /// The tool's name, e.g. get_cluster_overview, update_topic_config, approve_action
        tool: String,
        /// The tool's arguments as a JSON object
        #[arg(default_value = "{}")]
        arguments: String,
        #[command(flatten)]
        target: Target,
    },
    /// List the tools the service offers, with their categories
    Tools {
        #[command(flatten)]
        target: Target,
    },
}

pub fn run(command: McpCommand) -> ExitCode {
    let result = match command {
        McpCommand::Call {
            tool,
            arguments,
            target,
        } => call(&target, &tool, &arguments),
        McpCommand::Tools { target } => tools(&target),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("ballast mcp: {message}");
            ExitCode::from(crate::EXIT_CONFIG)
        }
    }
}

fn call(target: &Target, tool: &str, arguments: &str) -> Result<ExitCode, String> {
    let arguments: Value =
        serde_json::from_str(arguments).map_err(|e| format!("the arguments are not JSON: {e}"))?;
    if !arguments.is_object() {
        return Err("the arguments must be a JSON object, e.g. '{\"topic\":\"orders\"}'".into());
    }
    let mut session = Session::open(target)?;
    let result = session.request("tools/call", json!({"name": tool, "arguments": arguments}));
    session.close();
    let result = result?;
    let is_error = result["isError"] == true;
    for item in result["content"].as_array().into_iter().flatten() {
        if let Some(text) = item["text"].as_str() {
            let shown = match serde_json::from_str::<Value>(text) {
                Ok(v) => serde_json::to_string_pretty(&v).unwrap_or_else(|_| text.to_string()),
                Err(_) => text.to_string(),
            };
            if !line(&shown) {
                break;
            }
        }
    }
    Ok(if is_error {
        ExitCode::from(crate::EXIT_FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}

fn tools(target: &Target) -> Result<ExitCode, String> {
    let mut session = Session::open(target)?;
    let result = session.request("tools/list", json!({}));
    session.close();
    for t in result?["tools"].as_array().into_iter().flatten() {
        let name = t["name"].as_str().unwrap_or("?");
        let description = t["description"].as_str().unwrap_or("");
        let first = description.split(". ").next().unwrap_or(description);
        if !line(&format!("{name:34} {first}")) {
            break;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints one line; false once the reader has gone (`| head`: a closed pipe is the reader's
/// choice, not a failure).
fn line(text: &str) -> bool {
    use std::io::Write;
    writeln!(std::io::stdout().lock(), "{text}").is_ok()
}

/// One MCP session over streamable HTTP.
struct Session {
    http: reqwest::blocking::Client,
    url: String,
    token: Option<String>,
    id: Option<String>,
    next: u64,
}

impl Session {
    fn open(target: &Target) -> Result<Session, String> {
        let token = match &target.token_file {
            Some(file) => Some(
                std::fs::read_to_string(file)
                    .map_err(|e| format!("cannot read {}: {e}", file.display()))?
                    .trim()
                    .to_string(),
            ),
            None => std::env::var("BALLAST_MCP_TOKEN")
                .ok()
                .map(|t| t.trim().to_string()),
        };
        let http = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .map_err(|e| e.to_string())?;
        let mut session = Session {
            http,
            url: target
                .url
                .clone()
                .unwrap_or_else(|| format!("http://127.0.0.1:{}/api/v1/mcp", target.port)),
            token: token.filter(|t| !t.is_empty()),
            id: None,
            next: 1,
        };
        session.request(
            "initialize",
            json!({
                "protocolVersion": "2025-03-26",
                "capabilities": {},
                "clientInfo": {"name": "ballast-mcp-cli", "version": env!("CARGO_PKG_VERSION")},
            }),
        )?;
        session.post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(session)
    }

    fn post(&mut self, body: Value) -> Result<Option<Value>, String> {
        let mut req = self
            .http
            .post(&self.url)
            .header("Accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        if let Some(id) = &self.id {
            req = req.header("Mcp-Session-Id", id);
        }
        let resp = req
            .send()
            .map_err(|e| format!("{}: {}", self.url, ballast_runtime::error_chain(&e)))?;
        if let Some(id) = resp.headers().get("mcp-session-id") {
            self.id = id.to_str().ok().map(str::to_string);
        }
        let status = resp.status();
        let sse = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let text = resp.text().map_err(|e| e.to_string())?;
        if !status.is_success() {
            let why = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| {
                    v["error"]["message"]
                        .as_str()
                        .or(v["details"].as_str())
                        .or(v["error"].as_str())
                        .map(str::to_string)
                })
                .unwrap_or(text);
            return Err(format!("{status}: {why}"));
        }
        if text.trim().is_empty() {
            return Ok(None);
        }
        let json = if sse {
            // The answer is the data of the event that carries it.
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim)
                .filter_map(|d| serde_json::from_str::<Value>(d).ok())
                .find(|v| v.get("result").is_some() || v.get("error").is_some())
        } else {
            serde_json::from_str(&text).ok()
        };
        Ok(json)
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next;
        self.next += 1;
        let answer = self
            .post(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?
            .ok_or_else(|| format!("{method}: no answer"))?;
        if let Some(e) = answer.get("error") {
            return Err(format!(
                "{method}: {}",
                e["message"].as_str().unwrap_or("error")
            ));
        }
        Ok(answer["result"].clone())
    }

    fn close(&mut self) {
        if let Some(id) = &self.id {
            let mut req = self.http.delete(&self.url).header("Mcp-Session-Id", id);
            if let Some(t) = &self.token {
                req = req.bearer_auth(t);
            }
            let _ = req.send();
        }
    }
}
