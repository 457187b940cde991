"""How a sentence is worded, as the leak layers and the extractive reader both read it:
whether it reports what was found or measured (or tells in the past tense what happened),
and whether it introduces the paper's own method. Kept in the integrity package so that the
results context (:mod:`.source`) and the reader (:mod:`vault_pipeline.ideas.contrast`) share
one reading without the integrity package importing the ideas package."""

from __future__ import annotations

import re

_F = re.IGNORECASE

# A report of what was found or measured: such a sentence states an outcome (whose ever it
# is), not what prior work leaves open.
_REPORTING = re.compile(
    r"\b(?:show\w*|shown|find\w*|found|reveal\w*|demonstrat\w*|observ\w*|indicat\w*"
    r"|suggest\w*|confirm\w*|report\w*|experiment\w*|evaluat\w*|measured|measuring"
    r"|measurements?|results?|analys[ie]s"
    r"|outperform\w*|achiev\w*|improv\w*)\b", _F)
# Past tense of an outcome ("failed", "did not", "were unable"): how a paper reports what
# happened in its own study; prior work's limitation is stated in the present.
_PAST = re.compile(r"\b(?:was|were|did|had|failed|struggled|suffered|lacked|remained"
                   r"|performed|yielded|led)\b", _F)


def reports(text: str) -> bool:
    """Whether a sentence reports what was found or measured, or tells in the past tense
    what happened: an outcome's wording, whoever's it is."""
    return bool(_REPORTING.search(text) or _PAST.search(text))


# The paper introducing its own method ("To address this, we propose X, a framework that
# ..."): what it builds, not what it found.
_METHOD_STATEMENT = re.compile(
    r"^\W*(?:(?:(?:to (?:address|tackle|overcome|solve|bridge|fill|handle|mitigate|close"
    r"|remedy|resolve)|building (?:on|upon)|motivated by|inspired by|based on|leveraging)"
    r"\b[^,]{0,80}|to (?:this|that) end|to do so|in this (?:paper|work|article|study)|here"
    r"|instead|specifically|therefore|thus|hence|accordingly),\s+)?"
    r"we (?:propose|introduce|present|design|develop|build|construct|devise)\s+"
    r"(?:a |an |the )?", _F)


def method_statement(text: str) -> bool:
    """Whether a sentence introduces the paper's own method ("we propose X, a framework
    for ..."), with no report of what was found or measured and nothing in the past tense."""
    return bool(_METHOD_STATEMENT.search(text)) and not reports(text)
