"""Dagster assets and checks: thin wrappers over `vault_pipeline`, one module per stage."""

import dagster as dg

from vault_pipeline.paths import VaultPaths

from .citations import citations
from .datasets import datasets_assets, datasets_checks
from .documents import documents, documents_checks
from .evalruns import evalruns_assets
from .evalsets import evalsets_assets, evalsets_checks
from .harvest_arxiv import arxiv_fulltext_harvest, arxiv_oai_harvest_asset, arxiv_reference_walk
from .harvest_sources import openreview_harvest_asset, openreview_pdf_harvest, s2_harvest
from .ideas import ideas_assets, ideas_checks
from .index import index_assets, index_checks
from .integrity import integrity_assets, integrity_checks
from .papers import papers, papers_checks
from .raw_zone import raw_files
from .resources import VaultResource
from .reviews import reviews
from .splits import splits_assets, splits_checks

all_assets = [raw_files, papers, documents]
all_assets += [reviews, citations, arxiv_fulltext_harvest, arxiv_reference_walk, s2_harvest,
               openreview_pdf_harvest]
all_checks = [*papers_checks, *documents_checks]
all_assets += ideas_assets
all_checks += ideas_checks
all_assets += [*splits_assets, *index_assets, *datasets_assets]
all_checks += [*splits_checks, *index_checks, *datasets_checks]

all_assets += evalsets_assets
all_checks += evalsets_checks
all_assets += integrity_assets
all_assets += evalruns_assets
all_checks += integrity_checks



def harvest_assets(paths: VaultPaths) -> list[dg.AssetsDefinition]:
    """The partitioned harvests, whose partitions come from the vault's harvest config."""
    return [arxiv_oai_harvest_asset(paths), openreview_harvest_asset(paths)]


__all__ = ["VaultResource", "all_assets", "all_checks", "harvest_assets"]
