//! The third-party notices are generated, never hand-kept: they list exactly the crates compiled
//! into the `ballast` binary (its normal dependency tree for the release target, as
//! `cargo build -p ballast` resolves features), and every crate is used under a licence of the
//! allow-list in about.toml. When a dependency changes, run scripts/notices.

use std::collections::BTreeSet;
use std::process::Command;

use ballast_web::notices::notices;

fn compiled_in() -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .args([
            "tree",
            "--locked",
            "-p",
            "ballast",
            "-e",
            "normal",
            "--target",
            "x86_64-unknown-linux-gnu",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ])
        .output()
        .expect("cargo tree");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let name = words.next()?;
            let version = words.next()?.trim_start_matches('v');
            // ballast's own crates are path dependencies: `name v0.1.0 (/path)`.
            (!l.contains(" (/")).then(|| format!("{name} {version}"))
        })
        .collect()
}

fn accepted() -> BTreeSet<String> {
    let about = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../about.toml"))
        .expect("about.toml");
    let list = about
        .split_once("accepted = [")
        .and_then(|(_, rest)| rest.split_once(']'))
        .map(|(list, _)| list)
        .expect("an accepted list");
    list.split(',')
        .map(|s| s.trim().trim_matches('"').to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

#[test]
fn the_notices_list_exactly_the_crates_compiled_into_the_binary() {
    let n = notices().expect("notices");
    let listed: BTreeSet<String> = n
        .crates
        .iter()
        .map(|c| format!("{} {}", c.name, c.version))
        .collect();
    let tree = compiled_in();
    assert!(tree.len() > 100, "cargo tree found {} crates", tree.len());
    let missing: Vec<_> = tree.difference(&listed).collect();
    let extra: Vec<_> = listed.difference(&tree).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "the third-party notices are stale: run scripts/notices\n  compiled in but not listed: {missing:?}\n  listed but not compiled in: {extra:?}"
    );
}

#[test]
fn every_crate_is_used_under_an_allowed_licence_with_its_text() {
    let n = notices().expect("notices");
    let allowed = accepted();
    assert!(allowed.contains("MIT") && allowed.contains("Apache-2.0"));
    for c in &n.crates {
        assert!(
            !c.license_texts.is_empty(),
            "{} has no licence text",
            c.name
        );
        for i in &c.license_texts {
            let l = &n.licenses[*i];
            assert!(
                allowed.contains(&l.id),
                "{} {} is used under {}, which about.toml does not accept",
                c.name,
                c.version,
                l.id
            );
            assert!(l.text.len() > 100, "{}: the text of {}", c.name, l.id);
        }
    }
}
