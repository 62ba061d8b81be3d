//! The generators one `serve` runs, by name: `default` (the unnamed routes') first, then the
//! config file's others.

use super::args::Lead;
use super::routes::App;
use super::status::History;
use std::path::PathBuf;

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
    /// Its issue counts, sampled every second.
    pub history: History,
}

/// The generators, `default` first.
#[derive(Default)]
pub struct Generators {
    list: Vec<Named>,
}

impl Generators {
    /// The generators in `list`, `default` first.
    pub fn new(list: Vec<Named>) -> Self {
        Generators { list }
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
