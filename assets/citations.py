"""citations: references and citation counts from Semantic Scholar, parsed from the raw zone."""

from vault_pipeline.citations import STAGE

from .stages import stage_asset

citations = stage_asset(STAGE)
