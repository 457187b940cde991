"""LLM clients behind one `Backend` protocol (`base`): an OpenAI-compatible endpoint, vLLM's
offline engine, batch files. The offline extractive backend and the dispatch by name live in
:mod:`vault_pipeline.ideas.backends`, above the integrity gate they use."""
