//! The lines `serve` prints at start, for people: what the layout and the lead cap trade off,
//! what the state file protects, a worker id given back or one that cannot serve yet, who may
//! take IDs and where the metrics are.

use super::model::auth::{Auth, exposure_warning};
use super::model::plan::Lead;
use super::model::routes::{Exposure, MAX_COUNT, usages};
use crate::text::{epoch_text, thousands};
use ringflake::{CachedUidGenerator, GivenBack, Health, Layout, LeadPolicy};
use std::fmt::Write as _;
use std::path::Path;

/// The start-up lines on who may take IDs, where metrics are, and what runs in the clear; with
/// `tls_key` (HTTPS), a warning first if every user of the machine can read it, as for the token
/// and ID key files.
pub fn access_lines(
    auth: Option<&Auth>,
    internal: Option<std::net::SocketAddr>,
    main: std::net::SocketAddr,
    tls_key: Option<&Path>,
) -> String {
    let secure = tls_key.is_some();
    let mut lines = tls_key
        .and_then(|key| exposure_warning("TLS key", key))
        .unwrap_or_default();
    match auth {
        Some(auth) => {
            if let Some(warning) = exposure_warning("token file", auth.path()) {
                lines.push_str(&warning);
            }
            let n = auth.count();
            let _ = writeln!(
                lines,
                "ringflake: {n} bearer token{} from {} (read again on SIGHUP): the ID, parse \
                 and Leaf routes answer 401 without one{}",
                if n == 1 { "" } else { "s" },
                auth.path().display(),
                if secure {
                    ""
                } else {
                    "; without --tls-cert the tokens cross the network in the clear"
                }
            );
        }
        None if !main.ip().is_loopback() => {
            let _ = writeln!(
                lines,
                "ringflake: no --auth-token-file: anyone who reaches {main} can take IDs"
            );
        }
        None => {}
    }
    if let Some(addr) = internal {
        lines.push_str(&internal_line(addr, main));
    }
    lines
}

/// The `--metrics-listen` line: the routes that moved to the internal address `internal` (served
/// there, not on `main`) and those both serve, read from the route table.
fn internal_line(internal: std::net::SocketAddr, main: std::net::SocketAddr) -> String {
    let on = |there: bool, here: bool| {
        and_list(&usages(|e| {
            e.served_on(Exposure::Internal) == there && e.served_on(Exposure::Ids) == here
        }))
    };
    format!(
        "ringflake: metrics on http://{internal}/metrics; {} answer there, not on {main}; {} \
         answer on both\n",
        on(true, false),
        on(true, true)
    )
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[&str]) -> String {
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => (*last).to_string(),
        Some((last, others)) => format!("{} and {last}", others.join(", ")),
    }
}

/// The start-up lines on public IDs (`--id-key-file`): where the key applies, and a warning if
/// every user can read its file. The key itself is never shown.
pub fn public_id_lines(key_file: &Path) -> String {
    let mut lines = exposure_warning("ID key file", key_file).unwrap_or_default();
    lines.push_str(
        "ringflake: public IDs: /id and /ids hand out IDs through the key of --id-key-file, \
         /parse reads them back; gRPC's Next, Batch and Stream and Leaf's \
         /api/snowflake/get/{key}, which hand out plain IDs, are refused (a plain ID could \
         equal a public one)\n",
    );
    lines
}

/// The start-up line on time: what the layout sustains, what borrowing under `lead` absorbs, and
/// what happens at the cap, in numbers.
pub fn trade_off(layout: &Layout, lead: Lead) -> String {
    // A tick's IDs, every tick of a second (4,096 x 1,000 for Twitter's layout).
    let per_tick = layout.max_sequence() + 1;
    let ticks = layout.unit().per_second();
    let per_second = per_tick.saturating_mul(ticks);
    let rate = thousands(per_second);
    let unit = match layout.unit() {
        ringflake::TimeUnit::Seconds => String::new(),
        unit => format!(" of {unit} ticks"),
    };
    // The last day of a layout that lasts years; the second of one that lasts less.
    let last = layout.last_valid_date();
    let until = match last.split_once('T') {
        Some((date, _)) if layout.max_delta_seconds() >= 366 * 86_400 => date,
        _ => last.as_str(),
    };
    let mut line = format!(
        "ringflake: layout {}/{}/{}{unit} from {} (until {until}): sustains {rate} IDs/s per \
         worker without borrowing; ",
        layout.time_bits(),
        layout.worker_bits(),
        layout.seq_bits(),
        epoch_text(layout),
    );
    match lead {
        Lead::Capped(seconds, policy) => {
            let at_cap = match policy {
                LeadPolicy::Wait => "takes wait for the clock (lead-policy wait)",
                LeadPolicy::Fail => "takes fail with 503 (lead-policy fail)",
            };
            if seconds == 0 {
                let _ = write!(
                    line,
                    "no borrowing (max-lead 0 s): IDs never run ahead of the clock; above that \
                     rate, {at_cap}"
                );
            } else {
                let _ = write!(
                    line,
                    "borrowing absorbs a burst of {} IDs (max-lead {seconds} s); at the cap, {at_cap}",
                    thousands(seconds.saturating_mul(per_second))
                );
            }
            // Ticks now..=now + max_lead.
            let batch = seconds
                .saturating_mul(ticks)
                .saturating_add(1)
                .saturating_mul(per_tick);
            let _ = writeln!(
                line,
                "; /ids?count=N up to {}",
                thousands(batch.min(MAX_COUNT as u64))
            );
        }
        Lead::Unbounded => {
            let _ = writeln!(
                line,
                "borrowing is unbounded (--unbounded-lead, Java's behaviour): every {rate} IDs \
                 beyond that rate use up one more second of the layout's lifetime ahead of the \
                 clock, and how fast that ends it at full speed is your risk"
            );
        }
    }
    line
}

/// The start-up line on the state file: where it is, or what running without one risks.
pub fn state_line(state: Option<&Path>, worker_id: u64, lead: Lead) -> String {
    match state {
        Some(path) => {
            let shown = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
            format!(
                "ringflake: state file {}: a restart of worker id {worker_id} starts above the \
                 last second it records\n",
                shown.display()
            )
        }
        None => {
            let when = match lead {
                Lead::Capped(0, _) => "in the second this run ends".into(),
                Lead::Capped(seconds, _) => {
                    format!("within {seconds} s (max-lead) of this run's end")
                }
                Lead::Unbounded => {
                    "before the clock passes the last second this run borrowed".into()
                }
            };
            format!(
                "ringflake: no state file (--no-state-file): a restart of worker id {worker_id} \
                 {when} can repeat its IDs\n"
            )
        }
    }
}

/// The start-up lines on a worker id given back at start (reserved beyond the lead cap: the id,
/// its reserved second, how far ahead), and on a generator that cannot serve from the start (the
/// reason, and until when).
pub fn reserve_lines(generator: &CachedUidGenerator) -> String {
    let mut lines = String::new();
    if let Some(back) = generator.given_back() {
        lines.push_str(&given_back_line(&back, generator.worker_id()));
    }
    let health = generator.stats().health(generator.layout());
    if !health.is_available() {
        lines.push_str(&unavailable_line(&health));
    }
    lines
}

/// A worker id given back, and the one taken instead.
fn given_back_line(back: &GivenBack, kept: u64) -> String {
    format!(
        "ringflake: worker id {} given back: its IDs may already reach {} (unix second {}), {} s \
         ahead of the clock, beyond the lead cap; took worker id {kept} instead\n",
        back.worker_id,
        rfc3339(back.reserved_until),
        back.reserved_until,
        thousands(back.ahead_seconds()),
    )
}

/// A generator that cannot serve yet, and why.
fn unavailable_line(health: &Health) -> String {
    format!("ringflake: cannot serve: {health}; /healthz answers 503 until then\n")
}

/// A unix second in RFC 3339, UTC.
fn rfc3339(second: i64) -> String {
    jiff::Timestamp::from_second(second)
        .map_or_else(|_| format!("unix second {second}"), |t| t.to_string())
}

/// The start-up lines of the segment mode: the tags served from which table, where the ranges
/// held are kept (or what a restart loses without), the hidden tags; or why it is off.
pub fn segment_lines(
    plan: &super::model::segments::Plan,
    segments: &super::model::segments::Segments,
) -> String {
    use super::model::segments::Hidden;
    let g = match &segments.generator {
        Ok(g) => g,
        Err(why) => {
            return format!(
                "ringflake: warning: segment mode off ({why}): /api/segment/get answers 503\n"
            );
        }
    };
    let tags = g.tags().len();
    let mut lines = format!(
        "ringflake: segments: {tags} biz_tag{} of leaf_alloc in {} at \
         /api/segment/get/{{biz_tag}}\n",
        if tags == 1 { "" } else { "s" },
        segments.table
    );
    match g.state_dir() {
        Some(dir) => {
            let shown = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
            let _ = writeln!(
                lines,
                "ringflake: segment state directory {}: a restart resumes the ranges held",
                shown.display()
            );
        }
        None => lines.push_str(
            "ringflake: no segment state directory (--no-state-file, or another process holds \
             it): a restart loses what is left of each biz_tag's two segments, as Leaf does\n",
        ),
    }
    match &plan.hidden {
        Hidden::None => {}
        Hidden::All => lines.push_str(
            "ringflake: every biz_tag hands out public numbers (--hide-volume '*'): the volume \
             between two numbers does not show\n",
        ),
        Hidden::Tags(tags) => {
            let list: Vec<&str> = tags.iter().map(String::as_str).collect();
            let _ = writeln!(
                lines,
                "ringflake: biz_tag {} hand{} out public numbers (--hide-volume): the volume \
                 between two numbers does not show",
                list.join(", "),
                if list.len() == 1 { "s" } else { "" }
            );
        }
    }
    for (tag, why) in g.skipped() {
        let _ = writeln!(
            lines,
            "ringflake: warning: biz_tag {tag:?} not served: {why}"
        );
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_trade_off_in_numbers() {
        let line = trade_off(
            &Layout::default(),
            Lead::Capped(ringflake::DEFAULT_MAX_LEAD.as_secs(), LeadPolicy::Wait),
        );
        assert_eq!(
            line,
            "ringflake: layout 31/10/22 from 2025-01-01 (until 2093-01-19): sustains 4,194,304 \
             IDs/s per worker without borrowing; borrowing absorbs a burst of 41,943,040 IDs \
             (max-lead 10 s); at the cap, takes wait for the clock (lead-policy wait); \
             /ids?count=N up to 100,000\n"
        );
    }

    #[test]
    fn other_caps_and_epochs() {
        // UidGenerator's default epoch, midnight in Beijing: not a UTC date.
        let small = Layout::new(30, 23, 10, 1_463_673_600).unwrap();
        let line = trade_off(&small, Lead::Capped(1, LeadPolicy::Fail));
        assert!(
            line.starts_with(
                "ringflake: layout 30/23/10 from 2016-05-19T16:00:00Z (until 2050-05-29): "
            ),
            "{line}"
        );
        assert!(
            line.contains(
                "sustains 1,024 IDs/s per worker without borrowing; borrowing absorbs a burst of \
                 1,024 IDs (max-lead 1 s); at the cap, takes fail with 503 (lead-policy fail); \
                 /ids?count=N up to 2,048\n"
            ),
            "{line}"
        );
        let line = trade_off(&small, Lead::Capped(0, LeadPolicy::Wait));
        assert!(
            line.contains("no borrowing (max-lead 0 s): IDs never run ahead of the clock; above that rate, takes wait for the clock (lead-policy wait); /ids?count=N up to 1,024"),
            "{line}"
        );
        let line = trade_off(&Layout::default(), Lead::Unbounded);
        assert!(
            line.contains(
                "borrowing is unbounded (--unbounded-lead, Java's behaviour): every 4,194,304 IDs"
            ),
            "{line}"
        );
        assert!(line.contains("is your risk\n"), "{line}");
    }

    #[test]
    fn the_state_file_or_the_risk() {
        let line = state_line(
            Some(Path::new("/var/lib/ids/ringflake.state")),
            5,
            Lead::Unbounded,
        );
        assert_eq!(
            line,
            "ringflake: state file /var/lib/ids/ringflake.state: a restart of worker id 5 starts \
             above the last second it records\n"
        );
        let line = state_line(None, 5, Lead::Capped(10, LeadPolicy::Wait));
        assert_eq!(
            line,
            "ringflake: no state file (--no-state-file): a restart of worker id 5 within 10 s \
             (max-lead) of this run's end can repeat its IDs\n"
        );
        let line = state_line(None, 5, Lead::Capped(0, LeadPolicy::Wait));
        assert!(
            line.contains("a restart of worker id 5 in the second this run ends can repeat"),
            "{line}"
        );
        let line = state_line(None, 5, Lead::Unbounded);
        assert!(
            line.contains(
                "a restart of worker id 5 before the clock passes the last second this run \
                 borrowed can repeat its IDs"
            ),
            "{line}"
        );
    }

    #[test]
    fn a_worker_id_given_back_or_reserved_ahead() {
        let back = GivenBack {
            worker_id: 1,
            reserved_until: 1_800_086_400,
            now: 1_800_000_000,
        };
        assert_eq!(
            given_back_line(&back, 2),
            "ringflake: worker id 1 given back: its IDs may already reach 2027-01-16T08:00:00Z \
             (unix second 1800086400), 86,400 s ahead of the clock, beyond the lead cap; took \
             worker id 2 instead\n"
        );
        let health = Health::ReservedAhead {
            worker_id: 7,
            reserved_until: 1_800_086_400,
            serves_at: 1_800_086_391,
            now: 1_800_000_000,
        };
        let line = unavailable_line(&health);
        assert!(
            line.starts_with("ringflake: cannot serve: worker id 7 reserved ahead of the clock"),
            "{line}"
        );
        assert!(
            line.ends_with("in 86391 s; /healthz answers 503 until then\n"),
            "{line}"
        );
    }
}
