//! The ids in etcd: `{prefix}held/{id}` (the holder, attached to an etcd lease of the TTL, kept
//! alive by this node) and `{prefix}reach/{id}` (the reach, no lease): read in one linearizable
//! range, taken by a transaction that creates the holder only where `create_revision == 0` and
//! reads the reach in the same revision, moved and given back by transactions that compare the
//! holder's value with this boot's.

use super::client::Client;
use super::rpc::{
    self, Compare, KeyValue, LeaseGrantRequest, LeaseKeepAliveRequest, LeaseRevokeRequest,
    RangeRequest, RequestOp, TxnRequest, TxnResponse, compare, kv_client::KvClient,
    lease_client::LeaseClient, request_op, response_op,
};
use crate::Error;
use crate::worker::kv::Answered;
use crate::worker::kv::records::{self, Holder};
use crate::worker::kv::{Hold, Registry, Slot, Taken};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The ids under one prefix of one cluster.
#[derive(Debug)]
pub(crate) struct Store {
    pub(crate) client: Arc<Client>,
    /// Ends with `/`.
    pub(crate) prefix: String,
    pub(crate) ttl: Duration,
    /// The longest one call may take at boot.
    pub(crate) timeout: Duration,
}

/// The first key after every key that begins with `prefix`: etcd's `range_end` of a prefix.
fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}

fn put(key: String, value: String, lease: i64) -> RequestOp {
    RequestOp {
        request: Some(request_op::Request::RequestPut(rpc::PutRequest {
            key: key.into_bytes(),
            value: value.into_bytes(),
            lease,
        })),
    }
}

fn get(key: String) -> RequestOp {
    RequestOp {
        request: Some(request_op::Request::RequestRange(RangeRequest {
            key: key.into_bytes(),
            ..RangeRequest::default()
        })),
    }
}

fn delete(key: String) -> RequestOp {
    RequestOp {
        request: Some(request_op::Request::RequestDeleteRange(
            rpc::DeleteRangeRequest {
                key: key.into_bytes(),
                range_end: Vec::new(),
            },
        )),
    }
}

/// `key`'s value is `value`.
fn value_is(key: String, value: String) -> Compare {
    Compare {
        result: compare::CompareResult::Equal as i32,
        target: compare::CompareTarget::Value as i32,
        key: key.into_bytes(),
        target_union: Some(compare::TargetUnion::Value(value.into_bytes())),
    }
}

/// `key` does not exist.
fn absent(key: String) -> Compare {
    Compare {
        result: compare::CompareResult::Equal as i32,
        target: compare::CompareTarget::Create as i32,
        key: key.into_bytes(),
        target_union: Some(compare::TargetUnion::CreateRevision(0)),
    }
}

impl Store {
    fn held(&self, id: u64) -> String {
        format!("{}held/{id}", self.prefix)
    }

    fn reach(&self, id: u64) -> String {
        format!("{}reach/{id}", self.prefix)
    }

    /// A record under the prefix that is not ringflake's: the error that names it.
    fn foreign(&self, kv: &KeyValue) -> Error {
        Error::WorkerAssignment(format!(
            "etcd key {:?} under the prefix {} of {} was not written by ringflake (its value \
             is {}): ringflake never overwrites it, and takes no worker id under a prefix \
             another program uses; give ringflake a prefix of its own (--etcd-prefix) or remove \
             the key",
            String::from_utf8_lossy(&kv.key),
            self.prefix,
            self.client.describe(),
            records::shown(&kv.value)
        ))
    }

    /// A reach record read with a take: its second.
    fn reach_of(&self, kv: &KeyValue) -> Result<i64, Error> {
        std::str::from_utf8(&kv.value)
            .ok()
            .and_then(records::parse_reach)
            .map(|(second, _)| second)
            .ok_or_else(|| self.foreign(kv))
    }

    fn txn(&self, what: &str, within: Duration, txn: TxnRequest) -> Result<TxnResponse, Error> {
        self.client.call(what, within, move |channel, token| {
            let r = txn.clone();
            let request = tonic::Request::new(r);
            let request = with_token(request, token);
            async move { Ok(KvClient::new(channel).txn(request).await?.into_inner()) }
        })
    }

    fn revoke(&self, lease: i64, within: Duration) {
        let _ = self
            .client
            .call("revoking a lease", within, move |channel, token| {
                let request =
                    with_token(tonic::Request::new(LeaseRevokeRequest { id: lease }), token);
                async move {
                    Ok(LeaseClient::new(channel)
                        .lease_revoke(request)
                        .await?
                        .into_inner())
                }
            });
    }
}

/// `request` with the user's token.
fn with_token<T>(mut request: tonic::Request<T>, token: Option<String>) -> tonic::Request<T> {
    if let Some(t) = token
        && let Ok(v) = t.parse()
    {
        request.metadata_mut().insert("token", v);
    }
    request
}

impl Registry for Store {
    fn describe(&self) -> String {
        format!("{} {}", self.client.describe(), self.prefix)
    }

    fn read(&self) -> Result<Vec<Slot>, Error> {
        let key = self.prefix.clone().into_bytes();
        let range_end = prefix_end(&key);
        let kvs = self
            .client
            .call("reading the ids", self.timeout, move |channel, token| {
                let request = with_token(
                    tonic::Request::new(RangeRequest {
                        key: key.clone(),
                        range_end: range_end.clone(),
                        limit: 0,
                        serializable: false,
                    }),
                    token,
                );
                async move {
                    Ok(KvClient::new(channel)
                        .range(request)
                        .await?
                        .into_inner()
                        .kvs)
                }
            })?;
        let mut slots: std::collections::BTreeMap<u64, Slot> = Default::default();
        for kv in &kvs {
            let key = String::from_utf8_lossy(&kv.key);
            let rest = key.strip_prefix(&self.prefix).unwrap_or("");
            let text = std::str::from_utf8(&kv.value).unwrap_or("");
            let parsed = match rest.split_once('/') {
                Some(("held", id)) => id
                    .parse::<u64>()
                    .ok()
                    .zip(Holder::parse(text))
                    .map(|(id, h)| (id, Some(h), None)),
                Some(("reach", id)) => id
                    .parse::<u64>()
                    .ok()
                    .zip(records::parse_reach(text))
                    .map(|(id, (reach, _))| (id, None, Some(reach))),
                _ => None,
            };
            let Some((id, holder, reach)) = parsed else {
                return Err(self.foreign(kv));
            };
            let slot = slots.entry(id).or_insert(Slot {
                worker_id: id,
                holder: None,
                reach: None,
            });
            slot.holder = slot.holder.take().or(holder);
            slot.reach = slot.reach.or(reach);
        }
        Ok(slots.into_values().collect())
    }

    fn take(
        &self,
        worker_id: u64,
        holder: &Holder,
        deadline: Instant,
    ) -> Result<Option<Taken>, Error> {
        let ttl = i64::try_from(self.ttl.as_secs()).unwrap_or(i64::MAX);
        let within = self
            .timeout
            .min(deadline.saturating_duration_since(Instant::now()))
            .max(Duration::from_secs(1));
        let sent = Instant::now();
        let lease = self
            .client
            .call("granting a lease", within, move |channel, token| {
                let request =
                    with_token(tonic::Request::new(LeaseGrantRequest { ttl, id: 0 }), token);
                async move {
                    Ok(LeaseClient::new(channel)
                        .lease_grant(request)
                        .await?
                        .into_inner())
                }
            })?;
        let text = holder.text();
        let answer = self.txn(
            "taking a worker id",
            within,
            TxnRequest {
                compare: vec![absent(self.held(worker_id))],
                success: vec![
                    put(self.held(worker_id), text.clone(), lease.id),
                    get(self.reach(worker_id)),
                ],
                failure: vec![],
            },
        );
        let answer = match answer {
            Ok(a) => a,
            Err(e) => {
                self.revoke(lease.id, within);
                return Err(e);
            }
        };
        if !answer.succeeded {
            self.revoke(lease.id, within);
            return Ok(None);
        }
        let reach = match answer.responses.get(1).and_then(|r| r.response.as_ref()) {
            Some(response_op::Response::ResponseRange(r)) => match r.kvs.first() {
                Some(kv) => Some(self.reach_of(kv)?),
                None => None,
            },
            _ => None,
        };
        let hold = EtcdHold {
            client: Arc::clone(&self.client),
            describe: self.describe(),
            held: self.held(worker_id),
            reach: self.reach(worker_id),
            text,
            token: holder.token.clone(),
            lease: lease.id,
            ttl: Duration::from_secs(u64::try_from(lease.ttl.max(1)).unwrap_or(1)),
            answered: Answered::since(sent),
        };
        Ok(Some((Box::new(hold), reach)))
    }
}

/// One worker id held in etcd: its holder key on the etcd lease `lease`.
#[derive(Debug)]
pub(crate) struct EtcdHold {
    client: Arc<Client>,
    describe: String,
    held: String,
    reach: String,
    /// The holder record, as written.
    text: String,
    /// This boot's token.
    token: String,
    lease: i64,
    ttl: Duration,
    /// When the newest keep-alive etcd answered was sent.
    answered: Answered,
}

impl EtcdHold {
    fn within(&self) -> Duration {
        crate::worker::kv::lease::KvLease::tick(self.ttl)
    }

    fn lost(&self, why: &str) -> Error {
        Error::LeaseExpired {
            until: 0,
            reason: format!("{} ({}): {why}", self.held, self.describe),
        }
    }
}

impl Hold for EtcdHold {
    fn write_reach(&self, reach: i64) -> Result<(), Error> {
        self.keep_alive()?;
        let answer = self.client.call("writing the reach", self.within(), {
            let txn = TxnRequest {
                compare: vec![value_is(self.held.clone(), self.text.clone())],
                success: vec![put(
                    self.reach.clone(),
                    records::reach_text(reach, &self.token),
                    0,
                )],
                failure: vec![],
            };
            move |channel, token| {
                let request = with_token(tonic::Request::new(txn.clone()), token);
                async move { Ok(KvClient::new(channel).txn(request).await?.into_inner()) }
            }
        })?;
        if answer.succeeded {
            Ok(())
        } else {
            Err(self.lost(
                "taken over: the holder key is gone or another node's, so the id may be \
                 another node's",
            ))
        }
    }

    fn keep_alive(&self) -> Result<(), Error> {
        let sent = Instant::now();
        let id = self.lease;
        let ttl = self.client.call(
            "keeping the lease alive",
            self.within(),
            move |channel, token| {
                let request = with_token(
                    tonic::Request::new(tokio_stream::once(LeaseKeepAliveRequest { id })),
                    token,
                );
                async move {
                    let mut answers = LeaseClient::new(channel)
                        .lease_keep_alive(request)
                        .await?
                        .into_inner();
                    match answers.message().await? {
                        Some(a) => Ok(a.ttl),
                        None => Err(tonic::Status::unavailable("the keep-alive stream closed")),
                    }
                }
            },
        )?;
        if ttl <= 0 {
            return Err(self.lost(&format!(
                "its etcd lease {id:x} expired (etcd did not hear from this node within its \
                 TTL of {} s): the holder key is gone, and the id may be another node's",
                self.ttl.as_secs()
            )));
        }
        self.answered.heard(sent);
        Ok(())
    }

    fn release(&self, last: i64) -> Result<(), Error> {
        let txn = TxnRequest {
            compare: vec![value_is(self.held.clone(), self.text.clone())],
            success: vec![
                put(
                    self.reach.clone(),
                    records::reach_text(last, &self.token),
                    0,
                ),
                delete(self.held.clone()),
            ],
            failure: vec![],
        };
        let answer = self.client.call(
            "giving the id back",
            self.within().max(Duration::from_secs(1)),
            move |channel, token| {
                let request = with_token(tonic::Request::new(txn.clone()), token);
                async move { Ok(KvClient::new(channel).txn(request).await?.into_inner()) }
            },
        )?;
        let id = self.lease;
        let _ = self.client.call(
            "revoking the lease",
            self.within(),
            move |channel, token| {
                let request = with_token(tonic::Request::new(LeaseRevokeRequest { id }), token);
                async move {
                    Ok(LeaseClient::new(channel)
                        .lease_revoke(request)
                        .await?
                        .into_inner())
                }
            },
        );
        if answer.succeeded {
            Ok(())
        } else {
            Err(self.lost("another node's now: its holder key is not this node's"))
        }
    }

    fn since_answered(&self) -> Duration {
        self.answered.ago()
    }

    fn ttl(&self) -> Duration {
        self.ttl
    }

    fn describe(&self) -> String {
        self.describe.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_ends_before_its_next_sibling() {
        assert_eq!(prefix_end(b"/ringflake/"), b"/ringflake0".to_vec());
        assert_eq!(prefix_end(b"a\xff"), b"b".to_vec());
        assert_eq!(prefix_end(b"\xff"), vec![0]);
    }
}
