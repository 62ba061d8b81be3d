"""A third-party gRPC client of `ringflake serve`: Python's grpcio.

Compiles the repository's proto with grpcio-tools, then calls every RPC of ringflake.v1.IdService,
grpc.health.v1.Health and server reflection against a running service, and checks the answers
and the errors. Run by tests/grpc.rs (the test `python_grpcio_calls_every_rpc`), once in plain
text and once over TLS:

    python client.py --addr 127.0.0.1:PORT [--ca tests/data/tls/ca.pem] [--token TOKEN]
        [--generator NAME] --ids-out FILE

Every ID received is written to --ids-out, one a line, for the test to check them all distinct.
Any failed check raises, and the exit status is not 0.
"""

import argparse
import importlib
import os
import sys
import tempfile

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)
from grpc_tools import protoc

# The ringflake-cli crate (tests/python/ is under it); the proto is the library crate's.
CLI_CRATE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TIMEOUT = 20


def compile_proto(out):
    """ringflake_pb2 and ringflake_pb2_grpc, compiled from the repository's proto into `out`."""
    proto_dir = os.path.join(CLI_CRATE, "..", "ringflake", "proto")
    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    rc = protoc.main(
        [
            "protoc",
            f"-I{proto_dir}",
            f"-I{include}",
            f"--python_out={out}",
            f"--grpc_python_out={out}",
            os.path.join(proto_dir, "ringflake", "v1", "ringflake.proto"),
        ]
    )
    assert rc == 0, f"grpc_tools.protoc failed with {rc}"
    sys.path.insert(0, out)
    pb2 = importlib.import_module("ringflake.v1.ringflake_pb2")
    pb2_grpc = importlib.import_module("ringflake.v1.ringflake_pb2_grpc")
    return pb2, pb2_grpc


def expect_error(call, code, *fragments):
    """`call()` fails with status `code`, its message holding every fragment."""
    try:
        call()
    except grpc.RpcError as e:
        assert e.code() == code, f"expected {code}, got {e.code()}: {e.details()}"
        for fragment in fragments:
            assert fragment in e.details(), f"{fragment!r} not in {e.details()!r}"
        return e
    raise AssertionError(f"expected {code}, the call succeeded")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--addr", required=True)
    parser.add_argument("--ca")
    parser.add_argument("--token")
    parser.add_argument("--generator", action="append", default=[])
    parser.add_argument("--segment-tag")
    parser.add_argument("--ids-out", required=True)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as out:
        pb2, pb2_grpc = compile_proto(out)
        if args.ca:
            with open(args.ca, "rb") as f:
                credentials = grpc.ssl_channel_credentials(root_certificates=f.read())
            channel = grpc.secure_channel(args.addr, credentials)
        else:
            channel = grpc.insecure_channel(args.addr)
        grpc.channel_ready_future(channel).result(timeout=TIMEOUT)
        metadata = [("authorization", f"Bearer {args.token}")] if args.token else []
        ids = pb2_grpc.IdServiceStub(channel)
        received = []

        # The calls, from the default generator and every named one.
        for generator in [""] + args.generator:
            one = ids.Next(pb2.NextRequest(generator=generator), metadata=metadata, timeout=TIMEOUT)
            assert one.id > 0, one
            received.append(one.id)

            batch = ids.Batch(
                pb2.BatchRequest(generator=generator, count=1000), metadata=metadata, timeout=TIMEOUT
            )
            assert len(batch.ids) == 1000, len(batch.ids)
            assert all(a < b for a, b in zip(batch.ids, batch.ids[1:])), "batch not increasing"
            assert batch.ids[0] > one.id
            received.extend(batch.ids)

            streamed = []
            chunks = 0
            for chunk in ids.Stream(
                pb2.StreamRequest(generator=generator, count=100_000, chunk=4096),
                metadata=metadata,
                timeout=TIMEOUT,
            ):
                assert 0 < len(chunk.ids) <= 4096, len(chunk.ids)
                streamed.extend(chunk.ids)
                chunks += 1
            assert len(streamed) == 100_000, len(streamed)
            assert chunks == 25, chunks
            assert all(a < b for a, b in zip(streamed, streamed[1:])), "stream not increasing"
            received.extend(streamed)

            parsed = ids.Parse(
                pb2.ParseRequest(generator=generator, id=one.id), metadata=metadata, timeout=TIMEOUT
            )
            assert parsed.id == one.id
            assert parsed.parse_uid.startswith('{"UID":"%d","timestamp":"' % one.id), parsed.parse_uid
            assert f'"workerId":"{parsed.worker_id}"' in parsed.parse_uid, parsed.parse_uid
            assert f'"sequence":"{parsed.sequence}"' in parsed.parse_uid, parsed.parse_uid
            assert parsed.unix_seconds > 1_600_000_000, parsed

            # The same ID as text: Crockford base32, TSID's form, in lower case, told by its text.
            b32 = "".join(
                "0123456789ABCDEFGHJKMNPQRSTVWXYZ"[(one.id >> (60 - 5 * i)) & 31] for i in range(13)
            )
            by_text = ids.Parse(
                pb2.ParseRequest(generator=generator, text=b32.lower()),
                metadata=metadata,
                timeout=TIMEOUT,
            )
            assert by_text.id == one.id and by_text.parse_uid == parsed.parse_uid, (b32, by_text)

        # Leaf's segment mode: dense numbers of a business tag of leaf_alloc.
        if args.segment_tag:
            first = ids.SegmentNext(
                pb2.SegmentNextRequest(biz_tag=args.segment_tag), metadata=metadata, timeout=TIMEOUT
            )
            numbers = ids.SegmentBatch(
                pb2.SegmentBatchRequest(biz_tag=args.segment_tag, count=500),
                metadata=metadata,
                timeout=TIMEOUT,
            )
            assert list(numbers.ids) == list(range(first.id + 1, first.id + 501)), numbers.ids[:5]
            expect_error(
                lambda: ids.SegmentNext(
                    pb2.SegmentNextRequest(biz_tag="nope"), metadata=metadata, timeout=TIMEOUT
                ),
                grpc.StatusCode.NOT_FOUND,
                'no biz_tag "nope" in leaf_alloc',
            )
            expect_error(
                lambda: ids.SegmentBatch(
                    pb2.SegmentBatchRequest(biz_tag=args.segment_tag, count=0),
                    metadata=metadata,
                    timeout=TIMEOUT,
                ),
                grpc.StatusCode.INVALID_ARGUMENT,
                "count 0 out of range",
                "1 to 100000",
            )

        # Errors: status codes with messages that name the value and its limit.
        expect_error(
            lambda: ids.Batch(pb2.BatchRequest(count=0), metadata=metadata, timeout=TIMEOUT),
            grpc.StatusCode.INVALID_ARGUMENT,
            "count 0 out of range",
            "1 to 100000",
        )
        expect_error(
            lambda: ids.Batch(pb2.BatchRequest(count=100_001), metadata=metadata, timeout=TIMEOUT),
            grpc.StatusCode.INVALID_ARGUMENT,
            "count 100001 out of range",
        )
        expect_error(
            lambda: list(
                ids.Stream(pb2.StreamRequest(count=10, chunk=70_000), metadata=metadata, timeout=TIMEOUT)
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "chunk 70000 out of range",
            "1 to 65536",
        )
        expect_error(
            lambda: list(ids.Stream(pb2.StreamRequest(count=0), metadata=metadata, timeout=TIMEOUT)),
            grpc.StatusCode.INVALID_ARGUMENT,
            "count 0 out of range",
        )
        expect_error(
            lambda: ids.Next(pb2.NextRequest(generator="nope"), metadata=metadata, timeout=TIMEOUT),
            grpc.StatusCode.NOT_FOUND,
            'no generator "nope": the generators are default',
        )
        expect_error(
            lambda: ids.Parse(pb2.ParseRequest(id=2**63), metadata=metadata, timeout=TIMEOUT),
            grpc.StatusCode.INVALID_ARGUMENT,
            "ID 9223372036854775808",
        )
        if args.token:
            expect_error(
                lambda: ids.Next(pb2.NextRequest(), timeout=TIMEOUT),
                grpc.StatusCode.UNAUTHENTICATED,
                "missing bearer token",
            )
            expect_error(
                lambda: ids.Next(
                    pb2.NextRequest(),
                    metadata=[("authorization", "Bearer not-the-token-0123456789")],
                    timeout=TIMEOUT,
                ),
                grpc.StatusCode.UNAUTHENTICATED,
                "invalid bearer token",
            )

        # Health: the whole service, the IdService, each generator; an unknown name.
        health = health_pb2_grpc.HealthStub(channel)
        serving = health_pb2.HealthCheckResponse.SERVING
        for service in ["", "ringflake.v1.IdService", "default"] + args.generator:
            answer = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=TIMEOUT)
            assert answer.status == serving, (service, answer)
        expect_error(
            lambda: health.Check(health_pb2.HealthCheckRequest(service="nope"), timeout=TIMEOUT),
            grpc.StatusCode.NOT_FOUND,
            'no health service "nope"',
        )
        watch = health.Watch(health_pb2.HealthCheckRequest(service=""), timeout=TIMEOUT)
        assert next(watch).status == serving
        watch.cancel()
        watch = health.Watch(health_pb2.HealthCheckRequest(service="nope"), timeout=TIMEOUT)
        assert next(watch).status == health_pb2.HealthCheckResponse.SERVICE_UNKNOWN
        watch.cancel()

        # Reflection: the services are listed and their descriptors served.
        database = ProtoReflectionDescriptorDatabase(channel)
        services = set(database.get_services())
        for name in ["ringflake.v1.IdService", "grpc.health.v1.Health"]:
            assert name in services, services
        proto = database.FindFileContainingSymbol("ringflake.v1.IdService")
        assert proto.package == "ringflake.v1", proto.package
        methods = {m.name for m in proto.service[0].method}
        assert methods == {
            "Next", "Batch", "Stream", "Parse", "SegmentNext", "SegmentBatch"
        }, methods

        channel.close()
        assert len(set(received)) == len(received), "an ID came twice"
        with open(args.ids_out, "w") as f:
            f.write("\n".join(str(i) for i in received))
        print(f"grpcio {grpc.__version__}: every RPC answered; {len(received)} IDs, all distinct")


if __name__ == "__main__":
    main()
