"""Local services that answer like the real ones (arXiv, Semantic Scholar, OpenReview,
OpenAI-compatible servers) and small vaults, shared by the tests and the benchmarks."""
