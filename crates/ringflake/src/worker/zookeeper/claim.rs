//! One boot's claim of a worker id on its session ([`Claim`]): this `ip:port`'s own id as Leaf's
//! restart finds it, else a new one from Leaf's sequence, else a ringflake id whose holder is
//! gone and whose reach has passed.

use super::lease::ZkLease;
use super::session::{Op, Session};
use super::view::View;
use super::znodes::{self, ForeverNode, IdData, Origin};
use crate::{Assignment, Clock, Error, SystemClock};
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, AtomicI64};
use std::time::{Duration, Instant};
use zookeeper_client as zk;

/// Leaf rewrites its timestamp every 3 s (`ScheduledUploadData`).
const LEAF_UPLOAD_MS: i64 = 3_000;

/// A Leaf znode whose timestamp moved within this long may have a live Leaf node behind it: three
/// of its uploads and a second.
const LEAF_ALIVE_MS: i64 = 3 * LEAF_UPLOAD_MS + 1_000;

/// One boot's claim of a worker id, on its session.
pub(super) struct Claim<'a> {
    session: &'a Arc<Session>,
    /// Leaf's `leaf.name`.
    name: &'a str,
    /// The lease window, in seconds.
    window: i64,
    /// The ensemble and path, for messages.
    describe: String,
    ip: &'a str,
    port: &'a str,
    address: String,
    max: u64,
    deadline: Instant,
    /// The last reason to wait that was logged.
    said: std::cell::RefCell<Option<String>>,
    /// Leaf znodes of this ip:port seen: their version and since when it has not changed (on
    /// this node's monotonic clock, whatever the Leaf node's wall clock says).
    leaf_seen: std::cell::RefCell<std::collections::HashMap<String, (i32, Instant)>>,
    /// Ids of this ip:port held by a live session: the version of their reach when first seen.
    live_seen: std::cell::RefCell<std::collections::HashMap<u64, Option<i32>>>,
}

/// What a claim tells of an id it could not take now.
enum Busy {
    /// Held by a live session, or a Leaf node that may be alive: wait and look again.
    Wait(String),
}

impl<'a> Claim<'a> {
    /// A claim on `session` of an id under `name` (`leaf.name`, with the lease `window` and
    /// the assigner described) for `ip:port`, up to worker id `max`, within `deadline`.
    pub(super) fn new(
        session: &'a Arc<Session>,
        (name, window, describe): (&'a str, i64, String),
        (ip, port): (&'a str, &'a str),
        max: u64,
        deadline: Instant,
    ) -> Self {
        Claim {
            session,
            name,
            window,
            describe,
            ip,
            port,
            address: format!("{ip}:{port}"),
            max,
            deadline,
            said: std::cell::RefCell::new(None),
            leaf_seen: std::cell::RefCell::new(std::collections::HashMap::new()),
            live_seen: std::cell::RefCell::new(std::collections::HashMap::new()),
        }
    }

    fn name(&self) -> &str {
        self.name
    }

    fn within(&self) -> Duration {
        Duration::from_secs(10)
    }

    fn describe(&self) -> String {
        self.describe.clone()
    }

    pub(super) fn run(&self) -> Result<Assignment, Error> {
        loop {
            let view = View::read(self.session, self.name(), self.within(), true)?;
            let now = SystemClock.now_seconds();
            // 1. This ip:port's own id, as Leaf's restart finds it.
            let mut waiting = None;
            for own in view.forever.iter().filter(|n| n.address == self.address) {
                if own.worker_id > self.max {
                    continue;
                }
                match self.take_own(&view, own, now)? {
                    Ok(a) => return Ok(a),
                    Err(Busy::Wait(why)) => waiting = Some(why),
                }
            }
            if let Some(why) = waiting {
                self.pause(&why)?;
                continue;
            }
            // 2. A new id from Leaf's sequence, while it fits the layout.
            if u64::try_from(view.next_seq).is_ok_and(|s| s <= self.max) {
                if let Some(a) = self.create_new(now)? {
                    return Ok(a);
                }
                continue;
            }
            // 3. A ringflake id whose holder is gone and whose reach has passed.
            let mut candidates: Vec<&(u64, IdData)> = view
                .ids
                .iter()
                .filter(|(id, d)| {
                    *id <= self.max && d.origin == Origin::Ringflake && !view.live.contains(id)
                })
                .collect();
            candidates.sort_by_key(|(_, d)| d.reach);
            let mut soonest = None;
            for (id, data) in candidates {
                if data.reach >= now {
                    soonest = Some(soonest.map_or(data.reach, |s: i64| s.min(data.reach)));
                    continue;
                }
                let Some(node) = view.forever.iter().find(|n| n.worker_id == *id) else {
                    continue;
                };
                let version = view.ids_versions.get(id).copied().unwrap_or(-1);
                if let Some(a) = self.recycle(node, data, version, now)? {
                    return Ok(a);
                }
            }
            let held = view
                .ids
                .iter()
                .any(|(id, d)| *id <= self.max && d.origin == Origin::Ringflake);
            match soonest {
                Some(reach) => {
                    self.pause(&format!(
                        "every free ringflake id is reserved until its reach, the soonest until \
                         {}",
                        crate::clock::rfc3339(reach)
                    ))?;
                }
                // Their holders may go (a session expires, a node stops).
                None if held => self.pause(&format!(
                    "every id up to {} is held by a live session or a Leaf node",
                    self.max
                ))?,
                None => {
                    return Err(Error::WorkerAssignment(format!(
                        "no worker id up to {} free in {}: Leaf's sequence is at {} and no id \
                         ringflake made has a holder that is gone",
                        self.max,
                        self.describe(),
                        view.next_seq
                    )));
                }
            }
        }
    }

    /// Waits a little before looking again, within the boot's deadline.
    fn pause(&self, why: &str) -> Result<(), Error> {
        if Instant::now() >= self.deadline {
            return Err(Error::WorkerAssignment(format!(
                "no worker id from {} within the boot's deadline: {why}",
                self.describe()
            )));
        }
        // Said once per reason, not every look.
        let mut said = self.said.borrow_mut();
        if said.as_deref() != Some(why) {
            tracing::info!(address = %self.address, reason = %why, "waiting for a worker id");
            *said = Some(why.to_string());
        }
        std::thread::sleep(Duration::from_millis(250));
        Ok(())
    }

    fn paths(&self, worker_id: u64) -> (String, String) {
        let seq = znodes::seq(worker_id);
        (
            format!("{}/{seq}", znodes::ids(self.name())),
            format!("{}/{seq}", znodes::live(self.name())),
        )
    }

    fn leaf_data(&self) -> Vec<u8> {
        znodes::leaf_data(self.ip, self.port, SystemClock.now_millis())
    }

    /// This ip:port's own forever znode, taken (or why not now).
    fn take_own(
        &self,
        view: &View,
        own: &ForeverNode,
        now: i64,
    ) -> Result<Result<Assignment, Busy>, Error> {
        let id = own.worker_id;
        let (ids_path, live_path) = self.paths(id);
        if view.live.contains(&id) {
            // A predecessor killed with its session still open writes nothing: its session
            // expires within its timeout. A holder whose reach moves while this boot waits is
            // alive: another node with this ip:port (a second one, or a clone of this one).
            let version = view.ids_versions.get(&id).copied();
            let moved = *self.live_seen.borrow_mut().entry(id).or_insert(version) != version;
            let why = if moved {
                format!(
                    "worker id {id} of {} is served by another live node with this address: \
                     its reach moved while this boot waited (a second node, or a clone of this \
                     one, on the same ip:port); it is not taken while that node serves",
                    self.address
                )
            } else {
                format!(
                    "worker id {id} of {} is served by a live session (this node's \
                     predecessor, until the servers expire its session?)",
                    self.address
                )
            };
            return Ok(Err(Busy::Wait(why)));
        }
        let forever_path = format!("{}/{}", znodes::forever(self.name()), own.name);
        let ts = view.timestamps.get(&own.name).copied().flatten();
        let window = self.window;
        let managed = view.ids.iter().find(|(i, _)| *i == id).map(|(_, d)| d);
        let (origin, not_before, ops) = match managed {
            Some(data) => {
                let version = view.ids_versions.get(&id).copied().unwrap_or(-1);
                let floor = data.reach.max(ts.map_or(i64::MIN, |t| t.div_euclid(1000)));
                let reach = now.max(floor.saturating_add(1)).saturating_add(window);
                let d = IdData {
                    origin: data.origin,
                    holder: self.address.clone(),
                    reach,
                };
                (
                    data.origin,
                    floor,
                    vec![
                        Op::Create(live_path, Vec::new(), zk::CreateMode::Ephemeral),
                        Op::SetData(ids_path, d.to_json(), Some(version)),
                        Op::SetData(forever_path, self.leaf_data(), None),
                    ],
                )
            }
            None => {
                // A Leaf node's (or a ringflake boot's that stopped before marking it): taken
                // over once the znode has stood still long enough that no Leaf node rewrites it:
                // its version unchanged for 10 s of this node's monotonic clock (a Leaf node
                // whose wall clock is behind would look gone by its timestamp alone), and its
                // timestamp 10 s old.
                let Some(ts) = ts else {
                    return Err(Error::WorkerAssignment(format!(
                        "worker id {id} of {} in {}: its data has no timestamp Leaf could read",
                        self.address,
                        self.describe()
                    )));
                };
                let now_ms = SystemClock.now_millis();
                let version = view.forever_versions.get(&own.name).copied().unwrap_or(-1);
                let still = {
                    let mut seen = self.leaf_seen.borrow_mut();
                    match seen.get(&own.name) {
                        Some(&(v, since)) if v == version => since.elapsed(),
                        _ => {
                            seen.insert(own.name.clone(), (version, Instant::now()));
                            Duration::ZERO
                        }
                    }
                };
                let alive = Duration::from_millis(LEAF_ALIVE_MS as u64);
                if now_ms.saturating_sub(ts) < LEAF_ALIVE_MS || still < alive {
                    return Ok(Err(Busy::Wait(format!(
                        "worker id {id} of {}: its Leaf znode has not stood still for {} s, a \
                         Leaf node may still be serving it",
                        self.address,
                        LEAF_ALIVE_MS / 1000
                    ))));
                }
                // Leaf issues until its next upload, 3 s later at most.
                let floor = (ts + LEAF_UPLOAD_MS + 999).div_euclid(1000);
                let reach = now.max(floor.saturating_add(1)).saturating_add(window);
                let d = IdData {
                    origin: Origin::Leaf,
                    holder: self.address.clone(),
                    reach,
                };
                (
                    Origin::Leaf,
                    floor,
                    vec![
                        Op::Create(live_path, Vec::new(), zk::CreateMode::Ephemeral),
                        Op::Create(ids_path, d.to_json(), zk::CreateMode::Persistent),
                        // Unless a Leaf node wrote it meanwhile.
                        Op::SetData(forever_path, self.leaf_data(), Some(version)),
                    ],
                )
            }
        };
        let reach = now.max(not_before.saturating_add(1)).saturating_add(window);
        match self
            .session
            .multi("taking this node's id", self.within(), ops)?
        {
            Ok(results) => {
                let version = version_of(&results, 1);
                tracing::info!(
                    worker_id = id,
                    database = %self.describe(),
                    address = %self.address,
                    after_second = not_before,
                    "worker id {id} acquired: this ip:port's own, as Leaf finds it"
                );
                Ok(Ok(self.assignment(
                    id,
                    own.name.clone(),
                    origin,
                    version,
                    reach,
                    not_before,
                )))
            }
            Err((_, zk::Error::NodeExists | zk::Error::BadVersion | zk::Error::NoNode)) => {
                Ok(Err(Busy::Wait(format!(
                    "worker id {id} of {} changed while it was taken",
                    self.address
                ))))
            }
            Err((_, e)) => Err(self.session.error("taking this node's id", &e)),
        }
    }

    /// A new id: a persistent sequential znode under `forever`, as Leaf makes one; `None` if
    /// the sequence gave one that does not fit (deleted again) or it could not be marked.
    fn create_new(&self, now: i64) -> Result<Option<Assignment>, Error> {
        let prefix = format!("{}/{}-", znodes::forever(self.name()), self.address);
        let data = self.leaf_data();
        let (_, sequence) = self
            .session
            .call(
                "creating a forever znode",
                self.within(),
                move |c| async move {
                    c.create(
                        &prefix,
                        &data,
                        &zk::CreateMode::PersistentSequential.with_acls(zk::Acls::anyone_all()),
                    )
                    .await
                },
            )?
            .map_err(|e| self.session.error("creating a forever znode", &e))?;
        let Ok(id) = u64::try_from(sequence.into_i64()) else {
            return Ok(None);
        };
        let name = ForeverNode::name_of(&self.address, id);
        if id > self.max {
            let path = format!("{}/{name}", znodes::forever(self.name()));
            let _ = self.session.call(
                "deleting a forever znode",
                self.within(),
                move |c| async move { c.delete(&path, None).await },
            );
            return Ok(None);
        }
        let (ids_path, live_path) = self.paths(id);
        let reach = now.saturating_add(self.window);
        let d = IdData {
            origin: Origin::Ringflake,
            holder: self.address.clone(),
            reach,
        };
        let ops = vec![
            Op::Create(live_path, Vec::new(), zk::CreateMode::Ephemeral),
            Op::Create(ids_path, d.to_json(), zk::CreateMode::Persistent),
        ];
        match self.session.multi("marking a new id", self.within(), ops)? {
            Ok(_) => {
                tracing::info!(
                    worker_id = id,
                    database = %self.describe(),
                    address = %self.address,
                    "worker id {id} acquired: a new forever znode {name}"
                );
                Ok(Some(self.assignment(
                    id,
                    name,
                    Origin::Ringflake,
                    0,
                    reach,
                    now,
                )))
            }
            Err((_, e)) => Err(self.session.error("marking a new id", &e)),
        }
    }

    /// A gone holder's id, renamed to this ip:port in one transaction.
    fn recycle(
        &self,
        node: &ForeverNode,
        data: &IdData,
        version: i32,
        now: i64,
    ) -> Result<Option<Assignment>, Error> {
        let id = node.worker_id;
        let (ids_path, live_path) = self.paths(id);
        let forever = znodes::forever(self.name());
        let new_name = ForeverNode::name_of(&self.address, id);
        let reach = now.max(data.reach.saturating_add(1)) + self.window;
        let d = IdData {
            origin: Origin::Ringflake,
            holder: self.address.clone(),
            reach,
        };
        let mut ops = vec![
            Op::Create(live_path, Vec::new(), zk::CreateMode::Ephemeral),
            Op::SetData(ids_path, d.to_json(), Some(version)),
        ];
        if node.name != new_name {
            ops.push(Op::Delete(format!("{forever}/{}", node.name), None));
            ops.push(Op::Create(
                format!("{forever}/{new_name}"),
                self.leaf_data(),
                zk::CreateMode::Persistent,
            ));
        }
        match self.session.multi("recycling an id", self.within(), ops)? {
            Ok(results) => {
                tracing::info!(
                    worker_id = id,
                    database = %self.describe(),
                    address = %self.address,
                    previous = %node.address,
                    previous_reach = %crate::clock::rfc3339(data.reach),
                    "worker id {id} acquired: recycled from {}, whose reach passed at {}",
                    node.address,
                    crate::clock::rfc3339(data.reach)
                );
                Ok(Some(self.assignment(
                    id,
                    new_name,
                    Origin::Ringflake,
                    version_of(&results, 1),
                    reach,
                    data.reach,
                )))
            }
            Err((_, zk::Error::NodeExists | zk::Error::BadVersion | zk::Error::NoNode)) => Ok(None),
            Err((_, e)) => Err(self.session.error("recycling an id", &e)),
        }
    }

    fn assignment(
        &self,
        worker_id: u64,
        forever_name: String,
        origin: Origin,
        version: i32,
        reach: i64,
        not_before: i64,
    ) -> Assignment {
        Assignment {
            worker_id,
            not_before: Some(not_before),
            order_floor: None,
            lease: Some(Box::new(ZkLease {
                session: Arc::clone(self.session),
                name: self.name().to_string(),
                worker_id,
                forever_name,
                ip: self.ip.to_string(),
                port: self.port.to_string(),
                origin,
                version: AtomicI32::new(version),
                until: AtomicI64::new(reach),
                window: self.window,
            })),
        }
    }
}

/// The version a multi's `index`-th operation (a create or a data write) left.
fn version_of(results: &[zk::MultiWriteResult], index: usize) -> i32 {
    match results.get(index) {
        Some(zk::MultiWriteResult::SetData { stat }) => stat.version,
        _ => 0,
    }
}
