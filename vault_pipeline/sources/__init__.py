"""Live sources: polite clients for arXiv (OAI-PMH, search API, PDFs and e-prints), OpenReview
and Semantic Scholar. Every response they receive is stored in the raw zone before anything is
parsed, so the tables are rebuilt from it exactly as from imported files.

Nothing is imported here on purpose: `vault_pipeline.raw` imports the JSON page checks of this
layer's parsers, and an eager import would make a cycle."""

HARVEST_GROUP = "harvest"
"""The asset group of the live harvests: they run only when selected by name or group, and a
run of harvests alone goes without the vault lock (it only adds raw files)."""
