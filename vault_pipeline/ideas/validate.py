"""Judging an answer: parse, validate against the record schema, then pass it through the
integrity gate (:mod:`vault_pipeline.integrity.gate`: results, source-grounded repeats, the
offline judge, instruction-like text, method leaks in problem fields). Also the masking
used when a leaky answer has used up its retries."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from vault_pipeline.integrity.gate import Flagged, Gate
from vault_pipeline.integrity.leaks import Finding
from vault_pipeline.llm.backends.base import Answer
from vault_pipeline.records.masked import MaskedRecord

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


_WHAT = {"rules": "states a measured result", "source": "repeats a result the paper reports",
         "judge": "reads as an observed outcome", "method": "states the solution in a problem "
         "field"}


def describe_leaks(leaks: Flagged, limit: int = 5) -> str:
    shown = "; ".join(f"{path}: {_WHAT.get(f.layer, f.layer)} ({f.layer}:{f.kind} "
                      f"{f.match!r})" for path, f in leaks[:limit])
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


def judge(answer: Answer, gate: Gate, model: type[BaseModel] = MaskedRecord) -> Verdict:
    """Accept an answer as a record of ``model``, or say exactly why not."""
    data, reason = answer_object(answer)
    if data is None:
        return Verdict(None, reason)
    try:
        record = model.model_validate(data)
    except ValidationError as exc:
        return Verdict(None, f"the answer does not match the schema: {schema_errors(exc)}")
    dump = record.model_dump()
    leaks = gate.findings(dump)
    if leaks:
        return Verdict(None, describe_leaks(leaks), leaks, dump)
    return Verdict(record)


def mask_record(data: dict[str, Any], gate: Gate, model: type[BaseModel] = MaskedRecord,
                extra: Iterable[tuple[str, Finding]] = ()
                ) -> tuple[BaseModel | None, Flagged, str | None]:
    """Drop every flagged sentence; a text left empty is null. Returns the record (None if
    masking broke the schema: a required part had nothing clean left), what was removed,
    and the reason when it failed."""
    masked, removed = gate.mask(data, extra)
    for _ in range(20):
        try:
            record = model.model_validate(masked)
            break
        except ValidationError as exc:
            # a list item whose required text was all leak goes, like the leak itself
            if not _drop_broken_items(masked, exc):
                return None, removed, f"masking its leaks broke the schema: {schema_errors(exc)}"
    else:
        return None, removed, "masking its leaks broke the schema"
    if gate.findings(record.model_dump()):
        return None, removed, "leaks remain after masking"
    return record, removed, None


def _drop_broken_items(data: dict[str, Any], exc: ValidationError) -> bool:
    """Remove every list item an error points into; False when an error is not inside a
    list item (a required top-level text with nothing clean left)."""
    targets: set[tuple] = set()
    for error in exc.errors():
        loc = error["loc"]
        index = max((i for i, part in enumerate(loc) if isinstance(part, int)), default=None)
        if index is None:
            return False
        targets.add(tuple(loc[:index + 1]))
    for loc in sorted(targets, key=lambda t: t[-1], reverse=True):
        parent: Any = data
        for part in loc[:-1]:
            parent = parent[part]
        del parent[loc[-1]]
    return True
