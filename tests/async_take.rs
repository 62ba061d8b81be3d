//! `next_id_async`: many tasks on a multi-thread runtime take IDs through empty-ring moments.
#![cfg(feature = "tokio")]

use ringflake::{CachedUidGenerator, Layout};
use std::sync::Arc;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_tasks_through_empty_rings() {
    // A small ring (one second, 8,192 IDs) that 64 tasks drain again and again.
    let g = Arc::new(
        CachedUidGenerator::builder(Layout::default())
            .worker_id(3)
            .boost_power(0)
            .build()
            .unwrap(),
    );
    let tasks: Vec<_> = (0..64)
        .map(|_| {
            let g = Arc::clone(&g);
            tokio::spawn(async move {
                let mut ids = Vec::with_capacity(20_000);
                for _ in 0..20_000 {
                    ids.push(g.next_id_async().await.unwrap());
                }
                assert!(ids.windows(2).all(|w| w[0] < w[1]), "per-task order");
                ids
            })
        })
        .collect();
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "duplicates");
    assert_eq!(n, 64 * 20_000);
    assert!(
        g.stats().take_waits > 0,
        "the ring never ran empty: the test proves nothing"
    );
}
