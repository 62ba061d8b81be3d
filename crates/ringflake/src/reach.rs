//! The state file: how far each worker id's IDs may have gone, made durable before any ID of
//! that second exists, so that the next run of the same worker id on this host starts above it,
//! even after SIGKILL, a power cut or a deleted worker table.
//!
//! The file holds one reach (a unix second) per worker id, plus one reach that applies to every
//! worker id:
//!
//! ```text
//! ringflake-reach 2
//! all 1795569254
//! worker 1 1795569310
//! worker 7 1795482911
//! ```
//!
//! A worker id the file does not name starts at the clock (or above `all`); one it names starts
//! above its own reach. Entries only ever grow: [`ReachFile::raise`] writes the larger of what is
//! there and what is asked, under an exclusive lock on `<file>.lock`, so processes that share the
//! file (several generators on one host, one state directory) never lower each other's reach. A
//! write goes to a temporary file that is synced, renamed over the old one and followed by a sync
//! of the directory: a crash leaves the old contents or the new ones, never a torn file.
//!
//! Files of the first format (`ringflake-reach 1` and one second, for every worker id) are read
//! as `all` with that second: applied to every worker id as before, until the clock passes it.
//! An entry more than [`FOLD_AFTER`] behind the clock, or beyond the [`MAX_ENTRIES`] newest, is
//! folded into `all` when the file is written: `all` only grows, so nothing a worker id may have
//! used is ever forgotten, and the file stays small.

use crate::Error;
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};

/// The first line of a state file of the first format: one second for every worker id.
const MAGIC_V1: &str = "ringflake-reach 1";

/// The first line of a state file: a reach per worker id.
const MAGIC: &str = "ringflake-reach 2";

/// The largest state file read: [`MAX_ENTRIES`] lines of at most 40 bytes, and some.
const MAX_LEN: u64 = 256 * 1024;

/// The most worker ids a file names; beyond them the lowest reaches are folded into `all`.
pub(crate) const MAX_ENTRIES: usize = 4096;

/// An entry this far behind the clock (seconds) is folded into `all` when the file is written: it
/// no longer delays any start, but still guards its worker id against a clock set back further.
pub(crate) const FOLD_AFTER: i64 = 86_400;

/// What a state file records.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Reaches {
    /// The reach of every worker id (a first-format file's second, and folded entries).
    pub(crate) all: Option<i64>,
    /// The reach of each worker id the file names.
    pub(crate) workers: BTreeMap<u64, i64>,
}

impl Reaches {
    /// The last second `worker_id` may have used, if the file says anything about it.
    pub(crate) fn of(&self, worker_id: u64) -> Option<i64> {
        self.all.max(self.workers.get(&worker_id).copied())
    }

    /// The last second any worker id may have used, if the file says anything: the highest
    /// second an earlier run in this state directory reserved.
    pub(crate) fn highest(&self) -> Option<i64> {
        self.all.max(self.workers.values().copied().max())
    }

    /// Folds entries more than [`FOLD_AFTER`] behind `now`, and all but the [`MAX_ENTRIES`]
    /// highest, into `all`, never `keep`'s.
    fn fold(&mut self, now: i64, keep: u64) {
        let old = now.saturating_sub(FOLD_AFTER);
        let mut folded = self.all;
        self.workers.retain(|&w, &mut s| {
            let stays = w == keep || s >= old;
            if !stays {
                folded = folded.max(Some(s));
            }
            stays
        });
        if self.workers.len() > MAX_ENTRIES {
            let mut by_reach: Vec<(i64, u64)> = self
                .workers
                .iter()
                .filter(|&(&w, _)| w != keep)
                .map(|(&w, &s)| (s, w))
                .collect();
            by_reach.sort_unstable();
            let excess = self.workers.len() - MAX_ENTRIES;
            for &(s, w) in by_reach.iter().take(excess) {
                self.workers.remove(&w);
                folded = folded.max(Some(s));
            }
        }
        self.all = folded;
    }

    fn text(&self) -> String {
        let mut out = format!("{MAGIC}\n");
        if let Some(all) = self.all {
            out.push_str(&format!("all {all}\n"));
        }
        for (w, s) in &self.workers {
            out.push_str(&format!("worker {w} {s}\n"));
        }
        out
    }

    /// Parses a file's text, either format; `None` if it is neither.
    fn parse(text: &str) -> Option<Reaches> {
        let mut lines = text.lines();
        match lines.next()? {
            MAGIC_V1 => {
                let second = lines.next()?.parse::<i64>().ok()?;
                lines.next().is_none().then(|| Reaches {
                    all: Some(second),
                    workers: BTreeMap::new(),
                })
            }
            MAGIC => {
                let mut r = Reaches::default();
                for line in lines {
                    let words: Vec<&str> = line.split(' ').collect();
                    match words[..] {
                        ["all", s] if r.all.is_none() => r.all = Some(s.parse().ok()?),
                        ["worker", w, s] => {
                            let (w, s) = (w.parse().ok()?, s.parse().ok()?);
                            if r.workers.insert(w, s).is_some() {
                                return None;
                            }
                        }
                        _ => return None,
                    }
                }
                Some(r)
            }
            _ => None,
        }
    }
}

/// A state file on disk; see the [module docs](self).
#[derive(Debug, Clone)]
pub(crate) struct ReachFile {
    path: PathBuf,
}

impl ReachFile {
    pub(crate) fn new(path: impl Into<PathBuf>) -> Self {
        ReachFile { path: path.into() }
    }

    fn error(&self, reason: impl std::fmt::Display) -> Error {
        Error::StateFile {
            path: self.path.display().to_string(),
            reason: reason.to_string(),
        }
    }

    /// Opens (creating it if need be) the lock file `<file><suffix>`, and names it.
    fn lock_file(&self, suffix: &str) -> Result<(File, PathBuf), Error> {
        let mut path = self.path.clone().into_os_string();
        path.push(suffix);
        let path = PathBuf::from(path);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| {
                self.error(format_args!(
                    "cannot open its lock file {}: {e}",
                    path.display()
                ))
            })?;
        Ok((file, path))
    }

    /// Takes the exclusive lock that serialises readers and writers of the file.
    fn lock(&self) -> Result<File, Error> {
        let (lock, _) = self.lock_file(".lock")?;
        lock.lock()
            .map_err(|e| self.error(format_args!("cannot lock it: {e}")))?;
        Ok(lock)
    }

    /// Holds worker id `worker_id` on this state file for as long as the returned file lives:
    /// an exclusive `flock` on `<file>.worker-<worker_id>.lock`, which the kernel releases when
    /// the process ends. For a worker id no source leases (a fixed one, a StatefulSet ordinal):
    /// two live generators of one host with the same worker id and the same state file would
    /// each start above what the other recorded, and hand out the same IDs once the clock
    /// reaches the seconds of the one ahead.
    ///
    /// # Errors
    ///
    /// [`Error::WorkerAssignment`] naming the worker id, the state file and the lock while
    /// another live generator holds it; [`Error::StateFile`] if the lock file cannot be opened.
    pub(crate) fn hold(&self, worker_id: u64) -> Result<File, Error> {
        let (lock, path) = self.lock_file(&format!(".worker-{worker_id}.lock"))?;
        match lock.try_lock() {
            Ok(()) => Ok(lock),
            Err(std::fs::TryLockError::WouldBlock) => Err(Error::WorkerAssignment(format!(
                "worker id {worker_id} is in use: another live generator on this host (in this \
                 process or another) runs it with the state file {} (it holds {}); two \
                 generators with one worker id hand out the same IDs: give each its own worker id",
                self.path.display(),
                path.display()
            ))),
            Err(std::fs::TryLockError::Error(e)) => {
                Err(self.error(format_args!("cannot lock its worker id lock file: {e}")))
            }
        }
    }

    /// What the file records (nothing if it does not exist yet).
    ///
    /// # Errors
    ///
    /// [`Error::StateFile`] if it cannot be read or does not hold a state (never guessed over:
    /// starting below a recorded second could repeat IDs).
    pub(crate) fn read(&self) -> Result<Reaches, Error> {
        let _lock = self.lock()?;
        self.read_locked()
    }

    fn read_locked(&self) -> Result<Reaches, Error> {
        let file = match File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Reaches::default()),
            Err(e) => return Err(self.error(format_args!("cannot read it: {e}"))),
        };
        let mut text = String::new();
        file.take(MAX_LEN + 1)
            .read_to_string(&mut text)
            .map_err(|e| self.error(format_args!("cannot read it: {e}")))?;
        if text.len() as u64 > MAX_LEN {
            return Err(self.error(format_args!(
                "it is larger than {MAX_LEN} bytes: not a ringflake state file"
            )));
        }
        Reaches::parse(&text).ok_or_else(|| {
            self.error(format_args!(
                "it does not hold '{MAGIC}' and lines 'all SECOND' or 'worker ID SECOND' (nor \
                 '{MAGIC_V1}' and a unix second on the next line); move it away only if no run \
                 of any worker id can have issued IDs ahead of the clock"
            ))
        })
    }

    /// Records that `worker_id` may use seconds up to `second`, unless the file records as much
    /// already; returns what it records for `worker_id` now. Durable on return. `now` (the
    /// clock's unix second) decides which entries are folded into `all`.
    ///
    /// # Errors
    ///
    /// [`Error::StateFile`] naming the file and the cause (a full disk, a read-only directory).
    pub(crate) fn raise(&self, worker_id: u64, second: i64, now: i64) -> Result<i64, Error> {
        let _lock = self.lock()?;
        let mut reaches = self.read_locked()?;
        if let Some(current) = reaches.of(worker_id)
            && current >= second
        {
            return Ok(current);
        }
        reaches.workers.insert(worker_id, second);
        reaches.fold(now, worker_id);
        if let Err(e) = replace_durably(&self.path, reaches.text().as_bytes()) {
            return Err(self.error(format_args!("cannot write it: {e}")));
        }
        Ok(reaches.of(worker_id).unwrap_or(second))
    }
}

/// Replaces the file at `path` with `bytes`, durably on return: written to a temporary file
/// beside it, synced, renamed over it, and the directory synced. A crash leaves the old contents
/// or the new ones, never a torn file. (The segment generator's state files are written the same
/// way.)
pub(crate) fn replace_durably(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp = path.to_path_buf().into_os_string();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let written = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        File::open(dir)?.sync_all()
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000;

    #[test]
    fn grows_only_and_survives_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let f = ReachFile::new(dir.path().join("state"));
        assert_eq!(f.read().unwrap(), Reaches::default());
        assert_eq!(f.raise(7, NOW + 100, NOW).unwrap(), NOW + 100);
        assert_eq!(
            f.raise(7, NOW + 50, NOW).unwrap(),
            NOW + 100,
            "never lowered"
        );
        let again = ReachFile::new(dir.path().join("state")).read().unwrap();
        assert_eq!(again.of(7), Some(NOW + 100));
        assert_eq!(f.raise(7, NOW + 101, NOW).unwrap(), NOW + 101);
        let text = std::fs::read_to_string(dir.path().join("state")).unwrap();
        assert_eq!(text, format!("ringflake-reach 2\nworker 7 {}\n", NOW + 101));
    }

    /// Two worker ids, one far ahead: the other's reach is its own.
    #[test]
    fn each_worker_id_has_its_own_reach() {
        let dir = tempfile::tempdir().unwrap();
        let f = ReachFile::new(dir.path().join("state"));
        f.raise(1, NOW + 86_400, NOW).unwrap();
        f.raise(2, NOW + 3, NOW).unwrap();
        let r = f.read().unwrap();
        assert_eq!(
            (r.of(1), r.of(2), r.of(3)),
            (Some(NOW + 86_400), Some(NOW + 3), None)
        );
    }

    /// A file of the first format: its second is every worker id's reach, and stays so (as
    /// `all`) when the file is next written.
    #[test]
    fn the_first_format_applies_to_every_worker_id() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state");
        std::fs::write(&path, format!("ringflake-reach 1\n{}\n", NOW + 3600)).unwrap();
        let f = ReachFile::new(&path);
        assert_eq!(f.read().unwrap().of(9), Some(NOW + 3600));
        assert_eq!(
            f.raise(9, NOW + 10, NOW).unwrap(),
            NOW + 3600,
            "nothing to write"
        );
        assert!(
            std::fs::read_to_string(&path)
                .unwrap()
                .starts_with("ringflake-reach 1\n")
        );
        assert_eq!(f.raise(9, NOW + 3601, NOW).unwrap(), NOW + 3601);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            format!(
                "ringflake-reach 2\nall {}\nworker 9 {}\n",
                NOW + 3600,
                NOW + 3601
            )
        );
        assert_eq!(f.read().unwrap().of(4), Some(NOW + 3600));
    }

    /// Old entries and entries beyond the limit are folded into `all`, never dropped.
    #[test]
    fn entries_fold_into_all() {
        let mut r = Reaches::default();
        r.workers.insert(1, NOW - FOLD_AFTER - 1);
        r.workers.insert(2, NOW - 5);
        r.workers.insert(3, NOW - FOLD_AFTER - 10);
        r.fold(NOW, 3);
        assert_eq!(r.all, Some(NOW - FOLD_AFTER - 1));
        assert_eq!(r.workers.keys().copied().collect::<Vec<_>>(), [2, 3]);
        let mut r = Reaches::default();
        for w in 0..MAX_ENTRIES as u64 + 3 {
            r.workers.insert(w, NOW + w as i64);
        }
        r.fold(NOW, 0);
        assert_eq!(r.workers.len(), MAX_ENTRIES);
        assert!(r.workers.contains_key(&0), "the kept one stays");
        assert_eq!(r.all, Some(NOW + 3));
        for w in 1..=3 {
            assert_eq!(r.of(w), Some(NOW + 3), "folded, not forgotten");
        }
        assert_eq!(Reaches::parse(&r.text()), Some(r));
    }

    #[test]
    fn a_damaged_file_is_an_error_not_a_guess() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state");
        for bad in [
            "",
            "ringflake-reach 1\n",
            "ringflake-reach 1\nx\n",
            "ringflake-reach 1\n5\n6\n",
            "12\n",
            "ringflake-reach 2\nworker 1\n",
            "ringflake-reach 2\nworker 1 5\nworker 1 6\n",
            "ringflake-reach 2\nall 5\nall 6\n",
            "ringflake-reach 2\nworker x 5\n",
            "ringflake-reach 3\n",
        ] {
            std::fs::write(&path, bad).unwrap();
            let err = ReachFile::new(&path).read().unwrap_err().to_string();
            assert!(err.contains(&path.display().to_string()), "{err}");
            assert!(err.contains("does not hold"), "{bad:?}: {err}");
        }
        std::fs::write(&path, vec![b'1'; MAX_LEN as usize + 1]).unwrap();
        let err = ReachFile::new(&path).read().unwrap_err().to_string();
        assert!(err.contains("larger than 262144 bytes"), "{err}");
    }

    #[test]
    fn an_unwritable_place_is_an_error() {
        let f = ReachFile::new("/proc/ringflake-no-such-dir/state");
        let err = f.raise(1, 5, NOW).unwrap_err().to_string();
        assert!(err.contains("/proc/ringflake-no-such-dir/state"), "{err}");
    }
}
