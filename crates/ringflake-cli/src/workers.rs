//! `ringflake workers`: the worker table (WORKER_NODE), or the ids of another source (the
//! ZooKeeper ids in Meituan Leaf's znodes, ...: what its [`ringflake::Source::list`] says), one
//! per line, and a summary.

use crate::args::WorkersArgs;
use crate::sources::SourceArgs;
use ringflake::Cell;
use ringflake_server::text::stdout_error;
use std::io::Write;

/// Prints the rows in aligned columns, then how many there are against the layout's worker ids.
pub fn run(a: &WorkersArgs, matches: &clap::ArgMatches) -> Result<(), String> {
    let (tz, layout) = a.layout.zone_and_layout()?;
    let m = crate::args::sub(matches);
    let other = crate::args::pick(m, &SourceArgs::flags().collect::<Vec<_>>(), "source")?;
    if let Some(kind) = other.and_then(SourceArgs::kind) {
        return listing(a, matches, kind, &tz, &layout);
    }
    a.sources.only_with_their_source(None)?;
    let assigner = a.db.assigner(matches)?;
    let rows = assigner.list().map_err(|e| e.to_string())?;
    let mut lines = vec![vec![
        "ID".to_string(),
        "HOST_NAME".into(),
        "PORT".into(),
        "TYPE".into(),
        "LAUNCH_DATE".into(),
        "LEASE_UNTIL".into(),
    ]];
    for r in &rows {
        let kind = match r.node_type {
            1 => "CONTAINER".to_string(),
            2 => "ACTUAL".to_string(),
            n => n.to_string(),
        };
        let lease = if r.lease_until <= 0 {
            "-".to_string()
        } else {
            jiff::Timestamp::from_second(r.lease_until)
                .map(|t| {
                    t.to_zoned(tz.clone())
                        .strftime("%Y-%m-%d %H:%M:%S")
                        .to_string()
                })
                .unwrap_or_else(|_| r.lease_until.to_string())
        };
        lines.push(vec![
            r.id.to_string(),
            r.host_name.clone(),
            r.port.clone(),
            kind,
            r.launch_date.clone(),
            lease,
        ]);
    }
    let highest = rows.iter().map(|r| r.id).max().unwrap_or(0);
    let summary = format!(
        "{} {} in {}; highest worker id {highest} of the layout's {} (worker bits {})",
        rows.len(),
        if rows.len() == 1 { "row" } else { "rows" },
        assigner.describe(),
        layout.max_worker_id(),
        layout.worker_bits()
    );
    print_table(&lines, &summary)
}

/// A unix second in `tz`, `-` for none.
fn when(tz: &ringflake::TimeZone, second: Option<i64>) -> String {
    match second {
        None => "-".into(),
        Some(s) => jiff::Timestamp::from_second(s)
            .map(|t| {
                t.to_zoned(tz.clone())
                    .strftime("%Y-%m-%d %H:%M:%S")
                    .to_string()
            })
            .unwrap_or_else(|_| s.to_string()),
    }
}

/// Another source's ids (`--zookeeper`: every child of Leaf's forever path, with what ringflake
/// keeps beside it).
fn listing(
    a: &WorkersArgs,
    matches: &clap::ArgMatches,
    kind: &ringflake::SourceKind,
    tz: &ringflake::TimeZone,
    layout: &ringflake::Layout,
) -> Result<(), String> {
    let others = crate::args::given(crate::args::sub(matches), &["db", "mysql", "postgres"]);
    if let Some((flag, _)) = others.first() {
        return Err(format!(
            "--{} and --{flag} exclude each other: list one source",
            kind.flag
        ));
    }
    a.sources.only_with_their_source(Some(kind.flag))?;
    let mut settings = a.sources.settings(kind);
    settings.timeout = a.db.db_timeout.map(std::time::Duration::from_secs);
    settings.ca_file = a.db.db_ca_file.clone();
    let source = kind.open(&settings).map_err(|e| e.to_string())?;
    let listing = source.list().map_err(|e| e.to_string())?;
    let mut header = vec!["ID".to_string()];
    header.extend(listing.columns.iter().map(|c| c.to_string()));
    let mut lines = vec![header];
    for id in &listing.ids {
        let mut line = vec![id.worker_id.to_string()];
        line.extend(id.cells.iter().map(|c| match c {
            Cell::Text(t) => t.clone(),
            Cell::Second(s) => when(tz, *s),
        }));
        lines.push(line);
    }
    let n = listing.ids.len();
    let highest = listing.ids.iter().map(|w| w.worker_id).max().unwrap_or(0);
    let summary = format!(
        "{n} {} in {}; highest worker id {highest} of the layout's {} (worker bits {})",
        if n == 1 {
            listing.unit.0
        } else {
            listing.unit.1
        },
        source.describe(),
        layout.max_worker_id(),
        layout.worker_bits()
    );
    print_table(&lines, &summary)
}

/// Prints `lines` in aligned columns, then `summary`.
pub fn print_table<L: AsRef<[String]>>(lines: &[L], summary: &str) -> Result<(), String> {
    let mut widths = vec![0usize; lines.iter().map(|l| l.as_ref().len()).max().unwrap_or(0)];
    for line in lines {
        let line = line.as_ref();
        for (w, cell) in widths.iter_mut().zip(line) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for line in lines {
        let line = line.as_ref();
        let mut s = String::new();
        for (i, (cell, w)) in line.iter().zip(widths.iter().copied()).enumerate() {
            if i + 1 == line.len() {
                s.push_str(cell);
            } else {
                s.push_str(&format!("{cell:<w$}  "));
            }
        }
        if let Err(e) = writeln!(out, "{}", s.trim_end()) {
            return stdout_error(e);
        }
    }
    writeln!(out, "{summary}").or_else(stdout_error)
}
