"""Fact patterns: subject–predicate–object statements matched in plain text.

Each rule is a case-insensitive pattern whose names (``(?-i:...)``) must be
capitalised, with a handler that turns a match into facts. First-person rules ("I
live in Lisbon") take the speaker as subject; third-person rules ("Maria works at
Google") take the name they matched. The object is captured in a lookahead, so one
sentence can hold several matches of a rule ("I like jazz and I like tea"); the
object is then cut at the clause boundary. Questions give no facts, hedged
statements ("I think…") less confidence, and a fact never links a name to itself
("michael" saying "I'm Michael" gives no "michael is named Michael").
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ucma_core.providers.protocols import ExtractedFact
from ucma_core.providers.text import same_name, sentences

__all__ = ["EXCLUSIVE_STATES", "ONE_RELATIONS", "extract_facts"]

_I = r"(?<![\w'])I"
_IM = _I + r"(?:'m|\s+am)"
_ADV = (
    r"(?:(?:really|also|absolutely|totally|genuinely|actually|currently|now|still|just|recently|"
    r"definitely|truly|usually|generally|strongly|kind\s+of|sort\s+of)\s+)*"
)
_NAME = r"(?<![\w'-])(?-i:(?:(?:Dr|Mr|Mrs|Ms|Prof)\.?\s+)?[A-Z][\w-]*(?:\s+[A-Z][\w-]*){0,2})"
_OBJ = r"(?=(?P<obj>.+))"
#: Relations a person has one of at a time ("has wife", "has boss"): single-valued facts.
ONE_RELATIONS = (
    "wife husband partner spouse girlfriend boyfriend fiance fiancee boss manager mother father mom "
    "mum dad doctor dentist therapist landlord"
).split()
_RELATIONS = [
    *ONE_RELATIONS,
    *"sister brother son daughter friend colleague coworker roommate cousin aunt uncle niece nephew "
    "grandmother grandfather grandma grandpa dog cat kid child neighbor neighbour teacher coach".split(),
]
_REL = r"(?P<rel>best\s+friend|" + "|".join(sorted(_RELATIONS, key=len, reverse=True)) + r")\b"
#: Bare "is" objects that exclude each other, by group: "single" and "married" are both "marital".
EXCLUSIVE_STATES = {
    **dict.fromkeys(["single", "married", "engaged", "divorced", "widowed"], "marital"),
    **dict.fromkeys(["vegan", "vegetarian", "pescatarian"], "diet"),
}
_IDENTITIES = frozenset(
    [
        *EXCLUSIVE_STATES,
        *"diabetic celiac coeliac pregnant retired left-handed right-handed colorblind jewish muslim "
        "christian catholic buddhist hindu atheist".split(),
        *"american british english scottish welsh irish canadian mexican brazilian argentinian chilean "
        "colombian peruvian french german dutch belgian swiss austrian italian spanish portuguese greek "
        "swedish norwegian danish finnish polish czech russian ukrainian turkish israeli iranian egyptian "
        "nigerian kenyan indian pakistani chinese japanese korean vietnamese thai filipino indonesian "
        "australian european african asian".split(),
    ]
)
_IDENTITY = r"(?P<obj>" + "|".join(sorted(_IDENTITIES, key=len, reverse=True)) + r")\b"
_NOT_NAMES = frozenset(
    """i you he she it we they me him her us them my your his its our their the a an this that these
    those there here who what which when where why how if but and or so then also now today yesterday
    tomorrow tonight recently apparently actually well oh anyway btw hi hello hey yes no ok okay thanks
    everyone everybody someone somebody nobody people everything nothing something each every some most
    many all both last next sadly luckily unfortunately honestly maybe perhaps since after before
    because while mom dad mum monday tuesday wednesday thursday friday saturday sunday january february
    march april may june july august september october november december""".split()
)
_BAD_OBJECT_START = frozenset(
    """it that this them him her you what how doing being so too very much more not no myself
    yourself everything something anything nothing those these there here one me us when why who
    which expected intended planned usual""".split()
)
_CLAUSE_START = frozenset("i we you he she they it my our his her their this that there then also".split())
_VERBISH = frozenset("is are was were am be been have has had do does did like likes love loves live".split())
_STRONG_STOP = re.compile(
    r"\s*(?:[;:!?()\"]|(?<!\bSt)(?<!\bDr)(?<!\bMr)(?<!\bMs)(?<!\bMrs)\.(?:\s|$)|\s[-–—]\s|\s+(?:but|because|since|so|although|though|while|which|who|"
    r"whom|whose|where|whereas|when|until|unless|if|except|as\s+well\s+as|plus)\b)",
    re.I,
)
_CLAUSE_STOP = re.compile(r"\s*,|\s+(?:and|or|&)\s", re.I)
_LIST_SPLIT = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|&)\s+", re.I)
_TRAILING = re.compile(
    r"(?:\s+(?:a\s+lot|very\s+much|so\s+much|too|as\s+well|also|anymore|now|these\s+days|lately|"
    r"right\s+now|at\s+the\s+moment|at\s+all|actually|really|though|either|already|nowadays|currently|"
    r"today|then|originally|tbh|lol|haha))+$",
    re.I,
)
_TAILS = {
    "place": re.compile(
        r"\s+(?:for|since|with|near|as|on|from|during|last|next|this|these|ago|after|before|"
        r"in\s+(?:a|an|the)\b)",
        re.I,
    ),
    "org": re.compile(
        r"\s+(?:as|in|on|since|during|from|with|near|remotely|part[-\s]time|full[-\s]time|these|this|"
        r"last|next|for\s+(?:\d|a|an|the\s+(?:past|last)|about|over|almost|nearly|several|many|two|"
        r"three|four|five|ten)\b)",
        re.I,
    ),
    "role": re.compile(r"\s+(?:at|for|in|from|with|who|that|on|by|since|here|there)\b", re.I),
    "thing": re.compile(
        r"\s+(?:when|whenever|with|every|on\s+weekends?|in\s+the\s+(?:morning|evening|afternoon)|"
        r"at\s+night)\b",
        re.I,
    ),
    "pref": re.compile(r"\s+(?:over|rather\s+than|instead\s+of|more\s+than|than|to|when|with)\b", re.I),
}
_MAX_WORDS = {"role": 5, "name": 4}
_HEDGE = re.compile(r"\b(?:i\s+think|maybe|probably|i\s+guess|perhaps|might|not\s+sure)\b", re.I)

_Raw = tuple[str, str, str, float]
_Handler = Callable[["re.Match[str]", str], list[_Raw]]


def _clean_name(raw: str | None) -> str | None:
    """A person's or pet's name without leading sentence words ("Yesterday Maria" → "Maria")."""
    words = (raw or "").strip(" .,").split()
    while words and words[0].lower().rstrip(".") in _NOT_NAMES:
        words.pop(0)
    return " ".join(words) or None


def _split_list(raw: str) -> list[str]:
    """ "jazz, hiking and good coffee" → three items; stops where a new clause starts."""
    cut = _STRONG_STOP.search(raw)
    items = _LIST_SPLIT.split(raw[: cut.start()] if cut else raw)
    out = items[:1]
    for item in items[1:]:
        words = item.lower().split()
        if not words or words[0] in _CLAUSE_START or len(words) > 4 or _VERBISH & set(words):
            break
        out.append(item)
    return out


def _objects(raw: str, kind: str, me: str) -> list[str]:
    parts = _split_list(raw) if kind == "things" else [_first_clause(raw)]
    kind = "thing" if kind == "things" else kind
    out = []
    for part in parts:
        obj = part.strip()
        if kind in ("thing", "pref"):
            obj = re.sub(r"^to\s+", "", obj, flags=re.I)
        tail = _TAILS.get(kind)
        cut = tail.search(obj) if tail else None
        obj = _TRAILING.sub("", obj[: cut.start()] if cut else obj).strip(" '\".,")
        if kind in ("thing", "pref"):
            obj = re.sub(r"^(?:the|a|an)\s+(?=[a-z])", "", obj)
        elif kind in ("place", "org"):
            obj = re.sub(r"^the\s+(?=[a-z])", "", obj)
        obj = re.sub(r"^my\s+", f"{me}'s ", obj, flags=re.I)
        words = obj.split()
        if (
            not words
            or len(words) > _MAX_WORDS.get(kind, 8)
            or len(obj) > 80
            or words[0].lower() in _BAD_OBJECT_START
            or (kind == "org" and obj.lower() in ("home", "night", "the moment"))
        ):
            continue
        out.append(obj)
    return out


def _first_clause(raw: str) -> str:
    for stop in (_STRONG_STOP, _CLAUSE_STOP):
        cut = stop.search(raw)
        raw = raw[: cut.start()] if cut else raw
    return raw


def _fact(predicate: str, confidence: float, kind: str) -> _Handler:
    """One fact per object; the subject is the ``name`` group when the rule has one, else the speaker."""

    def handle(m: re.Match[str], me: str) -> list[_Raw]:
        subject = _clean_name(m["name"]) if "name" in m.re.groupindex else me
        if subject is None:
            return []
        return [(subject, predicate, obj, confidence) for obj in _objects(m["obj"], kind, me)]

    return handle


def _relation(confidence: float) -> _Handler:
    """``(owner, "has <relation>", name)``; the owner is the ``owner`` group or the speaker."""

    def handle(m: re.Match[str], me: str) -> list[_Raw]:
        name = _clean_name(m["obj"])
        owner = _clean_name(m["owner"]) if "owner" in m.re.groupindex else me
        if not name or not owner:
            return []
        return [(owner, "has " + " ".join(m["rel"].lower().split()), name, confidence)]

    return handle


def _named(m: re.Match[str], me: str) -> list[_Raw]:
    name = " ".join(m["obj"].split())
    if name.lower() in _NOT_NAMES or name.lower() in ("not", "called"):
        return []
    if name.lower() in _IDENTITIES:
        return [(me, "is", name, 0.7)]
    return [(me, "is named", name[0].upper() + name[1:], 0.8 if m["how"] else 0.7)]


def _role(m: re.Match[str], me: str) -> list[_Raw]:
    out = [(me, "is", role, 0.7) for role in _objects(m["obj"], "role", me)]
    place = re.match(r"an?\s+[\w\s-]+?\s+(?:at|for)\s+(?=the\s|[A-Z])(.+)", _first_clause(m["obj"]))
    if out and place:
        out += [(me, "works at", org, 0.6) for org in _objects(place[1], "org", me)]
    return out


def _attribute(m: re.Match[str], me: str) -> list[_Raw]:
    what = " ".join(m["what"].lower().split()).replace("blood type", "blood group")
    what = what.replace("favourite", "favorite").replace("email address", "email")
    return [(me, f"has {what}", obj, 0.75) for obj in _objects(m["obj"], "pref", me)]


def _rules() -> list[tuple[re.Pattern[str], _Handler]]:
    first_person: list[tuple[str, _Handler]] = [
        (
            r"\b(?P<how>my\s+name\s+is|my\s+name's|call\s+me|(?:people|everyone|friends)\s+call\s+me)\s+"
            r"(?P<obj>[a-z][\w-]*(?:\s+(?-i:[A-Z])[\w-]*){0,2})",
            _named,
        ),
        (
            r"^(?:(?:hi|hello|hey)(?:\s+there|\s+all|\s+everyone)?[\s,!.]*)?"
            + _IM
            + r"\s+(?P<how>called\s+)?(?P<obj>"
            + _NAME
            + r")(?=\s*(?:[,.!;]|$)|\s+(?:and|from|here)\b)",
            _named,
        ),
        (_IM + r"\s+" + _ADV + _IDENTITY, _fact("is", 0.7, "name")),
        (
            _IM + r"\s+" + _ADV + r"(?:very\s+|severely\s+|mildly\s+|highly\s+)?allergic\s+to\s+" + _OBJ,
            _fact("is allergic to", 0.8, "things"),
        ),
        (
            _I + r"\s+have\s+an?\s+(?P<obj>[\w-]+(?:\s+[\w-]+)?)\s+allergy\b",
            _fact("is allergic to", 0.75, "thing"),
        ),
        (_IM + r"\s+(?:happily\s+)?married\s+to\s+" + _OBJ, _fact("is married to", 0.8, "org")),
        (_IM + r"\s+(?:originally\s+)?from\s+" + _OBJ, _fact("is from", 0.75, "place")),
        (
            _IM + r"\s+" + _ADV + r"(?:a\s+)?(?:(?:big|huge|massive|great)\s+)?fan\s+of\s+" + _OBJ,
            _fact("likes", 0.7, "things"),
        ),
        (
            _IM + r"\s+" + _ADV + r"(?=(?P<obj>an?\s+(?!(?:bit|little|lot|few|couple|tad|total|"
            r"(?:big\s+|huge\s+|massive\s+|great\s+)?fan)\b)[a-z].*))",
            _role,
        ),
        (
            _I
            + r"(?:\s+"
            + _ADV
            + r"live|'ve\s+lived|\s+have\s+lived|(?:'m|\s+am)\s+"
            + _ADV
            + r"(?:living|based))\s+in\s+"
            + _OBJ,
            _fact("lives in", 0.8, "place"),
        ),
        (_I + r"\s+" + _ADV + r"(?:moved|relocated)\s+to\s+" + _OBJ, _fact("lives in", 0.7, "place")),
        (
            _I + r"(?:\s+" + _ADV + r"work|(?:'m|\s+am)\s+" + _ADV + r"working|'ve\s+been\s+working|"
            r"\s+have\s+been\s+working|\s+" + _ADV + r"got\s+a\s+job)\s+(?:at|for)\s+" + _OBJ,
            _fact("works at", 0.8, "org"),
        ),
        (
            _I + r"(?:\s+" + _ADV + r"work|(?:'m|\s+am)\s+" + _ADV + r"working)\s+as\s+" + _OBJ,
            _fact("works as", 0.8, "role"),
        ),
        (_I + r"\s+" + _ADV + r"(?:like|love|enjoy|adore)\s+" + _OBJ, _fact("likes", 0.75, "things")),
        (_I + r"\s+" + _ADV + r"prefer\s+" + _OBJ, _fact("prefers", 0.75, "pref")),
        (
            _I + r"(?:\s+" + _ADV + r"(?:hate|dislike|detest|despise|loathe)|\s+(?:can't|cannot|can\s+not)"
            r"\s+stand|\s+(?:don't|do\s+not)\s+(?:really\s+)?(?:like|enjoy|care\s+for))\s+" + _OBJ,
            _fact("dislikes", 0.75, "things"),
        ),
        (
            r"\bmy\s+(?:all-time\s+)?(?P<what>favou?rite\s+[a-z]+(?:\s+[a-z]+)?)\s+(?:is|are|'s)\s+" + _OBJ,
            _attribute,
        ),
        (
            r"\bmy\s+(?P<what>birthday|blood\s+(?:type|group)|email(?:\s+address)?|phone\s+number)"
            r"(?:\s+is|'s)\s+(?:on\s+)?" + _OBJ,
            _attribute,
        ),
        (
            r"\bmy\s+"
            + _REL
            + r"(?:'s\s+name\s+is|\s+is\s+called|\s+is\s+named|\s+is|'s)\s+(?P<obj>"
            + _NAME
            + ")",
            _relation(0.8),
        ),
        (r"\bmy\s+" + _REL + r",?\s+(?P<obj>" + _NAME + ")", _relation(0.7)),
        (_I + r"\s+have\s+an?\s+" + _REL + r"\s+(?:named|called)\s+(?P<obj>" + _NAME + ")", _relation(0.75)),
        (r"(?P<obj>" + _NAME + r")\s+is\s+my\s+" + _REL, _relation(0.75)),
    ]
    who = r"(?P<name>" + _NAME + r")\s+" + _ADV
    third_person: list[tuple[str, _Handler]] = [
        (
            who + r"(?:lives\s+in|has\s+lived\s+in|is\s+living\s+in|is\s+based\s+in|moved\s+to|"
            r"relocated\s+to)\s+" + _OBJ,
            _fact("lives in", 0.7, "place"),
        ),
        (
            who + r"(?:works|has\s+been\s+working|is\s+working)\s+(?:at|for)\s+" + _OBJ,
            _fact("works at", 0.7, "org"),
        ),
        (who + r"works\s+as\s+" + _OBJ, _fact("works as", 0.7, "role")),
        (who + r"(?:likes|loves|enjoys|adores)\s+" + _OBJ, _fact("likes", 0.65, "things")),
        (
            who + r"(?:hates|dislikes|detests|can't\s+stand|(?:doesn't|does\s+not)\s+like)\s+" + _OBJ,
            _fact("dislikes", 0.65, "things"),
        ),
        (who + r"prefers\s+" + _OBJ, _fact("prefers", 0.65, "pref")),
        (
            who + r"is\s+(?:very\s+|severely\s+)?allergic\s+to\s+" + _OBJ,
            _fact("is allergic to", 0.7, "things"),
        ),
        (r"(?P<obj>" + _NAME + r")\s+is\s+(?P<owner>" + _NAME + r")'s\s+" + _REL, _relation(0.7)),
    ]
    return [(re.compile(p, re.I), h) for p, h in first_person + third_person]


_RULES = _rules()


def extract_facts(text: str, me: str) -> list[ExtractedFact]:
    """The facts ``text`` states, first person resolved to ``me``; deduplicated, in text order.

    Args:
        text: What was said.
        me: Who said it: the subject of first-person statements.

    Example:
        >>> facts = extract_facts("My sister Maria lives in Lisbon.", "Ana")
        >>> [(f.subject, f.predicate, f.object) for f in facts]
        [('Ana', 'has sister', 'Maria'), ('Maria', 'lives in', 'Lisbon')]
    """
    hits: list[tuple[int, int, int, _Raw]] = []
    for s_index, sentence in enumerate(sentences(text)):
        if sentence.endswith("?"):
            continue  # questions state nothing
        hedge = 0.1 if _HEDGE.search(sentence) else 0.0
        for r_index, (pattern, handle) in enumerate(_RULES):
            for m in pattern.finditer(sentence):
                for subject, predicate, obj, confidence in handle(m, me):
                    if same_name(subject, obj):  # "michael is named Michael" says nothing
                        continue
                    hits.append((s_index, m.start(), r_index, (subject, predicate, obj, confidence - hedge)))
    found: dict[tuple[str, str, str], ExtractedFact] = {}
    for *_, (subject, predicate, obj, confidence) in sorted(hits, key=lambda h: h[:3]):
        key = (subject.lower(), predicate, obj.lower())
        if key not in found or found[key].confidence < confidence:
            found[key] = ExtractedFact(subject, predicate, obj, round(confidence, 2))
    return list(found.values())
