"""The bundled sample as a small vault of full texts, for the tests that convert documents:
the arXiv snapshot sample and three papers' files (a PDF, an e-print tarball, a gzipped
source) imported into the raw zone, `papers` built."""

from __future__ import annotations

import shutil
from pathlib import Path

import vault_pipeline
from vault_pipeline.papers.build import build_papers
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.store.paths import VaultPaths

SAMPLE = Path(vault_pipeline.__file__).parent / "sample" / "raw"
FULL_TEXT_FILES = ("arxiv-metadata-oai-snapshot.sample.jsonl", "2204.08348v3.pdf",
                   "arXiv-2202.12139v1.tar.gz", "1401.2122v5.gz")


def full_text_vault(home: Path, config: str = "") -> VaultPaths:
    """A vault at ``home`` holding :data:`FULL_TEXT_FILES` with `papers` built; ``config``,
    when given, is its `vault.toml`."""
    paths = VaultPaths(home).ensure()
    if config:
        (home / "vault.toml").write_text(config)
    incoming = home / "incoming"
    incoming.mkdir()
    for name in FULL_TEXT_FILES:
        shutil.copy(SAMPLE / name, incoming / name)
    RawZone(paths).import_paths([incoming])
    build_papers(paths)
    return paths
