//! The flags of Meituan Leaf's segment mode: `serve`'s ([`SegmentArgs`]) and the row `segments
//! add` inserts ([`NewTag`]; `args` has the command, with the database flags). As in `args`, every flag is also read from a `RINGFLAKE_…`
//! variable; turning them into a plan is `generators::segments`' business.

use clap::Args;
use ringflake::{DEFAULT_SEGMENT_MAX_WAIT, DEFAULT_SEGMENT_REFRESH};
use std::path::PathBuf;

/// `serve`'s segment mode: `/api/segment/get/{biz_tag}` from the worker database's
/// `leaf_alloc`.
#[derive(Debug, Clone, Args)]
pub struct SegmentArgs {
    /// Do not serve Meituan Leaf's segment mode (/api/segment/get/{biz_tag}: dense numbers per
    /// business tag from the leaf_alloc table of the worker database, created if missing)
    #[arg(long, env = "RINGFLAKE_NO_SEGMENTS", value_parser = boolish())]
    pub no_segments: bool,
    /// Keep the leaf_alloc ranges this node holds in this directory, one file per biz_tag, so
    /// that a restart (kill -9 included) resumes them instead of throwing them away; one
    /// directory per process [default: the state file's path with .segments,
    /// ringflake.state.segments; none with --no-state-file]
    #[arg(long, env = "RINGFLAKE_SEGMENT_STATE_DIR", value_name = "PATH")]
    pub segment_state_dir: Option<PathBuf>,
    #[arg(long, env = "RINGFLAKE_SEGMENT_MAX_WAIT", value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(0..=3600),
          help = format!("The longest a request for a biz_tag's numbers waits when both of its \
                          segments are used up (the next range is late); then it is answered \
                          503 [default: {}]", DEFAULT_SEGMENT_MAX_WAIT.as_secs()))]
    pub segment_max_wait: Option<u64>,
    #[arg(long, env = "RINGFLAKE_SEGMENT_REFRESH", value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(1..=86400),
          help = format!("Read the biz_tags of leaf_alloc again this often: added ones are \
                          served, removed ones dropped; an unknown tag asked for triggers a \
                          reread too [default: {}]", DEFAULT_SEGMENT_REFRESH.as_secs()))]
    pub segment_refresh: Option<u64>,
    /// Hand out the numbers of these biz_tags (comma-separated; * for every tag) through the
    /// keyed permutation of --id-key-file, on every route: unique, from 0 to 2^63-1, and the
    /// volume between two numbers hidden
    #[arg(
        long,
        env = "RINGFLAKE_HIDE_VOLUME",
        value_name = "TAGS",
        value_delimiter = ','
    )]
    pub hide_volume: Vec<String>,
}

/// The row `segments add` inserts.
#[derive(Debug, Args)]
pub struct NewTag {
    /// The business tag: 1 to 128 characters of A-Z a-z 0-9 - . _ ~
    #[arg(value_name = "BIZ_TAG")]
    pub tag: String,
    /// The first number handed out (Leaf's max_id)
    #[arg(long, env = "RINGFLAKE_START", value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(i64).range(0..i64::MAX))]
    pub start: i64,
    /// How many numbers a claim takes (Leaf's step; its dynamic step grows from it under load)
    #[arg(long, env = "RINGFLAKE_STEP", value_name = "N", default_value_t = 2000,
          value_parser = clap::value_parser!(i64).range(1..=i32::MAX as i64))]
    pub step: i64,
    /// The row's description (at most 256 characters)
    #[arg(
        long,
        env = "RINGFLAKE_DESCRIPTION",
        value_name = "TEXT",
        default_value = ""
    )]
    pub description: String,
}

/// How the switches read a value from their environment variable (`args`' rule): `true`, `1`,
/// `yes`, `on` and their opposites.
fn boolish() -> clap::builder::BoolishValueParser {
    clap::builder::BoolishValueParser::new()
}
