//! `ringflake segments`: the business tags of Meituan Leaf's `leaf_alloc` table in the worker
//! database, listed or added, for operators who do not write SQL.

use crate::args::{DbArgs, SegmentsAction, pick, sub};
use crate::segment_args::NewTag;
use crate::workers::print_table;
use ringflake::{DEFAULT_SQLITE_PATH, SegmentTable};
use std::path::PathBuf;

/// Lists or adds, as the action says.
pub fn run(action: &SegmentsAction, matches: &clap::ArgMatches) -> Result<(), String> {
    // The action's own matches (`segments list --db ...`): the flags are there.
    let matches = sub(sub(matches));
    match action {
        SegmentsAction::List { db } => list(&table(db, matches, true)?),
        SegmentsAction::Add { tag, db } => add(tag, &table(db, matches, false)?),
    }
}

/// The worker database's `leaf_alloc`. Listing a SQLite file that does not exist is an error,
/// not a new empty file.
fn table(db: &DbArgs, matches: &clap::ArgMatches, listing: bool) -> Result<SegmentTable, String> {
    let err = |e: ringflake::Error| e.to_string();
    let chosen = pick(matches, &["db", "mysql", "postgres"], "database")?;
    let mut table = match chosen {
        Some("mysql") => {
            SegmentTable::mysql(db.mysql.as_deref().unwrap_or_default()).map_err(err)?
        }
        Some("postgres") => {
            SegmentTable::postgres(db.postgres.as_deref().unwrap_or_default()).map_err(err)?
        }
        _ => {
            let path = db
                .db
                .clone()
                .unwrap_or_else(|| PathBuf::from(DEFAULT_SQLITE_PATH));
            if listing && !path.is_file() {
                return Err(format!(
                    "database sqlite file {}: no such file; `ringflake segments add` or `ringflake \
                     serve` creates it",
                    path.display()
                ));
            }
            SegmentTable::sqlite(path).map_err(err)?
        }
    };
    if let Some(ca) = &db.db_ca_file {
        table = table.ca_file(ca);
    }
    if let Some(s) = db.db_timeout {
        table = table.timeout(std::time::Duration::from_secs(s));
    }
    Ok(table)
}

/// Prints every row in aligned columns, then how many.
fn list(table: &SegmentTable) -> Result<(), String> {
    let rows = table.rows().map_err(|e| e.to_string())?;
    let mut lines = vec![[
        "BIZ_TAG".to_string(),
        "MAX_ID".into(),
        "STEP".into(),
        "SERVED".into(),
        "DESCRIPTION".into(),
    ]];
    for r in &rows {
        let served = match ringflake::SegmentTable::servable(&r.biz_tag) {
            Ok(()) if (1..=i64::from(i32::MAX)).contains(&r.step) => "yes".to_string(),
            Ok(()) => format!("no: step {} is not 1 to {}", r.step, i32::MAX),
            Err(e) => format!("no: {e}"),
        };
        lines.push([
            ringflake_server::text::echo(&r.biz_tag),
            r.max_id.to_string(),
            r.step.to_string(),
            served,
            r.description.clone().unwrap_or_default(),
        ]);
    }
    let summary = format!(
        "{} biz_tag{} in leaf_alloc of {}",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        table.describe()
    );
    print_table(&lines, &summary)
}

/// Adds the row, or says it exists (changing nothing).
fn add(a: &NewTag, table: &SegmentTable) -> Result<(), String> {
    let added = table
        .add(&a.tag, a.start, a.step, &a.description)
        .map_err(|e| e.to_string())?;
    if !added {
        return Err(format!(
            "biz_tag {} is already in leaf_alloc of {}: nothing changed (`ringflake segments list` \
             shows it)",
            a.tag,
            table.describe()
        ));
    }
    use std::io::Write as _;
    writeln!(
        std::io::stdout().lock(),
        "added biz_tag {} to leaf_alloc of {}: numbers from {}, {} a claim",
        a.tag,
        table.describe(),
        a.start,
        a.step
    )
    .or_else(ringflake_server::text::stdout_error)
}
