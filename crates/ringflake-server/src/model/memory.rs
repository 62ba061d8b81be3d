//! Giving freed memory back to the system once a burst of large answers is over.
//!
//! The service frees what a large answer held as soon as it is written or abandoned, but
//! glibc's allocator keeps freed memory for the process to reuse: the 800 KB of a large answer's
//! IDs come from a serving thread's arena once the first such block has been freed (glibc raises
//! its mmap threshold to the size of a freed mapped block), and an arena's free memory is given
//! back to the kernel only from its top. Measured after 4 connections had held every large
//! answer's turn (`tests/hostile_clients.rs`, debug build): between 13 and 53 MiB of the 65 MiB
//! they took stayed resident, as the arenas happened to be laid out; with `malloc_trim`, 2 to
//! 4 MiB. `malloc_trim(3)` gives back every free
//! page of every arena; [`give_back`] calls it, from the status sampler's thread, when no large
//! answer is being written and some were since it last did, at most every
//! [`GIVE_BACK_EVERY`]: after a burst, not on a path any request waits for. With another
//! allocator (musl) it does nothing.

use std::time::Duration;

/// The least time between two calls of `malloc_trim`.
pub const GIVE_BACK_EVERY: Duration = Duration::from_secs(5);

/// Gives the allocator's free memory back to the system; whether any was.
pub fn give_back() -> bool {
    glibc::trim()
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
mod glibc {
    // SAFETY: `malloc_trim(size_t pad)` is glibc's (declared in `<malloc.h>`, present since
    // glibc 2.0, its signature unchanged): it takes no pointer, reads and writes no memory of
    // the caller's, and any thread may call it at any time, as each arena is trimmed under its
    // own lock (malloc_trim(3), "Thread safety: MT-Safe"). So it is declared safe to call.
    unsafe extern "C" {
        safe fn malloc_trim(pad: usize) -> std::ffi::c_int;
    }

    pub fn trim() -> bool {
        malloc_trim(0) != 0
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod glibc {
    pub fn trim() -> bool {
        false
    }
}
