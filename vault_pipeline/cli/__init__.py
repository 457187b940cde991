"""`vault`: the command line, one of the two faces of the library (with `definitions`): it
materializes the very assets the Dagster UI shows."""
