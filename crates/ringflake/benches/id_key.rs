//! What public IDs and text forms cost per ID, at the edge where the service writes them:
//!
//! - `id-key/encrypt`, `id-key/decrypt`: one ID through [`IdCipher`] (FF1 over AES-256: ten
//!   rounds, one AES block each, and the PRF's first block once);
//! - `id-text/decimal`, `id-text/base32`, `id-text/base62`: one ID written by
//!   [`IdFormat::encode`] (no allocation);
//! - `id-text/base32-decode`, `id-text/base62-decode`: one read back.
//!
//! Run with `cargo bench --features id-key --bench id_key` (about fifteen seconds).

use criterion::{Criterion, criterion_group, criterion_main};
use ringflake::{IdCipher, IdFormat};
use std::hint::black_box;
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let key = IdCipher::new(&[0x5a; 32]);
    let id = 1_234_567u64 << 32 | 42;
    let mut group = c.benchmark_group("id-key");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    group.bench_function("encrypt", |b| {
        b.iter(|| key.encrypt(black_box(id)).expect("an ID"))
    });
    let public = key.encrypt(id).expect("an ID");
    group.bench_function("decrypt", |b| {
        b.iter(|| key.decrypt(black_box(public)).expect("a public ID"))
    });
    group.finish();

    let mut group = c.benchmark_group("id-text");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(1));
    for format in IdFormat::ALL {
        group.bench_function(format.name(), |b| b.iter(|| format.encode(black_box(id))));
    }
    for format in [IdFormat::Base32, IdFormat::Base62] {
        let text = format.encode(id);
        group.bench_function(format!("{}-decode", format.name()), |b| {
            b.iter(|| format.decode(black_box(text.as_str())).expect("an ID"))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
