"""Live OpenReview and Semantic Scholar harvesting (group `harvest`), generated from their
declarations (`vault_pipeline/sources/stage.py`), each in its own concurrency pool and behind
its own shared request clock. Responses land in the raw zone; the `reviews` and `citations`
assets parse them from there."""

import dagster as dg

from assets.stages import stage_asset
from vault_pipeline.sources.stage import OPENREVIEW_PDF_STAGE, OPENREVIEW_STAGE, S2_STAGE
from vault_pipeline.store.paths import VaultPaths


def openreview_harvest_asset(paths: VaultPaths) -> dg.AssetsDefinition:
    """The venue harvest, one partition per venue configured for the vault the definitions
    are built for (read then, never at import)."""
    return stage_asset(OPENREVIEW_STAGE, kinds=frozenset({"openreview"}), paths=paths)


s2_harvest = stage_asset(S2_STAGE, kinds=frozenset({"semanticscholar"}))
openreview_pdf_harvest = stage_asset(OPENREVIEW_PDF_STAGE, kinds=frozenset({"openreview", "pdf"}))
