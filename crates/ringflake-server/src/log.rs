//! The targets the service's events are logged under: a subscriber's filter names them
//! (`ringflake=info,ringflake::access=info`). The service only emits events; the program that
//! starts it installs the subscriber (the `ringflake` binary: `--log`, `--log-format`).

/// The target of the service's own events.
pub const TARGET: &str = "ringflake";

/// The access log's target, a line per request: off unless the filter names it
/// (`--log info,ringflake::access=info`).
pub const ACCESS_TARGET: &str = "ringflake::access";
