"""A local copy of the LanceDB index of an object-store root, for `vault export
--with-index`: every object of the Lance dataset, listed once and fetched through fsspec.

Why one listing is a consistent snapshot: Lance commits a version by putting its manifest
(``_versions/…``) after the data and index files it names, and a listing returns keys in
order (``_indices/``, ``_transactions/``, ``_versions/``, then ``data/``), so the data files
of every manifest listed are already there when the listing reaches them. The copy is then
checked by reading it: every data file of its latest version is read (one narrow column),
and the rows must be those of that version in the bucket, or the index changed under the
copy (a compaction removing files) and the export is refused."""

from __future__ import annotations

from pathlib import Path

import fsspec

from vault_pipeline.errors import VaultError
from vault_pipeline.index.layout import TABLE
from vault_pipeline.store.object_store import storage_options


def fetch_index(url: str, target: Path) -> int:
    """Copy the Lance dataset at ``url`` (``…/views_index.lance``) to ``target``; return the
    rows of the version copied."""
    fs, root = fsspec.core.url_to_fs(url, use_listings_cache=False)
    root = root.rstrip("/")
    keys = [key for key in fs.find(root) if key.startswith(f"{root}/")]
    if not any("/_versions/" in key for key in keys):
        raise VaultError(f"the index does not exist yet at {url}: materialize it first "
                         "(vault materialize --select index), or export without the index")
    local = [target / key[len(root) + 1:] for key in keys]
    for path in local:
        path.parent.mkdir(parents=True, exist_ok=True)
    fs.get(keys, [str(path) for path in local])  # concurrent GETs on s3fs
    return _verify(url, target)


def _verify(url: str, target: Path) -> int:
    """The copy opens, and its latest version has as many rows as that version in the
    bucket."""
    import lancedb

    try:
        copied = lancedb.connect(str(target.parent)).open_table(TABLE)
        version = copied.version
        # one narrow column read from every data file: a missing file fails here
        rows = copied.search().select(["arxiv_id"]).limit(None).to_arrow().num_rows
    except Exception as exc:  # noqa: BLE001 - Lance reports a missing file in several ways
        raise VaultError(f"the index at {url} changed while it was copied ({exc}): run the "
                         "export again") from None
    source = lancedb.connect(url.rsplit("/", 1)[0],
                             storage_options=storage_options(url) or None).open_table(TABLE)
    source.checkout(version)
    expected = source.count_rows()
    if rows != expected:
        raise VaultError(f"the copy of the index at {url} has {rows} rows in version "
                         f"{version}, the bucket {expected}: run the export again")
    return rows
