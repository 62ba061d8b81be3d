//! The ids in Redis: `{prefix}held:{id}` (the holder, `SET … NX PX ttl`, kept alive with
//! `PEXPIRE`) and the hash `{prefix}reach` (each id's reach, no TTL); every change of a held id
//! by a Lua script that first checks the holder, and every claim and write confirmed on the
//! replicas (`Conn::confirm`) before it is used.

use super::conn::Conn;
use crate::Error;
use crate::worker::db_clock::DatabaseTime;
use crate::worker::kv::lease::KvLease;
use crate::worker::kv::records::{self, Holder};
use crate::worker::kv::{Answered, Hold, Registry, Slot, Taken};
use crate::worker::lease::LOST_WRITE;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Keeps the holder alive if it is this boot's: 1; 0 if the key is gone, -1 if another's.
const KEEP: &str = r"
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
if v then return -1 end
return 0";

/// Keeps the holder alive and moves the reach, if the holder is this boot's (as [`KEEP`]).
const WRITE: &str = r"
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('HSET', KEYS[2], ARGV[3], ARGV[4])
  return 1
end
if v then return -1 end
return 0";

/// Moves the reach back and deletes the holder, if it is this boot's (as [`KEEP`]).
const RELEASE: &str = r"
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then
  redis.call('HSET', KEYS[2], ARGV[3], ARGV[4])
  redis.call('DEL', KEYS[1])
  return 1
end
if v then return -1 end
return 0";

/// Deletes the holder, if it is this boot's (as [`KEEP`]): a claim given back before any use,
/// the reach left as it was.
const DROP: &str = r"
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
if v then return -1 end
return 0";

/// The ids under one prefix of one Redis.
#[derive(Debug)]
pub(crate) struct Store {
    pub(crate) conn: Arc<Conn>,
    pub(crate) prefix: String,
    pub(crate) ttl: Duration,
    pub(crate) timeout: Duration,
    /// A claim was refused for want of the replicas' confirmation (said once).
    pub(crate) refused: std::sync::atomic::AtomicBool,
}

impl Store {
    fn held(&self, id: u64) -> String {
        format!("{}held:{id}", self.prefix)
    }

    fn reach_hash(&self) -> String {
        format!("{}reach", self.prefix)
    }

    fn foreign(&self, key: &str, value: &str) -> Error {
        Error::WorkerAssignment(format!(
            "Redis key {key:?} of {} was not written by ringflake (its value is {}): ringflake \
             never overwrites it, and takes no worker id under a prefix another program uses; \
             give ringflake a prefix of its own (--redis-prefix) or remove the key",
            self.conn.describe(),
            records::shown(value.as_bytes())
        ))
    }
}

impl Registry for Store {
    fn describe(&self) -> String {
        format!("{} {}", self.conn.describe(), self.prefix)
    }

    fn read(&self) -> Result<Vec<Slot>, Error> {
        let hash = self.reach_hash();
        let reaches: Vec<(String, String)> =
            self.conn.call("reading the ids", self.timeout, |c| {
                redis::cmd("HGETALL").arg(&hash).query(c)
            })?;
        let mut slots = Vec::with_capacity(reaches.len());
        for (field, value) in reaches {
            let parsed = field.parse::<u64>().ok().zip(records::parse_reach(&value));
            let Some((id, (reach, _))) = parsed else {
                return Err(self.foreign(&format!("{hash} {field}"), &value));
            };
            slots.push(Slot {
                worker_id: id,
                holder: None,
                reach: Some(reach),
            });
        }
        slots.sort_by_key(|s| s.worker_id);
        if slots.is_empty() {
            return Ok(slots);
        }
        let keys: Vec<String> = slots.iter().map(|s| self.held(s.worker_id)).collect();
        let held: Vec<Option<String>> =
            self.conn.call("reading the holders", self.timeout, |c| {
                redis::cmd("MGET").arg(&keys).query(c)
            })?;
        for ((slot, key), value) in slots.iter_mut().zip(&keys).zip(held) {
            if let Some(v) = value {
                slot.holder = Some(Holder::parse(&v).ok_or_else(|| self.foreign(key, &v))?);
            }
        }
        Ok(slots)
    }

    fn take(
        &self,
        worker_id: u64,
        holder: &Holder,
        deadline: Instant,
    ) -> Result<Option<Taken>, Error> {
        let key = self.held(worker_id);
        let text = holder.text();
        let ttl_ms = u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX);
        let within = self.timeout;
        let sent = Instant::now();
        let set: Option<String> = self.conn.call("taking a worker id", within, |c| {
            redis::cmd("SET")
                .arg(&key)
                .arg(&text)
                .arg("NX")
                .arg("PX")
                .arg(ttl_ms)
                .query(c)
        })?;
        if set.is_none() {
            return Ok(None);
        }
        let hold = RedisHold {
            conn: Arc::clone(&self.conn),
            describe: self.describe(),
            held: key,
            hash: self.reach_hash(),
            worker_id,
            text,
            token: holder.token.clone(),
            ttl: self.ttl,
            answered: Answered::since(sent),
        };
        // Not used until every replica holds it: a failover to one that lacked it would give
        // the id to another node. Tried for a few seconds, then given back (the boot tries
        // again until its deadline).
        let round = KvLease::tick(self.ttl).max(Duration::from_millis(500));
        let until = deadline.min(Instant::now() + Duration::from_secs(3));
        if let Err(e) = self.conn.confirm("the claim", round, until) {
            if matches!(
                e,
                Error::Database {
                    transient: true,
                    ..
                }
            ) && !self
                .refused
                .swap(true, std::sync::atomic::Ordering::Relaxed)
            {
                tracing::error!(
                    worker_id,
                    database = %hold.describe,
                    error = %e,
                    "worker id {worker_id} not served: the replicas do not hold its claim, and \
                     a failover could give it to another node; given back, and claimed again \
                     until the boot's deadline"
                );
            }
            let _ = hold.script(DROP, "giving an unconfirmed claim back", None);
            return Err(e);
        }
        let field = worker_id.to_string();
        let hash = self.reach_hash();
        let floor: Option<String> = match self.conn.call("reading the reach", within, |c| {
            redis::cmd("HGET").arg(&hash).arg(&field).query(c)
        }) {
            Ok(f) => f,
            Err(e) => {
                let _ = hold.script(DROP, "giving the id back", None);
                return Err(e);
            }
        };
        let floor = match floor {
            None => None,
            Some(v) => match records::parse_reach(&v) {
                Some((reach, _)) => Some(reach),
                None => {
                    let _ = hold.script(DROP, "giving the id back", None);
                    return Err(self.foreign(&format!("{hash} {field}"), &v));
                }
            },
        };
        Ok(Some((Box::new(hold), floor)))
    }
}

/// One worker id held in Redis.
#[derive(Debug)]
pub(crate) struct RedisHold {
    conn: Arc<Conn>,
    describe: String,
    held: String,
    hash: String,
    worker_id: u64,
    /// The holder record, as written.
    text: String,
    token: String,
    ttl: Duration,
    /// When the newest keep-alive or write every replica confirmed was sent.
    answered: Answered,
}

impl RedisHold {
    fn within(&self) -> Duration {
        KvLease::tick(self.ttl)
    }

    /// Runs one of the scripts with this holder's key, value and TTL (and `reach`, moved into
    /// the hash): its answer, 1 (this boot's), 0 (the key is gone) or -1 (another's).
    fn script(&self, script: &str, what: &str, reach: Option<i64>) -> Result<i64, Error> {
        let ttl_ms = u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX);
        let field = self.worker_id.to_string();
        let value = reach
            .map(|r| records::reach_text(r, &self.token))
            .unwrap_or_default();
        self.conn.call(what, self.within(), |c| {
            redis::Script::new(script)
                .key(&self.held)
                .key(&self.hash)
                .arg(&self.text)
                .arg(ttl_ms)
                .arg(&field)
                .arg(&value)
                .invoke(c)
        })
    }

    /// What an answer other than 1 means. The key cannot be gone nor another's while its TTL
    /// runs from this node's newest confirmed keep-alive: then the primary forgot this node's
    /// write (a failover to a replica that lacked it), a lost write; later, it expired.
    fn lost(&self, answer: i64) -> Error {
        let since = self.answered.ago();
        let whose = if answer == 0 {
            "is gone"
        } else {
            "names another node"
        };
        let reason = if since < self.ttl {
            format!(
                "{LOST_WRITE} the holder key {} of {} {whose} although its TTL ({:.1} s from this \
                 node's last confirmed keep-alive, {:.1} s ago) has not run out: the primary \
                 forgot this node's claim (a failover to a replica that lacked it?)",
                self.held,
                self.describe,
                self.ttl.as_secs_f64(),
                since.as_secs_f64()
            )
        } else {
            format!(
                "the holder key {} of {} {whose}: its TTL ran out ({:.1} s without a confirmed \
                 keep-alive), and the id may be another node's",
                self.held,
                self.describe,
                since.as_secs_f64()
            )
        };
        Error::LeaseExpired { until: 0, reason }
    }

    /// Runs `script` and confirms it on the replicas within a tick: the fence's clock moves
    /// only then.
    fn confirmed(&self, script: &str, what: &str, reach: Option<i64>) -> Result<(), Error> {
        let sent = Instant::now();
        match self.script(script, what, reach)? {
            1 => {}
            other => return Err(self.lost(other)),
        }
        self.conn
            .confirm(what, self.within(), Instant::now() + self.within())?;
        self.answered.heard(sent);
        Ok(())
    }
}

impl Hold for RedisHold {
    fn write_reach(&self, reach: i64) -> Result<(), Error> {
        self.confirmed(WRITE, "writing the reach", Some(reach))
    }

    fn keep_alive(&self) -> Result<(), Error> {
        self.confirmed(KEEP, "keeping the holder alive", None)
    }

    fn release(&self, last: i64) -> Result<(), Error> {
        match self.script(RELEASE, "giving the id back", Some(last))? {
            1 => {
                // Best effort: the reach only moves back, which a failover may undo harmlessly.
                let _ = self.conn.confirm(
                    "giving the id back",
                    self.within(),
                    Instant::now() + self.within(),
                );
                Ok(())
            }
            other => Err(self.lost(other)),
        }
    }

    fn since_answered(&self) -> Duration {
        self.answered.ago()
    }

    fn ttl(&self) -> Duration {
        self.ttl
    }

    /// `TIME`: the primary's clock, in one round trip.
    fn clock(&self) -> Result<Option<DatabaseTime>, Error> {
        let started = Instant::now();
        let (secs, micros): (i64, i64) =
            self.conn.call("reading the clock", self.within(), |c| {
                redis::cmd("TIME").query(c)
            })?;
        Ok(Some(DatabaseTime {
            unix_micros: secs.saturating_mul(1_000_000).saturating_add(micros),
            round_trip: started.elapsed(),
        }))
    }

    fn describe(&self) -> String {
        self.describe.clone()
    }
}
