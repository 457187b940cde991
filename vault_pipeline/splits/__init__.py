"""Temporal splits: the pre-cutoff vault and the post-cutoff targets (train / validation /
test), one partition shared by every role.

Modules, one job each: ``settings`` (cutoff, seed, fractions or sizes, threshold),
``kinds`` (is a paper methodological? the extractive classifier), ``llm_kinds`` (the same
question asked of an LLM backend), ``coverage`` (how much of a paper's cited work the vault
holds), ``assign`` (the seeded hash split), ``views`` (reading and de-duplicating the views
table), ``build`` (the `splits` table), ``quality`` (its checks)."""
