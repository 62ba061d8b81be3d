//! The gRPC code in `src/grpc/` is generated from `proto/ringflake/v1/ringflake.proto` and
//! committed, so that the crate builds from crates.io without `protoc` or a build script. This
//! test generates it again (protox compiles the proto in Rust, tonic-prost-build writes the code)
//! and fails if the committed files differ: after editing the proto, run it with
//! `RINGFLAKE_BLESS=1` to write them, and commit both.

use prost::Message as _;
use std::path::Path;

/// The committed files, and what the proto makes of them now.
fn generated() -> [(&'static str, Vec<u8>); 2] {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fds = protox::compile(
        [root.join("proto/ringflake/v1/ringflake.proto")],
        [root.join("proto")],
    )
    .unwrap_or_else(|e| panic!("protox cannot compile the proto: {e:?}"));
    let out = tempfile::tempdir().expect("temporary directory");
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        // The transport's `connect` needs tonic's `channel` feature, which only `client` has.
        .build_transport(false)
        .emit_rerun_if_changed(false)
        .out_dir(out.path())
        .compile_fds(fds.clone())
        .expect("tonic-prost-build writes the code");
    let code = std::fs::read(out.path().join("ringflake.v1.rs")).expect("generated code");
    [
        ("src/grpc/generated.rs", code),
        ("src/grpc/ringflake.v1.bin", fds.encode_to_vec()),
    ]
}

#[test]
fn committed_code_matches_the_proto() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bless = std::env::var_os("RINGFLAKE_BLESS").is_some();
    for (path, fresh) in generated() {
        let file = root.join(path);
        if bless {
            std::fs::write(&file, &fresh).expect("write the generated file");
            continue;
        }
        let committed = std::fs::read(&file).unwrap_or_default();
        assert!(
            committed == fresh,
            "{path} does not match proto/ringflake/v1/ringflake.proto: run \
             `RINGFLAKE_BLESS=1 cargo test --all-features --test grpc_codegen` and commit it"
        );
    }
}
