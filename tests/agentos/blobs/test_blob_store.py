"""The blob stores' behaviour, the same on the filesystem and on a real S3-compatible server
(moto's, on a loopback port)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from moto.server import ThreadedMotoServer

from agentos.blobs import BlobMissing, BlobStore, FileBlobStore, S3BlobStore, open_blob_store

S3_ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": "blob-test-access-key",
    "AWS_SECRET_ACCESS_KEY": "blob-test-secret-key",
    "AWS_DEFAULT_REGION": "us-east-1",
}


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3_bucket(s3_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """A new bucket on the S3 server, with the environment pointing boto3 at it."""
    for name, value in S3_ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.setenv("AGENTOS_S3_ENDPOINT_URL", s3_endpoint)
    bucket = f"blobs-{uuid.uuid4().hex[:12]}"
    boto3.client("s3", endpoint_url=s3_endpoint).create_bucket(Bucket=bucket)
    return bucket


@pytest.fixture(params=["files", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> BlobStore:
    if request.param == "files":
        return open_blob_store((tmp_path / "blobs").as_uri())
    bucket = request.getfixturevalue("s3_bucket")
    return open_blob_store(f"s3://{bucket}/agentos/blobs")


def _leftovers(store: BlobStore) -> list[str]:
    """What a failed write may have left behind where no key shows it."""
    if isinstance(store, FileBlobStore):
        staging = store.root / ".partial"
        return sorted(path.name for path in staging.iterdir()) if staging.exists() else []
    assert isinstance(store, S3BlobStore)
    uploads = store._client.list_multipart_uploads(Bucket=store.bucket)
    return [upload["Key"] for upload in uploads.get("Uploads", [])]


def _twenty_megabytes() -> Iterator[bytes]:
    """20 MB in uneven chunks of differing bytes, so a lost, doubled or swapped chunk shows."""
    for index in range(20):
        yield hashlib.sha256(str(index).encode()).digest() * (1024 * 1024 // 32 - index) + bytes([index]) * 32 * index


def test_put_then_get__returns_the_same_bytes(store: BlobStore) -> None:
    store.put("ws123/run-abc/orders-latency/1/world.json", b'{"tools": {}}')

    assert store.get("ws123/run-abc/orders-latency/1/world.json") == b'{"tools": {}}'
    assert store.size("ws123/run-abc/orders-latency/1/world.json") == 13


def test_put__replaces_the_blob_under_the_key(store: BlobStore) -> None:
    store.put("ws/run-1/checks.json", b"first")
    store.put("ws/run-1/checks.json", b"second, longer")

    assert store.get("ws/run-1/checks.json") == b"second, longer"


def test_put__an_empty_blob_is_a_blob(store: BlobStore) -> None:
    store.put("ws/run-1/agent.log", b"")

    assert store.size("ws/run-1/agent.log") == 0
    assert store.get("ws/run-1/agent.log") == b""


def test_put_stream__a_20_mb_blob_in_chunks_reads_back_identically(store: BlobStore) -> None:
    expected = b"".join(_twenty_megabytes())

    written = store.put_stream("ws/run-1/trace.jsonl", _twenty_megabytes())

    assert written == len(expected) > 20_000_000
    assert store.size("ws/run-1/trace.jsonl") == len(expected)
    streamed = list(store.open("ws/run-1/trace.jsonl"))
    assert len(streamed) > 1
    assert b"".join(streamed) == expected
    assert store.get("ws/run-1/trace.jsonl") == expected


def test_put_stream__a_failing_chunk_iterator_leaves_no_blob(store: BlobStore) -> None:
    def failing() -> Iterator[bytes]:
        for _ in range(5):  # 20 MiB: past the first two parts of an S3 multipart upload
            yield b"x" * (4 * 1024 * 1024)
        raise ConnectionResetError("the uploader went away")

    with pytest.raises(ConnectionResetError):
        store.put_stream("ws/run-1/trace.jsonl", failing())

    assert store.size("ws/run-1/trace.jsonl") is None
    assert list(store.keys()) == []
    assert _leftovers(store) == []


def test_put_stream__a_failing_chunk_iterator_keeps_the_previous_blob(store: BlobStore) -> None:
    store.put("ws/run-1/trace.jsonl", b"the whole previous trace")

    def failing() -> Iterator[bytes]:
        yield b"half of a new"
        raise ConnectionResetError("the uploader went away")

    with pytest.raises(ConnectionResetError):
        store.put_stream("ws/run-1/trace.jsonl", failing())

    assert store.get("ws/run-1/trace.jsonl") == b"the whole previous trace"


def test_size__of_an_absent_blob_is_none(store: BlobStore) -> None:
    assert store.size("ws/run-1/nothing.json") is None


def test_get__of_an_absent_blob_raises_blob_missing_naming_the_key(store: BlobStore) -> None:
    with pytest.raises(BlobMissing, match="ws/run-1/nothing.json") as missing:
        store.get("ws/run-1/nothing.json")

    assert isinstance(missing.value, KeyError)
    assert missing.value.key == "ws/run-1/nothing.json"


def test_open__of_an_absent_blob_raises_before_any_chunk_is_asked_for(store: BlobStore) -> None:
    with pytest.raises(BlobMissing, match="ws/run-1/nothing.json"):
        store.open("ws/run-1/nothing.json")


def test_delete__removes_the_blob_and_an_absent_one_is_fine(store: BlobStore) -> None:
    store.put("ws/run-1/agent.log", b"log")

    store.delete("ws/run-1/agent.log")
    store.delete("ws/run-1/agent.log")

    assert store.size("ws/run-1/agent.log") is None
    assert list(store.keys()) == []


def test_delete_prefix__deletes_that_folder_and_nothing_that_only_starts_with_its_name(store: BlobStore) -> None:
    for key in ("ws/run-1/a/1/trace.jsonl", "ws/run-1/world.json", "ws/run-10/x", "ws/run-1.json", "other/run-1/x"):
        store.put(key, key.encode())

    assert store.delete_prefix("ws/run-1") == 2

    assert list(store.keys()) == ["other/run-1/x", "ws/run-1.json", "ws/run-10/x"]


def test_delete_prefix__takes_the_folder_with_a_trailing_slash_too(store: BlobStore) -> None:
    store.put("ws/run-1/world.json", b"{}")
    store.put("ws/run-10/world.json", b"{}")

    assert store.delete_prefix("ws/run-1/") == 1
    assert store.delete_prefix("ws/run-1/") == 0

    assert list(store.keys()) == ["ws/run-10/world.json"]


def test_delete_prefix__refuses_the_empty_prefix(store: BlobStore) -> None:
    store.put("ws/run-1/world.json", b"{}")

    with pytest.raises(ValueError, match="name the folder"):
        store.delete_prefix("")

    assert store.size("ws/run-1/world.json") == 2


def test_keys__lists_a_folder_and_its_subfolders_sorted_by_key(store: BlobStore) -> None:
    for key in ("ws/run-1/b", "ws/run-1/a/2", "ws/run-1/a/1", "ws/run-1/a-z", "ws/run-10/x", "ws/run-2/y"):
        store.put(key, b".")

    assert list(store.keys("ws/run-1")) == ["ws/run-1/a-z", "ws/run-1/a/1", "ws/run-1/a/2", "ws/run-1/b"]
    assert list(store.keys("ws/run-1/")) == list(store.keys("ws/run-1"))
    assert list(store.keys()) == sorted(
        ["ws/run-1/b", "ws/run-1/a/2", "ws/run-1/a/1", "ws/run-1/a-z", "ws/run-10/x", "ws/run-2/y"]
    )
    assert list(store.keys("ws/run-3")) == []


def test_concat__writes_the_parts_in_order_then_deletes_them(store: BlobStore) -> None:
    parts = [f"ws/uploads/u1/part-{index:05d}" for index in range(4)]
    for index, part in enumerate(parts):
        store.put(part, bytes([65 + index]) * (3 * 1024 * 1024))  # 12 MiB in all: an S3 multipart upload

    store.concat("ws/run-1/trace.jsonl", parts)

    assert store.get("ws/run-1/trace.jsonl") == b"".join(bytes([65 + i]) * (3 * 1024 * 1024) for i in range(4))
    assert list(store.keys()) == ["ws/run-1/trace.jsonl"]


def test_concat__a_missing_part_writes_nothing_and_keeps_the_parts(store: BlobStore) -> None:
    store.put("ws/uploads/u1/part-00000", b"first")

    with pytest.raises(BlobMissing, match="ws/uploads/u1/part-00001"):
        store.concat("ws/run-1/trace.jsonl", ["ws/uploads/u1/part-00000", "ws/uploads/u1/part-00001"])

    assert list(store.keys()) == ["ws/uploads/u1/part-00000"]


REFUSED_KEYS = ["", "/ws/run-1/x", "ws/../x", "..", "ws/./x", "ws\\run-1\\x", "ws/run\x00/x", "ws//x", "ws/x/",
                ".partial/x"]


@pytest.mark.parametrize("key", REFUSED_KEYS)
def test_every_operation__refuses_a_key_that_is_not_a_relative_name(store: BlobStore, key: str) -> None:
    operations = [
        lambda: store.put(key, b"x"),
        lambda: store.put_stream(key, [b"x"]),
        lambda: store.get(key),
        lambda: store.open(key),
        lambda: store.size(key),
        lambda: store.delete(key),
        lambda: store.concat(key, []),
        lambda: store.concat("ws/ok", [key]),
    ]
    for operation in operations:
        with pytest.raises(ValueError, match="relative|'/'-separated"):
            operation()
    assert list(store.keys()) == []


@pytest.mark.parametrize("prefix", ["/ws", "ws/../x", "ws//x", "ws\\x", "/"])
def test_folder_operations__refuse_a_prefix_that_is_not_a_relative_name(store: BlobStore, prefix: str) -> None:
    with pytest.raises(ValueError):
        store.delete_prefix(prefix)
    with pytest.raises(ValueError):
        list(store.keys(prefix))


def test_describe__says_where_without_secrets(store: BlobStore) -> None:
    described = store.describe()

    if isinstance(store, S3BlobStore):
        assert described.startswith(f"s3://{store.bucket}/agentos/blobs (at http://127.0.0.1:")
        assert S3_ENVIRONMENT["AWS_SECRET_ACCESS_KEY"] not in described
    else:
        assert isinstance(store, FileBlobStore)
        assert str(store.root) in described


def test_s3_store__keeps_its_blobs_under_the_url_prefix(s3_bucket: str) -> None:
    store = open_blob_store(f"s3://{s3_bucket}/agentos/blobs")
    store.put("ws/run-1/world.json", b"{}")

    listed = boto3.client("s3", endpoint_url=os.environ["AGENTOS_S3_ENDPOINT_URL"]).list_objects_v2(Bucket=s3_bucket)

    assert [item["Key"] for item in listed["Contents"]] == ["agentos/blobs/ws/run-1/world.json"]


def test_s3_store__reads_the_endpoint_boto3_reads_when_agentos_names_none(
    s3_bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    endpoint = os.environ["AGENTOS_S3_ENDPOINT_URL"]
    monkeypatch.delenv("AGENTOS_S3_ENDPOINT_URL")
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", endpoint)

    store = open_blob_store(f"s3://{s3_bucket}")
    store.put("ws/run-1/world.json", b"{}")

    assert store.get("ws/run-1/world.json") == b"{}"


def test_file_store__keeps_each_blob_as_a_file_under_the_folder(tmp_path: Path) -> None:
    store = open_blob_store(f"file://{tmp_path}/blobs")
    store.put("ws/run-1/world.json", b"{}")

    assert (tmp_path / "blobs" / "ws" / "run-1" / "world.json").read_bytes() == b"{}"
    store.delete_prefix("ws/run-1")
    assert sorted(path.name for path in (tmp_path / "blobs").iterdir()) == [".partial"]


def test_open_blob_store__defaults_to_the_blobs_folder_in_the_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGENTOS_BLOB_URL", raising=False)
    monkeypatch.setenv("AGENTOS_HOME", str(tmp_path))

    store = open_blob_store(None)

    assert isinstance(store, FileBlobStore)
    assert store.root == tmp_path / "blobs"


def test_open_blob_store__reads_agentos_blob_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTOS_BLOB_URL", (tmp_path / "elsewhere").as_uri())

    store = open_blob_store(None)

    assert isinstance(store, FileBlobStore)
    assert store.root == tmp_path / "elsewhere"


@pytest.mark.parametrize("url", ["gs://bucket/prefix", "/var/lib/blobs", "blobs"])
def test_open_blob_store__an_unknown_scheme_names_the_accepted_forms(url: str) -> None:
    with pytest.raises(ValueError, match=r"file:///absolute/folder or s3://bucket/prefix"):
        open_blob_store(url)


@pytest.mark.parametrize("url", ["file://relative/folder", "s3:///prefix-but-no-bucket"])
def test_open_blob_store__a_url_without_its_folder_or_bucket_says_which(url: str) -> None:
    with pytest.raises(ValueError, match="absolute folder|name the bucket"):
        open_blob_store(url)


def test_a_filesystem_store__never_imports_boto3(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from agentos.blobs import open_blob_store\n"
        f"store = open_blob_store({(tmp_path / 'b').as_uri()!r})\n"
        "store.put('ws/x', b'x')\n"
        "assert 'boto3' not in sys.modules and 'botocore' not in sys.modules, 'boto3 was imported'\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
