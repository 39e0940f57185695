"""Fact patterns: subject–predicate–object statements matched in plain text.

Each rule is a case-insensitive pattern whose names (``(?-i:...)``) must be
capitalised, with a handler that turns a match into facts. First-person rules ("I
live in Lisbon", "we moved to Lisbon") take the speaker as subject; third-person rules
("Maria works at Google", "my mom lives in Busan") take the name they matched, or
"<speaker>'s mom" for a relative with no name, so a fact about someone the speaker
mentions is never given to the speaker. The object is captured in a lookahead, so one
sentence can hold several matches of a rule ("I like jazz and I like tea"); it is then
cut where the statement ends (:func:`~ucma_core.providers.fact_objects.objects`).

What is covered: identity (names, age, nationality, diet, roles), places (lives in, is
from, moves), work (works at / as), preferences kept whole ("prefers short answers with
code"), likes and dislikes, allergies, relations (named and unnamed), decisions and
plans ("chose", "decided to", "plans to"), tools ("uses"), projects ("is building"),
languages, schedules ("has dentist appointment on Friday at 3pm", "goes swimming every
Tuesday"), and revisions: a statement that corrects or updates an earlier one
("actually…", "instead", "scratch that", "not … anymore", "switched from vim to VS
Code") is marked ``revises``, with the old value in ``replaces`` when it is named.

Questions give no facts, hedged statements ("I think…") less confidence, a fact never
links a name to itself ("michael" saying "I'm Michael" gives no "michael is named
Michael"), and of two facts where one only clips the other ("prefers short answers",
"prefers short answers with code") the fuller one is kept.
"""

from __future__ import annotations

import re

from ucma_core.providers.fact_handlers import (
    Handler,
    RawFact,
    age,
    appointment,
    attribute,
    fact,
    named,
    no_longer,
    not_identity,
    plural_relation,
    relation,
    role,
    routine,
    schedule,
    stopped,
    switched,
    works_at,
)
from ucma_core.providers.fact_objects import (
    ADV,
    EXCLUSIVE_STATES,
    IDENTITIES,
    IM,
    NAME,
    OBJ,
    ONE_RELATIONS,
    RELATIONS,
    WE,
    I,
    first_clause,
)
from ucma_core.providers.protocols import ExtractedFact
from ucma_core.providers.text import TOKEN, same_name, sentences

__all__ = ["EXCLUSIVE_STATES", "ONE_RELATIONS", "extract_facts", "without_clipped"]


_REL_WORDS = "best\\s+friend|" + "|".join(sorted(RELATIONS, key=len, reverse=True))
_REL = r"(?P<rel>" + _REL_WORDS + r")\b"
_MY_REL = r"\bmy\s+(?P<myrel>" + _REL_WORDS + r")\b"
_REL_ADJ = r"(?:(?P<new>new|current)\s+|(?:old|former|younger|older|little|big|baby|late)\s+)?"
_IDENTITY = r"(?P<obj>" + "|".join(sorted(IDENTITIES, key=len, reverse=True)) + r")\b(?!\s+to\b)"
_EVENTS = (
    r"(?:appointment|meeting|interview|call|exam|test|flight|train|class|lesson|session|dinner|lunch|"
    r"breakfast|party|wedding|trip|deadline|presentation|demo|stand-?up|retro|review|surgery|check-?up|"
    r"training|practice|game|match|concert|shift|yoga|pilates|recital|conference|workshop|webinar)s?"
)
_PERIOD = (
    r"every\s+(?:other\s+)?(?:day|morning|evening|night|week|weekend|month|monday|tuesday|wednesday|"
    r"thursday|friday|saturday|sunday)s?(?:\s+(?:morning|evening|afternoon|night))?"
)
_HEDGE = re.compile(r"\b(?:i\s+think|maybe|probably|i\s+guess|perhaps|might|not\s+sure)\b", re.I)
_REVISION = re.compile(
    r"\b(?:actually|instead|scratch\s+that|changed\s+my\s+mind|in\s+the\s+end|after\s+all|"
    r"on\s+second\s+thoughts?|correction|any\s?more|no\s+longer|from\s+now\s+on|switched|"
    r"now\s+(?:use|work|live|prefer|like))\b",
    re.I,
)
_INSTEAD_OF = re.compile(r"\binstead\s+of\s+(?:the\s+|a\s+|an\s+|my\s+)?(?P<old>[^,.;!?]+)", re.I)
#: Subject elision: "I'm vegetarian and allergic to cats" reads as "… and I'm allergic to cats".
_ELIDED = re.compile(
    r"(?:\s+and|,\s*(?:and\s+)?)\s+(?=(?:(?:now|currently)\s+)?(?:(?:very\s+|severely\s+)?allergic\s+to|"
    r"based\s+in|living\s+in|married\s+to)\b)",
    re.I,
)


# ---------------------------------------------------------------------------------------- rules
def _first_person() -> list[tuple[str, Handler]]:
    return [
        (
            r"\b(?P<how>my\s+name\s+is|my\s+name's|call\s+me|(?:people|everyone|everybody|friends)\s+calls?"
            r"\s+me)\s+(?P<obj>[a-z][\w-]*(?:\s+(?-i:[A-Z])[\w-]*){0,2})",
            named,
        ),
        (
            r"^(?:(?:hi|hello|hey)(?:\s+there|\s+all|\s+everyone)?[\s,!.]*)?"
            + IM
            + r"\s+(?P<how>called\s+)?(?P<obj>"
            + NAME
            + r")(?=\s*(?:[,.!;]|$)|\s+(?:and|from|here)\b)",
            named,
        ),
        (IM + r"\s+" + ADV + _IDENTITY, fact("is", 0.7, "name")),
        (IM + r"\s+not\s+" + _IDENTITY + r"\s+any\s?more\b", not_identity),
        (IM + r"\s+no\s+longer\s+" + _IDENTITY, not_identity),
        (
            IM + r"\s+(?P<obj>\d{1,3})(?=\s*(?:years?\s+old\b|y/?o\b|[,.!;]|$|\s+(?:and|but|now|today)\b))",
            age,
        ),
        (I + r"\s+(?:just\s+|recently\s+)?turned\s+(?P<obj>\d{1,3})\b", age),
        (
            IM + r"\s+" + ADV + r"(?:very\s+|severely\s+|mildly\s+|highly\s+)?allergic\s+to\s+" + OBJ,
            fact("is allergic to", 0.8, "things"),
        ),
        (
            I + r"\s+have\s+an?\s+(?P<obj>[\w-]+(?:\s+[\w-]+)?)\s+allergy\b",
            fact("is allergic to", 0.75, "thing"),
        ),
        (IM + r"\s+(?:happily\s+)?married\s+to\s+" + OBJ, fact("is married to", 0.8, "org")),
        (IM + r"\s+(?:originally\s+)?from\s+" + OBJ, fact("is from", 0.75, "place")),
        (IM + r"\s+" + NAME + r",?\s+(?:originally\s+)?from\s+" + OBJ, fact("is from", 0.75, "place")),
        (
            I + r"\s+(?:grew\s+up|was\s+(?:born\s+and\s+)?raised|was\s+born)\s+in\s+" + OBJ,
            fact("is from", 0.75, "place"),
        ),
        (
            IM + r"\s+" + ADV + r"(?:a\s+)?(?:(?:big|huge|massive|great)\s+)?fan\s+of\s+" + OBJ,
            fact("likes", 0.7, "things"),
        ),
        (
            IM + r"\s+" + ADV + r"(?=(?P<obj>an?\s+(?!(?:bit|little|lot|few|couple|tad|total|"
            r"(?:big\s+|huge\s+|massive\s+|great\s+)?fan)\b)[a-z].*))",
            role(),
        ),
        (I + r"(?:'ve|\s+have)\s+been\s+" + ADV + r"(?=(?P<obj>an?\s+[a-z].*))", role()),
        (
            I
            + r"(?:\s+"
            + ADV
            + r"live|'ve\s+lived|\s+have\s+lived|(?:'m|\s+am)\s+"
            + ADV
            + r"(?:living|based))\s+in\s+"
            + OBJ,
            fact("lives in", 0.8, "place"),
        ),
        (
            r"(?<![\w'])[Ww]e(?:\s+" + ADV + r"live|(?:'re|\s+are)\s+" + ADV + r"(?:living|based))\s+in\s+"
            r"(?=(?P<obj>(?-i:[A-Z]).+))",
            fact("lives in", 0.7, "place"),
        ),
        (
            WE
            + r"(?:'ve|\s+have)?\s+"
            + ADV
            + r"(?:moved|relocated)\s+(?:from\s+(?P<old>(?-i:[A-Z])[\w\s]*?)\s+)?"
            r"to\s+(?=(?P<obj>(?-i:[A-Z]).+))",
            fact("lives in", 0.7, "place", revises=True),
        ),
        (
            I + r"(?:\s+" + ADV + r"work|(?:'m|\s+am)\s+" + ADV + r"working|'ve\s+been\s+working|"
            r"\s+have\s+been\s+working|\s+" + ADV + r"got\s+a\s+job)\s+(?:at|for)\s+" + OBJ,
            works_at(0.8),
        ),
        (I + r"(?:'ve|\s+have)?\s+" + ADV + r"joined\s+(?=(?P<obj>(?-i:[A-Z]).+))", works_at(0.75)),
        (
            I + r"(?:\s+" + ADV + r"work|(?:'m|\s+am)\s+" + ADV + r"working)\s+as\s+" + OBJ,
            role("works as", 0.8),
        ),
        (
            I + r"(?:\s+(?:don't|do\s+not)\s+(?:really\s+)?(?P<verb>work\s+(?:at|for)|live\s+in|like|use|eat|"
            r"drink|play|drive|own|speak)\s+(?=(?P<obj>.+?)\s+any\s?more\b))",
            no_longer,
        ),
        (
            I + r"\s+no\s+longer\s+(?P<verb>work\s+(?:at|for)|live\s+in|like|use|eat|drink|play|drive|own|"
            r"speak)\s+" + OBJ,
            no_longer,
        ),
        (
            I + r"\s+(?:stopped|quit)\s+(?P<ger>using|eating|drinking|playing|smoking)\s+" + OBJ,
            stopped,
        ),
        (
            I + r"(?:'ve|\s+have)?\s+(?:switched|migrated|changed)(?:\s+(?:our|my|the)\s+[\w-]+)?"
            r"\s+(?:from\s+(?P<old>.+?)\s+)?to\s+" + OBJ,
            switched,
        ),
        (
            WE + r"(?:\s+" + ADV + r"use|(?:'m|\s+am|'re|\s+are)\s+" + ADV + r"using)\s+" + OBJ,
            fact("uses", 0.7, "tools"),
        ),
        (I + r"\s+" + ADV + r"(?:like|love|enjoy|adore)\s+" + OBJ, fact("likes", 0.75, "things")),
        (I + r"\s+" + ADV + r"prefer\s+" + OBJ, fact("prefers", 0.75, "pref")),
        (
            I + r"'d\s+(?:much\s+)?rather\s+(?:get\s+|have\s+|receive\s+|see\s+)?" + OBJ,
            fact("prefers", 0.7, "pref"),
        ),
        (
            I + r"(?:\s+" + ADV + r"(?:hate|dislike|detest|despise|loathe)|\s+(?:can't|cannot|can\s+not)"
            r"\s+stand|\s+" + ADV + r"(?:don't|do\s+not)\s+(?:really\s+)?(?:like|enjoy|care\s+for))\s+"
            r"(?!.*\bany\s?more\b)" + OBJ,
            fact("dislikes", 0.75, "things"),
        ),
        (I + r"\s+(?:can't|cannot|can\s+not)\s+eat\s+" + OBJ, fact("cannot eat", 0.75, "things")),
        (I + r"\s+" + ADV + r"speak\s+" + OBJ, fact("speaks", 0.75, "langs")),
        (I + r"\s+" + ADV + r"teach\s+" + OBJ, fact("teaches", 0.75, "things")),
        (I + r"\s+" + ADV + r"drive\s+" + OBJ, fact("drives", 0.75, "thing")),
        (
            IM
            + r"\s+"
            + ADV
            + r"(?P<verb>building|working\s+on|learning|writing|studying|training\s+for)\s+"
            + OBJ,
            lambda m, me: fact("is " + " ".join(m["verb"].lower().split()), 0.7, "phrase")(m, me),
        ),
        (
            WE + r"(?:'ve|\s+have)?\s+" + ADV + r"(?:decided\s+on|picked|chose|chosen|opted\s+for|"
            r"settled\s+on|went\s+with|gone\s+with)\s+" + OBJ,
            fact("chose", 0.75, "choice"),
        ),
        (
            r"(?<![\w'])(?:I'm|I\s+am|we're|we\s+are)\s+" + ADV + r"going\s+with\s+" + OBJ,
            fact("chose", 0.7, "choice"),
        ),
        (r"\blet'?s\s+(?:go\s+with|use|pick|choose)\s+" + OBJ, fact("chose", 0.65, "choice")),
        (
            WE + r"(?:'ve|\s+have)?\s+" + ADV + r"decided\s+to\s+" + OBJ,
            fact("decided to", 0.75, "phrase"),
        ),
        (
            IM
            + r"\s+"
            + ADV
            + r"(?:going|planning)\s+to\s+(?!(?:be|have|try|need|ask|say|check|look|see|the|a|"
            r"an|my|bed|sleep|work|school)\b)(?=(?P<obj>(?-i:[a-z]).+))",
            fact("plans to", 0.7, "phrase"),
        ),
        (I + r"\s+" + ADV + r"(?:plan|intend)\s+to\s+" + OBJ, fact("plans to", 0.7, "phrase")),
        (
            r"\b(?:my|our)\s+(?P<what>(?:[\w'-]+\s+){0,2}?" + _EVENTS + r"(?:\s+(?:to|with|in)\s+[\w'-]+)?)"
            r"\s+(?:is|'s)\s+(?:(?:now\s+)?(?:scheduled|set|planned|booked)\s+)?(?P<prep>on|at|for)\s+(?P<when>.+)",
            schedule,
        ),
        (
            WE + r"(?:'ve|\s+have)?\s+(?P<moved>moved|rescheduled|changed|shifted|pushed|postponed)\s+"
            r"(?:the|our|my)\s+(?P<what>(?:[\w'-]+\s+){0,2}?" + _EVENTS + r")\s+(?P<prep>to)\s+(?P<when>.+)",
            schedule,
        ),
        (
            I + r"(?:'ve|\s+have)\s+(?:got\s+)?an?\s+(?=(?P<obj>(?:[\w'-]+\s+){0,3}?" + _EVENTS + r"\b.*))",
            appointment,
        ),
        (
            I + r"\s+" + ADV + r"(?P<verb>go|play|run|swim|train|visit|call|cook|meet|walk|practi[cs]e|study|"
            r"volunteer|attend|do|take|have)\s+(?P<obj>(?:(?!every\b)[\w'-]+\s+){0,4}?" + _PERIOD + r")",
            routine,
        ),
        (
            r"\bmy\s+(?:all-time\s+)?(?P<what>favou?rite\s+[a-z]+(?:\s+[a-z]+)?)\s+(?:is|are|'s)\s+" + OBJ,
            attribute,
        ),
        (
            r"\bmy\s+(?P<what>birthday|blood\s+(?:type|group)|email(?:\s+address)?|phone\s+number)"
            r"(?:\s+is|'s)\s+(?:on\s+)?" + OBJ,
            attribute,
        ),
        (
            r"\bmy\s+"
            + _REL_ADJ
            + _REL
            + r"(?:'s\s+name\s+is|\s+is\s+called|\s+is\s+named|\s+is|'s)\s+(?P<obj>"
            + NAME
            + ")",
            relation(0.8),
        ),
        (r"\bmy\s+" + _REL_ADJ + _REL + r",?\s+(?P<obj>" + NAME + ")", relation(0.7)),
        (I + r"\s+have\s+an?\s+" + _REL + r"\s+(?:named|called)\s+(?P<obj>" + NAME + ")", relation(0.75)),
        (r"(?P<obj>" + NAME + r")\s+is\s+my\s+" + _REL, relation(0.75)),
        (
            r"\bmy\s+(?P<rels>kids|children|sons|daughters|sisters|brothers|cats|dogs)\s+are\s+(?:called|named)\s+"
            + OBJ,
            plural_relation,
        ),
    ]


def _third_person_rules() -> list[tuple[str, Handler]]:
    who = r"(?:(?P<name>" + NAME + r")|" + _MY_REL + r")\s+" + ADV
    return [
        (
            who + r"(?:lives\s+in|has\s+lived\s+in|is\s+living\s+in|is\s+based\s+in|moved\s+to|"
            r"relocated\s+to)\s+" + OBJ,
            fact("lives in", 0.7, "place"),
        ),
        (
            who + r"(?:works|has\s+been\s+working|is\s+working)\s+(?:at|for)\s+" + OBJ,
            works_at(0.7),
        ),
        (who + r"works\s+as\s+" + OBJ, role("works as", 0.7)),
        (who + r"(?:likes|loves|enjoys|adores)\s+" + OBJ, fact("likes", 0.65, "things")),
        (
            who + r"(?:hates|dislikes|detests|can't\s+stand|(?:doesn't|does\s+not)\s+like)\s+" + OBJ,
            fact("dislikes", 0.65, "things"),
        ),
        (who + r"prefers\s+" + OBJ, fact("prefers", 0.65, "pref")),
        (
            who + r"is\s+(?:very\s+|severely\s+)?allergic\s+to\s+" + OBJ,
            fact("is allergic to", 0.7, "things"),
        ),
        (who + r"drives\s+" + OBJ, fact("drives", 0.65, "thing")),
        (who + r"(?:just\s+|recently\s+)?turned\s+(?P<obj>\d{1,3})\b", age),
        (who + r"is\s+(?P<obj>\d{1,3})(?=\s*(?:years?\s+old\b|[,.!;]|$))", age),
        (
            r"\bmy\s+(?:" + _REL_WORDS + r")\b,?\s+(?P<name>" + NAME + r")\s+is\s+(?=(?P<obj>an?\s+[a-z].*))",
            role(),
        ),
        (r"(?P<obj>" + NAME + r")\s+is\s+(?P<owner>" + NAME + r")'s\s+" + _REL, relation(0.7)),
        (
            r"(?P<owner>"
            + NAME
            + r")\s+has\s+an?\s+"
            + _REL
            + r"\s+(?:named|called)\s+(?P<obj>"
            + NAME
            + ")",
            relation(0.7),
        ),
    ]


_RULES = [(re.compile(p, re.I), h) for p, h in _first_person() + _third_person_rules()]


def _words(text: str) -> set[str]:
    return {w.lower() for w in TOKEN.findall(text)}


def without_clipped(facts: list[ExtractedFact]) -> list[ExtractedFact]:
    """``facts`` without those another fact says in full: of "prefers short answers" and
    "prefers short answers with code" (same subject and predicate) only the second stays.

    Examples:
        >>> short = ExtractedFact("Ana", "prefers", "short answers", 0.8)
        >>> full = ExtractedFact("Ana", "prefers", "short answers with code", 0.8)
        >>> without_clipped([short, full]) == [full]
        True
    """
    words = [_words(f.object) for f in facts]
    return [
        f
        for i, f in enumerate(facts)
        if not any(
            j != i
            and o.subject.lower() == f.subject.lower()
            and o.predicate == f.predicate
            and words[i] < words[j]
            for j, o in enumerate(facts)
        )
    ]


def extract_facts(text: str, me: str) -> list[ExtractedFact]:
    """The facts ``text`` states, first person resolved to ``me``; deduplicated, in text order.

    Args:
        text: What was said.
        me: Who said it: the subject of first-person statements.

    Examples:
        >>> facts = extract_facts("My sister Maria lives in Lisbon.", "Ana")
        >>> [(f.subject, f.predicate, f.object) for f in facts]
        [('Ana', 'has sister', 'Maria'), ('Maria', 'lives in', 'Lisbon')]
        >>> [fact] = extract_facts("Actually I decided on the MacBook Air instead.", "Sam")
        >>> (fact.predicate, fact.object, fact.revises)
        ('chose', 'MacBook Air', True)
    """
    hits: list[tuple[int, int, int, RawFact]] = []
    for s_index, raw_sentence in enumerate(sentences(text)):
        if raw_sentence.endswith("?"):
            continue  # questions state nothing
        sentence = (
            _ELIDED.sub(" and I'm ", raw_sentence) if re.search(IM, raw_sentence, re.I) else raw_sentence
        )
        hedge = 0.1 if _HEDGE.search(sentence) else 0.0
        revision = bool(_REVISION.search(sentence))
        instead = _INSTEAD_OF.search(sentence)
        instead_of = first_clause(instead["old"]).strip() if instead else None
        for r_index, (pattern, handle) in enumerate(_RULES):
            for m in pattern.finditer(sentence):
                for raw in handle(m, me):
                    if same_name(raw.subject, raw.object):  # "michael is named Michael" says nothing
                        continue
                    replaces = raw.replaces or (
                        instead_of if instead_of and not same_name(instead_of, raw.object) else None
                    )
                    fact = raw._replace(
                        confidence=raw.confidence - hedge,
                        revises=raw.revises or revision or replaces is not None,
                        replaces=replaces,
                    )
                    hits.append((s_index, m.start(), r_index, fact))
    found: dict[tuple[str, str, str], ExtractedFact] = {}
    for *_, r in sorted(hits, key=lambda h: h[:3]):
        key = (r.subject.lower(), r.predicate, r.object.lower())
        if key not in found or found[key].confidence < r.confidence:
            found[key] = ExtractedFact(
                r.subject, r.predicate, r.object, round(r.confidence, 2), r.revises, r.replaces
            )
    return without_clipped(list(found.values()))
