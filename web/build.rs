//! Stamps the build with its commit and time for `GET /api/v1/version`.
//! `BALLAST_BUILD_COMMIT` / `BALLAST_BUILD_TIME` override both (packaging from a source tarball).

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=BALLAST_BUILD_COMMIT");
    println!("cargo:rerun-if-env-changed=BALLAST_BUILD_TIME");
    let git = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.git");
    for watched in ["HEAD", "refs/heads", "packed-refs"] {
        let path = git.join(watched);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    let commit = std::env::var("BALLAST_BUILD_COMMIT")
        .ok()
        .or_else(|| run("git", &["rev-parse", "--short=12", "HEAD"]))
        .unwrap_or_else(|| "unknown".to_string());
    let time = std::env::var("BALLAST_BUILD_TIME")
        .ok()
        .or_else(|| run("date", &["-u", "+%Y-%m-%dT%H:%M:%SZ"]))
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=BALLAST_COMMIT={commit}");
    println!("cargo:rustc-env=BALLAST_BUILD_TIME={time}");
}

fn run(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!text.is_empty()).then_some(text)
}
