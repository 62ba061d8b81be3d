//! What this build of the crate is: its version, the commit it was built from and the features it
//! was built with. `ringflake_build_info` (feature `metrics`) carries the first two as labels;
//! the `ringflake` binary's `--version` prints all three.
//!
//! ```
//! assert_eq!(ringflake::build_info::VERSION, env!("CARGO_PKG_VERSION"));
//! let commit = ringflake::build_info::COMMIT;
//! assert!(commit == "unknown" || (commit.len() == 12 && commit.bytes().all(|b| b.is_ascii_hexdigit())));
//! assert!(ringflake::build_info::FEATURES.windows(2).all(|w| w[0] < w[1]));
//! ```

/// The crate's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The commit the crate was built from (12 hex digits): from `.cargo_vcs_info.json` in a package
/// from crates.io, else from `git` in a checkout of the repository, else `unknown` (a `docker
/// build`, whose context leaves `.git` out). `build.rs` finds it.
pub const COMMIT: &str = env!("RINGFLAKE_COMMIT");

/// The crate's features this build has, in alphabetical order (`all-sources`, which only names
/// others, left out).
pub const FEATURES: &[&str] = &[
    #[cfg(feature = "client")]
    "client",
    #[cfg(feature = "etcd")]
    "etcd",
    #[cfg(feature = "grpc")]
    "grpc",
    #[cfg(feature = "id-key")]
    "id-key",
    #[cfg(feature = "metrics")]
    "metrics",
    #[cfg(feature = "mysql")]
    "mysql",
    #[cfg(feature = "postgres")]
    "postgres",
    #[cfg(feature = "redis")]
    "redis",
    #[cfg(feature = "segment")]
    "segment",
    #[cfg(feature = "sqlite")]
    "sqlite",
    #[cfg(feature = "tokio")]
    "tokio",
    #[cfg(feature = "zookeeper")]
    "zookeeper",
];
