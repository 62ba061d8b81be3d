//! The status page at `/` and its JSON at `/status`: per generator, its health (the state the
//! library judges, `serving`, `idle`, `held at the lead cap`, `lease at risk` or `unavailable`,
//! and what it means), the worker id, the ring's fill level, lead and lag, the unused IDs (expired
//! apart from discarded), the IDs issued per second over the last [`SAMPLES`] seconds (a chart from
//! the samples of the [sampler](crate::serve::model::sampler), kept in memory, bounded), the time bits left and the date
//! they run out, the lease and the filler.
//!
//! The page is one self-contained file ([`PAGE`], no external script, font or style sheet). The
//! server renders the current values into it, so that it reads without JavaScript; its script
//! polls `/status` every second and writes the new values where the server put the old ones.
//! Every value shown is formatted here, once: `/status` carries each generator's numbers and,
//! under `text`, the same values as the page shows them; the script only copies them.

use crate::serve::model::app::{Generators, Named};
use crate::serve::model::history::SAMPLES;
use crate::serve::model::plan::Lead;
use crate::serve::model::sampler::{EVERY, unix_ms};
use crate::text::{epoch_text, json_string, thousands};
use std::fmt::Write as _;

/// The page, with `<!--CARDS-->` and `<!--GENERATED-->` where the server writes its values.
pub const PAGE: &str = include_str!("status.html");

/// The chart's size in SVG units (the page's script uses the same, read from the element).
const CHART_W: f64 = 360.0;
const CHART_H: f64 = 64.0;

/// The lag the page marks: the default `max-lag` (older IDs are discarded, not handed out).
const LAG_WARN: u64 = 5;

/// A unix second as `2026-11-23 21:45:10 UTC`.
fn utc(second: i64) -> String {
    jiff::Timestamp::from_second(second).map_or_else(
        |_| format!("unix second {second}"),
        |t| t.strftime("%Y-%m-%d %H:%M:%S UTC").to_string(),
    )
}

/// A span of seconds for reading: seconds, minutes, hours, days or years.
fn span(seconds: u64) -> String {
    let s = seconds as f64;
    match seconds {
        0..120 => format!("{seconds} s"),
        120..7_200 => format!("{:.0} min", s / 60.0),
        7_200..172_800 => format!("{:.1} h", s / 3600.0),
        172_800..31_557_600 => format!("{:.0} days", s / 86_400.0),
        _ => format!("{:.1} years", s / 31_557_600.0),
    }
}

/// One generator's values, as numbers and as the page shows them.
struct View {
    name: String,
    healthy: bool,
    reason: Option<String>,
    health: ringflake::Health,
    stats: ringflake::Stats,
    fill: f64,
    rates: Vec<f64>,
    lifetime: u64,
    last_valid: String,
    max_lead: Option<u64>,
    /// `(key, text, state)`: the shown values, state `ok`, `warn` or `bad` (for colour).
    text: Vec<(&'static str, String, &'static str)>,
}

fn view(g: &Named) -> View {
    let s = g.app.generator.stats();
    let layout = g.app.layout;
    let health = s.health(&layout);
    let reason = (!health.is_available()).then(|| health.to_string());
    let fill = if s.capacity == 0 {
        0.0
    } else {
        s.available as f64 / s.capacity as f64
    };
    let rates = g.history.rates();
    let rate = rates.last().copied().unwrap_or(0.0);
    let peak = rates.iter().copied().fold(0.0, f64::max);
    let lifetime = layout.max_delta_seconds();
    let last_valid = layout.last_valid_date();
    let max_lead = match g.lead {
        Lead::Capped(seconds, _) => Some(seconds),
        Lead::Unbounded => None,
    };
    let mut text = Vec::new();
    let mut put = |k, v: String, state| text.push((k, v, state));
    // The state's name in the card's badge, and what it means in its own row.
    let health_state = match health {
        _ if !health.is_available() => "bad",
        ringflake::Health::HeldAtLeadCap { .. } | ringflake::Health::LeaseAtRisk { .. } => "warn",
        _ => "ok",
    };
    put("health", health.state().to_string(), health_state);
    put("detail", health.to_string(), health_state);
    put("worker", s.worker_id.to_string(), "ok");
    put("source", g.source.clone(), "ok");
    put(
        "layout",
        format!(
            "{}/{}/{} bits from {}",
            layout.time_bits(),
            layout.worker_bits(),
            layout.seq_bits(),
            epoch_text(&layout)
        ),
        "ok",
    );
    put(
        "fill",
        format!(
            "{:.1} % ({} of {})",
            fill * 100.0,
            thousands(s.available),
            thousands(s.capacity)
        ),
        if s.available == 0 { "warn" } else { "ok" },
    );
    let lead_text = match max_lead {
        Some(cap) => format!("{} s of {cap} s", s.lead_seconds),
        None => format!("{} s (unbounded)", s.lead_seconds),
    };
    let at_cap = max_lead.is_some_and(|cap| cap > 0 && s.lead_seconds >= cap);
    put("lead", lead_text, if at_cap { "warn" } else { "ok" });
    // A second or two behind is an idle ring's normal; older IDs near max-lag get discarded.
    put(
        "lag",
        format!("{} s", s.lag_seconds),
        if s.lag_seconds >= LAG_WARN {
            "warn"
        } else {
            "ok"
        },
    );
    put(
        "rate",
        format!("{} IDs/s", thousands(rate.round() as u64)),
        "ok",
    );
    put(
        "peak",
        format!(
            "now; peak {} IDs/s in {SAMPLES} s",
            thousands(peak.round() as u64)
        ),
        "ok",
    );
    put("issued", thousands(s.issued), "ok");
    // What nobody took expires (idle capacity, not a fault); what takes claimed and did not hand
    // out is discarded (stale blocks given back, takes that failed).
    put(
        "unused",
        format!(
            "{} expired unused, {} discarded by takes",
            thousands(s.expired),
            thousands(s.discarded.saturating_sub(s.expired))
        ),
        "ok",
    );
    let left_share = if lifetime == 0 {
        0.0
    } else {
        s.remaining_seconds as f64 / lifetime as f64 * 100.0
    };
    let until = last_valid
        .split_once('T')
        .map_or(last_valid.as_str(), |(d, _)| d);
    put(
        "remaining",
        format!(
            "{}, until {until} ({left_share:.1} % left)",
            span(s.remaining_seconds)
        ),
        if s.remaining_seconds < 366 * 86_400 {
            "warn"
        } else {
            "ok"
        },
    );
    let now = unix_ms() / 1000;
    let (lease, lease_state) = match (s.lease_until, s.lease_lost) {
        (Some(until), true) if until < now => {
            (format!("LOST (IDs stopped at {})", utc(until)), "bad")
        }
        (Some(until), true) => (
            format!(
                "AT RISK: extensions fail; held until {} (+{} s)",
                utc(until),
                until.saturating_sub(now)
            ),
            "warn",
        ),
        (Some(until), false) => (
            format!(
                "held until {} (+{} s)",
                utc(until),
                until.saturating_sub(now)
            ),
            "ok",
        ),
        (None, _) => ("none (no lease: fixed id or --no-recycle)".into(), "ok"),
    };
    let (lease, lease_state) = match s.lease_lost_writes {
        0 => (lease, lease_state),
        n => (
            format!(
                "{lease}; {n} LOST WRITE{}: the worker table forgot this node's write (a failover \
                 to a standby that lacked it?), the worker id was replaced",
                if n == 1 { "" } else { "S" }
            ),
            "bad",
        ),
    };
    put("lease", lease, lease_state);
    put(
        "filler",
        if s.filler_up { "up" } else { "DOWN" }.into(),
        if s.filler_up { "ok" } else { "bad" },
    );
    put(
        "state",
        g.state
            .as_ref()
            .map_or("none".into(), |p| p.display().to_string()),
        "ok",
    );
    View {
        name: g.name.clone(),
        healthy: reason.is_none(),
        reason,
        health,
        stats: s,
        fill,
        rates,
        lifetime,
        last_valid,
        max_lead,
        text,
    }
}

/// The chart's polyline points for `rates`, newest at the right edge, scaled to the peak.
fn points(rates: &[f64]) -> String {
    let peak = rates.iter().copied().fold(0.0, f64::max).max(1.0);
    let step = CHART_W / (SAMPLES - 1) as f64;
    let start = SAMPLES.saturating_sub(rates.len());
    let mut out = String::new();
    for (i, r) in rates.iter().enumerate() {
        let x = (start + i) as f64 * step;
        let y = CHART_H - r / peak * (CHART_H - 2.0) - 1.0;
        let _ = write!(out, "{}{x:.1},{y:.1}", if i == 0 { "" } else { " " });
    }
    out
}

/// The area under the chart's line: the line closed along the bottom edge (the page's script
/// does the same with the points `/status` sends).
fn area(points: &str) -> String {
    let x = |p: Option<&str>| p.and_then(|p| p.split(',').next()).map(str::to_string);
    match (
        x(points.split(' ').next()),
        x(points.split(' ').next_back()),
    ) {
        (Some(first), Some(last)) if !points.is_empty() => {
            format!("{first},{CHART_H:.1} {points} {last},{CHART_H:.1}")
        }
        _ => String::new(),
    }
}

/// `/status`: `{"unix":…,"sample_seconds":1,"samples":120,"generators":[…]}`.
pub fn json(generators: &Generators) -> String {
    let mut out = String::with_capacity(2048);
    let _ = write!(
        out,
        "{{\"unix\":{},\"sample_seconds\":{},\"samples\":{SAMPLES},\"generators\":[",
        unix_ms() / 1000,
        EVERY.as_secs()
    );
    for (i, g) in generators.iter().enumerate() {
        let v = view(g);
        let s = &v.stats;
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"name\":");
        json_string(&mut out, &v.name);
        let _ = write!(out, ",\"healthy\":{},\"reason\":", v.healthy);
        match &v.reason {
            Some(r) => json_string(&mut out, r),
            None => out.push_str("null"),
        }
        out.push_str(",\"state\":");
        json_string(&mut out, v.health.state());
        out.push_str(",\"detail\":");
        json_string(&mut out, &v.health.to_string());
        let _ = write!(
            out,
            ",\"until\":{}",
            v.health.until().map_or("null".into(), |u| u.to_string())
        );
        let layout = g.app.layout;
        let _ = write!(
            out,
            ",\"worker_id\":{},\"time_bits\":{},\"worker_bits\":{},\"seq_bits\":{},\"epoch_seconds\":{},\
             \"capacity\":{},\"available\":{},\"fill\":{:.4},\"lead_seconds\":{},\"max_lead_seconds\":{},\
             \"lag_seconds\":{},\"issued\":{},\"discarded\":{},\"expired\":{},\"take_waits\":{},\
             \"idle_seconds\":{},\"waiting_takes\":{},\"waiting_ids\":{},\"heals\":{},\
             \"remaining_seconds\":{},\"lifetime_seconds\":{},\"runs_out\":\"{}\",\
             \"lease_until\":{},\"lease_lost\":{},\"lease_lost_writes\":{},\"filler_up\":{},\"rates\":[",
            s.worker_id,
            layout.time_bits(),
            layout.worker_bits(),
            layout.seq_bits(),
            layout.epoch_seconds(),
            s.capacity,
            s.available,
            v.fill,
            s.lead_seconds,
            v.max_lead.map_or("null".into(), |m| m.to_string()),
            s.lag_seconds,
            s.issued,
            s.discarded,
            s.expired,
            s.take_waits,
            s.idle_seconds,
            s.waiting_takes,
            s.waiting_ids,
            s.heals,
            s.remaining_seconds,
            v.lifetime,
            v.last_valid,
            s.lease_until.map_or("null".into(), |u| u.to_string()),
            s.lease_lost,
            s.lease_lost_writes,
            s.filler_up,
        );
        for (j, r) in v.rates.iter().enumerate() {
            let _ = write!(out, "{}{:.1}", if j == 0 { "" } else { "," }, r);
        }
        out.push_str("],\"points\":");
        json_string(&mut out, &points(&v.rates));
        out.push_str(",\"text\":{");
        for (j, (k, t, state)) in v.text.iter().enumerate() {
            let _ = write!(out, "{}\"{k}\":", if j == 0 { "" } else { "," });
            json_string(&mut out, t);
            let _ = write!(out, ",\"{k}_state\":\"{state}\"");
        }
        out.push_str("}}");
    }
    out.push_str("]}");
    out
}

/// Escapes text for HTML.
fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The rows of a card: label and key.
const ROWS: [(&str, &str); 13] = [
    ("Health", "detail"),
    ("Worker id", "worker"),
    ("Worker source", "source"),
    ("Layout", "layout"),
    ("Ring fill", "fill"),
    ("Lead", "lead"),
    ("Lag", "lag"),
    ("Issued", "issued"),
    ("Unused IDs", "unused"),
    ("Time bits left", "remaining"),
    ("Lease", "lease"),
    ("Filler", "filler"),
    ("State file", "state"),
];

/// `/`: the page with the current values.
pub fn page(generators: &Generators) -> String {
    let mut cards = String::new();
    for g in generators.iter() {
        let v = view(g);
        let name = html(&v.name);
        let text = |k: &str| {
            v.text
                .iter()
                .find(|(key, _, _)| *key == k)
                .map_or((String::new(), "ok"), |(_, t, s)| (html(t), *s))
        };
        let value = |k: &str| {
            let (t, state) = text(k);
            format!("<span class=\"{state}\" data-g=\"{name}\" data-k=\"{k}\">{t}</span>")
        };
        let _ = write!(
            cards,
            "<section class=\"card\" data-card=\"{name}\">\n<h2>{name} {}</h2>\n\
             <div class=\"rate\">{} <small>{}</small></div>\n\
             <svg class=\"chart\" viewBox=\"0 0 {CHART_W} {CHART_H}\" preserveAspectRatio=\"none\" \
             role=\"img\" aria-label=\"IDs per second, last {SAMPLES} s\">\
             <polygon data-g=\"{name}\" data-k=\"area\" points=\"{}\"/>\
             <polyline data-g=\"{name}\" data-k=\"points\" points=\"{}\"/></svg>\n\
             <div class=\"axis\"><span>-{SAMPLES} s</span><span>now</span></div>\n\
             <div class=\"bar\" title=\"ring fill\"><div data-g=\"{name}\" data-k=\"fillbar\" \
             style=\"width:{:.1}%\"></div></div>\n<table>\n",
            value("health"),
            value("rate"),
            value("peak"),
            area(&points(&v.rates)),
            points(&v.rates),
            v.fill * 100.0
        );
        for (label, k) in ROWS {
            let _ = writeln!(cards, "<tr><th>{label}</th><td>{}</td></tr>", value(k));
        }
        cards.push_str("</table>\n</section>\n");
    }
    PAGE.replacen("<!--CARDS-->", &cards, 1).replacen(
        "<!--GENERATED-->",
        &html(&utc(unix_ms() / 1000)),
        1,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chart_area() {
        assert_eq!(area(""), "");
        assert_eq!(area("1.0,5.0 2.0,6.0"), "1.0,64.0 1.0,5.0 2.0,6.0 2.0,64.0");
    }

    #[test]
    fn chart_points() {
        assert_eq!(points(&[]), "");
        let p = points(&[0.0, 10.0]);
        let pairs: Vec<&str> = p.split(' ').collect();
        assert_eq!(pairs.len(), 2);
        // Newest at the right edge, the peak at the top.
        assert_eq!(pairs[1], format!("{CHART_W:.1},1.0"));
        assert!(pairs[0].ends_with(&format!(",{:.1}", CHART_H - 1.0)), "{p}");
    }

    #[test]
    fn spans_and_escapes() {
        assert_eq!(span(5), "5 s");
        assert_eq!(span(600), "10 min");
        assert_eq!(span(86_400), "24.0 h");
        assert_eq!(span(10 * 86_400), "10 days");
        assert_eq!(span(2 * 31_557_600), "2.0 years");
        assert_eq!(
            html("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert!(PAGE.contains("<!--CARDS-->") && PAGE.contains("<!--GENERATED-->"));
        for external in ["http://", "https://", "//cdn", "@import", "src=\""] {
            assert!(
                !PAGE.contains(external),
                "{external}: the page must be self-contained"
            );
        }
    }
}
