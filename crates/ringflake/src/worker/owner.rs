//! The owner file of a state directory: an OS lock that the process holding a worker row keeps
//! for its whole run, the row it holds, and who holds it, so that its successor in the same
//! directory on the same host can prove it gone and take the row back instead of a new worker id.
//!
//! The file is `<state file>.owner`, beside the state file and apart from its contents (the state
//! file is replaced at every write, which would drop a lock held on it). Its lock is an exclusive
//! `flock` ([`File::try_lock`]), which the kernel releases when the process ends, however it ends
//! (`kill -9` included), and when the generator that holds it is dropped. A process that cannot
//! get it knows a live one holds it, and takes a worker id of its own without touching the
//! holder's row.
//!
//! Getting the lock proves less: only that nobody holds *this file's* lock on *this kernel*. A
//! copy of the directory (a cloned VM or volume, a backup restored beside the original) has a
//! file of its own, whose lock is free while the original's holder runs on. So the holder also
//! writes who it is in a way a copy cannot carry ([`Identity`]): the kernel's boot id
//! (`/proc/sys/kernel/random/boot_id`, new at every boot, and on a clone's first boot) and the
//! file's device and inode. A free lock proves the recorded holder gone only when both are the
//! ones of the file just locked, on this boot ([`unproven`]); anything else (a copy, another
//! host, a reboot, a file of an older version, a system without boot id) proves nothing, and
//! the boot takes a worker id as a fresh boot would.
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

/// The first line of an owner file: version 2 records the holder's [`Identity`].
const MAGIC: &str = "ringflake-owner 2";

/// The first line of an owner file written before the identity was recorded: its holder is
/// never proven gone.
const MAGIC_1: &str = "ringflake-owner 1";

/// The longest owner file read (the host name column holds 64 characters).
const MAX_LEN: u64 = 1024;

/// Where Linux tells its boot id: a random UUID drawn at every boot of the kernel.
const BOOT_ID: &str = "/proc/sys/kernel/random/boot_id";

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

/// Who held an owner file, in terms a copy of the file cannot carry: the kernel's boot and the
/// file itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Identity {
    /// The kernel's boot id while the holder ran.
    pub(crate) boot_id: String,
    /// The device and inode of the owner file the holder locked.
    pub(crate) file: (u64, u64),
}

impl Identity {
    /// This boot's identity with the open owner file `file`; `None` where there is no boot id
    /// (not Linux, or no `/proc`) or no inode (not Unix).
    fn of(file: &File) -> Option<Identity> {
        let boot_id = std::fs::read_to_string(BOOT_ID).ok()?.trim().to_string();
        if boot_id.is_empty() || boot_id.len() > 64 || boot_id.contains(['\n', '\r']) {
            return None;
        }
        Some(Identity {
            boot_id,
            file: file_id(file)?,
        })
    }
}

/// The device and inode of `file`.
#[cfg(unix)]
fn file_id(file: &File) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt as _;
    file.metadata().ok().map(|m| (m.dev(), m.ino()))
}

/// No inode to tell one file from its copy.
#[cfg(not(unix))]
fn file_id(_file: &File) -> Option<(u64, u64)> {
    None
}

/// Why getting the lock of an owner file does not prove the holder it records (`recorded`)
/// gone, `here` being this boot's identity with the file just locked; `None` when it does.
///
/// The one rule of the take-back: the holder held the lock of inode `recorded.file` under boot
/// `recorded.boot_id`. If this boot is that boot and the file locked now is that inode, the
/// lock being free means the holder let go of it: its process ended (the kernel releases the
/// lock however a process ends) or dropped its generator (which releases its lease). Anything
/// else proves nothing: another inode is a copy whose original may still be locked by a live
/// holder; another boot id is a reboot of this host or another host altogether (a cloned VM or
/// disk keeps inode numbers, a restored backup keeps the record), which cannot be told apart
/// from here.
pub(crate) fn unproven(
    recorded: Option<&Identity>,
    here: Option<&Identity>,
) -> Option<&'static str> {
    let Some(recorded) = recorded else {
        return Some(
            "the owner file names no holder identity (written by an older version, or on a \
             system without a boot id)",
        );
    };
    let Some(here) = here else {
        return Some(
            "this system has no boot id (/proc/sys/kernel/random/boot_id) to tell this boot \
             from another host's",
        );
    };
    if recorded.boot_id != here.boot_id {
        return Some(
            "the owner file was written under another boot id: after a reboot, or on another \
             host (a cloned VM or disk, a copied volume or a restored backup), where its holder \
             may still run",
        );
    }
    if recorded.file != here.file {
        return Some(
            "the owner file is a copy, not the file its holder locked (a copied directory, or \
             one restored over it): its holder may still run with the original",
        );
    }
    None
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

    fn text(&self, identity: Option<&Identity>) -> String {
        let mut text = format!(
            "{MAGIC}\nworker_id={}\nhost_name={}\nport={}\ntable={}\n",
            self.worker_id, self.host_name, self.port, self.table
        );
        if let Some(Identity { boot_id, file }) = identity {
            text.push_str(&format!("boot_id={boot_id}\nfile={}:{}\n", file.0, file.1));
        }
        text
    }

    /// The holder and its identity, if the text records them (a file of version 1 records no
    /// identity).
    fn parse(text: &str) -> Option<(Holder, Option<Identity>)> {
        let mut lines = text.lines();
        let version = lines.next()?;
        if version != MAGIC && version != MAGIC_1 {
            return None;
        }
        let mut field = |name: &str| {
            lines
                .next()?
                .strip_prefix(name)?
                .strip_prefix('=')
                .map(str::to_string)
        };
        let holder = Holder {
            worker_id: field("worker_id")?.parse().ok()?,
            host_name: field("host_name")?,
            port: field("port")?,
            table: field("table")?,
        };
        let identity = (version == MAGIC)
            .then(|| {
                let boot_id = field("boot_id")?;
                let file = field("file")?;
                let (dev, ino) = file.split_once(':')?;
                Some(Identity {
                    boot_id,
                    file: (dev.parse().ok()?, ino.parse().ok()?),
                })
            })
            .flatten();
        Some((holder, identity))
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
    /// This process's identity with the file locked: recorded beside its row.
    here: Option<Identity>,
    /// What the file said when the lock was taken: the previous holder, and who it was.
    predecessor: Option<(Holder, Option<Identity>)>,
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
        Some(Owned {
            here: Identity::of(&file),
            file,
            predecessor,
        })
    }
}

impl Owned {
    /// The holder before this one, as its owner file said: gone only if [`Owned::unproven`]
    /// says nothing.
    pub(crate) fn predecessor(&self) -> Option<&Holder> {
        self.predecessor.as_ref().map(|(holder, _)| holder)
    }

    /// Why the lock just taken does not prove the predecessor gone ([`unproven`]); `None` when
    /// it does.
    pub(crate) fn unproven(&self) -> Option<&'static str> {
        let recorded = self.predecessor.as_ref().and_then(|(_, id)| id.as_ref());
        unproven(recorded, self.here.as_ref())
    }

    /// Records `holder` (this process's row) for the next one, with this process's identity,
    /// or clears the record when `None`. Durable on return if it could be written; if not, the
    /// next boot takes a worker id of its own, which is safe.
    pub(crate) fn record(&mut self, holder: Option<&Holder>) {
        let text = holder
            .map(|h| h.text(self.here.as_ref()))
            .unwrap_or_default();
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

    fn identity(boot_id: &str, file: (u64, u64)) -> Identity {
        Identity {
            boot_id: boot_id.into(),
            file,
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
        // The same file on the same boot: the free lock proves the holder gone (on Linux; where
        // there is no boot id, nothing is proven).
        let linux = std::path::Path::new(BOOT_ID).exists();
        assert_eq!(
            second.unproven().is_none(),
            linux,
            "{:?}",
            second.unproven()
        );
    }

    /// A copy of the file (another inode), or the file under another boot id, proves nothing.
    #[test]
    fn a_copy_or_another_boot_proves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.state");
        let mut owned = OwnerFile::of_state(&a).try_own().unwrap();
        owned.record(Holder::of(3, &node(2, "1-2"), "t".into()).as_ref());
        let copy = dir.path().join("b.state");
        std::fs::copy(
            dir.path().join("a.state.owner"),
            dir.path().join("b.state.owner"),
        )
        .unwrap();
        // The original is still held; its copy's lock is free, and proves nothing.
        let copied = OwnerFile::of_state(&copy)
            .try_own()
            .expect("a file of its own");
        assert_eq!(copied.predecessor().map(|h| h.worker_id), Some(3));
        assert!(copied.unproven().is_some());
        drop(owned);
        if !std::path::Path::new(BOOT_ID).exists() {
            return;
        }
        // The original after a reboot (its record's boot id rewritten in place): nothing either.
        let path = dir.path().join("a.state.owner");
        let text = std::fs::read_to_string(&path).unwrap();
        let boot = text
            .lines()
            .find_map(|l| l.strip_prefix("boot_id="))
            .unwrap();
        std::fs::write(
            &path,
            text.replace(boot, "00000000-0000-0000-0000-000000000000"),
        )
        .unwrap();
        let rebooted = OwnerFile::of_state(&a).try_own().unwrap();
        assert_eq!(rebooted.predecessor().map(|h| h.worker_id), Some(3));
        assert!(
            rebooted.unproven().unwrap().contains("another boot id"),
            "{:?}",
            rebooted.unproven()
        );
    }

    /// The rule's boundaries: the same boot and the same file prove the holder gone; each part
    /// differing, or missing, does not.
    #[test]
    fn only_the_same_file_on_the_same_boot_proves_the_holder_gone() {
        let held = identity("b1", (10, 20));
        assert_eq!(unproven(Some(&held), Some(&held.clone())), None);
        let why = |recorded: Option<&Identity>, here: Option<&Identity>| {
            unproven(recorded, here).expect("not proven")
        };
        assert!(why(Some(&held), Some(&identity("b2", (10, 20)))).contains("another boot id"));
        assert!(why(Some(&held), Some(&identity("b1", (10, 21)))).contains("a copy"));
        assert!(why(Some(&held), Some(&identity("b1", (11, 20)))).contains("a copy"));
        assert!(why(None, Some(&held)).contains("no holder identity"));
        assert!(why(Some(&held), None).contains("no boot id"));
    }

    #[test]
    fn records_of_both_versions_parse() {
        let h = Holder::of(5, &node(2, "1-2"), "t".into()).unwrap();
        let id = identity("0f1e", (2049, 131_075));
        assert_eq!(
            Holder::parse(&h.text(Some(&id))),
            Some((h.clone(), Some(id.clone())))
        );
        assert_eq!(Holder::parse(&h.text(None)), Some((h.clone(), None)));
        // A file of version 1 names the holder but not who it was.
        let v1 = "ringflake-owner 1\nworker_id=5\nhost_name=10.1.2.3\nport=1-2\ntable=t\n";
        assert_eq!(Holder::parse(v1), Some((h.clone(), None)));
        // A damaged identity is no identity.
        let bad = h.text(Some(&id)).replace("file=2049:131075", "file=2049");
        assert_eq!(Holder::parse(&bad), Some((h, None)));
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
            "ringflake-owner 3\nworker_id=1\nhost_name=h\nport=p\ntable=t\n",
            "ringflake-owner 2\nhost_name=h\nworker_id=1\nport=p\ntable=t\n",
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
