"""Judging an answer: parse, validate against the record schema, look for leaked results and
instruction-like text. Also the masking used when a leaky answer has used up its retries."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from .backends.base import Answer
from .injection import looks_like_instruction
from .leaks import Finding, find_leaks, mask_text, sentences
from .record import MaskedRecord

WITHHELD = "Withheld: the answer stated a measured result here."
# Paths whose text is bibliographic, not the paper's claims: not leak-checked.
_UNCHECKED = re.compile(r"^references\b")
# Predictions and refutation conditions are hypothetical by construction.
_PLANNING_FIELD = re.compile(r"^falsifiable_predictions\b")
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


@dataclass
class Verdict:
    record: BaseModel | None  # a MaskedRecord, unless `judge` was given another model
    reason: str | None = None  # why it was rejected
    leaks: list[tuple[str, Finding]] = field(default_factory=list)
    data: dict[str, Any] | None = None  # schema-valid JSON whose only fault is its leaks

    @property
    def ok(self) -> bool:
        return self.record is not None


def iter_texts(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(path, text) for every string in a record dict, e.g. `related_work[0].open_gap`.
    A hyperparameter is one text, `name value`, so the checker sees its name."""
    if isinstance(value, dict):
        if set(value) == {"name", "value"}:
            yield path, f"{value['name']} {value['value']}"
            return
        for key, item in value.items():
            yield from iter_texts(item, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from iter_texts(item, f"{path}[{i}]")
    elif isinstance(value, str):
        yield path, value


def record_leaks(data: dict[str, Any]) -> list[tuple[str, Finding]]:
    """Leaks and instruction-like sentences in every checked field of a record dict."""
    out = []
    for path, text in iter_texts(data):
        if _UNCHECKED.match(path):
            continue
        out.extend((path, f) for f in find_leaks(text, bool(_PLANNING_FIELD.match(path))))
        out.extend((path, Finding("instruction", s[:120], s))
                   for s in sentences(text) if looks_like_instruction(s))
    return out


def _parse_json(text: str) -> Any:
    """The JSON in an answer: bare, in a Markdown fence, or the outermost object in prose."""
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    if fenced:
        stripped = fenced.group(1)
    try:
        return json.loads(stripped)
    except json.JSONDecodeError as first:
        start, end = stripped.find("{"), stripped.rfind("}")
        if 0 <= start < end:
            try:
                return json.loads(stripped[start:end + 1])
            except json.JSONDecodeError:
                pass
        raise first


def schema_errors(exc: ValidationError, limit: int = 6) -> str:
    parts = []
    for error in exc.errors()[:limit]:
        where = ".".join(str(p) for p in error["loc"]) or "(root)"
        parts.append(f"{where}: {error['msg']}")
    more = len(exc.errors()) - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def describe_leaks(leaks: list[tuple[str, Finding]], limit: int = 5) -> str:
    shown = "; ".join(f"{path}: {f.kind} {f.match!r}" for path, f in leaks[:limit])
    more = len(leaks) - limit
    return (f"it states measured results or instructions in {len(leaks)} place(s): {shown}"
            + (f"; and {more} more" if more > 0 else ""))


def answer_object(answer: Answer) -> tuple[dict[str, Any] | None, str | None]:
    """The JSON object of an answer, or why there is none (also used by the evaluation
    sets' idea extraction, which judges another record with the same rules)."""
    if answer.error:
        return None, f"backend error: {answer.error}"
    if answer.finish_reason == "length":
        return None, "the answer was cut off at the token limit (finish_reason=length)"
    if not answer.text or not answer.text.strip():
        return None, "the answer is empty"
    try:
        data = _parse_json(answer.text)
    except json.JSONDecodeError as exc:
        return None, f"the answer is not JSON: {exc}"
    if not isinstance(data, dict):
        return None, f"the answer is JSON but not an object ({type(data).__name__})"
    return data, None


def judge(answer: Answer, model: type[BaseModel] = MaskedRecord,
          find_leaks_in: Callable[[dict[str, Any]], list[tuple[str, Finding]]] = record_leaks,
          ) -> Verdict:
    """Accept an answer as a record, or say exactly why not. ``model`` and
    ``find_leaks_in`` default to the masked record; the evaluation sets judge their six-part
    idea record with the same rules."""
    data, reason = answer_object(answer)
    if data is None:
        return Verdict(None, reason)
    try:
        record = model.model_validate(data)
    except ValidationError as exc:
        return Verdict(None, f"the answer does not match the schema: {schema_errors(exc)}")
    leaks = find_leaks_in(record.model_dump())
    if leaks:
        return Verdict(None, describe_leaks(leaks), leaks, record.model_dump())
    return Verdict(record)


def _mask_value(value: Any, path: str, removed: list[tuple[str, Finding]]) -> Any:
    if isinstance(value, dict):
        if set(value) == {"name", "value"}:
            hits = find_leaks(f"{value['name']} {value['value']}")
            removed.extend((path, f) for f in hits)
            return None if hits else value
        return {k: _mask_value(v, f"{path}.{k}" if path else k, removed)
                for k, v in value.items()}
    if isinstance(value, list):
        items = [_mask_value(v, f"{path}[{i}]", removed) for i, v in enumerate(value)]
        return [v for v in items if v not in (None, "")]
    if isinstance(value, str) and not _UNCHECKED.match(path):
        masked = mask_text(value, bool(_PLANNING_FIELD.match(path)))
        removed.extend((path, f) for f in masked.findings)
        kept = [s for s in sentences(masked.text) if not looks_like_instruction(s)]
        removed.extend((path, Finding("instruction", s[:120], s))
                       for s in sentences(masked.text) if looks_like_instruction(s))
        return " ".join(kept)
    return value


def mask_record(data: dict[str, Any]) -> tuple[MaskedRecord | None, list[tuple[str, Finding]],
                                               str | None]:
    """Drop every sentence with a result or an instruction; a required text left empty
    says it was withheld. Returns the record (None if masking broke the schema), what was
    removed, and the reason when it failed."""
    removed: list[tuple[str, Finding]] = []
    masked = _mask_value(data, "", removed)

    def fill(value: Any, original: Any) -> Any:
        if isinstance(value, dict):
            return {k: fill(v, original[k]) for k, v in value.items()}
        if isinstance(value, list) and isinstance(original, list) \
                and len(value) == len(original):
            return [fill(v, o) for v, o in zip(value, original, strict=True)]
        if value == "" and isinstance(original, str):
            return WITHHELD
        return value

    masked = fill(masked, data)
    try:
        record = MaskedRecord.model_validate(masked)
    except ValidationError as exc:
        return None, removed, f"masking its leaks broke the schema: {schema_errors(exc)}"
    if record_leaks(record.model_dump()):
        return None, removed, "leaks remain after masking"
    return record, removed, None
