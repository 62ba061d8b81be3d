//! Prometheus series for a [`SegmentGenerator`](crate::SegmentGenerator)'s tags (features
//! `segment` and `metrics`), set from [`SegmentStats`] through the `metrics` facade, with the
//! label `biz_tag`. As for the snowflake generator's series, nothing on the per-number path
//! touches them: [`SegmentMetrics::record`] samples the stats (the service does at every
//! scrape of `/metrics`).

use super::stats::SegmentStats;
use ::metrics::{
    Counter, Gauge, Histogram, Unit, counter, describe_counter, describe_gauge, describe_histogram,
    gauge, histogram,
};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Mutex;

const LABEL: &str = "biz_tag";
const CURRENT_LEFT: &str = "ringflake_segment_current_left";
const NEXT_LEFT: &str = "ringflake_segment_next_left";
const STEP: &str = "ringflake_segment_step";
const AT_RISK: &str = "ringflake_segment_at_risk";
const ISSUED: &str = "ringflake_segment_issued_total";
const CLAIM_SECONDS: &str = "ringflake_segment_claim_seconds";
const CLAIM_FAILURES: &str = "ringflake_segment_claim_failures_total";
const WAITS: &str = "ringflake_segment_waits_total";
const NOT_READY: &str = "ringflake_segment_not_ready_total";

fn describe() {
    describe_gauge!(
        CURRENT_LEFT,
        Unit::Count,
        "Numbers of the tag's current range not taken yet, in numbers."
    );
    describe_gauge!(
        NEXT_LEFT,
        Unit::Count,
        "Numbers held beyond the tag's current range (its next range, claimed ahead), in numbers. 0 while the next range is not claimed yet."
    );
    describe_gauge!(
        STEP,
        Unit::Count,
        "The step of the tag's last claim (Leaf's dynamic step), in numbers."
    );
    describe_gauge!(
        AT_RISK,
        Unit::Count,
        "Numbers of the tag recorded in the state file as perhaps handed out but not taken yet: what a kill -9 now would lose, in numbers."
    );
    describe_counter!(
        ISSUED,
        Unit::Count,
        "Numbers of the tag taken since the service started, in numbers."
    );
    describe_histogram!(
        CLAIM_SECONDS,
        Unit::Seconds,
        "Time of each range claimed for the tag (Leaf's transaction and the standbys' confirmation), in seconds."
    );
    describe_counter!(
        CLAIM_FAILURES,
        Unit::Count,
        "Claims of the tag that failed (database errors, a refused row), in claims."
    );
    describe_counter!(
        WAITS,
        Unit::Count,
        "Takes of the tag that found both segments used up and waited, in takes."
    );
    describe_counter!(
        NOT_READY,
        Unit::Count,
        "Takes of the tag that got no number (waited past the bound, or the row at fault), in takes."
    );
}

/// One tag's handles, and the claims already recorded.
struct Series {
    current_left: Gauge,
    next_left: Gauge,
    step: Gauge,
    at_risk: Gauge,
    issued: Counter,
    claim_seconds: Histogram,
    claim_failures: Counter,
    waits: Counter,
    not_ready: Counter,
    claims_seen: u64,
    claim_seconds_seen: f64,
}

impl Series {
    fn register(tag: &str) -> Series {
        let label = || [(LABEL, tag.to_string())];
        Series {
            current_left: gauge!(CURRENT_LEFT, &label()),
            next_left: gauge!(NEXT_LEFT, &label()),
            step: gauge!(STEP, &label()),
            at_risk: gauge!(AT_RISK, &label()),
            issued: counter!(ISSUED, &label()),
            claim_seconds: histogram!(CLAIM_SECONDS, &label()),
            claim_failures: counter!(CLAIM_FAILURES, &label()),
            waits: counter!(WAITS, &label()),
            not_ready: counter!(NOT_READY, &label()),
            claims_seen: 0,
            claim_seconds_seen: 0.0,
        }
    }

    fn record(&mut self, s: &SegmentStats) {
        self.current_left.set(s.current_left as f64);
        self.next_left.set(s.next_left as f64);
        self.step.set(s.step as f64);
        self.at_risk.set(s.at_risk as f64);
        self.issued.absolute(s.issued);
        self.claim_failures.absolute(s.claim_failures);
        self.waits.absolute(s.waits);
        self.not_ready.absolute(s.not_ready);
        // The claims since the last sample, each at their mean time.
        let new = s.claims.saturating_sub(self.claims_seen);
        if new > 0 {
            let mean = (s.claim_seconds - self.claim_seconds_seen).max(0.0) / new as f64;
            for _ in 0..new.min(1000) {
                self.claim_seconds.record(mean);
            }
            self.claims_seen = s.claims;
            self.claim_seconds_seen = s.claim_seconds;
        }
    }
}

/// The Prometheus series of a segment generator's tags, labelled `biz_tag`:
/// `ringflake_segment_current_left` and `ringflake_segment_next_left` (numbers left in the
/// current range and held beyond it), `ringflake_segment_step`, `ringflake_segment_at_risk`
/// (what a `kill -9` now would lose), `ringflake_segment_issued_total`,
/// `ringflake_segment_claim_seconds` (a summary of claim times: `_sum` and `_count`),
/// `ringflake_segment_claim_failures_total`, `ringflake_segment_waits_total` and
/// `ringflake_segment_not_ready_total`. A tag removed from the table keeps its series with
/// nothing left.
///
/// ```
/// # #[cfg(feature = "sqlite")] {
/// use metrics_exporter_prometheus::PrometheusBuilder;
/// use ringflake::{SegmentGenerator, SegmentMetrics, SegmentTable};
///
/// let dir = tempfile::tempdir().unwrap();
/// let table = SegmentTable::sqlite(dir.path().join("ids.db"))?;
/// table.add("orders", 1, 1000, "")?;
/// let g = SegmentGenerator::builder(table).build()?;
/// for _ in 0..10 {
///     g.next_id("orders")?;
/// }
/// let recorder = PrometheusBuilder::new().build_recorder();
/// let series = SegmentMetrics::new();
/// metrics::with_local_recorder(&recorder, || series.record(&g.stats()));
/// let text = recorder.handle().render();
/// assert!(text.contains(r#"ringflake_segment_current_left{biz_tag="orders"} 990"#), "{text}");
/// assert!(text.contains(r#"ringflake_segment_issued_total{biz_tag="orders"} 10"#));
/// assert!(text.contains(r#"ringflake_segment_claim_seconds_count{biz_tag="orders"} 1"#));
/// # }
/// # Ok::<(), ringflake::Error>(())
/// ```
pub struct SegmentMetrics {
    tags: Mutex<BTreeMap<String, Series>>,
}

impl fmt::Debug for SegmentMetrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("SegmentMetrics { .. }")
    }
}

impl Default for SegmentMetrics {
    fn default() -> Self {
        Self::new()
    }
}

impl SegmentMetrics {
    /// Series for no tag yet; each tag's are registered with the current recorder when it is
    /// first recorded.
    ///
    /// ```
    /// let series = ringflake::SegmentMetrics::new();
    /// series.record(&[]);
    /// ```
    pub fn new() -> SegmentMetrics {
        SegmentMetrics {
            tags: Mutex::new(BTreeMap::new()),
        }
    }

    /// Sets every tag's series from `stats` ([`SegmentGenerator::stats`](crate::SegmentGenerator::stats));
    /// a tag recorded before and missing now (removed from the table) is left with nothing
    /// left in its ranges.
    pub fn record(&self, stats: &[SegmentStats]) {
        let mut tags = crate::lock::lock(&self.tags);
        if tags.is_empty() {
            describe();
        }
        for s in stats {
            tags.entry(s.tag.clone())
                .or_insert_with(|| Series::register(&s.tag))
                .record(s);
        }
        tags.retain(|tag, series| {
            let live = stats.iter().any(|s| &s.tag == tag);
            if !live {
                series.current_left.set(0.0);
                series.next_left.set(0.0);
                series.at_risk.set(0.0);
            }
            live
        });
    }
}
