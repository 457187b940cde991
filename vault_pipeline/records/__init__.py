"""The record models (pydantic), defined once at the ground floor: they give the JSON schema
sent to LLM backends, validate every answer, and give the tables their record columns
(:mod:`vault_pipeline.schemas` reads them here, never from a stage)."""
