//! The files under `src/` import one another one way: no file reaches itself through the paths
//! it names (`use crate::…`, `use super::…`, `crate::x::y(…)` in code or in a macro's tokens, a
//! child module named in code), directly or through other files, in each crate of the workspace;
//! and the crates' manifests point one way (command line → service → library).
//!
//! How a path becomes an edge: each crate (`src/lib.rs`, `src/bin/*/main.rs`) is walked from its
//! root through its `mod x;` declarations, which say which file holds which module; a path is
//! then followed module by module (a `use` in a module is followed to what it names, so
//! `crate::Error`, re-exported by `lib.rs`, leads to `error.rs`), and the file where it stops is
//! the one imported. A `mod x;` declaration is not itself an import (it only places the file),
//! and a file naming itself (a test module's `use super::*`) is no edge.
//!
//! Syntax is read with `syn`, the parser Rust's own macros use; nothing here is compiled.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// A module: where it lives and what names it holds.
#[derive(Default)]
struct Module {
    /// The file that holds it (an inline `mod x { … }` shares its file's).
    file: PathBuf,
    /// Its child modules by name: index into `Graph::modules`.
    children: BTreeMap<String, usize>,
    /// The module above it; `None` for a crate root.
    parent: Option<usize>,
    /// Names its `use` items bring in: name → the path it names (as written).
    imports: BTreeMap<String, Vec<String>>,
    /// Paths of its glob imports (`use x::*`).
    globs: Vec<Vec<String>>,
    /// Paths this module names (in `use` items and in code), as written.
    named: Vec<Vec<String>>,
}

struct Graph {
    modules: Vec<Module>,
    /// The root module of each module's crate.
    root_of: Vec<usize>,
}

/// Collects one module's names: its `use` items, `mod` items and paths in code.
struct Reader<'g> {
    graph: &'g mut Graph,
    /// Module being read (the innermost inline module while inside one).
    current: usize,
    root: usize,
    /// Files still to read: (module index, file).
    pending: Vec<(usize, PathBuf)>,
    /// The folder that holds this file's child module files.
    child_dir: PathBuf,
}

impl Graph {
    fn add(&mut self, file: PathBuf, parent: Option<usize>, root: Option<usize>) -> usize {
        let index = self.modules.len();
        self.modules.push(Module {
            file,
            parent,
            ..Module::default()
        });
        self.root_of.push(root.unwrap_or(index));
        index
    }
}

fn use_tree(tree: &syn::UseTree, prefix: &mut Vec<String>, module: &mut Module) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_tree(&p.tree, prefix, module);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            let mut path = prefix.clone();
            let binding = if name == "self" {
                prefix.last().cloned().unwrap_or_default()
            } else {
                path.push(name.clone());
                name
            };
            module.named.push(path.clone());
            module.imports.insert(binding, path);
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix.clone();
            if r.ident != "self" {
                path.push(r.ident.to_string());
            }
            module.named.push(path.clone());
            module.imports.insert(r.rename.to_string(), path);
        }
        syn::UseTree::Glob(_) => {
            module.named.push(prefix.clone());
            module.globs.push(prefix.clone());
        }
        syn::UseTree::Group(g) => {
            for tree in &g.items {
                use_tree(tree, prefix, module);
            }
        }
    }
}

/// Paths in a macro's tokens that start with `crate`, `super` or `self` (`$crate` included).
fn token_paths(tokens: proc_macro2::TokenStream, out: &mut Vec<Vec<String>>) {
    let tokens: Vec<proc_macro2::TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            proc_macro2::TokenTree::Group(g) => token_paths(g.stream(), out),
            proc_macro2::TokenTree::Ident(id)
                if ["crate", "super", "self"].contains(&id.to_string().as_str()) =>
            {
                let mut path = vec![id.to_string()];
                let mut j = i + 1;
                // `::` is two `:` puncts, then an identifier.
                while j + 2 < tokens.len()
                    && matches!(&tokens[j], proc_macro2::TokenTree::Punct(p) if p.as_char() == ':')
                    && matches!(&tokens[j + 1], proc_macro2::TokenTree::Punct(p) if p.as_char() == ':')
                {
                    if let proc_macro2::TokenTree::Ident(next) = &tokens[j + 2] {
                        path.push(next.to_string());
                        j += 3;
                    } else {
                        break;
                    }
                }
                if path.len() > 1 {
                    out.push(path);
                }
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
}

impl<'ast> Visit<'ast> for Reader<'_> {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let module = &mut self.graph.modules[self.current];
        use_tree(&item.tree, &mut Vec::new(), module);
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        let name = item.ident.to_string();
        let name = name.trim_start_matches("r#").to_string();
        match &item.content {
            None => {
                let base = self.child_dir.join(&name);
                let file = if base.with_extension("rs").is_file() {
                    base.with_extension("rs")
                } else {
                    base.join("mod.rs")
                };
                let child = self
                    .graph
                    .add(file.clone(), Some(self.current), Some(self.root));
                self.graph.modules[self.current]
                    .children
                    .insert(name, child);
                self.pending.push((child, file));
            }
            Some((_, items)) => {
                let file = self.graph.modules[self.current].file.clone();
                let child = self.graph.add(file, Some(self.current), Some(self.root));
                self.graph.modules[self.current]
                    .children
                    .insert(name.clone(), child);
                let (outer, outer_dir) = (self.current, self.child_dir.clone());
                self.current = child;
                self.child_dir = outer_dir.join(&name);
                for item in items {
                    self.visit_item(item);
                }
                self.current = outer;
                self.child_dir = outer_dir;
            }
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if segments.len() > 1 {
            self.graph.modules[self.current].named.push(segments);
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        let module = &mut self.graph.modules[self.current];
        token_paths(mac.tokens.clone(), &mut module.named);
        syn::visit::visit_macro(self, mac);
    }

    fn visit_attribute(&mut self, attr: &'ast syn::Attribute) {
        // `#[command(about = format!("…", crate::x::y()))]`: a list's tokens are not parsed.
        if let syn::Meta::List(list) = &attr.meta {
            let module = &mut self.graph.modules[self.current];
            token_paths(list.tokens.clone(), &mut module.named);
        }
        syn::visit::visit_attribute(self, attr);
    }
}

/// Reads a crate from its root file, returning the root module's index.
fn read_crate(graph: &mut Graph, root_file: &Path) -> usize {
    let root = graph.add(root_file.to_path_buf(), None, None);
    let mut pending = vec![(root, root_file.to_path_buf())];
    while let Some((index, file)) = pending.pop() {
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        let parsed = syn::parse_file(&text)
            .unwrap_or_else(|e| panic!("cannot parse {}: {e}", file.display()));
        let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let dir = file.parent().unwrap_or(Path::new("")).to_path_buf();
        // A root (`lib.rs`, `main.rs`) or a `mod.rs` holds its children beside it; `x.rs` holds
        // them in `x/`.
        let child_dir = if index == root || stem == "mod" {
            dir
        } else {
            dir.join(stem)
        };
        let mut reader = Reader {
            graph,
            current: index,
            root,
            pending: Vec::new(),
            child_dir,
        };
        reader.visit_file(&parsed);
        pending.extend(reader.pending);
    }
    root
}

impl Graph {
    /// Follows a path as written in module `from` to the module where it stops; `None` when it
    /// leaves the crate (`std::…`, another crate).
    fn resolve(&self, from: usize, path: &[String], depth: usize) -> Option<usize> {
        if depth > 32 || path.is_empty() {
            return None;
        }
        let mut at = from;
        let mut rest = path;
        match rest[0].as_str() {
            "crate" | "$crate" => {
                at = self.root_of[from];
                rest = &rest[1..];
            }
            "self" => rest = &rest[1..],
            "super" => {
                while rest.first().map(String::as_str) == Some("super") {
                    at = self.modules[at].parent?;
                    rest = &rest[1..];
                }
            }
            first => {
                // A bare first segment: a child module or a name this module imports (or, from
                // the module's own scope, one its enclosing modules see); else another crate.
                if !self.modules[from].children.contains_key(first)
                    && !self.modules[from].imports.contains_key(first)
                {
                    return None;
                }
            }
        }
        while let Some(segment) = rest.first() {
            let module = &self.modules[at];
            if let Some(&child) = module.children.get(segment) {
                at = child;
                rest = &rest[1..];
            } else if let Some(target) = module.imports.get(segment) {
                let mut full = target.clone();
                full.extend(rest[1..].iter().cloned());
                // An import is written relative to the module holding it.
                return self.resolve(at, &full, depth + 1).or(Some(at));
            } else {
                for glob in &module.globs {
                    let mut full = glob.clone();
                    full.extend(rest.iter().cloned());
                    if let Some(found) = self.resolve(at, &full, depth + 1)
                        && self.modules[found].file != self.modules[at].file
                    {
                        return Some(found);
                    }
                }
                break;
            }
        }
        Some(at)
    }
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut BTreeSet<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src/") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.insert(path);
        }
    }
}

/// The file-to-file import edges of the crates under `src`.
fn edges(src: &Path) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let mut graph = Graph {
        modules: Vec::new(),
        root_of: Vec::new(),
    };
    let mut roots = Vec::new();
    for root in [src.join("lib.rs"), src.join("main.rs")] {
        if root.is_file() {
            roots.push(root);
        }
    }
    if let Ok(bins) = std::fs::read_dir(src.join("bin")) {
        for entry in bins {
            let path = entry.expect("directory entry").path();
            if path.is_dir() && path.join("main.rs").is_file() {
                roots.push(path.join("main.rs"));
            } else if path.extension().is_some_and(|e| e == "rs") {
                roots.push(path);
            }
        }
    }
    for root in &roots {
        read_crate(&mut graph, root);
    }

    let mut all = BTreeSet::new();
    rust_files(src, &mut all);
    let reached: BTreeSet<PathBuf> = graph.modules.iter().map(|m| m.file.clone()).collect();
    let orphans: Vec<_> = all.difference(&reached).collect();
    assert!(
        orphans.is_empty(),
        "files under src/ that no crate declares with `mod`: {orphans:?}"
    );

    let mut edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for (index, module) in graph.modules.iter().enumerate() {
        let from = module.file.clone();
        edges.entry(from.clone()).or_default();
        for path in &module.named {
            if let Some(target) = graph.resolve(index, path, 0) {
                let to = &graph.modules[target].file;
                if *to != from {
                    edges.entry(from.clone()).or_default().insert(to.clone());
                }
            }
        }
    }
    edges
}

/// The shortest circle through each file that reaches itself (files already shown in a circle are
/// not started from again), as the list of files around it.
fn circles(edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    let mut circles = Vec::new();
    let mut done: BTreeSet<PathBuf> = BTreeSet::new();
    for start in edges.keys() {
        if done.contains(start) {
            continue;
        }
        // The shortest path from `start` back to itself (breadth first).
        let mut back: BTreeMap<&PathBuf, &PathBuf> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        let mut found = None;
        while let Some(at) = queue.pop_front() {
            for next in &edges[at] {
                if next == start {
                    found = Some(at);
                    break;
                }
                if !back.contains_key(next) && edges.contains_key(next) {
                    back.insert(next, at);
                    queue.push_back(next);
                }
            }
            if found.is_some() {
                break;
            }
        }
        if let Some(mut at) = found {
            let mut circle = vec![at.clone()];
            while at != start {
                at = back[at];
                circle.push(at.clone());
            }
            circle.reverse();
            done.extend(circle.iter().cloned());
            circles.push(circle);
        }
    }
    circles
}

fn show(circle: &[PathBuf], src: &Path) -> String {
    let name = |p: &PathBuf| p.strip_prefix(src).unwrap_or(p).display().to_string();
    let mut text: Vec<String> = circle.iter().map(name).collect();
    text.push(name(&circle[0]));
    text.join(" -> ")
}

/// The workspace's crates whose sources are checked: this one, and its siblings when they are
/// beside it (a checkout; a packaged crate has itself alone).
fn crate_sources() -> Vec<PathBuf> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![here.join("src")];
    for sibling in ["ringflake-server", "ringflake-cli"] {
        let src = here.join("..").join(sibling).join("src");
        if src.is_dir() {
            dirs.push(src);
        }
    }
    dirs
}

#[test]
fn no_file_under_src_imports_itself_back() {
    for src in crate_sources() {
        let edges = edges(&src);
        let circles = circles(&edges);
        assert!(
            circles.is_empty(),
            "files under {} import each other in a circle:\n{}",
            src.display(),
            circles
                .iter()
                .map(|c| show(c, &src))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

/// The files `from` reaches through its imports, directly or through other files, with the file
/// it reached each through (to show the way).
#[allow(dead_code)]
fn reached<'e>(
    edges: &'e BTreeMap<PathBuf, BTreeSet<PathBuf>>,
    from: &'e PathBuf,
) -> BTreeMap<&'e PathBuf, &'e PathBuf> {
    let mut back: BTreeMap<&PathBuf, &PathBuf> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([from]);
    while let Some(at) = queue.pop_front() {
        for next in edges.get(at).into_iter().flatten() {
            if next != from && !back.contains_key(next) {
                back.insert(next, at);
                queue.push_back(next);
            }
        }
    }
    back
}

/// The crates' arrows point one way: the command line (`ringflake-cli`: flags, printing) → the
/// service (`ringflake-server`) → the library (`ringflake`). The service gets plain values and
/// never reads a flag: its manifest names neither the command-line crate nor clap, and the
/// library's names neither of the others nor anything of a server (hyper, tonic's server, the
/// service's TLS) or of a command line.
#[test]
fn the_crates_depend_one_way() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let server = here.join("../ringflake-server/Cargo.toml");
    if !server.is_file() {
        return; // a packaged crate: its siblings are not beside it
    }
    let dependencies = |manifest: &Path| -> Vec<String> {
        let text = std::fs::read_to_string(manifest).expect("manifest");
        let mut names = Vec::new();
        let mut section = String::new();
        for line in text.lines().map(str::trim) {
            if line.starts_with('[') {
                section = line.to_string();
            } else if section.ends_with("dependencies]")
                && !section.contains("dev-")
                && !line.starts_with('#')
                && let Some(name) = line.split([' ', '.', '=']).next()
                && !name.is_empty()
            {
                names.push(name.to_string());
            }
        }
        names
    };
    let library = dependencies(&here.join("Cargo.toml"));
    let service = dependencies(&server);
    assert!(
        library.contains(&"crossbeam-utils".to_string()),
        "{library:?}"
    );
    assert!(service.contains(&"ringflake".to_string()), "{service:?}");
    for banned in [
        "ringflake-server",
        "ringflake-cli",
        "clap",
        "hyper",
        "tokio-rustls",
        "tracing-subscriber",
    ] {
        assert!(
            !library.iter().any(|d| d == banned),
            "the library depends on {banned}"
        );
    }
    for banned in [
        "ringflake-cli",
        "clap",
        "clap_complete",
        "clap_mangen",
        "tracing-subscriber",
    ] {
        assert!(
            !service.iter().any(|d| d == banned),
            "the service depends on {banned}"
        );
    }
}
