//! The keeper's rhythm: how often it writes a lease, and how far.

use super::*;
use crate::ManualClock;

/// A lease in memory that remembers every extension asked of it.
#[derive(Debug, Default)]
struct Recorded(Mutex<Vec<i64>>);

impl Lease for Arc<Recorded> {
    fn until(&self) -> i64 {
        1_800_000_000 + 2
    }
    fn extend(&self, until: i64) -> Result<(), Error> {
        self.0.lock().unwrap().push(until);
        Ok(())
    }
    fn release(&self, _last_second: i64) -> Result<(), Error> {
        Ok(())
    }
    fn window(&self) -> i64 {
        2
    }
}

/// Checked every second for 1,000 simulated seconds, a 300 s lease is written every 101 s
/// (9 times), where the keeper used to write it at every check (1,000 times).
#[test]
fn steady_state_writes_once_per_third_of_the_window() {
    #[derive(Debug)]
    struct Counted(Arc<AtomicU64>, AtomicI64);
    impl Lease for Counted {
        fn until(&self) -> i64 {
            self.1.load(Ordering::SeqCst)
        }
        fn extend(&self, until: i64) -> Result<(), Error> {
            self.0.fetch_add(1, Ordering::SeqCst);
            self.1.store(until, Ordering::SeqCst);
            Ok(())
        }
        fn release(&self, _last_second: i64) -> Result<(), Error> {
            Ok(())
        }
    }
    let start = 1_800_000_000;
    let clock = ManualClock::from_seconds(start);
    let writes = Arc::new(AtomicU64::new(0));
    let lease = Counted(Arc::clone(&writes), AtomicI64::new(start + 300));
    let keeper = Keeper::start(Box::new(lease), 1, Arc::new(clock.clone()), None, start).unwrap();
    let mut least = i64::MAX;
    for second in 1..=1000 {
        clock.advance_seconds(1);
        keeper.note_used(start + second);
        keeper.shared.extend_once();
        least = least.min(keeper.horizon() - (start + second));
    }
    let n = writes.load(Ordering::SeqCst);
    assert_eq!(
        n, 9,
        "1,000 s at 300 s a window: one write per 101 s (at 101, 202 .. 909)"
    );
    assert!(
        least >= 199,
        "the lease never covers less than 2/3 of the window: {least}"
    );
}

/// However often the generator hits the horizon (each hit used to double the reach), an
/// extension never reaches past `now + max_lead + window`.
#[test]
fn extensions_stop_at_the_lead_cap_plus_the_window() {
    let now = 1_800_000_000;
    let clock = ManualClock::from_seconds(now);
    let lease = Arc::new(Recorded::default());
    let keeper = Keeper::start(
        Box::new(Arc::clone(&lease)),
        1,
        Arc::new(clock),
        Some(10),
        now + 10,
    )
    .unwrap();
    for _ in 0..50 {
        keeper.request_extension();
    }
    keeper.shared.extend_once();
    let asked = lease.0.lock().unwrap().clone();
    assert!(!asked.is_empty());
    assert!(asked.iter().all(|&u| u <= now + 10 + 2), "{asked:?}");
    assert!(keeper.horizon() >= now + 10, "covers what was used");
}
