"""What is stale: the pipeline's code version and what each asset was last built from,
judged alike by both faces (the CLI's no-op refresh, and the assets that record each step
whichever face launched the run)."""
