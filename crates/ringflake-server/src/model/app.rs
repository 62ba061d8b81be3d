//! What the handlers share: [`App`], one generator's routes' view of the service, and the
//! generators one `serve` runs, by name ([`Generators`]): `default` (the unnamed routes') first,
//! then the config file's others. (One file: an `App` holds the generators, each of which holds
//! its own `App`.)

use super::auth::Auth;
use super::history::History;
use super::limits::Limits;
use super::plan::Lead;
use super::routes::Exposure;
use ringflake::{
    CachedUidGenerator, IdCipher, Layout, MetricsReporter, PrometheusHandle, TimeZone,
};
use std::path::PathBuf;
use std::sync::Arc;

/// What the handlers share. Cloned once per serving thread, so that the per-request reference
/// count of a thread's copy stays in that thread's cache.
#[derive(Clone)]
pub struct App {
    /// The generator every route takes from.
    pub generator: Arc<CachedUidGenerator>,
    /// Its layout, for `/parse/{id}` and the health reasons.
    pub layout: Layout,
    /// The zone `/parse/{id}` renders timestamps in.
    pub tz: TimeZone,
    /// The Prometheus recorder and the samplers of every generator's statistics, for
    /// `/metrics`.
    pub metrics: Option<Arc<(PrometheusHandle, Vec<MetricsReporter>)>>,
    /// Every generator by name, `default` (the one above) first; empty in a generator's own
    /// `App` (the one its named routes answer from).
    pub generators: Arc<Generators>,
    /// The routes this listener serves.
    pub exposure: Exposure,
    /// The bearer tokens the ID, parse and Leaf routes require, if any.
    pub auth: Option<Auth>,
    /// The longest a take waits for IDs before the request is answered 503 with `Retry-After`
    /// (`--max-wait`): at the lead cap takes queue for the clock, about a second per
    /// `2^seq_bits` IDs queued ahead; after the clock was set back (or with a state file
    /// recording seconds far ahead) they would wait until the clock is back within `max_lead`
    /// of the last second used, an hour if the clock went back an hour.
    pub max_wait: std::time::Duration,
    /// The key of `--id-key-file`: the HTTP routes hand out public IDs through it, and
    /// `/parse` and gRPC's `Parse` of a text read them back.
    pub id_key: Option<Arc<IdCipher>>,
    /// Meituan Leaf's segment mode (`/api/segment/get/{biz_tag}`); `None` with
    /// `--no-segments` or without a worker database.
    pub segments: Option<Arc<super::segments::Segments>>,
    /// What clients may hold of the service, shared by every generator and listener.
    pub limits: Arc<Limits>,
}

impl App {
    /// What a take that waited `--max-wait` in vain is told, and the seconds to wait before
    /// retrying: what the queue left behind needs at the cap's rate (`2^seq_bits` IDs a second),
    /// at least 1. `asker` names the waiters ahead ("request" over HTTP, "call" over gRPC).
    pub fn still_waiting(&self, asker: &str) -> (String, u64) {
        let stats = self.generator.stats();
        // A tick's IDs every tick of a second (4,096,000 for Twitter's layout).
        let rate = (self.layout.max_sequence() + 1).saturating_mul(self.layout.unit().per_second());
        let retry = stats.waiting_ids.div_ceil(rate).max(1);
        let queue = match stats.waiting_takes {
            0 => String::new(),
            n => format!(
                "; {n} {asker}{} queued ahead for {} IDs",
                if n == 1 { "" } else { "s" },
                stats.waiting_ids
            ),
        };
        let message = match self.generator.max_lead() {
            Some(lead) => format!(
                "no IDs within {} s: the generator is at its lead cap (max-lead {} s ahead of the \
                 clock, {rate} IDs a second){queue}; retry in {retry} s",
                self.max_wait.as_secs(),
                lead.as_secs()
            ),
            // Without a cap the filler is never held back by the clock, only by its lease or its
            // state file.
            None => format!(
                "no IDs within {} s: the generator is waiting for its worker lease or its state \
                 file{queue}; retry in {retry} s",
                self.max_wait.as_secs()
            ),
        };
        (message, retry)
    }

    /// The `App` of generator `name`.
    pub fn named(&self, name: &str) -> Option<&App> {
        self.generators.get(name).map(|named| &named.app)
    }
}

/// One running generator and what the status page tells about it.
pub struct Named {
    /// Its name, in routes (`/id/orders`).
    pub name: String,
    /// What its routes answer from: its generator, layout and zone.
    pub app: App,
    /// Its worker id source, described (`sqlite file ringflake.db`).
    pub source: String,
    /// Its lead cap.
    pub lead: Lead,
    /// Its state file, if any.
    pub state: Option<PathBuf>,
    /// Its namespace, if it declares one: its IDs are not checked against the others'.
    pub namespace: Option<String>,
    /// Its issue counts, sampled every second.
    pub history: History,
}

/// What the status page and `/status` tell about the service itself: its build, since when it
/// runs, and where it listens.
#[derive(Debug, Clone, Default)]
pub struct Service {
    /// The version of the build.
    pub version: &'static str,
    /// The commit it was built from (12 hex digits, `unknown` without git history).
    pub commit: &'static str,
    /// The unix second the service started.
    pub started: i64,
    /// Its addresses, as URLs, with what each serves: `("http://127.0.0.1:8080", "IDs")`.
    pub listen: Vec<(String, &'static str)>,
}

/// The generators, `default` first, and the service they run in.
#[derive(Default)]
pub struct Generators {
    list: Vec<Named>,
    service: Service,
}

impl Generators {
    /// The generators in `list`, `default` first, run by `service`.
    pub fn new(list: Vec<Named>, service: Service) -> Self {
        Generators { list, service }
    }

    /// The service the generators run in.
    pub fn service(&self) -> &Service {
        &self.service
    }

    /// The generator called `name`.
    pub fn get(&self, name: &str) -> Option<&Named> {
        self.list.iter().find(|n| n.name == name)
    }

    /// Every generator, `default` first.
    pub fn iter(&self) -> std::slice::Iter<'_, Named> {
        self.list.iter()
    }

    /// The names, for a person: `default, orders, users`.
    pub fn names(&self) -> String {
        let names: Vec<&str> = self.list.iter().map(|n| n.name.as_str()).collect();
        names.join(", ")
    }

    /// Takes the generators back, to drop them one by one.
    pub fn into_list(self) -> Vec<Named> {
        self.list
    }
}
