"""The integrity gate: every LLM-made or extracted artifact of the vault (masked records,
views, training references, evaluation ideas) passes the same layers before it is kept.

- rules (:mod:`vault_pipeline.integrity.leaks`): deterministic outcome shapes, in digits or words;
- source (:mod:`.source`): the paper's own results context (numbers and outcome phrases of
  its result sentences, results sections, table rows and captions) must not reappear;
- judge: an LLM pass over the record's sentences with an LLM backend (:mod:`.llm_judge`),
  and offline a small classifier shipped with the package (:mod:`.classifier`);
- method (:mod:`.method`): the problem views never state the solution or name the method;
- placeholders (:mod:`.placeholders`): "not stated" is absence, never content.

Every finding records the layer that made it; :mod:`.report` turns them into the integrity
report that cards and exports quote."""

GATE_VERSION = "gate/2"  # part of every input hash: a changed gate judges answers again
JUDGE_PROMPT = "judge.v2"  # the LLM judge's prompt: part of the gate key too
