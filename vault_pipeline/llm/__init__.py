"""What every LLM user shares (the ideas stage, the integrity judge, evaluation sets and runs,
splits, datasets): backends, settings, versioned prompts, paper inputs, the injection guard,
paper sections and the incremental batch driver."""
