"""Dagster assets and checks: thin wrappers over `vault_pipeline`, one module per stage."""

from .documents import documents, documents_checks
from .papers import papers, papers_checks
from .raw_zone import raw_files
from .resources import VaultResource

all_assets = [raw_files, papers, documents]
all_checks = [*papers_checks, *documents_checks]

__all__ = ["VaultResource", "all_assets", "all_checks"]
