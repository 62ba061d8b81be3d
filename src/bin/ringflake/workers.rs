//! `ringflake workers`: the worker table (WORKER_NODE), or the ZooKeeper ids (Meituan Leaf's
//! znodes), one per line, and a summary.

use crate::args::WorkersArgs;
use crate::text::stdout_error;
use std::io::Write;

/// Prints the rows in aligned columns, then how many there are against the layout's worker ids.
pub fn run(a: &WorkersArgs, matches: &clap::ArgMatches) -> Result<(), String> {
    let (tz, layout) = a.layout.zone_and_layout()?;
    if a.zk.zookeeper.is_some() {
        return zookeeper(a, matches, &tz, &layout);
    }
    a.zk.only_with_zookeeper()?;
    let assigner = a.db.assigner(matches)?;
    let rows = assigner.list().map_err(|e| e.to_string())?;
    let mut lines = vec![[
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
        lines.push([
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

/// `--zookeeper`: every child of Leaf's forever path, with what ringflake keeps beside it.
fn zookeeper(
    a: &WorkersArgs,
    matches: &clap::ArgMatches,
    tz: &ringflake::TimeZone,
    layout: &ringflake::Layout,
) -> Result<(), String> {
    let others = crate::args::given(crate::args::sub(matches), &["db", "mysql", "postgres"]);
    if let Some((flag, _)) = others.first() {
        return Err(format!(
            "--zookeeper and --{flag} exclude each other: list one source"
        ));
    }
    let assigner = a.zk.assigner()?;
    let ids = assigner.list().map_err(|e| e.to_string())?;
    let mut lines = vec![[
        "ID".to_string(),
        "ADDRESS".into(),
        "MADE_BY".into(),
        "LIVE".into(),
        "LEAF_TIMESTAMP".into(),
        "REACH".into(),
    ]];
    for w in &ids {
        lines.push([
            w.worker_id.to_string(),
            w.address.clone(),
            if w.ringflake { "ringflake" } else { "leaf" }.into(),
            if w.live { "yes" } else { "no" }.into(),
            when(tz, w.leaf_timestamp_ms.map(|ms| ms.div_euclid(1000))),
            when(tz, w.reach),
        ]);
    }
    let highest = ids.iter().map(|w| w.worker_id).max().unwrap_or(0);
    let summary = format!(
        "{} {} in {}; highest worker id {highest} of the layout's {} (worker bits {})",
        ids.len(),
        if ids.len() == 1 { "id" } else { "ids" },
        assigner.describe(),
        layout.max_worker_id(),
        layout.worker_bits()
    );
    print_table(&lines, &summary)
}

/// Prints `lines` in aligned columns, then `summary`.
pub fn print_table<const N: usize>(lines: &[[String; N]], summary: &str) -> Result<(), String> {
    let mut widths = [0usize; N];
    for line in lines {
        for (w, cell) in widths.iter_mut().zip(line) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for line in lines {
        let mut s = String::new();
        for (i, (cell, w)) in line.iter().zip(widths).enumerate() {
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
