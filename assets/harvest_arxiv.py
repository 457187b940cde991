"""Live arXiv harvesting (group `harvest`): OAI-PMH metadata by datestamp day, full text for
papers in scope, and the arXiv side of the reference walk, generated from their declarations
(`vault_pipeline/sources/stage.py`). Every step runs in the `arxiv` concurrency pool (one at a
time per instance; the instance template sets pool limits to 1) and through the vault's
shared request clock, which also covers CLI harvests. Results land in the raw zone; the
raw-zone sensor rebuilds the tables from there."""

import dagster as dg

from assets.stages import stage_asset
from vault_pipeline.sources.stage import FULLTEXT_STAGE, OAI_STAGE, WALK_STAGE
from vault_pipeline.store.paths import VaultPaths


def arxiv_oai_harvest_asset(paths: VaultPaths) -> dg.AssetsDefinition:
    """The OAI-PMH harvest, one partition per datestamp day from the first day configured for
    the vault the definitions are built for (read then, never at import)."""
    return stage_asset(OAI_STAGE, kinds=frozenset({"arxiv"}), paths=paths)


arxiv_fulltext_harvest = stage_asset(FULLTEXT_STAGE, kinds=frozenset({"arxiv", "pdf"}))
arxiv_reference_walk = stage_asset(WALK_STAGE, kinds=frozenset({"arxiv"}))
