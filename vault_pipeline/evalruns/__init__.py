"""Evaluation runs: one evaluator model over the evaluation sets (the review paradigms of
seed 001 on its three inputs, abstract and two summaries of the full text, and the InnoEval
tasks of seed 000), every call and summary cached by input hash, then the studies' metrics
and a report with their tables and figures."""
