//! What the service knows, below every handler and page: the generators by name with their
//! histories ([`app`], [`history`], [`sampler`]), what the handlers share ([`app`]), the
//! route table ([`routes`]), the bearer tokens ([`auth`]), the generators to boot, as plain
//! values ([`plan`]), the request counters ([`requests`]), the process's figures
//! ([`process`]), what clients may hold of the service ([`limits`]) and giving it back
//! ([`memory`]). Nothing here imports a handler, a page, the server or the flags.

pub mod app;
pub mod auth;
pub mod history;
pub mod limits;
pub mod memory;
pub mod plan;
pub mod process;
pub mod requests;
pub mod routes;
pub mod sampler;
pub mod segments;
