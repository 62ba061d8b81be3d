//! What the znodes under one `leaf.name` say at one moment ([`View`]): Leaf's forever children
//! and their data, and what ringflake keeps beside them (the reach of each id, the live ids).

use super::session::Session;
use super::znodes::{self, ForeverNode, IdData};
use crate::Error;
use std::time::Duration;
use zookeeper_client as zk;

/// What the znodes say at one moment.
pub(super) struct View {
    pub(super) forever: Vec<ForeverNode>,
    /// The sequence the next sequential child of `forever` gets (its parent's cversion).
    pub(super) next_seq: i64,
    pub(super) ids: Vec<(u64, IdData)>,
    pub(super) ids_versions: std::collections::HashMap<u64, i32>,
    pub(super) live: Vec<u64>,
    pub(super) timestamps: std::collections::HashMap<String, Option<i64>>,
    /// The version of each forever znode (by name): a Leaf node alive rewrites it every 3 s.
    pub(super) forever_versions: std::collections::HashMap<String, i32>,
}

impl View {
    /// Reads the znodes under `name`; `create`: the paths are made first where missing (a
    /// boot), else a missing path reads as empty (a listing, which writes nothing).
    pub(super) fn read(
        session: &Session,
        name: &str,
        within: Duration,
        create: bool,
    ) -> Result<View, Error> {
        let err = |what: &str, e: &zk::Error| session.error(what, e);
        let forever_path = znodes::forever(name);
        let ids_path = znodes::ids(name);
        let live_path = znodes::live(name);
        let missing = |e: &zk::Error| !create && *e == zk::Error::NoNode;
        for path in [&forever_path, &ids_path, &live_path]
            .into_iter()
            .filter(|_| create)
        {
            let p = path.clone();
            match session.call("creating the paths", within, move |c| async move {
                c.mkdir(
                    &p,
                    &zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all()),
                )
                .await
            })? {
                Ok(()) | Err(zk::Error::NodeExists) => {}
                Err(zk::Error::NoNode) => {
                    return Err(err(
                        "creating the paths (a chroot in the connect string must exist)",
                        &zk::Error::NoNode,
                    ));
                }
                Err(e) => return Err(err("creating the paths", &e)),
            }
        }
        let p = forever_path.clone();
        let (children, next_seq) =
            match session.call("listing forever", within, move |c| async move {
                c.get_children(&p).await
            })? {
                Ok((children, stat)) => (children, i64::from(stat.cversion)),
                Err(e) if missing(&e) => (Vec::new(), 0),
                Err(e) => return Err(err("listing forever", &e)),
            };
        let mut forever = Vec::new();
        for child in children {
            match ForeverNode::parse(&child) {
                Some(n) => forever.push(n),
                None => tracing::warn!(
                    child = %child,
                    path = %forever_path,
                    "a child of Leaf's forever path that Leaf cannot parse (Leaf nodes fail to \
                     start on it): left alone"
                ),
            }
        }
        forever.sort_by_key(|n| n.worker_id);
        let p = ids_path.clone();
        let id_names = match session.call("listing ids", within, move |c| async move {
            c.list_children(&p).await
        })? {
            Ok(names) => names,
            Err(e) if missing(&e) => Vec::new(),
            Err(e) => return Err(err("listing ids", &e)),
        };
        let mut ids = Vec::new();
        let mut ids_versions = std::collections::HashMap::new();
        let numbered: Vec<u64> = id_names.iter().filter_map(|c| c.parse().ok()).collect();
        let paths = numbered
            .iter()
            .map(|id| format!("{ids_path}/{}", znodes::seq(*id)))
            .collect();
        for (id, read) in
            numbered
                .iter()
                .zip(session.read_many("reading the ids", within, paths)?)
        {
            if let Some((data, version)) = read
                && let Some(d) = IdData::parse(&data)
            {
                ids.push((*id, d));
                ids_versions.insert(*id, version);
            }
        }
        let p = live_path.clone();
        let live = match session.call("listing live ids", within, move |c| async move {
            c.list_children(&p).await
        })? {
            Ok(names) => names.iter().filter_map(|c| c.parse().ok()).collect(),
            Err(e) if missing(&e) => Vec::new(),
            Err(e) => return Err(err("listing live ids", &e)),
        };
        let paths = forever
            .iter()
            .map(|n| format!("{forever_path}/{}", n.name))
            .collect();
        let mut timestamps = std::collections::HashMap::new();
        let mut forever_versions = std::collections::HashMap::new();
        for (n, read) in forever
            .iter()
            .zip(session.read_many("reading forever", within, paths)?)
        {
            if let Some((_, version)) = &read {
                forever_versions.insert(n.name.clone(), *version);
            }
            let ts = read.and_then(|(data, _)| znodes::leaf_timestamp(&data));
            timestamps.insert(n.name.clone(), ts);
        }
        Ok(View {
            forever,
            next_seq,
            ids,
            ids_versions,
            live,
            timestamps,
            forever_versions,
        })
    }
}
