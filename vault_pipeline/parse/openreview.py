"""OpenReview pages as received (API v2 ``{"notes": [...]}`` with ``details.replies``, API v1
with ``details.directReplies``, with or without details; openreview-py's ``Note.to_json()``
dumps of v1 and v2 notes as a JSON list, as JSON lines or one note per file; and
``{"groups": [...]}`` venue groups) into rows.

API v2 wraps every content field as ``{"value": ...}``; v1 does not; both are read. Reply kinds
come from the invitation name after ``/-/`` (``Official_Review``, ``Meta_Review``,
``Decision``), extended per venue by the names its group publishes. Ratings are numbers in
recent venues and ``"6: marginally above the acceptance threshold"`` in older ones."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from vault_pipeline.errors import RawFormatError

NOTES_KIND = "openreview_notes"
GROUPS_KIND = "openreview_groups"
REVIEW_NAMES = {"Official_Review", "Review"}
META_NAMES = {"Meta_Review", "Metareview"}
DECISION_NAMES = {"Decision", "Acceptance_Decision"}
SCORE_KEYS = ("rating", "confidence", "soundness", "presentation", "contribution")
RATING_ALIASES = ("rating", "overall_rating", "final_rating")
_NUMBER = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(?::|$|\s)")


def _is_note(item: Any) -> bool:
    return (isinstance(item, dict) and isinstance(item.get("id"), str)
            and ("invitation" in item or "invitations" in item))


def load_page(data: bytes) -> tuple[Any, str]:
    """One OpenReview file as a payload, and its extension: a JSON document (an API page,
    a list of notes, one note) or JSON lines with one note each, as scripts write
    openreview-py's notes one by one (``f.write(json.dumps(note.to_json()) + "\n")``),
    read as the list of those notes. A file that is neither raises the JSON error of
    reading it whole (a truncated page says where)."""
    try:
        return json.loads(data), ".json"
    except json.JSONDecodeError as whole:
        lines = [line for line in data.splitlines() if line.strip()]
        try:
            notes = [json.loads(line) for line in lines]
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise whole from None
        if len(notes) < 2 or not (all(_is_note(n) for n in notes)
                                  or all(_is_page(n) for n in notes)):
            raise whole from None
        return notes, ".jsonl"


def _is_page(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("notes"), list)


def _as_page(payload: Any) -> Any:
    """Every dump of notes as one ``{"notes": [...]}`` page: a list of notes, a list of API
    pages (a paginated fetch saved whole), one note alone; anything else as it is."""
    if isinstance(payload, list) and payload and all(_is_page(p) for p in payload):
        return {"notes": [n for page in payload for n in page["notes"]]}
    if isinstance(payload, list) and payload and _is_note(payload[0]):
        return {"notes": payload}
    if _is_note(payload) and "notes" not in payload:
        return {"notes": [payload]}
    return payload


def notes_of(payload: Any) -> list:
    """The notes of a page (``{"notes": [...]}``), of a list of notes as openreview-py
    dumps them (``[note.to_json() for note in notes]``, or JSON lines read by
    :func:`load_page`), of a list of pages, or of one note alone (``note.to_json()``)."""
    page = _as_page(payload)
    if isinstance(page, list):
        return page
    return page.get("notes", []) if isinstance(page, dict) else []


def classify(payload: Any) -> tuple[str, int] | None:
    """(kind, records) of an OpenReview page; None if it is not one; RawFormatError if it
    is an OpenReview error envelope or a broken page."""
    payload = _as_page(payload)  # a dump of notes is checked as a page
    if not isinstance(payload, dict):
        return None
    if {"name", "message"} <= payload.keys() and ("status" in payload or
                                                  str(payload["name"]).endswith("Error")):
        raise RawFormatError(f"OpenReview error {payload['name']}: {payload['message']}")
    for key, kind in (("notes", NOTES_KIND), ("groups", GROUPS_KIND)):
        items = payload.get(key)
        if isinstance(items, list):
            for position, item in enumerate(items):
                if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                    raise RawFormatError(f"OpenReview {key} page: item {position} has no id")
                if key == "notes" and not isinstance(item.get("content", {}), dict):
                    raise RawFormatError(f"OpenReview notes page: note {item['id']} has no "
                                         "content object")
            return kind, len(items)
    return None


def value(field: Any) -> Any:
    """A content field's value, whether v2-wrapped (``{"value": x}``) or plain (v1)."""
    return field.get("value") if isinstance(field, dict) and "value" in field else field


def score(field: Any) -> float | None:
    """``6``, ``6.5`` or ``"6: marginally above the acceptance threshold"`` → 6.0."""
    raw = value(field)
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int | float):
        return float(raw)
    if isinstance(raw, str) and (match := _NUMBER.match(raw)):
        return float(match.group(1))
    return None


def text(field: Any) -> str | None:
    raw = value(field)
    if isinstance(raw, str):
        cleaned = " ".join(raw.split())
        return cleaned or None
    return None


def strings(field: Any) -> list[str] | None:
    raw = value(field)
    if isinstance(raw, list):
        return [" ".join(str(v).split()) for v in raw if str(v).strip()]
    if isinstance(raw, str) and raw.strip():
        return [p.strip() for p in raw.split(",") if p.strip()]
    return None


def timestamp(ms: Any) -> datetime | None:
    return datetime.fromtimestamp(ms / 1000, UTC) if isinstance(ms, int | float) else None


def invitation_names(note: dict) -> list[str]:
    """The reply type of each invitation, its last path segment, in every form:
    ``<venue>/Submission<N>/-/Official_Review`` (v2), ``<venue>/Paper<N>/-/Official_Review``
    and ``<venue>/-/Paper<N>/Official_Review`` (v1), ``<venue>/-/Acceptance_Decision``."""
    invitations = note.get("invitations") or [note.get("invitation") or ""]
    return [i.rsplit("/-/", 1)[-1].rsplit("/", 1)[-1] for i in invitations if i]


def venue_of(note: dict) -> str | None:
    if note.get("domain"):
        return note["domain"]
    invitations = note.get("invitations") or [note.get("invitation") or ""]
    first = next((i for i in invitations if "/-/" in i), None)
    if first is None:
        return None
    head = first.split("/-/", 1)[0]
    return re.sub(r"/(Paper|Submission)\d+$", "", head)


def reply_kind(note: dict, extra: dict[str, set[str]] | None = None) -> str | None:
    names = set(invitation_names(note))
    extra = extra or {}
    for kind, known in (("decision", DECISION_NAMES), ("meta_review", META_NAMES),
                        ("review", REVIEW_NAMES)):
        if names & (known | extra.get(kind, set())):
            return kind
    return None


def normalise_decision(raw: str | None) -> str | None:
    """Decision wordings across venues and years → one vocabulary."""
    if not raw:
        return None
    low = raw.lower()
    if "desk" in low and "reject" in low:
        return "Desk rejected"
    if "withdraw" in low:
        return "Withdrawn"
    if "reject" in low:
        return "Reject"
    if "accept" in low or any(t in low for t in ("oral", "spotlight", "poster", "notable")):
        for tier, words in (("oral", ("oral", "top-5%", "top 5%")),
                            ("spotlight", ("spotlight", "top-25%", "top 25%")),
                            ("poster", ("poster",))):
            if any(w in low for w in words):
                return f"Accept ({tier})"
        return "Accept"
    return raw.strip()


def decision_from_venue(venue_id: str, venueid: str | None, venue: str | None) -> str | None:
    """The decision a submission's venue group and venue string imply (API v2 venues move
    submissions into accepted / rejected / withdrawn groups when decisions are released)."""
    if venueid:
        for suffix, decision in (("/Withdrawn_Submission", "Withdrawn"),
                                 ("/Desk_Rejected_Submission", "Desk rejected"),
                                 ("/Rejected_Submission", "Reject")):
            if venueid.endswith(suffix):
                return decision
    if venueid == venue_id:
        if venue and "submitted" in venue.lower():
            return None  # in the venue's group but still "Submitted to ...": undecided
        return normalise_decision(venue) if venue else "Accept"
    if venue and "submitted to" not in venue.lower():
        return normalise_decision(venue)
    return None


def _markdown(content: dict, skip: set[str]) -> str | None:
    parts = []
    for key, field in content.items():
        if key in skip:
            continue
        body = value(field)
        if isinstance(body, str) and body.strip() and score(body) is None:
            parts.append(f"## {key}\n\n{body.strip()}")
    return "\n\n".join(parts) or None


def reply_row(note: dict, forum: str, venue_id: str, kind: str) -> dict:
    content = note.get("content") or {}
    rating = next((score(content[k]) for k in RATING_ALIASES if k in content), None)
    if rating is None and kind == "review":  # ICLR ≤ 2023 (API v1) rated as "recommendation"
        rating = score(content.get("recommendation"))
    others = {k: score(v) for k, v in content.items()
              if k not in SCORE_KEYS and k not in RATING_ALIASES and score(v) is not None
              and len(str(value(v))) < 200}
    decision = text(content.get("decision")) or text(content.get("recommendation"))
    return {
        "note_id": note["id"], "forum_id": forum, "venue_id": venue_id, "kind": kind,
        "invitation": (note.get("invitations") or [note.get("invitation")])[0],
        "rating": rating, "confidence": score(content.get("confidence")),
        "soundness": score(content.get("soundness")),
        "presentation": score(content.get("presentation")),
        "contribution": score(content.get("contribution")),
        "other_scores": json.dumps(others, sort_keys=True) if others else None,
        "decision": normalise_decision(decision) if kind == "decision" else decision,
        "text": _markdown(content, {"decision", "recommendation"}),
        "signatures": note.get("signatures"),
        "created": timestamp(note.get("cdate") or note.get("tcdate")),
        "modified": timestamp(note.get("tmdate") or note.get("mdate") or note.get("cdate")),
    }


def submission_row(note: dict, venue_id: str) -> dict:
    content = note.get("content") or {}
    return {
        "forum_id": note["id"], "venue_id": venue_id, "number": note.get("number"),
        "title": text(content.get("title")), "abstract": text(content.get("abstract")),
        "authors": strings(content.get("authors")),
        "keywords": strings(content.get("keywords")),
        "primary_area": text(content.get("primary_area")),
        "tldr": text(content.get("TLDR")) or text(content.get("TL;DR")),
        "venue": text(content.get("venue")), "venueid": text(content.get("venueid")),
        "pdf": text(content.get("pdf")),
        "created": timestamp(note.get("cdate") or note.get("tcdate")),
        "modified": timestamp(note.get("tmdate") or note.get("mdate") or note.get("cdate")),
    }


def parse_notes_page(payload: dict | list, names: dict[str, dict[str, set[str]]] | None = None
                     ) -> tuple[list[dict], list[dict], dict[str, int]]:
    """(submission rows, reply rows, ignored replies by invitation name) of one page."""
    names = names or {}
    submissions, replies, ignored = [], [], {}
    for note in notes_of(payload):
        venue_id = venue_of(note)
        if venue_id is None:
            ignored["(no venue)"] = ignored.get("(no venue)", 0) + 1
            continue
        forum = note.get("forum") or note["id"]
        children = []
        if forum == note["id"]:
            submissions.append(submission_row(note, venue_id))
            details = note.get("details") or {}
            children = details.get("replies") or details.get("directReplies") or []
        else:
            children = [note]
        for child in children:
            kind = reply_kind(child, names.get(venue_id))
            if kind is None:
                label = (invitation_names(child) or ["?"])[0]
                ignored[label] = ignored.get(label, 0) + 1
                continue
            replies.append(reply_row(child, forum, venue_id, kind))
    return submissions, replies, ignored


def names_from_groups(payload: dict) -> dict[str, dict[str, set[str]]]:
    """Per venue, the reply invitation names its group publishes (API v2)."""
    found: dict[str, dict[str, set[str]]] = {}
    for group in payload.get("groups", []):
        content = group.get("content") or {}
        names = {kind: {n} for kind, key in (("review", "review_name"),
                                             ("meta_review", "meta_review_name"),
                                             ("decision", "decision_name"))
                 if isinstance(n := value(content.get(key)), str)}
        if names:
            found[group["id"]] = names
    return found
