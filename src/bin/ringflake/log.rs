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

/// The target of the service's own events.
pub const TARGET: &str = "ringflake";

/// `--log`'s value parser: a filter `EnvFilter` accepts, as given (`warn`,
/// `info,ringflake::worker=debug`); the error names the value and what is wrong with it.
pub fn parse_filter(value: &str) -> Result<String, String> {
    filter(value).map(|_| value.to_string())
}

fn filter(value: &str) -> Result<EnvFilter, String> {
    EnvFilter::builder().parse(value).map_err(|e| {
        format!(
            "{e}: expected RUST_LOG-style directives, a level (error, warn, info, debug, trace) \
             and/or target=level pairs separated by commas"
        )
    })
}

/// Installs the subscriber for the rest of the process: events at or above `directives` go to
/// standard error, as text or as JSON objects, one a line.
pub fn install(directives: &str, format: LogFormat) -> Result<(), String> {
    let filter = filter(directives).map_err(|e| format!("--log {directives:?}: {e}"))?;
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
    }
}
