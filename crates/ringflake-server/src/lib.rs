//! # ringflake-server
//!
//! The ringflake ID service as a library: `GET /id`, `/ids?count=N`, `/parse/{id}`, `/healthz`,
//! `/metrics`, a status page, Meituan Leaf's routes and the `ringflake.v1` gRPC API, over HTTP/1
//! and HTTP/2 on one port, with TLS and bearer tokens, in front of [`ringflake`]'s generators.
//! The `ringflake` binary (crate `ringflake-cli`) is this crate behind a command line; a Rust
//! program starts the same service in-process with a [`Service`]:
//!
//! ```no_run
//! use ringflake::{CachedUidGenerator, Layout};
//! use ringflake_server::Service;
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let ids = CachedUidGenerator::builder(Layout::default()).worker_id(7);
//!     Service::new("127.0.0.1:8080".parse()?)
//!         .generator(ids) // `curl 127.0.0.1:8080/id` answers an ID of worker 7
//!         .run()?; // until SIGTERM or Ctrl-C; then the worker id is released
//!     Ok(())
//! }
//! ```
//!
//! A program that only takes IDs needs none of this: it embeds the generator from the
//! `ringflake` crate. The service is for processes in other languages, and for hosts that cannot
//! hold a worker id of their own. The repository's [`docs/service.md`] lists every route and its
//! answers.
//!
//! [`docs/service.md`]: https://github.com/ringflake/ringflake/blob/main/docs/service.md
//!
//! ## Its rooms
//!
//! The service is a thin layer of hyper over a [`ringflake::CachedUidGenerator`]. Its folders
//! are its layers, each importing only those
//! below it:
//!
//! - [`model`] (bottom): the generators by name and their histories, what the handlers share,
//!   the route table, the bearer tokens;
//! - `handlers`: what each request gets (request in, response out), the status page and
//!   `/status`, Meituan Leaf's routes;
//! - `server`: the serving threads, their runtimes, sockets and connections, HTTPS, the bodies
//!   of hyper's own answers, the signals, and how they stop;
//! - [`startup`]: the lines printed at start;
//! - `life` (top): the service's life from its [`Config`] to exit, one step per function:
//!   check the start files, bind the addresses, plan, check and boot the generators, serve until
//!   a signal, stop, release the worker leases ([`run`]); `builder`: the same from code
//!   ([`Service`]).
//!
//! It never reads a flag: the binary's `generators` module turns `serve`'s flags (and
//! `--config`'s file) into a [`Config`] and the generators' [`Plan`](model::plan::Plan)s, plain
//! values, and calls [`run`]; [`Service`] makes the same from code.

// One `unsafe` block, with its SAFETY comment: the declaration of glibc's `malloc_trim`
// (model/memory.rs); everything else is safe code.
#![deny(unsafe_code)]
#![deny(missing_docs)]

mod builder;
mod handlers;
mod life;
pub mod log;
pub mod model;
mod server;
pub mod startup;
pub mod text;

/// The crate's README, its Rust block compiled as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub use builder::{DEFAULT_MAX_WAIT, DEFAULT_SHUTDOWN_TIMEOUT, Service, ServiceError};
pub use life::{Config, run};

/// What the server calls for a request once hyper has parsed it, reachable for the tests that
/// count what a request costs without a socket (`tests/route_allocations.rs`): not a stable
/// API.
#[doc(hidden)]
pub mod probe {
    pub use crate::handlers::fast::{Fast, Short, answer as fast_answer};
    pub use crate::handlers::segments::{Answer as SegmentAnswer, Now, get as segment_get, now};
    pub use crate::handlers::{Answer, Reply, answer_now};
}
