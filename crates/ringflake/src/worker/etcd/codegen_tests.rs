//! `rpc.rs` is generated from `rpc.proto` and committed, so that the crate builds without
//! `protoc` or a build script: this test generates it again (protox compiles the proto in Rust,
//! tonic-prost-build writes the code) and fails if the committed file differs. After editing the
//! proto, run it with `RINGFLAKE_BLESS=1` to write the file, and commit both.

use std::path::Path;

#[test]
fn committed_etcd_stubs_match_the_proto() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/worker/etcd");
    let fds = protox::compile([dir.join("rpc.proto")], [&dir])
        .unwrap_or_else(|e| panic!("protox cannot compile rpc.proto: {e:?}"));
    let out = tempfile::tempdir().expect("temporary directory");
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(false)
        .build_transport(false)
        .emit_rerun_if_changed(false)
        .out_dir(out.path())
        .compile_fds(fds)
        .expect("tonic-prost-build writes the code");
    let fresh = std::fs::read(out.path().join("etcdserverpb.rs")).expect("generated code");
    let file = dir.join("rpc.rs");
    if std::env::var_os("RINGFLAKE_BLESS").is_some() {
        std::fs::write(&file, &fresh).expect("write rpc.rs");
        return;
    }
    let committed = std::fs::read(&file).unwrap_or_default();
    assert!(
        committed == fresh,
        "src/worker/etcd/rpc.rs does not match rpc.proto: run `RINGFLAKE_BLESS=1 cargo test \
         --all-features --lib etcd::codegen` and commit it"
    );
}
