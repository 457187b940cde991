"""The reviews stage: OpenReview submissions and reviews from the raw zone (parsers in
:mod:`vault_pipeline.parse.openreview`)."""
