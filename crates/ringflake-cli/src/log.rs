//! `serve`'s log: the library's `tracing` events and the service's own, on standard error,
//! filtered by `--log` and shaped by `--log-format`. Standard output keeps the start-up lines that
//! scripts read (the address last); the log carries the same facts as events, and everything
//! that happens after.
//!
//! The service's own events have the target `ringflake`, so a text line reads as the service's
//! lines always have (`ringflake: SIGHUP: 2 bearer tokens from ...`); the library's carry their
//! module (`ringflake::worker::lease`), and a generator's events its span, `generator` with the
//! generator's name.

use clap::ValueEnum;
use tracing_subscriber::EnvFilter;

/// `--log-format`: `text` (a line a person reads: time, level, target, message, fields) or
/// `json` (one object a line). No doc comments on the variants: clap would print them, and turn
/// `--help` into its long form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

pub use ringflake_server::log::{ACCESS_TARGET, TARGET};

/// The levels a bare directive may name (`EnvFilter` also takes them in capitals, and `0` to `5`).
const LEVELS: [&str; 6] = ["off", "error", "warn", "info", "debug", "trace"];

/// The crates whose events this binary can log: a bare directive naming one of them (or a module
/// of one, `ringflake::worker`) turns on all of its events. Any other bare word (`warning`,
/// `verbose`) is a typo that `EnvFilter` would take for a target nothing logs under, turning the
/// log off without a word.
const TARGETS: [&str; 12] = [
    "ringflake",
    "hyper",
    "hyper_util",
    "h2",
    "tonic",
    "tonic_health",
    "tower",
    "rustls",
    "tokio",
    "tokio_postgres",
    "mysql",
    "rusqlite",
];

/// `--log`'s value parser: a filter `EnvFilter` accepts, as given (`warn`,
/// `info,ringflake::worker=debug`), whose bare words are levels or targets of this binary; the
/// error names the value and what is wrong with it.
pub fn parse_filter(value: &str) -> Result<String, String> {
    filter(value).map(|_| value.to_string())
}

fn filter(value: &str) -> Result<EnvFilter, String> {
    let expected = "expected RUST_LOG-style directives, a level (error, warn, info, debug, \
                    trace, off) and/or target=level pairs separated by commas";
    for directive in value.split(',').map(str::trim) {
        if directive.is_empty() || directive.contains(['=', '[']) {
            continue;
        }
        let level = LEVELS.iter().any(|l| directive.eq_ignore_ascii_case(l))
            || matches!(directive, "0" | "1" | "2" | "3" | "4" | "5");
        let krate = directive.split("::").next().unwrap_or(directive);
        if !level && !TARGETS.contains(&krate) {
            let hint = LEVELS
                .iter()
                .find(|l| directive.to_ascii_lowercase().starts_with(&l[..3]))
                .map(|l| format!(" (did you mean {l}?)"))
                .unwrap_or_default();
            return Err(format!(
                "{directive:?} is neither a level nor a target this binary logs under \
                 ({}){hint}: {expected}",
                TARGETS.join(", ")
            ));
        }
    }
    EnvFilter::builder()
        .parse(value)
        .map_err(|e| format!("{e}: {expected}"))
}

/// Where the filter comes from: `--log` or `RINGFLAKE_LOG` if given, else `RUST_LOG` if set
/// (checked as `--log` is: the error names `RUST_LOG`), else `--log`'s default, `info`.
pub fn directives(given: &str, from_default: bool) -> Result<String, String> {
    match std::env::var("RUST_LOG") {
        Ok(rust_log) if from_default && !rust_log.trim().is_empty() => {
            parse_filter(&rust_log).map_err(|e| format!("RUST_LOG {rust_log:?}: {e}"))
        }
        _ => Ok(given.to_string()),
    }
}

/// Writes a fatal error where it is never lost: as an `ERROR` event if the filter lets one
/// through, else straight to standard error, in the log's format (a JSON object with `--log-format
/// json`), so that `--log off` or a narrow filter never hides why the process exits.
pub fn fatal(message: &str, format: LogFormat) {
    if tracing::dispatcher::has_been_set()
        && tracing::enabled!(target: TARGET, tracing::Level::ERROR)
    {
        tracing::error!(target: TARGET, "error: {message}");
        return;
    }
    match format {
        LogFormat::Text => eprintln!("ringflake: error: {message}"),
        LogFormat::Json => eprintln!(
            "{}",
            serde_json::json!({
                "timestamp": jiff::Timestamp::now().to_string(),
                "level": "ERROR",
                "message": format!("error: {message}"),
                "target": TARGET,
            })
        ),
    }
}

/// Installs the subscriber for the rest of the process: events at or above `directives` go to
/// standard error, as text or as JSON objects, one a line.
pub fn install(directives: &str, format: LogFormat) -> Result<(), String> {
    let mut filter = filter(directives).map_err(|e| format!("--log {directives:?}: {e}"))?;
    // The access log (a line per request) only when the filter names its target.
    if !directives.contains(ACCESS_TARGET) {
        filter = filter.add_directive(
            format!("{ACCESS_TARGET}=off")
                .parse()
                .map_err(|e| format!("the access log's directive: {e}"))?,
        );
    }
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let installed = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder
            .json()
            // The message and the fields at the top level, beside timestamp, level and target;
            // the generator's span as `span`.
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .try_init(),
    };
    installed.map_err(|e| format!("cannot install the log subscriber: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_are_checked_and_named() {
        assert_eq!(parse_filter("info").as_deref(), Ok("info"));
        assert!(parse_filter("warn,ringflake::worker=debug").is_ok());
        let err = parse_filter("ringflake=loud").unwrap_err();
        assert!(err.contains("RUST_LOG-style"), "{err}");
        for fine in [
            "WARN",
            "off",
            "3",
            "ringflake",
            "ringflake::access=info",
            "hyper,info",
        ] {
            assert!(parse_filter(fine).is_ok(), "{fine}");
        }
        // Bare words EnvFilter takes for targets nothing logs under.
        for (typo, hint) in [("warning", "did you mean warn?"), ("verbose", "")] {
            let err = parse_filter(typo).unwrap_err();
            assert!(
                err.starts_with(&format!("{typo:?} is neither a level nor a target"))
                    && err.contains(hint),
                "{err}"
            );
        }
        assert!(parse_filter("info,warning").is_err());
    }
}
