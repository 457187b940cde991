"""reviews: OpenReview submissions and their reviews, parsed from the raw zone (silver)."""

from vault_pipeline.reviews import STAGE

from .stages import stage_asset

reviews = stage_asset(STAGE)
