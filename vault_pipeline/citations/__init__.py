"""The citations stage: Semantic Scholar references and citation counts from the raw zone (parsers
in :mod:`vault_pipeline.parse.semantic_scholar`)."""
