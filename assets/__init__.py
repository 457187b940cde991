"""Dagster assets and checks: thin wrappers over `vault_pipeline`, one module per stage."""

import dagster as dg

from assets.citations import citations
from assets.datasets import datasets_assets, datasets_checks
from assets.documents import documents, documents_checks
from assets.duplicates import duplicates_assets, duplicates_checks
from assets.evalruns import evalruns_assets
from assets.evalsets import evalsets_assets, evalsets_checks
from assets.harvest_arxiv import (
    arxiv_fulltext_harvest,
    arxiv_oai_harvest_asset,
    arxiv_reference_walk,
)
from assets.harvest_sources import openreview_harvest_asset, openreview_pdf_harvest, s2_harvest
from assets.ideas import ideas_assets, ideas_checks
from assets.index import index_assets, index_checks
from assets.integrity import integrity_assets, integrity_checks
from assets.papers import papers, papers_checks
from assets.raw_zone import raw_files
from assets.resources import VaultResource
from assets.reviews import reviews
from assets.splits import splits_assets, splits_checks
from vault_pipeline.store.paths import VaultPaths

all_assets = [raw_files, papers, documents]
all_assets += [reviews, citations, arxiv_fulltext_harvest, arxiv_reference_walk, s2_harvest,
               openreview_pdf_harvest]
all_checks = [*papers_checks, *documents_checks]
all_assets += ideas_assets
all_checks += ideas_checks
all_assets += [*duplicates_assets, *splits_assets, *index_assets, *datasets_assets]
all_checks += [*duplicates_checks, *splits_checks, *index_checks, *datasets_checks]

all_assets += evalsets_assets
all_checks += evalsets_checks
all_assets += integrity_assets
all_assets += evalruns_assets
all_checks += integrity_checks


def harvest_assets(paths: VaultPaths) -> list[dg.AssetsDefinition]:
    """The partitioned harvests, whose partitions come from the vault's harvest config."""
    return [arxiv_oai_harvest_asset(paths), openreview_harvest_asset(paths)]


__all__ = ["VaultResource", "all_assets", "all_checks", "harvest_assets"]
