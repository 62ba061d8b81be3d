//! Sets `RINGFLAKE_COMMIT`, the commit the crate was built from ([`ringflake::build_info::COMMIT`]:
//! the `commit` label of `ringflake_build_info`, and what `ringflake --version` prints).
//!
//! The commit comes from `.cargo_vcs_info.json` in a package from crates.io (Cargo writes it
//! when it packages a clean checkout), else from `git` when the crate's directory is the top of
//! a git checkout, else it is `unknown`: the build never fails for want of git.

use std::path::Path;
use std::process::Command;

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let dir = Path::new(&dir);
    let commit = packaged_commit(dir)
        .or_else(|| git_commit(dir))
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=RINGFLAKE_COMMIT={commit}");
    println!("cargo:rerun-if-changed=build.rs");
    // Only files that exist: Cargo runs a build script again at every build while a file it
    // names is missing, which would rebuild the crate every time.
    if dir.join(".cargo_vcs_info.json").exists() {
        println!("cargo:rerun-if-changed=.cargo_vcs_info.json");
    }
}

/// The `sha1` of a packaged crate's `.cargo_vcs_info.json` (`{"git": {"sha1": "…"}, …}`), first 12
/// hex digits.
fn packaged_commit(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(".cargo_vcs_info.json")).ok()?;
    let rest = &text[text.find("\"sha1\"")? + 6..];
    let start = rest.find('"')? + 1;
    let sha: String = rest[start..]
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect();
    (sha.len() >= 12).then(|| sha[..12].to_string())
}

/// `git rev-parse` of HEAD, if `dir` is `crates/ringflake` of a git checkout of this workspace
/// (not a crate vendored into someone else's repository), first 12 hex digits; asks Cargo to run
/// this again when HEAD moves.
fn git_commit(dir: &Path) -> Option<String> {
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let top = git(&["rev-parse", "--show-toplevel"])?;
    let ours = Path::new(&top).join("crates").join("ringflake");
    if ours.canonicalize().ok()? != dir.canonicalize().ok()? {
        return None;
    }
    for path in ["HEAD", "logs/HEAD"] {
        if let Some(p) = git(&["rev-parse", "--git-path", path]) {
            let p = dir.join(p);
            if p.exists() {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
    }
    let sha = git(&["rev-parse", "HEAD"])?;
    (sha.len() >= 12).then(|| sha[..12].to_string())
}
