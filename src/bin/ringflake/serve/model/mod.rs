//! What the service knows, below every handler and page: the generators by name with their
//! histories ([`app`], [`history`], [`sampler`]), what the handlers share ([`app`]), the
//! route table ([`routes`]), the bearer tokens ([`auth`]), the request counters ([`requests`]) and
//! the process's figures ([`process`]). Nothing here imports a handler, a
//! page or the server.

pub mod app;
pub mod auth;
pub mod history;
pub mod process;
pub mod requests;
pub mod routes;
pub mod sampler;
