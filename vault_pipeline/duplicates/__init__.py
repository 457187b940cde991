"""Leakage control across the cutoff: the same work under several records (a re-posting, a
workshop or journal version, a retitled resubmission, the OpenReview submission of an arXiv
paper) found by exact keys, MinHash-LSH, embeddings and cross-source links, gathered into
clusters with one canonical member, and the n-gram decontamination of held-out targets."""
