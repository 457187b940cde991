"""An export on object storage (``s3://…`` or any fsspec URL): built and verified in a local
folder as always, then uploaded file by file, each in one whole-object PUT, with
``manifest.json`` last. The manifest is the commit mark: a reader that finds it finds every
file it lists; while an export is replaced, the old manifest is removed first, so no reader
takes the new files for the old export or the reverse."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import fsspec

from vault_pipeline.datasets.manifest import MANIFEST
from vault_pipeline.errors import VaultError


def _fs(url: str) -> tuple[fsspec.AbstractFileSystem, str]:
    fs, root = fsspec.core.url_to_fs(url, use_listings_cache=False)
    return fs, root.rstrip("/")


def _existing(fs: fsspec.AbstractFileSystem, root: str) -> set[str]:
    """Every key under the export's prefix (relative), empty when there is none."""
    return {key[len(root) + 1:] for key in fs.find(root) if key.startswith(root + "/")}


def check_remote_target(url: str, overwrite: bool) -> None:
    """The same refusals as a local folder: not over foreign files, not over an export
    without ``overwrite``."""
    fs, root = _fs(url)
    existing = _existing(fs, root)
    if existing and MANIFEST not in existing:
        raise VaultError(f"{url} is not empty and holds no export: choose another place")
    if existing and not overwrite:
        raise VaultError(f"{url} already holds an export: pass --overwrite to replace it")


def publish_export(folder: Path, url: str, overwrite: bool = False) -> str:
    """Upload a verified local export to ``url`` (manifest last); keys of a replaced export
    that the new one lacks are removed once the new manifest is in. Returns the URL."""
    check_remote_target(url, overwrite)
    fs, root = _fs(url)
    old = _existing(fs, root)
    if MANIFEST in old:
        fs.rm_file(f"{root}/{MANIFEST}")
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    for name in [f for f in files if f != MANIFEST] + [MANIFEST]:
        fs.put_file(str(folder / name), f"{root}/{name}")
    for stale in sorted(old - set(files)):
        fs.rm_file(f"{root}/{stale}")
    return fs.unstrip_protocol(root)


@contextmanager
def fetched(url: str) -> Iterator[Path]:
    """A local copy of the export at ``url`` (for `vault export --check`)."""
    fs, root = _fs(url)
    with tempfile.TemporaryDirectory(prefix="export-") as folder:
        for name in sorted(_existing(fs, root)):
            target = Path(folder) / name
            target.parent.mkdir(parents=True, exist_ok=True)
            fs.get_file(f"{root}/{name}", str(target))
        yield Path(folder)
