"""The words fact rules share, and how the object of a matched statement is cut out.

A fact rule matches the start of a statement ("I live in", "my sister … is called");
what follows is the object, up to where the statement ends. :func:`objects` cuts it
there, by kind: a place stops before "for three years", an organisation before
"as an engineer", a preference is kept whole ("short answers with code", "trains over
planes") and stops only where a new clause starts ("when I travel", ", by the way").
"""

from __future__ import annotations

import re

__all__ = [
    "ADV",
    "EXCLUSIVE_STATES",
    "IDENTITIES",
    "IM",
    "NAME",
    "NOT_NAMES",
    "OBJ",
    "ONE_RELATIONS",
    "RELATIONS",
    "STRONG_STOP",
    "WE",
    "I",
    "clean_name",
    "first_clause",
    "objects",
]

I = r"(?<![\w'])I"  # noqa: E741  the pronoun
IM = I + r"(?:'m|\s+am)"
WE = r"(?<![\w'])(?:I|[Ww]e)"
ADV = (
    r"(?:(?:really|also|absolutely|totally|genuinely|actually|currently|now|still|just|recently|"
    r"definitely|truly|usually|generally|strongly|finally|kind\s+of|sort\s+of)\s+)*"
)
NAME = r"(?<![\w'-])(?-i:(?:(?:Dr|Mr|Mrs|Ms|Prof)\.?\s+)?[A-Z][\w-]*(?:\s+[A-Z][\w-]*){0,2})"
OBJ = r"(?=(?P<obj>.+))"
#: Relations a person has one of at a time ("has wife", "has boss"): single-valued facts.
ONE_RELATIONS = (
    "wife husband partner spouse girlfriend boyfriend fiance fiancee boss manager mother father mom "
    "mum dad doctor dentist therapist landlord"
).split()
RELATIONS = [
    *ONE_RELATIONS,
    *"sister brother son daughter friend colleague coworker roommate cousin aunt uncle niece nephew "
    "grandmother grandfather grandma grandpa dog cat kid child neighbor neighbour teacher coach".split(),
]
#: Bare "is" objects that exclude each other, by group: "single" and "married" are both "marital".
EXCLUSIVE_STATES = {
    **dict.fromkeys(["single", "married", "engaged", "divorced", "widowed"], "marital"),
    **dict.fromkeys(["vegan", "vegetarian", "pescatarian"], "diet"),
}
IDENTITIES = frozenset(
    [
        *EXCLUSIVE_STATES,
        *"diabetic celiac coeliac pregnant retired left-handed right-handed colorblind jewish muslim "
        "christian catholic buddhist hindu atheist gluten-free lactose-intolerant".split(),
        *"american british english scottish welsh irish canadian mexican brazilian argentinian chilean "
        "colombian peruvian french german dutch belgian swiss austrian italian spanish portuguese greek "
        "swedish norwegian danish finnish polish czech russian ukrainian turkish israeli iranian egyptian "
        "nigerian kenyan indian pakistani chinese japanese korean vietnamese thai filipino indonesian "
        "australian european african asian".split(),
    ]
)
NOT_NAMES = frozenset(
    """i you he she it we they me him her us them my your his its our their the a an this that these
    those there here who what which when where why how if but and or so then also now today yesterday
    tomorrow tonight recently apparently actually well oh anyway btw hi hello hey yes no ok okay thanks
    everyone everybody someone somebody nobody people everything nothing something each every some most
    many all both last next sadly luckily unfortunately honestly maybe perhaps since after before
    because while mom dad mum monday tuesday wednesday thursday friday saturday sunday january february
    march april may june july august september october november december scratch please sorry""".split()
)
_BAD_OBJECT_START = frozenset(
    """it that this them him her you what how doing being so too very much more not no myself
    yourself everything something anything nothing those these there here one me us when why who
    which expected intended planned usual""".split()
)
_CLAUSE_START = frozenset("i we you he she they it my our his her their this that there then also".split())
_VERBISH = frozenset("is are was were am be been have has had do does did like likes love loves live".split())
STRONG_STOP = re.compile(
    r"\s*(?:[;!?()\"]|:(?!\d)|(?<!\bSt)(?<!\bDr)(?<!\bMr)(?<!\bMs)(?<!\bMrs)\.(?:\s|$)|\s[-–—]\s|\s+(?:but|because|since|"
    r"so|although|though|while|which|who|whom|whose|where|whereas|when|whenever|until|unless|if|except|"
    r"as\s+well\s+as|plus)\b)",
    re.I,
)
_CLAUSE_STOP = re.compile(r"\s*,|\s+(?:and|or|&)\s", re.I)
_LIST_SPLIT = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|&)\s+", re.I)
_TRAILING = re.compile(
    r"(?:\s+(?:a\s+lot|very\s+much|so\s+much|too|as\s+well|also|any\s?more|now|these\s+days|lately|"
    r"right\s+now|at\s+the\s+moment|at\s+all|actually|really|though|either|already|nowadays|currently|"
    r"today|then|originally|tbh|lol|haha|instead|in\s+the\s+end|after\s+all|by\s+the\s+way|btw|please|"
    r"anyway|from\s+now\s+on|again|last\s+(?:week|weekend|month|year)|this\s+(?:week|month|year)))+$",
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
    "tool": re.compile(r"\s+(?:for|to|with|at|on|in|every|daily|because|since|at\s+work)\b", re.I),
    "lang": re.compile(r"\s+(?:fluently|well|a\s+little|at\s+home|with|at\s+work)\b", re.I),
    "pref": re.compile(r"\s+(?:for\s+now|these\s+days|from\s+now\s+on)\b", re.I),
}
#: Kinds whose object is a list ("jazz, hiking and good coffee" → three objects).
_LISTS = {"things": "thing", "tools": "tool", "langs": "lang"}
_MAX_WORDS = {"role": 5, "name": 4, "phrase": 10, "choice": 8, "event": 10}


#: How much of the text after a statement's verb is read for its object. An object is at most
#: 80 characters, so reading further only costs time: every statement in a long run-on
#: sentence read the rest of it, quadratic in its length (minutes for 80,000 characters).
OBJECT_WINDOW = 600


def _head(raw: str) -> str:
    """The first :data:`OBJECT_WINDOW` characters of ``raw``, cut at a word's end."""
    if len(raw) <= OBJECT_WINDOW:
        return raw
    head = raw[:OBJECT_WINDOW]
    return head if raw[OBJECT_WINDOW].isspace() else (re.sub(r"\S+$", "", head) or head)


def clean_name(raw: str | None) -> str | None:
    """A person's or pet's name without leading sentence words ("Yesterday Maria" → "Maria")."""
    words = (raw or "").strip(" .,").split()
    while words and words[0].lower().rstrip(".") in NOT_NAMES:
        words.pop(0)
    return " ".join(words) or None


def first_clause(raw: str) -> str:
    """``raw`` up to where its first clause ends (a strong stop, then a comma or "and")."""
    raw = _head(raw)
    for stop in (STRONG_STOP, _CLAUSE_STOP):
        cut = stop.search(raw)
        raw = raw[: cut.start()] if cut else raw
    return raw


def _split_list(raw: str) -> list[str]:
    """ "jazz, hiking and good coffee" → three items; stops where a new clause starts."""
    cut = STRONG_STOP.search(raw)
    items = _LIST_SPLIT.split(raw[: cut.start()] if cut else raw)
    out = items[:1]
    for item in items[1:]:
        words = item.lower().split()
        if not words or words[0].split("'")[0] in _CLAUSE_START or len(words) > 4 or _VERBISH & set(words):
            break
        out.append(item)
    return out


_NEW_CLAUSE = re.compile(r"\s*,|\s+(?:and|or)\s+(?=(?:i|we|you|he|she|they|it|my|our|their)\b)", re.I)


def _strong_clause(raw: str) -> str:
    """``raw`` up to a strong stop, a comma or an "and" that starts a new clause ("and I …")."""
    for stop in (STRONG_STOP, _NEW_CLAUSE):
        cut = stop.search(raw)
        raw = raw[: cut.start()] if cut else raw
    return raw


def objects(raw: str, kind: str, me: str) -> list[str]:
    """The objects of a statement whose object text starts ``raw``, cut as ``kind`` says.

    Kinds: ``place``, ``org``, ``role``, ``name`` (one object, first clause); ``things``,
    ``tools``, ``langs`` (a list); ``pref``, ``phrase``, ``choice``, ``event`` (one object
    up to the end of the clause, "and" included: "short answers with code", "buy the
    ThinkPad for work", "standup at 9:30 every day"). "my" becomes "<me>'s".

    Examples:
        >>> objects("short answers with code, by the way.", "pref", "Ana")
        ['short answers with code']
        >>> objects("Lisbon for three years", "place", "Ana")
        ['Lisbon']
    """
    raw = _head(raw)
    if kind in _LISTS:
        parts, kind = _split_list(raw), _LISTS[kind]
    elif kind in ("pref", "phrase", "choice", "event"):
        parts = [_strong_clause(raw)]
    else:
        parts = [first_clause(raw)]
    out = []
    for part in parts:
        obj = part.strip()
        if kind in ("thing", "pref", "tool"):
            obj = re.sub(r"^to\s+", "", obj, flags=re.I)
        tail = _TAILS.get(kind)
        cut = tail.search(obj) if tail else None
        obj = _TRAILING.sub("", obj[: cut.start()] if cut else obj).strip(" '\".,")
        if kind in ("thing", "pref", "tool", "choice", "lang"):
            obj = re.sub(r"^(?:the|a|an)\s+(?=\w)", "", obj)
        elif kind in ("place", "org"):
            obj = re.sub(r"^the\s+(?=[a-z])", "", obj)
        obj = re.sub(r"^my\s+|(?<=\s)my\s+", f"{me}'s ", obj, flags=re.I)
        words = obj.split()
        if (
            not words
            or len(words) > _MAX_WORDS.get(kind, 8)
            or len(obj) > 80
            or words[0].lower() in _BAD_OBJECT_START
            or (kind == "org" and obj.lower() in ("home", "night", "the moment"))
            or (kind in ("place", "org") and obj.isdigit())
        ):
            continue
        out.append(obj)
    return out
