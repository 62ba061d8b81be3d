//! What the service knows, below every handler and page: the generators by name with their
//! histories ([`app`], [`history`], [`sampler`]), what the handlers share ([`app`]), the
//! route table ([`routes`]) and the bearer tokens ([`auth`]). Nothing here imports a handler, a
//! page or the server.

pub mod app;
pub mod auth;
pub mod history;
pub mod routes;
pub mod sampler;
