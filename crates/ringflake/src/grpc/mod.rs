//! The gRPC messages and stubs of `ringflake serve`'s `IdService` (feature `grpc`; `client` and
//! `cli` bring it), generated from the repository's `proto/ringflake/v1/ringflake.proto`
//! (package `ringflake.v1`) by prost and tonic.
//!
//! The generated code is committed, so that the crate builds without `protoc` or a build
//! script; a test checks that it matches the proto. Most applications want
//! [`RemoteGenerator`](crate::RemoteGenerator) (feature `client`), which prefetches IDs through
//! these stubs; use them directly for calls of your own on a tonic channel.
//!
//! # Examples
//!
//! ```
//! use prost::Message as _;
//! use ringflake::grpc::{BatchRequest, BatchResponse};
//!
//! let request = BatchRequest { generator: "orders".into(), count: 3 };
//! assert_eq!(BatchRequest::decode(&*request.encode_to_vec()).unwrap(), request);
//! // Packed fixed64: 8 bytes an ID, plus the field's tag and length.
//! let answer = BatchResponse { ids: vec![1, 2, 3] };
//! assert_eq!(answer.encoded_len(), 2 + 3 * 8);
//! ```

// The generated code documents what the proto documents (every message and field); the stubs'
// own items (constructors, `Debug`, ...) are tonic's, documented in tonic.
// Kept as tonic-prost-build writes it (not reformatted), so that tests/grpc_codegen.rs can
// compare it byte for byte.
#[allow(missing_docs, clippy::all, clippy::pedantic)]
#[rustfmt::skip]
mod generated;

pub use generated::*;

/// The proto's descriptors (a `FileDescriptorSet`, encoded), for server reflection.
///
/// ```
/// let set = ringflake::grpc::FILE_DESCRIPTOR_SET;
/// let text = String::from_utf8_lossy(set);
/// assert!(text.contains("ringflake.v1") && text.contains("IdService"));
/// ```
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!("ringflake.v1.bin");

/// The service's full name, `ringflake.v1.IdService`, as health checks and reflection name it.
///
/// ```
/// use ringflake::grpc::id_service_server::SERVICE_NAME as GENERATED;
/// // The name tonic's generated server answers to, from the proto's package and service.
/// assert_eq!(ringflake::grpc::SERVICE_NAME, GENERATED);
/// ```
pub const SERVICE_NAME: &str = "ringflake.v1.IdService";
