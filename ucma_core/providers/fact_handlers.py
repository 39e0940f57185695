"""What a matched fact pattern becomes: the handlers that turn a regex match into facts.

Each handler takes the match and the speaker ("me") and returns :class:`RawFact` rows:
the subject (the speaker, a named person, or "<speaker>'s mom" for an unnamed
relative), a predicate, the object cut where the statement ends
(:func:`~ucma_core.providers.fact_objects.objects`), a confidence, and whether the
statement revises an earlier one (with the old value it names). The patterns that call
them are in :mod:`~ucma_core.providers.fact_rules`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from ucma_core.providers.fact_objects import IDENTITIES, NOT_NAMES, clean_name, first_clause, objects

__all__ = [
    "WHEN",
    "Handler",
    "RawFact",
    "age",
    "appointment",
    "attribute",
    "fact",
    "named",
    "no_longer",
    "not_identity",
    "plural_relation",
    "relation",
    "role",
    "routine",
    "schedule",
    "stopped",
    "switched",
    "works_at",
]


class RawFact(NamedTuple):
    """One fact a handler found, before it becomes an :class:`~ucma_core.providers.ExtractedFact`."""

    subject: str
    predicate: str
    object: str
    confidence: float
    revises: bool = False
    replaces: str | None = None


Handler = Callable[["re.Match[str]", str], list[RawFact]]

WHEN = (
    r"\b(?:on|at|tomorrow|tonight|today|next|this|every|in\s+\d|\d{1,2}(?::\d{2})?\s*(?:am|pm)|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|"
    r"july|august|september|october|november|december)\b"
)
_THIRD = {
    "go": "goes",
    "do": "does",
    "have": "has",
    "study": "studies",
    "teach": "teaches",
    "watch": "watches",
}


def _third_person(verb: str) -> str:
    verb = verb.lower()
    return _THIRD.get(verb, verb + ("es" if verb.endswith(("s", "sh", "ch", "x")) else "s"))


# ---------------------------------------------------------------------------------------- handlers
def _first(found: list[str]) -> str | None:
    return found[0] if found else None


def _subject(m: re.Match[str], me: str) -> str | None:
    groups = m.re.groupindex
    if "name" in groups and m["name"]:
        return clean_name(m["name"])
    if "myrel" in groups and m["myrel"]:
        return f"{me}'s {' '.join(m['myrel'].lower().split())}"
    return me


def fact(predicate: str, confidence: float, kind: str, *, revises: bool = False) -> Handler:
    """One fact per object; the subject is the ``name`` / ``myrel`` group when matched, else the speaker."""

    def handle(m: re.Match[str], me: str) -> list[RawFact]:
        subject = _subject(m, me)
        if subject is None:
            return []
        old = m["old"] if "old" in m.re.groupindex and m["old"] else None
        replaces = _first(objects(old, "thing", me)) if old else None
        return [
            RawFact(subject, predicate, obj, confidence, revises or replaces is not None, replaces)
            for obj in objects(m["obj"], kind, me)
        ]

    return handle


def relation(confidence: float) -> Handler:
    """``(owner, "has <relation>", name)``; the owner is the ``owner`` group or the speaker."""

    def handle(m: re.Match[str], me: str) -> list[RawFact]:
        name = clean_name(m["obj"])
        owner = clean_name(m["owner"]) if "owner" in m.re.groupindex else me
        if not name or not owner:
            return []
        new = "new" in m.re.groupindex and bool(m["new"])
        return [RawFact(owner, "has " + " ".join(m["rel"].lower().split()), name, confidence, new)]

    return handle


def plural_relation(m: re.Match[str], me: str) -> list[RawFact]:
    """ "My kids are called Yara and Sami" → ``has kid Yara``, ``has kid Sami``."""
    singular = {"kids": "kid", "children": "child", "sons": "son", "daughters": "daughter"}
    rel = m["rels"].lower()
    relation = "has " + singular.get(rel, rel.rstrip("s"))
    cut = re.search(r"[.;!?]|\s+(?:but|because|who|which)\b", m["obj"])
    names = re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", m["obj"][: cut.start()] if cut else m["obj"])
    return [RawFact(me, relation, n, 0.75) for raw in names if (n := clean_name(raw)) and n[0].isupper()]


def named(m: re.Match[str], me: str) -> list[RawFact]:
    name = " ".join(m["obj"].split())
    if name.lower() in NOT_NAMES or name.lower() in ("not", "called"):
        return []
    if name.lower() in IDENTITIES:
        return [RawFact(me, "is", name, 0.7)]
    return [RawFact(me, "is named", name[0].upper() + name[1:], 0.8 if m["how"] else 0.7)]


def role(predicate: str = "is", confidence: float = 0.7) -> Handler:
    """ "a nurse at St Mary's" → ``is a nurse`` and ``works at St Mary's``."""

    def handle(m: re.Match[str], me: str) -> list[RawFact]:
        subject = _subject(m, me)
        if subject is None:
            return []
        out = [RawFact(subject, predicate, role, confidence) for role in objects(m["obj"], "role", me)]
        place = re.match(r"(?:an?\s+)?[\w\s-]+?\s+(?:at|for)\s+(?=the\s|[A-Z])(.+)", first_clause(m["obj"]))
        if out and place:
            out += [
                RawFact(subject, "works at", org, confidence - 0.1) for org in objects(place[1], "org", me)
            ]
        return out

    return handle


def works_at(confidence: float) -> Handler:
    """ "at Google as an engineer" → ``works at Google`` and ``works as an engineer``."""

    def handle(m: re.Match[str], me: str) -> list[RawFact]:
        subject = _subject(m, me)
        if subject is None:
            return []
        out = [RawFact(subject, "works at", org, confidence) for org in objects(m["obj"], "org", me)]
        role = re.search(r"\s+as\s+(an?\s+[\w\s-]+)", first_clause(m["obj"]))
        if out and role:
            out += [RawFact(subject, "works as", r, confidence - 0.1) for r in objects(role[1], "role", me)]
        return out

    return handle


def attribute(m: re.Match[str], me: str) -> list[RawFact]:
    what = " ".join(m["what"].lower().split()).replace("blood type", "blood group")
    what = what.replace("favourite", "favorite").replace("email address", "email")
    return [RawFact(me, f"has {what}", obj, 0.75) for obj in objects(m["obj"], "pref", me)]


def age(m: re.Match[str], me: str) -> list[RawFact]:
    subject = _subject(m, me)
    return [RawFact(subject, "has age", m["obj"], 0.75)] if subject else []


def no_longer(m: re.Match[str], me: str) -> list[RawFact]:
    """ "I don't work at Initech anymore" → ``no longer works at Initech`` (replaces Initech)."""
    verb = " ".join(m["verb"].lower().split())
    kind = {"work": "org", "live": "place"}.get(verb.split()[0], "thing")
    base, _, prep = verb.partition(" ")
    predicate = "no longer " + " ".join(p for p in (_third_person(base), prep) if p)
    return [RawFact(me, predicate, obj, 0.75, True, obj) for obj in objects(m["obj"], kind, me)]


def stopped(m: re.Match[str], me: str) -> list[RawFact]:
    verb = {"using": "uses", "eating": "eats", "drinking": "drinks", "playing": "plays", "smoking": "smokes"}
    predicate = "no longer " + verb.get(m["ger"].lower(), "does")
    return [RawFact(me, predicate, obj, 0.7, True, obj) for obj in objects(m["obj"], "thing", me)]


def not_identity(m: re.Match[str], me: str) -> list[RawFact]:
    obj = m["obj"].lower()
    return [RawFact(me, "is no longer", obj, 0.75, True, obj)]


def switched(m: re.Match[str], me: str) -> list[RawFact]:
    """ "I switched from vim to VS Code" → ``uses VS Code`` (replaces vim) and ``no longer uses vim``."""
    old = _first(objects(m["old"], "thing", me)) if m["old"] else None
    out = [RawFact(me, "uses", obj, 0.75, True, old) for obj in objects(m["obj"], "tool", me)]
    if out and old:
        out.append(RawFact(me, "no longer uses", old, 0.7, True, old))
    return out


def schedule(m: re.Match[str], me: str) -> list[RawFact]:
    """ "My flight to Oslo is on May 14" → ``has flight to Oslo on May 14``."""
    what = " ".join(m["what"].split())
    when = _first(objects(m["when"], "event", me))
    if not when:
        return []
    prep = m["prep"].lower()
    if prep == "to":  # "moved the standup to 10:15"
        prep = "at" if when[0].isdigit() else "on"
    if re.match(r"(?:every|next|this|tomorrow|tonight|today)\b", when, re.I):
        prep = ""
    prep = prep + " " if prep else ""
    revises = "moved" in m.re.groupindex and bool(m["moved"])
    return [RawFact(me, "has", f"{what} {prep}{when}", 0.7, revises, what if revises else None)]


def appointment(m: re.Match[str], me: str) -> list[RawFact]:
    obj = _first(objects(m["obj"], "event", me))
    if not obj or not re.search(WHEN, obj, re.I):
        return []
    return [RawFact(me, "has", obj, 0.7)]


def routine(m: re.Match[str], me: str) -> list[RawFact]:
    obj = " ".join(m["obj"].split())
    return [RawFact(me, _third_person(m["verb"]), obj, 0.7)]
