//! The segment state directory: one file per tag recording the ranges this node holds and how
//! far into each it may have handed out (the *mark*), written durably before any number at or
//! above the old mark is handed out. A restart, even after `kill -9`, resumes each range at its
//! mark: nothing below it is handed out again, and at most what lay between the numbers really
//! handed out and the mark is lost (one chunk, see `keeper`). Leaf keeps its two segments in
//! memory only, and a restart throws both away.
//!
//! ```text
//! ringflake-segment 1
//! tag orders
//! holder 10.0.0.5/8c1f0e2d9a7b3c41
//! range 5000 7000 5400
//! range 9000 11000 9000
//! ```
//!
//! `holder` is the token under which the ranges are recorded in the table
//! `ringflake_segment_hold` (see `table`): a restart takes each range over from that token in one
//! compare-and-set before it uses it, so that a copy of this directory (a cloned VM, a restored
//! backup) resumes a range on one node at most; another finds the token changed and drops it.
//!
//! The directory is locked (`flock` on `.lock`) for the generator's whole run: a second process
//! pointed at it gets an error rather than the same ranges. A file is replaced whole (temporary
//! file, sync, rename, sync of the directory), so a crash leaves the old contents or the new ones.

use super::error::check_tag;
use crate::Error;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// The first line of a tag's file.
const MAGIC: &str = "ringflake-segment 1";

/// The largest file read: a few lines.
const MAX_LEN: u64 = 4096;

/// The most ranges a file lists: the current and the next segment, and those claimed or taken
/// over and not yet either.
const MAX_RANGES: usize = 4;

/// One range held: numbers `start..end`, those below `mark` perhaps handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HeldRange {
    pub(crate) start: i64,
    pub(crate) end: i64,
    pub(crate) mark: i64,
}

/// What a tag's file records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Held {
    /// The token the ranges are recorded under in the hold table.
    pub(crate) holder: String,
    /// At most [`MAX_RANGES`], the current one first.
    pub(crate) ranges: Vec<HeldRange>,
}

impl Held {
    fn text(&self, tag: &str) -> String {
        let mut out = format!("{MAGIC}\ntag {tag}\nholder {}\n", self.holder);
        for r in &self.ranges {
            out.push_str(&format!("range {} {} {}\n", r.start, r.end, r.mark));
        }
        out
    }

    /// Parses a file's text; `None` if it is not one for `tag`.
    fn parse(text: &str, tag: &str) -> Option<Held> {
        let mut lines = text.lines();
        if lines.next()? != MAGIC || lines.next()?.strip_prefix("tag ")? != tag {
            return None;
        }
        let holder = lines.next()?.strip_prefix("holder ")?.to_string();
        let mut ranges = Vec::new();
        for line in lines {
            let rest = line.strip_prefix("range ")?;
            let mut n = rest.split(' ').map(str::parse::<i64>);
            let (start, end, mark) = (n.next()?.ok()?, n.next()?.ok()?, n.next()?.ok()?);
            if n.next().is_some() || !(start <= mark && mark <= end) || ranges.len() == MAX_RANGES {
                return None;
            }
            ranges.push(HeldRange { start, end, mark });
        }
        (!holder.is_empty() && !holder.contains(' ')).then_some(Held { holder, ranges })
    }
}

/// The state directory, locked for this process.
#[derive(Debug)]
pub(crate) struct StateDir {
    dir: PathBuf,
    /// Held for the run; released when dropped or when the process ends, however it ends.
    _lock: File,
}

impl StateDir {
    /// Creates the directory if needed and locks it.
    ///
    /// # Errors
    ///
    /// [`Error::StateFile`] if it cannot be created or locked, or another live process holds it.
    pub(crate) fn open(dir: &Path) -> Result<StateDir, Error> {
        let fail = |reason: String| Error::StateFile {
            path: dir.display().to_string(),
            reason,
        };
        std::fs::create_dir_all(dir).map_err(|e| fail(format!("cannot create it: {e}")))?;
        let lock_path = dir.join(".lock");
        let lock = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(|e| fail(format!("cannot open {}: {e}", lock_path.display())))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(fail(
                    "another live process holds this segment state directory: give each \
                     process its own (serve --segment-state-dir), or the two would hand out the \
                     same ranges after a restart"
                        .into(),
                ));
            }
            Err(TryLockError::Error(e)) => return Err(fail(format!("cannot lock it: {e}"))),
        }
        Ok(StateDir {
            dir: dir.to_path_buf(),
            _lock: lock,
        })
    }

    /// The directory.
    pub(crate) fn path(&self) -> &Path {
        &self.dir
    }

    /// The file of `tag` (checked to be a servable tag, so a safe file name): `tag-<tag>`.
    fn file(&self, tag: &str) -> Result<PathBuf, Error> {
        check_tag(tag)?;
        Ok(self.dir.join(format!("tag-{tag}")))
    }

    /// What the file of `tag` records, if there is one.
    ///
    /// # Errors
    ///
    /// [`Error::StateFile`] if it cannot be read or is not a segment state file of this tag
    /// (never guessed at: a damaged file is an error naming it, for an operator to look at).
    pub(crate) fn read(&self, tag: &str) -> Result<Option<Held>, Error> {
        let path = self.file(tag)?;
        let fail = |reason: String| Error::StateFile {
            path: path.display().to_string(),
            reason,
        };
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(fail(format!("cannot read it: {e}"))),
        };
        let mut text = String::new();
        file.take(MAX_LEN)
            .read_to_string(&mut text)
            .map_err(|e| fail(format!("cannot read it: {e}")))?;
        Held::parse(&text, tag).map(Some).ok_or_else(|| {
            fail(format!(
                "not a segment state file of biz_tag {tag} (expected `{MAGIC}`, `tag {tag}`, \
                 `holder TOKEN` and at most four `range START END MARK` lines with START <= MARK \
                 <= END): move it away to start the tag afresh (its ranges are then lost, never \
                 handed out twice)"
            ))
        })
    }

    /// Replaces the file of `tag` with `held`, durably on return.
    ///
    /// # Errors
    ///
    /// [`Error::StateFile`] naming the file and the cause (a full disk, a read-only directory).
    pub(crate) fn write(&self, tag: &str, held: &Held) -> Result<(), Error> {
        let path = self.file(tag)?;
        crate::reach::replace_durably(&path, held.text(tag).as_bytes()).map_err(|e| {
            Error::StateFile {
                path: path.display().to_string(),
                reason: format!("cannot write it: {e}"),
            }
        })
    }

    /// Removes the file of `tag` (the tag was removed from the table).
    pub(crate) fn remove(&self, tag: &str) {
        if let Ok(path) = self.file(tag) {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_survive_reopening_and_the_directory_is_one_process_s() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::open(dir.path()).unwrap();
        assert_eq!(state.read("orders").unwrap(), None);
        let held = Held {
            holder: "h/1".into(),
            ranges: vec![
                HeldRange {
                    start: 1,
                    end: 1001,
                    mark: 101,
                },
                HeldRange {
                    start: 3001,
                    end: 4001,
                    mark: 3001,
                },
            ],
        };
        state.write("orders", &held).unwrap();
        let e = StateDir::open(dir.path()).unwrap_err().to_string();
        assert!(e.contains("another live process"), "{e}");
        drop(state);
        let state = StateDir::open(dir.path()).unwrap();
        assert_eq!(state.read("orders").unwrap(), Some(held));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("tag-orders")).unwrap(),
            "ringflake-segment 1\ntag orders\nholder h/1\nrange 1 1001 101\nrange 3001 4001 3001\n"
        );
        state.remove("orders");
        assert_eq!(state.read("orders").unwrap(), None);
        assert!(
            state.read("../x").is_err(),
            "a tag is a file name only if valid"
        );
    }

    #[test]
    fn a_damaged_file_is_an_error_not_a_guess() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::open(dir.path()).unwrap();
        for bad in [
            "",
            "ringflake-segment 1\ntag other\nholder h\n",
            "ringflake-segment 1\ntag t\nholder h\nrange 5 1 3\n",
            "ringflake-segment 1\ntag t\nholder h\nrange 1 5 6\n",
            "ringflake-segment 1\ntag t\nholder h\nrange 1 5\n",
            "ringflake-segment 1\ntag t\nholder h\nrange 1 5 1\nrange 1 5 1\nrange 1 5 1\nrange 1 5 1\nrange 1 5 1\n",
            "ringflake-segment 1\ntag t\nholder \n",
        ] {
            std::fs::write(dir.path().join("tag-t"), bad).unwrap();
            let e = state.read("t").unwrap_err().to_string();
            assert!(
                e.contains("not a segment state file of biz_tag t"),
                "{bad:?}: {e}"
            );
        }
    }
}
