"""The papers stage: parsed, normalized, deduplicated arXiv metadata (`build`), its checks
(`quality`) and the version each paper enters the vault in (`versions`)."""
