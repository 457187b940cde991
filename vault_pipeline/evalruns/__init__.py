"""Evaluation runs: one evaluator model over the evaluation sets (the review paradigms of
seed 001 and the InnoEval tasks of seed 000), every call cached by input hash, then the
studies' metrics and a Markdown report."""
