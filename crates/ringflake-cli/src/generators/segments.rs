//! `serve`'s segment mode flags as the service takes them: the [`Plan`] of its
//! [`SegmentGenerator`](ringflake::SegmentGenerator), on the `leaf_alloc` table of the default
//! generator's worker database.

use crate::args::{ServeArgs, given, sub};
use clap::ArgMatches;
use ringflake::{
    DEFAULT_SEGMENT_MAX_WAIT, DEFAULT_SEGMENT_REFRESH, DEFAULT_SQLITE_PATH, SegmentTable,
};
use ringflake_server::model::segments::{Hidden, Plan};
use std::path::PathBuf;
use std::time::Duration;

/// The segment flags that need the segment mode on a worker database.
const SEGMENT_FLAGS: &[&str] = &[
    "segment_state_dir",
    "segment_max_wait",
    "segment_refresh",
    "hide_volume",
];

/// The plan the flags make; `None` with `--no-segments`, or when the worker ids come from no
/// database (`--worker-id`, `--zookeeper`, ...), where a segment flag given is an error.
pub fn plan(a: &ServeArgs, matches: &ArgMatches) -> Result<Option<Plan>, String> {
    let s = &a.segments;
    let flags = given(sub(matches), SEGMENT_FLAGS);
    let named = |why: &str| {
        flags.first().map_or(Ok(None), |(flag, _)| {
            Err(format!("--{} {why}", flag.replace('_', "-")))
        })
    };
    if s.no_segments {
        return named("needs the segment mode, which --no-segments turns off");
    }
    let db = &a.worker.db;
    let table = match a.worker.chosen(matches)? {
        Some("mysql") => SegmentTable::mysql(db.mysql.as_deref().unwrap_or_default()),
        Some("postgres") => SegmentTable::postgres(db.postgres.as_deref().unwrap_or_default()),
        None | Some("db") => SegmentTable::sqlite(
            db.db
                .clone()
                .unwrap_or_else(|| PathBuf::from(DEFAULT_SQLITE_PATH)),
        ),
        Some(_) => {
            return named(
                "needs the segment mode, on the worker database's leaf_alloc: --db, --mysql or \
                 --postgres",
            );
        }
    };
    let hidden = match s.hide_volume.as_slice() {
        [] => Hidden::None,
        tags if tags.iter().any(|t| t == "*") => Hidden::All,
        tags => Hidden::Tags(tags.iter().map(|t| t.trim().to_string()).collect()),
    };
    if hidden != Hidden::None && a.id_key_file.is_none() {
        return Err(
            "--hide-volume needs --id-key-file: the key whose permutation hides the volume".into(),
        );
    }
    let state_dir = match &s.segment_state_dir {
        Some(dir) => Some(dir.clone()),
        None => a.state.path(matches)?.map(|state| {
            let mut dir = state.into_os_string();
            dir.push(".segments");
            PathBuf::from(dir)
        }),
    };
    // The table as the worker ids' database is reached: its CA file, timeout and replication
    // check. A URL that does not parse is kept as the error the segment route answers 503 with.
    let table = table
        .map(|mut t| {
            if let Some(ca) = &db.db_ca_file {
                t = t.ca_file(ca);
            }
            if let Some(secs) = db.db_timeout {
                t = t.timeout(Duration::from_secs(secs));
            }
            t.accept_async_replication(db.accept_async_replication)
        })
        .map_err(|e| e.to_string());
    Ok(Some(Plan {
        table,
        state_dir,
        max_wait: s
            .segment_max_wait
            .map_or(DEFAULT_SEGMENT_MAX_WAIT, Duration::from_secs),
        refresh: s
            .segment_refresh
            .map_or(DEFAULT_SEGMENT_REFRESH, Duration::from_secs),
        hidden,
    }))
}
