//! `ballast man`: the manual page (roff) — the commands from the command-line definition itself
//! (clap_mangen) and every setting from the settings table (`ballast_config::SETTINGS`), the same
//! table `ballast config example` and `ballast config check` read, so the page cannot drift from
//! what the binary accepts. The Debian package installs it as `ballast(1)`.

use std::io::Write;
use std::process::ExitCode;

/// Text for a roff body line: backslashes escaped, a leading `.` or `'` made literal.
fn roff(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    if escaped.starts_with('.') || escaped.starts_with('\'') {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

/// The whole page.
pub fn page(cmd: clap::Command) -> std::io::Result<Vec<u8>> {
    let man = clap_mangen::Man::new(cmd).section("1");
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    writeln!(out, ".SH DESCRIPTION")?;
    writeln!(
        out,
        "{}",
        roff(
            "ballast observes an Apache Kafka cluster, proposes partition moves that bring every \
             broker to its fair share of seven loads, executes them as throttled reassignments and \
             heals the cluster. `ballast run` is the service: a supervisor that starts the observer, \
             executor, healer and web processes, which share one SQLite database."
        )
    )?;
    man.render_options_section(&mut out)?;
    man.render_subcommands_section(&mut out)?;

    writeln!(out, ".SH SETTINGS")?;
    writeln!(
        out,
        "{}",
        roff(
            "Settings are environment variables, or KEY=VALUE lines of the file given with \
             --config (the environment wins). Durations: 500ms, 30s, 5m, 12h, 7d. \
             `ballast config check --config FILE` validates a file and prints the effective values."
        )
    )?;
    let mut group = "";
    for spec in ballast_config::SETTINGS {
        if spec.group != group {
            group = spec.group;
            writeln!(out, ".SS {}", roff(group))?;
        }
        writeln!(out, ".TP")?;
        let default = match spec.default {
            Some(d) if !d.is_empty() => format!(" (default {d})"),
            _ => String::new(),
        };
        writeln!(out, "\\fB{}\\fR{}", roff(spec.name), roff(&default))?;
        let mut help = spec.help.replace('\n', " ");
        if spec.secret {
            help.push_str("; secret: never printed");
        }
        writeln!(out, "{}", roff(&help))?;
    }

    writeln!(out, ".SH FILES")?;
    for (path, what) in [
        (
            "/etc/ballast/ballast.env",
            "the configuration of the packaged service (a conffile)",
        ),
        (
            "/var/lib/ballast/ballast.db",
            "the database (with its -wal and -shm files); read it with sqlite3 -readonly, never write",
        ),
        (
            "/lib/systemd/system/ballast.service",
            "the systemd unit: ballast run --config /etc/ballast/ballast.env as user ballast",
        ),
        (
            "/usr/share/doc/ballast/",
            "README, installation, the database tables, third-party notices",
        ),
    ] {
        writeln!(out, ".TP\n\\fI{}\\fR\n{}", roff(path), roff(what))?;
    }
    writeln!(out, ".SH SEE ALSO")?;
    writeln!(out, "systemctl(1), journalctl(1), sqlite3(1)")?;
    man.render_version_section(&mut out)?;
    Ok(out)
}

pub fn run(cmd: clap::Command) -> ExitCode {
    match page(cmd).and_then(|p| std::io::stdout().write_all(&p)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ballast man: {e}");
            ExitCode::from(crate::EXIT_FAILURE)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_man_page_lists_every_setting_and_every_command() {
        let page = String::from_utf8(page(crate::Cli::command()).expect("page")).expect("utf-8");
        for spec in ballast_config::SETTINGS {
            assert!(
                page.contains(&roff(spec.name)),
                "{} missing from the man page",
                spec.name
            );
        }
        for command in ["run", "demo", "status", "config", "token"] {
            assert!(page.contains(command), "{command}");
        }
        assert!(
            !page.contains("\nobserver\n"),
            "hidden worker commands stay hidden"
        );
    }

    #[test]
    fn roff_escapes_backslashes_dashes_and_leading_dots() {
        assert_eq!(roff(".hidden"), "\\&.hidden");
        assert_eq!(roff("a\\b"), "a\\eb");
        assert_eq!(roff("--config"), "\\-\\-config");
    }
}
