"""The data root and everything that reads, writes, locks and queries it: paths, the table store,
atomic writes, object storage, the vault lock, the crash-resume journal, fingerprints of what
was built, and DuckDB over the tables."""
