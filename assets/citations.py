"""citations: references and citation counts from Semantic Scholar, parsed from the raw zone."""

from assets.stages import stage_asset
from vault_pipeline.citations.stage import STAGE

citations = stage_asset(STAGE)
