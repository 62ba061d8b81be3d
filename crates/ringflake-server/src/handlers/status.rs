//! The status page at `/` and its JSON at `/status`: per generator, its health (the state the
//! library judges, `serving`, `idle`, `held at the lead cap`, `lease at risk` or `unavailable`,
//! and what it means), the worker id, the ring's fill level, lead and lag, the unused IDs (expired
//! apart from discarded), the IDs issued per second over the last [`SAMPLES`] seconds (a chart from
//! the samples of the [sampler](crate::model::sampler), kept in memory, bounded), the time bits left and the date
//! they run out, the lease and the filler.
//!
//! The page is one self-contained file ([`PAGE`], no external script, font or style sheet). The
//! server renders the current values into it, so that it reads without JavaScript; its script
//! polls `/status` every second and writes the new values where the server put the old ones.
//! Every value shown is formatted here, once: `/status` carries each generator's numbers and,
//! under `text`, the same values as the page shows them; the script only copies them.

use crate::model::app::{Generators, Named};
use crate::model::history::SAMPLES;
use crate::model::limits::{self, Limits};
use crate::model::plan::Lead;
use crate::model::sampler::{EVERY, unix_ms};
use crate::text::{epoch_text, thousands, to_json};
use serde::Serialize;
use std::fmt::Write as _;

/// The page, with `<!--CARDS-->` and `<!--GENERATED-->` where the server writes its values.
pub const PAGE: &str = include_str!("status.html");

/// The chart's size in SVG units (the page's script uses the same, read from the element).
const CHART_W: f64 = 360.0;
const CHART_H: f64 = 64.0;

/// Whether the ring's oldest ready ID is older than the filler's sweep ever leaves it: more
/// than the generator's `max_lag` behind the clock (at `max_lag` it is stale, and swept within
/// a quarter of `max_lag`).
fn lag_is_late(lag_seconds: u64, max_lag_seconds: u64) -> bool {
    lag_seconds > max_lag_seconds
}

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
        match layout.unit() {
            ringflake::TimeUnit::Seconds => format!(
                "{}/{}/{} bits from {}",
                layout.time_bits(),
                layout.worker_bits(),
                layout.seq_bits(),
                epoch_text(&layout)
            ),
            unit => format!(
                "{}/{}/{} bits of {unit} ticks from {}",
                layout.time_bits(),
                layout.worker_bits(),
                layout.seq_bits(),
                epoch_text(&layout)
            ),
        },
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
    // Seconds; to the millisecond for a layout of shorter ticks.
    let seconds = |whole: u64, millis: u64| match layout.unit() {
        ringflake::TimeUnit::Seconds => format!("{whole} s"),
        _ => format!("{:.3} s", millis as f64 / 1000.0),
    };
    let lead_text = match max_lead {
        Some(cap) => format!("{} of {cap} s", seconds(s.lead_seconds, s.lead_millis)),
        None => format!("{} (unbounded)", seconds(s.lead_seconds, s.lead_millis)),
    };
    put(
        "lead",
        lead_text,
        if s.at_lead_cap() { "warn" } else { "ok" },
    );
    // IDs of a second max-lag behind the clock are stale: the filler's sweep drops them within
    // a quarter of max-lag, so an idle ring shows at most max-lag for a moment. More means the
    // sweep is late (the filler is stuck or starved): marked.
    put(
        "lag",
        seconds(s.lag_seconds, s.lag_millis),
        if lag_is_late(s.lag_seconds, s.max_lag_seconds) {
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
    // The chart's scale: its top is the peak of the samples shown (at least 1 ID/s).
    put(
        "scale",
        format!("{} IDs/s", thousands(peak.max(1.0).round() as u64)),
        "ok",
    );
    put("issued", thousands(s.issued), "ok");
    // What nobody took expires (idle capacity, not a fault: shown dimmed, last); what takes
    // claimed and did not hand out is dropped (stale blocks given back, takes that failed).
    put(
        "unused",
        format!(
            "{} IDs of past seconds expired untaken (normal below the layout's rate); {} dropped \
             by takes",
            thousands(s.expired),
            thousands(s.discarded.saturating_sub(s.expired))
        ),
        "dim",
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
    let (clock, clock_state) = match (s.clock_skew_millis, s.max_clock_skew_millis) {
        (Some(skew), Some(max)) => {
            let side = if skew >= 0 { "ahead" } else { "behind" };
            let shown = format!(
                "{}.{:03} s {side} (bound {} s)",
                skew.unsigned_abs() / 1000,
                skew.unsigned_abs() % 1000,
                max / 1000
            );
            if s.clock_skewed {
                (format!("SKEWED: {shown}; nothing served"), "bad")
            } else if skew.unsigned_abs() > s.max_lag_seconds.saturating_mul(1000) {
                (format!("{shown}, beyond max-lag"), "warn")
            } else {
                (shown, "ok")
            }
        }
        _ => ("not read (no server database)".into(), "ok"),
    };
    put("clock", clock, clock_state);
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
    put(
        "space",
        g.namespace.as_ref().map_or_else(
            || "shared: checked against the other generators'".into(),
            |n| format!("namespace {n}: not checked against the others"),
        ),
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

/// `/status`: `{"unix":…,"version":…,"commit":…,"started":…,"uptime_seconds":…,"listen":[…],
/// "service":…,"sample_seconds":1,"samples":120,"generators":[…],"segments":[…],"limits":{…}}`.
#[derive(Serialize)]
struct StatusJson {
    unix: i64,
    /// The version of the build, and the commit it was built from.
    version: &'static str,
    commit: &'static str,
    /// The unix second the service started.
    started: i64,
    uptime_seconds: u64,
    /// The addresses the service listens on.
    listen: Vec<ListenJson>,
    /// The page's line on the service: its version, uptime and addresses.
    service: String,
    sample_seconds: u64,
    samples: usize,
    generators: Vec<GeneratorJson>,
    /// Meituan Leaf's segment mode: every biz_tag served (see [`super::segments`]).
    segments: Vec<super::segments::TagJson>,
    limits: LimitsJson,
}

/// What clients may hold of the service ([`limits`]), and what they hold now; under `text`,
/// the page's line.
#[derive(Serialize)]
struct LimitsJson {
    /// `--max-connections`, on each listener.
    max_connections: usize,
    /// The main listener's connections open now, and refused so far.
    connections: usize,
    refused_connections: u64,
    /// `--max-large-answers`, across every connection, and how many are being written.
    max_large_answers: usize,
    large_answers: usize,
    /// An answer of more IDs than this is a large one.
    large_answer_above_ids: usize,
    /// Large answers abandoned after `stall_seconds` without progress.
    stalled_answers: u64,
    stall_seconds: u64,
    /// HTTP/2 streams at once on one connection.
    max_streams_per_connection: u32,
    /// An HTTP/2 connection with no open stream is closed after this.
    idle_seconds: u64,
    /// The most IDs one `/ids` or `Batch` answers.
    max_count: usize,
    /// The largest gRPC request message decoded.
    grpc_max_request_bytes: usize,
    text: String,
}

/// The limits as the page shows them.
fn limits_text(l: &Limits) -> String {
    format!(
        "Limits: {} connections per listener ({} open, {} refused); {} large answers (more than \
         {} IDs) written at once ({} now, {} abandoned after {} s unread); {} HTTP/2 streams a \
         connection, closed after {} s with none open.",
        thousands(l.max_connections as u64),
        thousands(l.main.open() as u64),
        thousands(l.main.refused()),
        thousands(l.max_large_answers as u64),
        limits::LARGE_IDS,
        l.large_answers(),
        thousands(l.stalled()),
        limits::STALL.as_secs(),
        limits::MAX_STREAMS,
        limits::IDLE.as_secs()
    )
}

fn limits_json(l: &Limits) -> LimitsJson {
    LimitsJson {
        max_connections: l.max_connections,
        connections: l.main.open(),
        refused_connections: l.main.refused(),
        max_large_answers: l.max_large_answers,
        large_answers: l.large_answers(),
        large_answer_above_ids: limits::LARGE_IDS,
        stalled_answers: l.stalled(),
        stall_seconds: limits::STALL.as_secs(),
        max_streams_per_connection: limits::MAX_STREAMS,
        idle_seconds: limits::IDLE.as_secs(),
        max_count: crate::model::routes::MAX_COUNT,
        grpc_max_request_bytes: limits::GRPC_MAX_REQUEST_BYTES,
        text: limits_text(l),
    }
}

/// One address of `/status`: `{"url":"http://127.0.0.1:8080","serves":"every route"}`.
#[derive(Serialize)]
struct ListenJson {
    url: String,
    serves: &'static str,
}

/// The service's line on the page: `ringflake 0.2.0 (commit 176eebe62a80) · up 3.1 h ·
/// http://127.0.0.1:8080 (every route)`.
fn service_line(generators: &Generators, now: i64) -> String {
    let service = generators.service();
    let mut line = format!(
        "ringflake {} (commit {}) · up {}",
        service.version,
        service.commit,
        span(now.saturating_sub(service.started).max(0) as u64)
    );
    for (url, serves) in &service.listen {
        let _ = write!(line, " · {url} ({serves})");
    }
    line
}

/// One generator of `/status`: its numbers, then under `text` the values as the page shows
/// them (each `KEY` with its `KEY_state`).
#[derive(Serialize)]
struct GeneratorJson {
    name: String,
    /// `--namespace`, if the generator declares an ID space of its own.
    namespace: Option<String>,
    healthy: bool,
    reason: Option<String>,
    state: &'static str,
    detail: String,
    until: Option<i64>,
    worker_id: u64,
    time_bits: u32,
    worker_bits: u32,
    seq_bits: u32,
    epoch_seconds: i64,
    /// The epoch to the millisecond (Twitter's is not a whole second).
    epoch_millis: i64,
    /// The time field's tick: `1s`, `10ms` or `1ms`.
    tick: &'static str,
    capacity: u64,
    available: u64,
    /// The share of the ring filled, to 4 decimals.
    fill: f64,
    lead_seconds: u64,
    max_lead_seconds: Option<u64>,
    lag_seconds: u64,
    issued: u64,
    discarded: u64,
    expired: u64,
    take_waits: u64,
    idle_seconds: u64,
    waiting_takes: u64,
    waiting_ids: u64,
    heals: u64,
    remaining_seconds: u64,
    lifetime_seconds: u64,
    runs_out: String,
    lease_until: Option<i64>,
    lease_lost: bool,
    /// This node's clock minus the worker table's database's, in milliseconds (null without a
    /// server database).
    clock_skew_ms: Option<i64>,
    /// The skew beyond which nothing is served, in milliseconds.
    max_clock_skew_ms: Option<u64>,
    clock_skewed: bool,
    /// The worker lease's registry has not answered for a third of its session timeout:
    /// nothing served (see `Stats::lease_fenced`).
    lease_fenced: bool,
    /// Times the worker table forgot this node's write (see `Stats::lease_lost_writes`).
    lease_lost_writes: u64,
    filler_up: bool,
    /// IDs issued per second, oldest first, to 1 decimal.
    rates: Vec<f64>,
    points: String,
    text: Texts,
}

/// The shown values, in the page's order: `{"health":"serving","health_state":"ok",…}`.
struct Texts(Vec<(&'static str, String, &'static str)>);

impl Serialize for Texts {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.0.len() * 2))?;
        for (key, text, state) in &self.0 {
            map.serialize_entry(key, text)?;
            map.serialize_entry(&format!("{key}_state"), state)?;
        }
        map.end()
    }
}

/// `x` rounded to `decimals` decimals, as the page shows it.
fn rounded(x: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    (x * scale).round() / scale
}

/// `/status`, the page's values for a script: see [`StatusJson`].
pub fn json(generators: &Generators, segments: super::segments::View, limits: &Limits) -> String {
    let list = generators
        .iter()
        .map(|g| {
            let v = view(g);
            let s = &v.stats;
            let layout = g.app.layout;
            GeneratorJson {
                name: v.name,
                namespace: g.namespace.clone(),
                healthy: v.healthy,
                reason: v.reason,
                state: v.health.state(),
                detail: v.health.to_string(),
                until: v.health.until(),
                worker_id: s.worker_id,
                time_bits: layout.time_bits(),
                worker_bits: layout.worker_bits(),
                seq_bits: layout.seq_bits(),
                epoch_seconds: layout.epoch_seconds(),
                epoch_millis: layout.epoch_millis(),
                tick: layout.unit().name(),
                capacity: s.capacity,
                available: s.available,
                fill: rounded(v.fill, 4),
                lead_seconds: s.lead_seconds,
                max_lead_seconds: v.max_lead,
                lag_seconds: s.lag_seconds,
                issued: s.issued,
                discarded: s.discarded,
                expired: s.expired,
                take_waits: s.take_waits,
                idle_seconds: s.idle_seconds,
                waiting_takes: s.waiting_takes,
                waiting_ids: s.waiting_ids,
                heals: s.heals,
                remaining_seconds: s.remaining_seconds,
                lifetime_seconds: v.lifetime,
                runs_out: v.last_valid,
                lease_until: s.lease_until,
                lease_lost: s.lease_lost,
                clock_skew_ms: s.clock_skew_millis,
                max_clock_skew_ms: s.max_clock_skew_millis,
                clock_skewed: s.clock_skewed,
                lease_fenced: s.lease_fenced,
                lease_lost_writes: s.lease_lost_writes,
                filler_up: s.filler_up,
                points: points(&v.rates),
                rates: v.rates.iter().map(|r| rounded(*r, 1)).collect(),
                text: Texts(v.text),
            }
        })
        .collect();
    let now = unix_ms() / 1000;
    let service = generators.service();
    to_json(&StatusJson {
        unix: now,
        version: service.version,
        commit: service.commit,
        started: service.started,
        uptime_seconds: now.saturating_sub(service.started).max(0) as u64,
        listen: service
            .listen
            .iter()
            .map(|(url, serves)| ListenJson {
                url: url.clone(),
                serves,
            })
            .collect(),
        service: service_line(generators, now),
        sample_seconds: EVERY.as_secs(),
        samples: SAMPLES,
        generators: list,
        segments: segments.tags,
        limits: limits_json(limits),
    })
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
/// The ring's fill level is shown by its bar, labelled, above the table; what expired untaken
/// comes last, dimmed: idle capacity, not a fault.
const ROWS: [(&str, &str); 14] = [
    ("Health", "detail"),
    ("Worker id", "worker"),
    ("Worker source", "source"),
    ("Layout", "layout"),
    ("Lead", "lead"),
    ("Lag", "lag"),
    ("Issued", "issued"),
    ("Time bits left", "remaining"),
    ("Lease", "lease"),
    ("Clock vs database", "clock"),
    ("Filler", "filler"),
    ("State file", "state"),
    ("ID space", "space"),
    ("Idle capacity", "unused"),
];

/// The segment mode's card: a row per tag, each cell marked for the page's script.
fn segment_card(view: &super::segments::View) -> String {
    let Some(title) = &view.title else {
        return String::new();
    };
    if let Some(why) = &view.failed {
        return format!(
            "<section class=\"card\"><h2>{}</h2><p class=\"bad\">{}</p></section>\n",
            html(title),
            html(why)
        );
    }
    let mut out = format!(
        "<section class=\"card wide\"><h2>{}</h2>\n<table>\n<tr><th>biz_tag</th><th>Current \
         range</th><th>Next range</th><th>Step</th><th>Claims</th><th>Takes</th><th>Last \
         error</th></tr>\n",
        html(title)
    );
    for t in &view.tags {
        let tag = html(&t.biz_tag);
        let _ = write!(out, "<tr><th>{tag}</th>");
        for k in ["range", "next", "step", "claims", "waits", "error"] {
            let text = t.text.get(k).map_or("", String::as_str);
            let _ = write!(
                out,
                "<td data-s=\"{tag}\" data-k=\"{k}\">{}</td>",
                html(text)
            );
        }
        out.push_str("</tr>\n");
    }
    if view.tags.is_empty() {
        out.push_str("<tr><td colspan=\"7\">no biz_tag in leaf_alloc</td></tr>\n");
    }
    out.push_str("</table>\n</section>\n");
    out
}

/// `/`: the page with the current values, the segment mode's card after the generators'.
pub fn page(generators: &Generators, segments: &super::segments::View, limits: &Limits) -> String {
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
             <div class=\"plot\"><svg class=\"chart\" viewBox=\"0 0 {CHART_W} {CHART_H}\" \
             preserveAspectRatio=\"none\" role=\"img\" aria-label=\"IDs per second, last {SAMPLES} \
             s\"><polygon data-g=\"{name}\" data-k=\"area\" points=\"{}\"/>\
             <polyline data-g=\"{name}\" data-k=\"points\" points=\"{}\"/></svg>\
             <span class=\"ymax\">{}</span><span class=\"ymin\">0</span></div>\n\
             <div class=\"axis\"><span>-{SAMPLES} s</span><span>IDs per second</span>\
             <span>now</span></div>\n\
             <div class=\"barhead\"><span>Ring fill</span>{}</div>\n\
             <div class=\"bar\" role=\"meter\" aria-label=\"ring fill\"><div data-g=\"{name}\" \
             data-k=\"fillbar\" style=\"width:{:.1}%\"></div></div>\n<table>\n",
            value("health"),
            value("rate"),
            value("peak"),
            area(&points(&v.rates)),
            points(&v.rates),
            value("scale"),
            value("fill"),
            v.fill * 100.0
        );
        for (label, k) in ROWS {
            let _ = writeln!(cards, "<tr><th>{label}</th><td>{}</td></tr>", value(k));
        }
        cards.push_str("</table>\n</section>\n");
    }
    cards.push_str(&segment_card(segments));
    let now = unix_ms() / 1000;
    PAGE.replacen("<!--CARDS-->", &cards, 1)
        .replacen("<!--GENERATED-->", &html(&utc(now)), 1)
        .replacen("<!--SERVICE-->", &html(&service_line(generators, now)), 1)
        .replacen("<!--LIMITS-->", &html(&limits_text(limits)), 1)
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

    /// The lag mark follows the generator's own max-lag (1 s by default; it was a fixed 5, the
    /// default of old): 1 s behind is an idle ring between sweeps, 2 s a late sweep.
    #[test]
    fn lag_marks_a_late_sweep() {
        assert!(!lag_is_late(0, 1));
        assert!(!lag_is_late(1, 1));
        assert!(lag_is_late(2, 1));
        assert!(!lag_is_late(5, 5));
        assert!(lag_is_late(6, 5));
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
        assert!(
            PAGE.contains("<!--CARDS-->")
                && PAGE.contains("<!--GENERATED-->")
                && PAGE.contains("<!--SERVICE-->")
        );
        for external in ["http://", "https://", "//cdn", "@import", "src=\""] {
            assert!(
                !PAGE.contains(external),
                "{external}: the page must be self-contained"
            );
        }
    }
}
