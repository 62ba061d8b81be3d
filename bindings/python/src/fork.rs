//! Telling a forked child from its parent without a system call per ID.
//!
//! gunicorn, uWSGI, Celery and `multiprocessing` fork after import; the child gets a copy of the
//! parent's generator, ring, cached chunks and all, but not its filler thread nor its worker
//! lease. As tokenizers does, the module registers a `pthread_atfork` child handler when it is
//! imported; it adds one to [`generation`] in every child (of `os.fork()`, and of a `fork()` made
//! by any C code). A generator remembers the generation it was built in, and a take compares:
//! one relaxed atomic load, no `getpid()` (a system call in glibc since 2.25).

use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};

/// How many `fork()`s separate this process from the one that imported the module.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// The child handler: async-signal-safe, as `pthread_atfork` requires (one atomic add).
extern "C" fn in_child() {
    GENERATION.fetch_add(1, Ordering::Relaxed);
}

/// This process's fork generation: 0 in the process that imported the module, one more in each
/// forked child.
#[inline]
pub fn generation() -> u64 {
    GENERATION.load(Ordering::Relaxed)
}

/// Registers the child handler, once per process (a re-import does nothing).
///
/// # Errors
///
/// The `errno` of a failed `pthread_atfork` (out of memory).
pub fn register() -> Result<(), i32> {
    static ONCE: Once = Once::new();
    let mut result = Ok(());
    ONCE.call_once(|| {
        // SAFETY: `in_child` is a plain `extern "C" fn()` that lives as long as the process
        // (this library is never unloaded by CPython once imported) and only does an atomic
        // add, which is async-signal-safe; no prepare or parent handler is given.
        let rc = unsafe { libc::pthread_atfork(None, None, Some(in_child)) };
        if rc != 0 {
            result = Err(rc);
        }
    });
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_sees_a_new_generation() {
        register().unwrap();
        let before = generation();
        // SAFETY: the child only reads an atomic and leaves with `_exit`, touching nothing the
        // parent's other threads may hold.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            let code = if generation() == before + 1 { 0 } else { 1 };
            // SAFETY: `_exit` ends the child without running the parent's atexit handlers.
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        // SAFETY: `pid` is our child; `status` is a valid out pointer.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
        assert_eq!(generation(), before);
    }
}
