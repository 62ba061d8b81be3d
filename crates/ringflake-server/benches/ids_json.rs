//! The body of `GET /ids?count=N`: a JSON array of the IDs as strings, written by the service's
//! own `json_ids` (digits kept and incremented from one consecutive ID to the next) against
//! serde_json writing the same array (each ID through `Display`, no allocation per ID).
//!
//! - `ids-json/hand-1`, `ids-json/serde-1`: one ID (`/id` answers plain text; `/ids?count=1`);
//! - `ids-json/hand-1k`, `ids-json/serde-1k`: 1,000 consecutive IDs (a chunk of the ring);
//! - `ids-json/hand-100k`, `ids-json/serde-100k`: 100,000, the largest `/ids` batch;
//! - `ids-json/base32-100k`, `ids-json/base62-100k`: the same 100,000 in a text form
//!   (`/ids?count=100000&format=base32`), by `json_text_ids`.
//!
//! Both write into a buffer reused across iterations, as a response body is written once. The
//! two outputs are checked equal before timing. Run with
//! `cargo bench --features cli --bench ids_json` (about half a minute).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

/// The service's text helpers, `json_ids` among them.
use ringflake_server::text;

/// The IDs as serde writes them: a sequence of strings, each formatted by `Display`.
struct AsStrings<'a>(&'a [u64]);

impl serde::Serialize for AsStrings<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        struct One(u64);
        impl serde::Serialize for One {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(&self.0)
            }
        }
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for &id in self.0 {
            seq.serialize_element(&One(id))?;
        }
        seq.end()
    }
}

fn serde_ids(ids: &[u64], out: &mut Vec<u8>) {
    serde_json::to_writer(&mut *out, &AsStrings(ids)).expect("IDs serialize");
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("ids-json");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    // Consecutive IDs of the default layout, as a chunk of the ring holds them.
    let first = 1_234_567u64 << 32;
    for (name, n) in [("1", 1u64), ("1k", 1_000), ("100k", 100_000)] {
        let ids: Vec<u64> = (first..first + n).collect();
        let (mut hand, mut serde) = (Vec::new(), Vec::new());
        text::json_ids(&ids, &mut hand);
        serde_ids(&ids, &mut serde);
        assert_eq!(hand, serde, "the two write the same bytes");
        group.throughput(Throughput::Elements(n));
        let mut out = Vec::with_capacity(hand.len());
        group.bench_function(format!("hand-{name}"), |b| {
            b.iter(|| {
                out.clear();
                text::json_ids(black_box(&ids), &mut out);
                black_box(out.len())
            })
        });
        group.bench_function(format!("serde-{name}"), |b| {
            b.iter(|| {
                out.clear();
                serde_ids(black_box(&ids), &mut out);
                black_box(out.len())
            })
        });
    }
    let ids: Vec<u64> = (first..first + 100_000).collect();
    group.throughput(Throughput::Elements(100_000));
    let mut out = Vec::new();
    for format in [ringflake::IdFormat::Base32, ringflake::IdFormat::Base62] {
        group.bench_function(format!("{}-100k", format.name()), |b| {
            b.iter(|| {
                out.clear();
                text::json_text_ids(black_box(&ids), format, &mut out);
                black_box(out.len())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
