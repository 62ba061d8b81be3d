//! The lease of a worker id held in ZooKeeper: its reach in `ids/{sequence}`, moved by
//! compare-and-set (the znode's version) together with Leaf's timestamp, and the session whose
//! ephemeral `live/{sequence}` says the id is served.

use super::session::{Op, Shared};
use super::znodes::{self, IdData, Origin};
use crate::worker::lease::{Lease, cut_off};
use crate::{Clock, Error, SystemClock};
use std::sync::atomic::{AtomicI32, AtomicI64, Ordering};
use std::time::Duration;
use zookeeper_client as zk;

/// A worker id's lease in ZooKeeper.
#[derive(Debug)]
pub(crate) struct ZkLease {
    pub(super) session: Shared,
    /// Leaf's `leaf.name`.
    pub(super) name: String,
    pub(super) worker_id: u64,
    /// The id's child of `forever` (this node's `{ip}:{port}-{sequence}`).
    pub(super) forever_name: String,
    pub(super) ip: String,
    pub(super) port: String,
    pub(super) origin: Origin,
    /// The version of `ids/{sequence}` this node last wrote.
    pub(super) version: AtomicI32,
    /// The reach in force (confirmed written).
    pub(super) until: AtomicI64,
    pub(super) window: i64,
}

impl ZkLease {
    fn address(&self) -> String {
        format!("{}:{}", self.ip, self.port)
    }

    fn ids_path(&self) -> String {
        format!(
            "{}/{}",
            znodes::ids(&self.name),
            znodes::seq(self.worker_id)
        )
    }

    fn live_path(&self) -> String {
        format!(
            "{}/{}",
            znodes::live(&self.name),
            znodes::seq(self.worker_id)
        )
    }

    fn forever_path(&self) -> String {
        format!("{}/{}", znodes::forever(&self.name), self.forever_name)
    }

    /// How long one lease call may take, and how often the keeper looks: a tenth of the session
    /// timeout (see [`cut_off`]), between 100 ms and 1 s.
    pub(super) fn tick(&self) -> Duration {
        (self.session.timeout() / 10).clamp(Duration::from_millis(100), Duration::from_secs(1))
    }

    fn within(&self) -> Duration {
        self.tick()
    }

    fn lost(&self, why: String) -> Error {
        Error::LeaseExpired {
            until: self.until(),
            reason: format!(
                "worker id {} in {} (/snowflake/{}): {why}",
                self.worker_id,
                self.session.describe(),
                self.name
            ),
        }
    }

    /// Whether this session still holds the id's ephemeral znode; an error when it cannot be
    /// told (the servers do not answer) or the session has ended.
    fn holds(&self) -> Result<bool, Error> {
        let path = self.live_path();
        let answer = self.session.call(
            "reading the id's live znode",
            self.within(),
            move |c| async move { c.check_stat(&path).await },
        )?;
        match answer {
            Ok(Some(stat)) => Ok(stat.ephemeral_owner == self.session.id()),
            Ok(None) => Ok(false),
            Err(zk::Error::SessionExpired) => Err(self.lost(
                "its ZooKeeper session expired: its live znode is gone, and the id may be \
                 another node's"
                    .into(),
            )),
            Err(e) => Err(self.session.error("reading the id's live znode", &e)),
        }
    }

    /// Writes `reach` to the id's znode (compare-and-set on its version) and Leaf's timestamp.
    fn write(&self, reach: i64) -> Result<(), Error> {
        let data = IdData {
            origin: self.origin,
            holder: self.address(),
            reach,
        };
        let now_ms = SystemClock.now_millis();
        let ops = vec![
            Op::SetData(
                self.ids_path(),
                data.to_json(),
                Some(self.version.load(Ordering::SeqCst)),
            ),
            Op::SetData(
                self.forever_path(),
                znodes::leaf_data(&self.ip, &self.port, now_ms),
                None,
            ),
        ];
        match self
            .session
            .multi("writing the id's reach", self.within(), ops)?
        {
            Ok(results) => {
                if let Some(zk::MultiWriteResult::SetData { stat }) = results.first() {
                    self.version.store(stat.version, Ordering::SeqCst);
                }
                Ok(())
            }
            Err((_, zk::Error::SessionExpired)) => Err(self.lost(
                "its ZooKeeper session expired: its live znode is gone, and the id may be \
                 another node's"
                    .into(),
            )),
            Err((_, zk::Error::BadVersion | zk::Error::NoNode)) => {
                // Ours still if this session holds its live znode (a write of ours landed whose
                // answer was lost): continue from the znode's version. Else taken over.
                if self.holds()? {
                    self.adopt()?;
                    return Err(self
                        .session
                        .error("writing the id's reach", &zk::Error::BadVersion));
                }
                Err(self.lost(
                    "taken over by another node: its live znode is not this session's".into(),
                ))
            }
            Err((_, e)) => Err(self.session.error("writing the id's reach", &e)),
        }
    }

    /// Takes the id znode's current version as this node's (its live znode is this session's).
    fn adopt(&self) -> Result<(), Error> {
        let path = self.ids_path();
        let answer = self.session.call(
            "reading the id's znode",
            self.within(),
            move |c| async move { c.get_data(&path).await },
        )?;
        match answer {
            Ok((_, stat)) => {
                self.version.store(stat.version, Ordering::SeqCst);
                Ok(())
            }
            Err(e) => Err(self.session.error("reading the id's znode", &e)),
        }
    }
}

impl Lease for ZkLease {
    fn until(&self) -> i64 {
        self.until.load(Ordering::SeqCst)
    }

    fn extend(&self, until: i64) -> Result<(), Error> {
        self.write(until)?;
        self.until.store(until, Ordering::SeqCst);
        Ok(())
    }

    /// A round trip to the servers, which is what the fence counts on: this session still
    /// holds the id's live znode.
    fn check(&self) -> Result<(), Error> {
        if self.holds()? {
            return Ok(());
        }
        Err(self.lost(
            "its live znode is gone or another session's: the session ended, and the id may be \
             another node's"
                .into(),
        ))
    }

    fn release(&self, last_second: i64) -> Result<(), Error> {
        self.write(last_second.max(1))?;
        self.until.store(last_second.max(1), Ordering::SeqCst);
        let live = self.live_path();
        let _ = self.session.call(
            "deleting the id's live znode",
            self.within(),
            move |c| async move { c.delete(&live, None).await },
        );
        Ok(())
    }

    fn window(&self) -> i64 {
        self.window
    }

    fn look_every(&self) -> Option<Duration> {
        Some(self.tick())
    }

    fn at_risk(&self) -> Option<String> {
        let since = self.session.since_answered();
        let timeout = self.session.timeout();
        cut_off(since, timeout).then(|| {
            format!(
                "no answer from {} for {:.1} s, a third of the session timeout of {:.1} s: the session \
                 may expire, and worker id {} go to another node, before this node can tell",
                self.session.describe(),
                since.as_secs_f64(),
                timeout.as_secs_f64(),
                self.worker_id
            )
        })
    }

    fn describe(&self) -> String {
        format!("{} /snowflake/{}", self.session.describe(), self.name)
    }
}
