//! `ringflake layout`: the layout planner, the proposals of [`ringflake::plan`] for a person to
//! read.

use crate::args::PlanArgs;
use ringflake::plan::{Assessment, Demand, minimum_widths, propose};
use ringflake::{DEFAULT_MAX_LEAD, Layout, TimeZone};
use std::fmt::Write as _;

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A number of years for reading: one decimal below 100, whole years with separators above.
fn years(y: f64) -> String {
    if y < 100.0 {
        format!("{y:.1}")
    } else {
        thousands(y as u64)
    }
}

/// A span of seconds for reading: hours below a day, days below a year, else years.
fn span(seconds: f64) -> String {
    let day = 86_400.0;
    let year = ringflake::plan::SECONDS_PER_YEAR as f64;
    if seconds < day {
        format!("{:.1} hours", seconds / 3600.0)
    } else if seconds < year {
        format!("{:.1} days", seconds / day)
    } else {
        format!("{} years", years(seconds / year))
    }
}

/// A unix second as a date in `tz`, or "after 9999" beyond the calendar.
fn date(seconds: i64, tz: &TimeZone) -> String {
    jiff::Timestamp::from_second(seconds)
        .map(|t| t.to_zoned(tz.clone()).date().to_string())
        .unwrap_or_else(|_| "after year 9999".into())
}

/// The lines describing one assessment.
fn describe(out: &mut String, a: &Assessment, demand: &Demand, tz: &TimeZone, epoch_flag: &str) {
    let l = a.layout;
    let rate = thousands(demand.ids_per_second);
    let _ = writeln!(
        out,
        "   flags      --time-bits {} --worker-bits {} --seq-bits {} {epoch_flag}",
        l.time_bits(),
        l.worker_bits(),
        l.seq_bits()
    );
    let verdict = if a.lifetime_years() >= f64::from(demand.years) {
        format!("lasts the {} years", demand.years)
    } else {
        format!("SHORT of {} years", demand.years)
    };
    let _ = writeln!(
        out,
        "   lifetime   {} at {rate} IDs/s, time bits run out {} ({verdict})",
        span(a.lifetime_seconds),
        date(a.exhausted_at(), tz),
    );
    let ids = thousands(l.max_worker_id());
    let workers = match a.worker_id_years() {
        None => format!("{ids} worker ids; no restarts, none used up"),
        Some(y) => {
            let verdict = if a.worker_ids_last(demand) {
                format!("lasts the {} years", demand.years)
            } else {
                format!(
                    "SHORT of {} years: keep the default, recycling",
                    demand.years
                )
            };
            format!(
                "{ids} worker ids, {} used per year with --no-recycle: gone in {} years ({verdict})",
                thousands(a.worker_ids_per_year),
                years(y)
            )
        }
    };
    let _ = writeln!(out, "   workers    {workers}");
    let per_worker = thousands(a.rate_without_borrowing());
    let cap = DEFAULT_MAX_LEAD.as_secs();
    let borrowing = if a.borrows() {
        let lead = a.time_per_second - 1.0;
        format!(
            "needs {:.2} seconds of the time field per second at {rate} IDs/s; a worker serves \
             {per_worker} IDs/s without borrowing, absorbs a burst of {} IDs under the default \
             lead cap ({cap} s), then takes wait for the clock; with --unbounded-lead the lead \
             over the clock grows {lead:.2} s per second ({:.1} hours per hour)",
            a.time_per_second,
            thousands(a.rate_without_borrowing().saturating_mul(cap)),
            lead
        )
    } else {
        format!(
            "none at {rate} IDs/s: a worker serves {per_worker} IDs/s from the current second; each \
             further {per_worker} IDs/s of a burst uses one more second per second, up to the lead \
             cap ({cap} s by default)"
        )
    };
    let _ = writeln!(out, "   borrowing  {borrowing}");
}

/// Prints the planner's report for now.
pub fn run(args: &PlanArgs) -> Result<(), String> {
    let report = report(args, jiff::Timestamp::now().as_second())?;
    print!("{report}");
    Ok(())
}

/// The planner's report, as of unix second `now`.
pub fn report(args: &PlanArgs, now: i64) -> Result<String, String> {
    let tz = args.layout.zone()?;
    let demand = Demand {
        ids_per_second: args.rate,
        restarts_per_day: args.restarts_per_day,
        years: args.years,
    };
    demand.check().map_err(|e| e.to_string())?;
    let (epoch, epoch_note, epoch_flag) = match args.layout.epoch(&tz)? {
        Some(seconds) => (
            seconds,
            format!("{}, as given", date(seconds, &tz)),
            args.layout
                .epoch
                .as_ref()
                .map(|d| format!("--epoch {d}"))
                .unwrap_or_else(|| format!("--epoch-seconds {seconds}")),
        ),
        None => {
            let today = jiff::Timestamp::from_second(now)
                .map_err(|e| e.to_string())?
                .to_zoned(tz.clone())
                .date();
            let seconds = today
                .to_zoned(tz.clone())
                .map_err(|e| e.to_string())?
                .timestamp()
                .as_second();
            (
                seconds,
                format!("{today}, today (a recent epoch wastes no time bits)"),
                format!("--epoch {today}"),
            )
        }
    };
    let zone_name = match tz.iana_name() {
        Some(name) => name.to_string(),
        None => format!(
            "UTC{}",
            tz.to_fixed_offset()
                .map(|o| o.to_string())
                .unwrap_or_default()
        ),
    };
    let (t, w, s) = minimum_widths(&demand, epoch, now).map_err(|e| e.to_string())?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "demand     {} IDs/s on the busiest node, {} restarts a day ({} worker ids a year with \
         --no-recycle), {} years",
        thousands(demand.ids_per_second),
        thousands(demand.restarts_per_day),
        thousands(demand.worker_ids_per_year()),
        demand.years
    );
    let _ = writeln!(out, "epoch      {epoch_note}; midnight in {zone_name}");
    let _ = writeln!(
        out,
        "minimum    time {t} bits ({} years from the epoch), worker {w} bits ({} worker ids), \
         sequence {s} bits ({} IDs/s without borrowing): {} of 63 bits",
        demand.years,
        thousands(
            demand
                .worker_ids_per_year()
                .saturating_mul(u64::from(demand.years))
        ),
        thousands(1 << s),
        t + w + s
    );
    let _ = writeln!(out);
    let proposals = propose(&demand, epoch, now).map_err(|e| e.to_string())?;
    for (i, p) in proposals.iter().enumerate() {
        let l = p.assessment.layout;
        let _ = writeln!(
            out,
            "{}. {}: {}/{}/{} — {}",
            i + 1,
            p.name,
            l.time_bits(),
            l.worker_bits(),
            l.seq_bits(),
            p.why
        );
        describe(&mut out, &p.assessment, &demand, &tz, &epoch_flag);
        let _ = writeln!(out);
    }
    let mut known: Vec<(String, Layout, String)> = Vec::new();
    if args.layout.has_widths() {
        let (t, w, s) = args.layout.widths();
        let layout = Layout::new(t, w, s, epoch).map_err(|e| e.to_string())?;
        known.push((
            format!("your layout {t}/{w}/{s}"),
            layout,
            epoch_flag.clone(),
        ));
    }
    let d = Layout::default();
    for (name, (t, w, s)) in [
        (
            "ringflake's default widths",
            (d.time_bits(), d.worker_bits(), d.seq_bits()),
        ),
        ("UidGenerator's suggestion", (31, 23, 9)),
        ("UidGenerator's suggestion", (30, 27, 6)),
    ] {
        let layout = Layout::new(t, w, s, epoch).map_err(|e| e.to_string())?;
        if proposals.iter().any(|p| p.assessment.layout == layout)
            || known.iter().any(|k| k.1 == layout)
        {
            continue;
        }
        known.push((format!("{name} {t}/{w}/{s}"), layout, epoch_flag.clone()));
    }
    let _ = writeln!(out, "for comparison, at the same epoch:");
    for (name, layout, flag) in &known {
        let a = Assessment::of(layout, &demand, now);
        let _ = writeln!(out, "-  {name}");
        describe(&mut out, &a, &demand, &tz, flag);
    }
    let _ = writeln!(
        out,
        "\nlifetimes assume the busiest node runs at the rate without a break; borrowing moves IDs \
         from the future, it never adds any: only sequence + time bits do"
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_048_575), "1,048,575");
    }
}
