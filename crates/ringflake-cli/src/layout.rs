//! `ringflake layout`: the layout planner, the proposals of [`ringflake::plan`] for a person to
//! read.

use crate::args::PlanArgs;
use ringflake::plan::{
    Assessment, Demand, epoch_above, minimum_widths, minimum_widths_above, propose, propose_above,
};
use ringflake::{DEFAULT_MAX_LEAD, Layout, TimeZone};
use ringflake_server::text::thousands;
use std::fmt::Write as _;

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
    if epoch_flag.starts_with("--layout") {
        let _ = writeln!(
            out,
            "   flags      {epoch_flag} ({}/{}/{} bits of {} ticks from {})",
            l.time_bits(),
            l.worker_bits(),
            l.seq_bits(),
            l.unit(),
            ringflake_server::text::epoch_text(&l)
        );
    } else {
        let _ = writeln!(
            out,
            "   flags      --time-bits {} --worker-bits {} --seq-bits {} {epoch_flag}",
            l.time_bits(),
            l.worker_bits(),
            l.seq_bits()
        );
    }
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
    let live = if a.holds_live_nodes() {
        format!("hold the {} live ones", thousands(a.live_worker_ids))
    } else {
        format!(
            "TOO FEW for the {} live ones: more worker bits",
            thousands(a.live_worker_ids)
        )
    };
    let no_recycle = match a.worker_id_years() {
        None => "no restarts, none used up".to_string(),
        Some(y) => {
            let verdict = if a.worker_ids_last(demand) {
                format!("lasts the {} years", demand.years)
            } else {
                format!(
                    "short of {} years: keep the default, recycling",
                    demand.years
                )
            };
            format!(
                "{} used per year: gone in {} years ({verdict})",
                thousands(a.worker_ids_per_year),
                years(y)
            )
        }
    };
    let _ = writeln!(
        out,
        "   workers    {ids} worker ids {live} (recycling, the default); with --no-recycle, \
         {no_recycle}"
    );
    let fleet = a.fleet_rate_without_borrowing(demand.nodes);
    let _ = writeln!(
        out,
        "   fleet      {} IDs/s across {} node{} without borrowing ({} the {} IDs/s demanded)",
        thousands(fleet),
        thousands(demand.nodes),
        if demand.nodes == 1 { "" } else { "s" },
        if fleet >= demand.fleet_ids_per_second() {
            "covers"
        } else {
            "BELOW: every node borrows, for"
        },
        thousands(demand.fleet_ids_per_second())
    );
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

/// The lines describing `plain` moved above existing ID `id`: its epoch moved back (to midnight
/// in `tz`, so that `--epoch` can say it), what that costs, or why no epoch can do it.
fn describe_above(
    out: &mut String,
    plain: &Assessment,
    id: u64,
    demand: &Demand,
    tz: &TimeZone,
    plain_flag: &str,
) -> Result<(), String> {
    let now = plain.now;
    let moved = match epoch_above(&plain.layout, id, now) {
        Ok(moved) => moved,
        Err(e) => {
            describe(out, plain, demand, tz, plain_flag);
            let _ = writeln!(out, "   above      IMPOSSIBLE: {e}");
            return Ok(());
        }
    };
    if moved == plain.layout {
        describe(out, plain, demand, tz, plain_flag);
        let _ = writeln!(
            out,
            "   above      its IDs already sort above {id} at this epoch: nothing lost"
        );
        return Ok(());
    }
    // Midnight of the epoch's day: `--epoch` can write it, and it is no later than needed.
    let midnight = jiff::Timestamp::from_second(moved.epoch_seconds())
        .ok()
        .and_then(|t| t.to_zoned(tz.clone()).date().to_zoned(tz.clone()).ok())
        .filter(|z| z.timestamp().as_second() <= moved.epoch_seconds())
        .map(|z| (z.timestamp().as_second(), format!("--epoch {}", z.date())));
    let (epoch, flag) = midnight.unwrap_or((
        moved.epoch_seconds(),
        format!("--epoch-seconds {}", moved.epoch_seconds()),
    ));
    let layout = Layout::new(
        moved.time_bits(),
        moved.worker_bits(),
        moved.seq_bits(),
        epoch,
    )
    .map_err(|e| e.to_string())?;
    if let Err(e) = layout.check_alive_at(now) {
        describe(out, plain, demand, tz, plain_flag);
        let _ = writeln!(out, "   above      IMPOSSIBLE: {e}");
        return Ok(());
    }
    let a = Assessment::of(&layout, demand, now);
    describe(out, &a, demand, tz, &flag);
    let lost = plain.lifetime_seconds - a.lifetime_seconds;
    let _ = writeln!(
        out,
        "   above      first ID {} > {id}: epoch {} instead of {}; costs {} of lifetime ({} instead \
         of {})",
        layout
            .compose((now - epoch) as u64, 0, 0)
            .map_err(|e| e.to_string())?,
        date(epoch, tz),
        date(plain.layout.epoch_seconds(), tz),
        span(lost),
        span(a.lifetime_seconds),
        span(plain.lifetime_seconds),
    );
    Ok(())
}

/// Prints the planner's report as of `--today` (midnight in the zone), else now.
pub fn run(args: &PlanArgs) -> Result<(), String> {
    let now = match &args.today {
        Some(date) => {
            let tz = args.layout.zone()?;
            date.parse::<jiff::civil::Date>()
                .and_then(|d| d.to_zoned(tz))
                .map(|z| z.timestamp().as_second())
                .map_err(|e| {
                    format!("invalid --today {date:?}: expected a date yyyy-MM-dd ({e})")
                })?
        }
        None => jiff::Timestamp::now().as_second(),
    };
    let report = report(args, now)?;
    print!("{report}");
    Ok(())
}

/// The planner's report, as of unix second `now`.
pub fn report(args: &PlanArgs, now: i64) -> Result<String, String> {
    let tz = args.layout.zone()?;
    // The busiest node: its own rate, or its share of the fleet's, whichever is larger.
    let share = args
        .fleet_rate
        .map_or(0, |fleet| fleet.div_ceil(args.nodes.max(1)));
    let demand = Demand {
        ids_per_second: args.rate.unwrap_or(0).max(share),
        nodes: args.nodes,
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
    let fleet = match args.fleet_rate {
        Some(rate) => format!("{} IDs/s across the fleet, ", thousands(rate)),
        None => String::new(),
    };
    let _ = writeln!(
        out,
        "demand     {fleet}{} IDs/s on the busiest node, {} live node{}, {} restarts a day ({} \
         worker ids a year with --no-recycle), {} years",
        thousands(demand.ids_per_second),
        thousands(demand.nodes),
        if demand.nodes == 1 { "" } else { "s" },
        thousands(demand.restarts_per_day),
        thousands(demand.worker_ids_per_year()),
        demand.years
    );
    let _ = writeln!(out, "epoch      {epoch_note}; midnight in {zone_name}");

    let restarting = demand.live_worker_ids() - demand.nodes.max(1);
    let _ = writeln!(
        out,
        "minimum    time {t} bits ({} years from the epoch), worker {w} bits ({} live worker ids: \
         {} node{} and {} restarted within a lease window), sequence {s} bits ({} IDs/s without \
         borrowing): {} of 63 bits",
        demand.years,
        thousands(demand.live_worker_ids()),
        thousands(demand.nodes),
        if demand.nodes == 1 { "" } else { "s" },
        thousands(restarting),
        thousands(1 << s),
        t + w + s
    );
    if let Some(id) = args.above {
        let (t, _, _) = minimum_widths_above(&demand, id, epoch, now).map_err(|e| e.to_string())?;
        let _ = writeln!(
            out,
            "above      every new ID must sort above {id}: each layout below gets the latest \
             epoch (midnight in {zone_name}) from which its first ID, at any worker id, is \
             higher; the seconds before it are lost to the time field, so it needs {t} time bits"
        );
    }
    let _ = writeln!(out);
    let proposals = match args.above {
        None => propose(&demand, epoch, now),
        Some(id) => propose_above(&demand, id, epoch, now),
    }
    .map_err(|e| e.to_string())?;
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
        match args.above {
            None => describe(&mut out, &p.assessment, &demand, &tz, &epoch_flag),
            Some(id) => {
                // The same widths at the plain epoch: what moving it back costs.
                let plain = Layout::new(l.time_bits(), l.worker_bits(), l.seq_bits(), epoch)
                    .map_err(|e| e.to_string())?;
                let plain = Assessment::of(&plain, &demand, now);
                describe_above(&mut out, &plain, id, &demand, &tz, &epoch_flag)?
            }
        }
        let _ = writeln!(out);
    }
    let mut known: Vec<(String, Layout, String)> = Vec::new();
    if let Some(name) = &args.layout.preset {
        let layout = args.layout.preset_layout(name)?;
        let note = if layout.max_id() < i64::MAX as u64 {
            format!("; IDs below 2^{}", 64 - layout.max_id().leading_zeros())
        } else {
            String::new()
        };
        known.push((
            format!(
                "your layout, the preset {name}: {}/{}/{} bits of {} ticks{note}",
                layout.time_bits(),
                layout.worker_bits(),
                layout.seq_bits(),
                layout.unit()
            ),
            layout,
            format!("--layout {name}"),
        ));
    }
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
        let widths = |l: &Layout| (l.time_bits(), l.worker_bits(), l.seq_bits());
        if proposals
            .iter()
            .any(|p| widths(&p.assessment.layout) == widths(&layout))
            || known.iter().any(|k| k.1 == layout)
        {
            continue;
        }
        known.push((format!("{name} {t}/{w}/{s}"), layout, epoch_flag.clone()));
    }
    let _ = writeln!(
        out,
        "{}",
        if args.above.is_some() {
            "for comparison, each with its epoch moved above the ID:"
        } else {
            "for comparison, at the same epoch:"
        }
    );
    for (name, layout, flag) in &known {
        let a = Assessment::of(layout, &demand, now);
        let _ = writeln!(out, "-  {name}");
        match args.above {
            None => describe(&mut out, &a, &demand, &tz, flag),
            // A preset keeps its epoch: say whether its IDs of today are above.
            Some(id) if flag.starts_with("--layout") => {
                describe(&mut out, &a, &demand, &tz, flag);
                let first = layout
                    .compose(layout.tick_at(now.saturating_mul(1000)), 0, 0)
                    .map_err(|e| e.to_string())?;
                let verdict = if first > id {
                    "above: serve --above ID starts"
                } else {
                    "NOT above: serve --above ID refuses to start"
                };
                let _ = writeln!(
                    out,
                    "   above      its epoch is fixed; its first ID today, at worker id 0, is \
                     {first}: {verdict}"
                );
            }
            Some(id) => describe_above(&mut out, &a, id, &demand, &tz, flag)?,
        }
    }
    let _ = writeln!(
        out,
        "\nlifetimes assume the busiest node runs at the rate without a break; borrowing moves IDs \
         from the future, it never adds any: only sequence + time bits do"
    );
    Ok(out)
}
