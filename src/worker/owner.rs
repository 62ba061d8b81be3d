//! The owner file of a state directory: an OS lock that the process holding a worker row keeps
//! for its whole run, and the row it holds, so that its successor in the same directory can prove
//! it gone and take the row back instead of a new worker id.
//!
//! The file is `<state file>.owner`, beside the state file and apart from its contents (the state
//! file is replaced at every write, which would drop a lock held on it). Its lock is an exclusive
//! `flock` ([`File::try_lock`]), which the kernel releases when the process ends, however it ends
//! (`kill -9` included), and when the generator that holds it is dropped. Whoever gets the lock
//! knows that the process that held it before is gone; a process that cannot get it knows a live
//! one holds it, and takes a worker id of its own without touching the holder's row.
//!
//! The holder writes what its row says about its boot (`ID`, `HOST_NAME`, `PORT`: `PORT` of an
//! ACTUAL node, `TYPE` 2, is `<millis>-<random>`, this boot's alone) and which table it is in. A
//! successor takes the row back only if the row still says exactly that: a row recycled by
//! another node, or written by a Java node, says something else. A container's row (`TYPE` 1)
//! names no boot (its JPAAS host and port repeat), so it is never recorded.

use super::node::NodeInfo;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};

/// The first line of an owner file.
const MAGIC: &str = "ringflake-owner 1";

/// The longest owner file read (the host name column holds 64 characters).
const MAX_LEN: u64 = 1024;

/// What an owner file says about the row its holder held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Holder {
    /// The row's `ID`: the worker id.
    pub(crate) worker_id: u64,
    /// Its `HOST_NAME` and `PORT` as the holder wrote them.
    pub(crate) host_name: String,
    pub(crate) port: String,
    /// The table, as [`describe`](super::rows::TableSetup::describe) names it.
    pub(crate) table: String,
}

impl Holder {
    /// The holder of row `worker_id` of `table`, booted as `node`; `None` for a container's row
    /// (it names no boot) or a value that would not fit on its line.
    pub(crate) fn of(worker_id: u64, node: &NodeInfo, table: String) -> Option<Holder> {
        let one_line = |s: &str| !s.is_empty() && !s.contains(['\n', '\r']);
        (node.node_type == 2
            && one_line(&node.host_name)
            && one_line(&node.port)
            && one_line(&table))
        .then(|| Holder {
            worker_id,
            host_name: node.host_name.clone(),
            port: node.port.clone(),
            table,
        })
    }

    fn text(&self) -> String {
        format!(
            "{MAGIC}\nworker_id={}\nhost_name={}\nport={}\ntable={}\n",
            self.worker_id, self.host_name, self.port, self.table
        )
    }

    fn parse(text: &str) -> Option<Holder> {
        let mut lines = text.lines();
        if lines.next()? != MAGIC {
            return None;
        }
        let mut field = |name: &str| {
            lines
                .next()?
                .strip_prefix(name)?
                .strip_prefix('=')
                .map(str::to_string)
        };
        let worker_id = field("worker_id")?.parse().ok()?;
        let host_name = field("host_name")?;
        let port = field("port")?;
        let table = field("table")?;
        Some(Holder {
            worker_id,
            host_name,
            port,
            table,
        })
    }
}

/// The owner file of a state file.
#[derive(Debug, Clone)]
pub(crate) struct OwnerFile {
    path: PathBuf,
}

/// The lock of an owner file, held: released when dropped (or when the process ends).
#[derive(Debug)]
pub(crate) struct Owned {
    file: File,
    /// What the file said when the lock was taken: the previous holder, gone.
    predecessor: Option<Holder>,
}

impl OwnerFile {
    /// The owner file of state file `state`: `<state>.owner`.
    pub(crate) fn of_state(state: &Path) -> OwnerFile {
        let mut path = state.as_os_str().to_owned();
        path.push(".owner");
        OwnerFile {
            path: PathBuf::from(path),
        }
    }

    /// Takes the lock if no live process holds it. `None` if one does, or if the file cannot
    /// be opened (a read-only directory): then nothing is taken back and nothing recorded, and
    /// the boot takes a worker id of its own as it would without an owner file.
    pub(crate) fn try_own(&self) -> Option<Owned> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&self.path)
            .ok()?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return None,
            Err(TryLockError::Error(_)) => return None,
        }
        let mut text = String::new();
        let predecessor = match (&mut file).take(MAX_LEN).read_to_string(&mut text) {
            Ok(_) => Holder::parse(&text),
            Err(_) => None,
        };
        Some(Owned { file, predecessor })
    }
}

impl Owned {
    /// The holder before this one, gone, as its owner file said.
    pub(crate) fn predecessor(&self) -> Option<&Holder> {
        self.predecessor.as_ref()
    }

    /// Records `holder` (this process's row) for the next one, or clears the record when
    /// `None`. Durable on return if it could be written; if not, the next boot takes a worker id
    /// of its own, which is safe.
    pub(crate) fn record(&mut self, holder: Option<&Holder>) {
        let text = holder.map(Holder::text).unwrap_or_default();
        let written = (|| {
            self.file.set_len(0)?;
            self.file.seek(SeekFrom::Start(0))?;
            self.file.write_all(text.as_bytes())?;
            self.file.sync_data()
        })();
        if written.is_err() {
            // A half-written record parses as nothing: the next boot takes a new id.
            let _ = self.file.set_len(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(node_type: i32, port: &str) -> NodeInfo {
        NodeInfo {
            host_name: "10.1.2.3".into(),
            port: port.into(),
            node_type,
            launch_date: "2026-11-23".into(),
        }
    }

    #[test]
    fn one_holder_at_a_time_and_what_it_leaves_behind() {
        let dir = tempfile::tempdir().unwrap();
        let owner = OwnerFile::of_state(&dir.path().join("ringflake.state"));
        assert!(
            dir.path()
                .join("ringflake.state.owner")
                .ends_with("ringflake.state.owner")
        );
        let mut first = owner.try_own().expect("nobody holds it");
        assert_eq!(first.predecessor(), None);
        // A second open of the file (another process, or another generator) cannot take it.
        assert!(owner.try_own().is_none());
        let me = Holder::of(7, &node(2, "1763900000000-4711"), "sqlite file w.db".into());
        first.record(me.as_ref());
        drop(first);
        let second = owner.try_own().expect("the holder is gone");
        assert_eq!(second.predecessor(), me.as_ref());
        assert_eq!(second.predecessor().map(|h| h.worker_id), Some(7));
    }

    #[test]
    fn containers_and_damaged_files_record_nothing() {
        assert_eq!(Holder::of(1, &node(1, "8080"), "t".into()), None);
        assert_eq!(Holder::of(1, &node(2, "1-2"), "a\nb".into()), None);
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("s");
        for bad in [
            "",
            "ringflake-owner 1\n",
            "ringflake-owner 1\nworker_id=x\nhost_name=h\nport=p\ntable=t\n",
            "ringflake-owner 2\nworker_id=1\nhost_name=h\nport=p\ntable=t\n",
            "ringflake-owner 1\nhost_name=h\nworker_id=1\nport=p\ntable=t\n",
        ] {
            std::fs::write(dir.path().join("s.owner"), bad).unwrap();
            let owned = OwnerFile::of_state(&state).try_own().unwrap();
            assert_eq!(owned.predecessor(), None, "{bad:?}");
        }
        // A record cleared leaves nothing to take back.
        let mut owned = OwnerFile::of_state(&state).try_own().unwrap();
        owned.record(None);
        drop(owned);
        assert_eq!(
            OwnerFile::of_state(&state).try_own().unwrap().predecessor(),
            None
        );
    }
}
