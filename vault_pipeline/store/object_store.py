"""Options for libraries that reach an object-store data root with their own client
(LanceDB's Rust object store): taken from the standard AWS variables the fsspec side
(s3fs, botocore) reads too, so one set of variables configures both. Also what the
conditional writes (the writer lock, table appends) need to know of an fsspec store."""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from urllib.parse import urlsplit

# Environment variable → LanceDB / object_store option.
S3_OPTIONS = {
    "AWS_ENDPOINT_URL": "aws_endpoint",
    "AWS_ACCESS_KEY_ID": "aws_access_key_id",
    "AWS_SECRET_ACCESS_KEY": "aws_secret_access_key",
    "AWS_SESSION_TOKEN": "aws_session_token",
    "AWS_DEFAULT_REGION": "aws_region",
    "AWS_REGION": "aws_region",
}


def storage_options(url: str, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """LanceDB storage options for ``url`` (empty for a local path); a plain-HTTP endpoint
    (a local S3-compatible server) is allowed explicitly."""
    environ = os.environ if environ is None else environ
    if urlsplit(url).scheme not in ("s3", "s3a"):
        return {}
    options = {option: environ[name] for name, option in S3_OPTIONS.items() if environ.get(name)}
    endpoint = environ.get("AWS_ENDPOINT_URL_S3") or environ.get("AWS_ENDPOINT_URL")
    if endpoint:
        options["aws_endpoint"] = endpoint
        if endpoint.startswith("http://"):
            options["allow_http"] = "true"
    return options


def conditional(fs: object) -> bool:
    """Whether the store takes conditional puts through s3fs (``If-None-Match: *`` with
    ``mode="create"``, ``If-Match`` as a ``PutObject`` keyword): S3 and its compatibles."""
    protocol = getattr(fs, "protocol", ())
    return "s3" in (protocol if isinstance(protocol, tuple | list) else (protocol,))


def precondition_failed(exc: OSError) -> bool:
    """A conditional write that lost: s3fs turns a 412 into FileExistsError (If-None-Match)
    or an EINVAL OSError (If-Match); If-Match on a removed object is FileNotFoundError."""
    return isinstance(exc, FileExistsError | FileNotFoundError) or exc.errno == errno.EINVAL
