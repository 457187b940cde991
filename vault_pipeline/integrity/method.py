"""Method leaks: the problem views (problem setting, challenge) and the gap reference are a
role's inputs or the gap it must find, so they must not state the solution ("we propose
...", "our method ...") or name the paper's own method (its name, its modules' names).

Deterministic, from the record alone, so the views stay a pure function of the record and
the audit can run again on any table."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from vault_pipeline.integrity.leaks import Finding, drop_sentences, sentences

_SOLUTION = re.compile(
    r"\b(?:we|this (?:paper|work|article|study|note|letter|thesis)|in this (?:paper|work"
    r"|article|study|note)|here(?:in)?|the authors?)\b[^.;]{0,60}?\b(?:propose[sd]?"
    r"|introduce[sd]?|present(?:s|ed)?|develop(?:s|ed)?|design(?:s|ed)?|devise[sd]?"
    r"|put(?:s)? forward|construct(?:s|ed)?|build(?:s)?|built|formulate[sd]?|offer(?:s|ed)?"
    r"|contribute[sd]?|suggest(?:s|ed)? (?:a|an|the|using)|employ(?:s|ed)? (?:a|an) (?:new"
    r"|novel))\b"
    r"|\b(?:our|the proposed|the presented|the introduced|this) (?:new |novel )?(?:method"
    r"|approach|framework|model|system|technique|algorithm|solution|architecture|scheme"
    r"|pipeline|strategy|procedure|formulation|estimator)s?\b"
    r"|\b(?:to (?:address|solve|tackle|overcome|remedy|fix|close) (?:this|these|the"
    r" (?:problem|issue|gap|challenge|limitation)s?),? we\b)"
    # the paper's own contribution in the passive: "a converter is presented", "... are
    # proposed" (present tense: prior work is told in the past, "was proposed by")
    r"|\b(?:is|are)\s+(?:here(?:in)?\s+|also\s+|then\s+|first\s+|newly\s+)?(?:presented"
    r"|proposed|introduced|developed|designed|devised|constructed|formulated|put forward)\b",
    re.IGNORECASE)
_CODED = re.compile(r"^(?=.*[A-Z].*[A-Z]|.*\d)[A-Za-z][\w\-+.]*[\w+]$")  # OpenCat, BERT-X, T5
_COMMON = {"AI", "ML", "NLP", "LLM", "LLMs", "GPU", "GPUs", "CPU", "API", "RL", "CNN", "RNN",
           "GAN", "VAE", "MLP", "SGD", "QCD", "QED", "CMB", "LHC", "DNA", "RNA", "NASA", "USA",
           "UK", "EU", "PDF", "PDE", "ODE", "SVM", "MCMC", "IID", "SOTA"}


def _names(value: Any) -> Iterable[str]:
    if isinstance(value, str) and value.strip():
        yield value.strip()


def method_terms(record: Mapping[str, Any]) -> list[str]:
    """Names the record gives its own method: the idea's short name and its modules' names,
    and every coined token inside them (``OpenCat``, ``MoE-Router``), longest first.
    Generic acronyms (``LLM``, ``GPU``) and long descriptive phrases are left out."""
    novelty = record.get("key_novelty") or {}
    method = record.get("method") or {}
    if not isinstance(novelty, dict) or not isinstance(method, dict):
        return []  # not a masked record (a six-part idea names no modules)
    phrases = list(_names(novelty.get("name")))
    phrases += [n for m in method.get("modules") or [] for n in _names(m.get("name"))]
    domain = _domain_tokens(record.get("title"), phrases)
    terms: set[str] = set()
    for phrase in phrases:
        words = phrase.split()
        if 1 < len(words) <= 5:
            terms.add(phrase)
        for word in words:
            token = word.strip(".,;:()[]\"'")
            if len(token) >= 3 and token not in _COMMON | domain and _CODED.match(token):
                terms.add(token)
    return sorted(terms, key=lambda t: (-len(t), t))


def _domain_tokens(title: Any, phrases: list[str]) -> set[str]:
    """Tokens the title uses outside the method's names ("MCP" in "MCP Safety Training:
    Learning to Refuse Falsely Benign MCP Exploits"): the field the method works in, which
    a problem view must be free to name."""
    if not isinstance(title, str):
        return set()
    rest = title
    for phrase in sorted(phrases, key=len, reverse=True):
        rest = rest.replace(phrase, " ")
    return {word.strip(".,;:()[]\"'") for word in rest.split()}


def _term_pattern(term: str) -> re.Pattern[str]:
    flags = 0 if _CODED.match(term) else re.IGNORECASE
    return re.compile(rf"(?<![\w\-]){re.escape(term)}(?![\w\-])", flags)


def method_leaks(text: str | None, terms: Iterable[str] = ()) -> list[Finding]:
    """Sentences of ``text`` that state the solution or name the method."""
    if not text:
        return []
    patterns = [(t, _term_pattern(t)) for t in terms]
    found: list[Finding] = []
    for sentence in sentences(text):
        solution = _SOLUTION.search(sentence)
        if solution:
            found.append(Finding("solution_statement", solution.group().strip(), sentence,
                                 "method"))
            continue
        for term, pattern in patterns:
            if pattern.search(sentence):
                found.append(Finding("method_name", term, sentence, "method"))
                break
    return found


def strip_method(text: str | None, terms: Iterable[str] = ()) -> tuple[str | None,
                                                                        list[Finding]]:
    """``text`` without its method-leaking sentences (None when nothing is left)."""
    if not text:
        return None, []
    terms = list(terms)
    masked = drop_sentences(text, lambda sentence: method_leaks(sentence, terms))
    return masked.text or None, masked.findings
