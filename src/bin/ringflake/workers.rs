//! `ringflake workers`: the worker table (WORKER_NODE), one row per line, and a summary.

use crate::args::WorkersArgs;
use crate::text::stdout_error;
use std::io::Write;

/// Prints the rows in aligned columns, then how many there are against the layout's worker ids.
pub fn run(a: &WorkersArgs, matches: &clap::ArgMatches) -> Result<(), String> {
    let (tz, layout) = a.layout.zone_and_layout()?;
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
    let mut widths = [0usize; 6];
    for line in &lines {
        for (w, cell) in widths.iter_mut().zip(line) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for line in &lines {
        let mut s = String::new();
        for (i, (cell, w)) in line.iter().zip(widths).enumerate() {
            if i + 1 == line.len() {
                s.push_str(cell);
            } else {
                s.push_str(&format!("{cell:<w$}  "));
            }
        }
        if let Err(e) = writeln!(out, "{s}") {
            return stdout_error(e);
        }
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
    writeln!(out, "{summary}").or_else(stdout_error)
}
