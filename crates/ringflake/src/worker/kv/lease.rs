//! The lease of a worker id held by a key with a time to live ([`KvLease`]): its reach moved
//! ahead of use, its holder kept alive every tick, and the fence when the store stops
//! answering.

use super::Hold;
use crate::Error;
use crate::worker::db_clock::DatabaseTime;
use crate::worker::lease::{Lease, cut_off};
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

/// A worker id's lease in etcd or Redis.
#[derive(Debug)]
pub(crate) struct KvLease {
    hold: Box<dyn Hold>,
    worker_id: u64,
    /// The reach in force (confirmed written).
    until: AtomicI64,
    window: i64,
}

impl KvLease {
    pub(crate) fn new(hold: Box<dyn Hold>, worker_id: u64, until: i64, window: i64) -> KvLease {
        KvLease {
            hold,
            worker_id,
            until: AtomicI64::new(until),
            window,
        }
    }

    /// How often the keeper looks (and keeps the holder alive), and how long one call may take:
    /// a tenth of the TTL (see `cut_off`), between 100 ms and 1 s.
    pub(crate) fn tick(ttl: Duration) -> Duration {
        (ttl / 10).clamp(Duration::from_millis(100), Duration::from_secs(1))
    }
}

impl Lease for KvLease {
    fn until(&self) -> i64 {
        self.until.load(Ordering::SeqCst)
    }

    fn extend(&self, until: i64) -> Result<(), Error> {
        self.hold.write_reach(until)?;
        self.until.store(until, Ordering::SeqCst);
        Ok(())
    }

    /// A keep-alive of the holder: the round trip the fence counts on.
    fn check(&self) -> Result<(), Error> {
        self.hold.keep_alive()
    }

    fn release(&self, last_second: i64) -> Result<(), Error> {
        self.hold.release(last_second)?;
        self.until.store(last_second, Ordering::SeqCst);
        Ok(())
    }

    fn at_risk(&self) -> Option<String> {
        let since = self.hold.since_answered();
        let ttl = self.hold.ttl();
        cut_off(since, ttl).then(|| {
            format!(
                "no confirmed keep-alive from {} for {:.1} s, a third of the TTL of {:.1} s: \
                 the holder of worker id {} may expire, and the id go to another node, before \
                 this node can tell",
                self.hold.describe(),
                since.as_secs_f64(),
                ttl.as_secs_f64(),
                self.worker_id
            )
        })
    }

    fn look_every(&self) -> Option<Duration> {
        Some(Self::tick(self.hold.ttl()))
    }

    fn window(&self) -> i64 {
        self.window
    }

    fn database_clock(&self) -> Result<Option<DatabaseTime>, Error> {
        self.hold.clock()
    }

    fn describe(&self) -> String {
        self.hold.describe()
    }
}
