"""reviews: OpenReview submissions and their reviews, parsed from the raw zone (silver)."""

from assets.stages import stage_asset
from vault_pipeline.reviews.stage import STAGE

reviews = stage_asset(STAGE)
