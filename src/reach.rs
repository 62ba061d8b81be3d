//! The state file: the highest second a generator may have used, made durable before any ID of
//! that second exists, so that the next run of the same worker id on this host starts above it,
//! even after SIGKILL, a power cut or a deleted worker table.
//!
//! The file holds one unix second (`ringflake-reach 1` then the second, one per line). It only
//! ever grows: [`ReachFile::raise`] writes the larger of what is there and what is asked, under an
//! exclusive lock on `<file>.lock`, so processes that share the file (several generators on one
//! host, one state directory) each start above everything any of them reserved. A write goes to a
//! temporary file that is synced, renamed over the old one and followed by a sync of the
//! directory: a crash leaves the old value or the new one, never a torn file.

use crate::Error;
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};

/// The first line of a state file.
const MAGIC: &str = "ringflake-reach 1";

/// The longest state file read: a few dozen bytes are expected.
const MAX_LEN: u64 = 256;

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

    /// Takes the exclusive lock that serialises readers and writers of the file.
    fn lock(&self) -> Result<File, Error> {
        let mut lock_path = self.path.clone().into_os_string();
        lock_path.push(".lock");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| self.error(format_args!("cannot open its lock file: {e}")))?;
        lock.lock()
            .map_err(|e| self.error(format_args!("cannot lock it: {e}")))?;
        Ok(lock)
    }

    /// The recorded second, or `None` if the file does not exist yet.
    ///
    /// # Errors
    ///
    /// [`Error::StateFile`] if it cannot be read or does not hold a state (never guessed over:
    /// starting below a recorded second could repeat IDs).
    pub(crate) fn read(&self) -> Result<Option<i64>, Error> {
        let _lock = self.lock()?;
        self.read_locked()
    }

    fn read_locked(&self) -> Result<Option<i64>, Error> {
        let file = match File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
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
        let mut lines = text.lines();
        let second = match (lines.next(), lines.next(), lines.next()) {
            (Some(MAGIC), Some(n), None) => n.parse::<i64>().ok(),
            _ => None,
        };
        match second {
            Some(s) => Ok(Some(s)),
            None => Err(self.error(format_args!(
                "it does not hold '{MAGIC}' and a unix second on the next line; \
                 move it away only if no run of this worker id can have issued IDs ahead of the clock"
            ))),
        }
    }

    /// Records `second` unless a larger one is there; returns what the file holds now. Durable on
    /// return.
    ///
    /// # Errors
    ///
    /// [`Error::StateFile`] naming the file and the cause (a full disk, a read-only directory).
    pub(crate) fn raise(&self, second: i64) -> Result<i64, Error> {
        let _lock = self.lock()?;
        let current = self.read_locked()?;
        if current.is_some_and(|c| c >= second) {
            return Ok(current.unwrap_or(second));
        }
        let mut tmp = self.path.clone().into_os_string();
        tmp.push(format!(".tmp{}", std::process::id()));
        let tmp = PathBuf::from(tmp);
        let written = (|| {
            let mut f = File::create(&tmp)?;
            f.write_all(format!("{MAGIC}\n{second}\n").as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&tmp, &self.path)?;
            let dir = match self.path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            File::open(dir)?.sync_all()
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(self.error(format_args!("cannot write it: {e}")));
        }
        Ok(second)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_only_and_survives_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let f = ReachFile::new(dir.path().join("state"));
        assert_eq!(f.read().unwrap(), None);
        assert_eq!(f.raise(100).unwrap(), 100);
        assert_eq!(f.raise(50).unwrap(), 100, "never lowered");
        assert_eq!(
            ReachFile::new(dir.path().join("state")).read().unwrap(),
            Some(100)
        );
        assert_eq!(f.raise(101).unwrap(), 101);
        let text = std::fs::read_to_string(dir.path().join("state")).unwrap();
        assert_eq!(text, "ringflake-reach 1\n101\n");
    }

    #[test]
    fn a_damaged_file_is_an_error_not_a_guess() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state");
        for bad in ["", "ringflake-reach 1\n", "ringflake-reach 1\nx\n", "12\n"] {
            std::fs::write(&path, bad).unwrap();
            let err = ReachFile::new(&path).read().unwrap_err().to_string();
            assert!(err.contains(&path.display().to_string()), "{err}");
            assert!(err.contains("does not hold"), "{err}");
        }
        std::fs::write(&path, vec![b'1'; 10_000]).unwrap();
        let err = ReachFile::new(&path).read().unwrap_err().to_string();
        assert!(err.contains("larger than 256 bytes"), "{err}");
    }

    #[test]
    fn an_unwritable_place_is_an_error() {
        let f = ReachFile::new("/proc/ringflake-no-such-dir/state");
        let err = f.raise(5).unwrap_err().to_string();
        assert!(err.contains("/proc/ringflake-no-such-dir/state"), "{err}");
    }
}
