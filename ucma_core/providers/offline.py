"""A deterministic provider that needs no model and no network.

:class:`OfflineProvider` answers every :class:`~ucma_core.providers.protocols.Provider`
method with rules: importance from :class:`~ucma_core.dynamics.importance.HeuristicImportance`,
extractive summaries, pattern-matched facts ("I live in Lisbon", "my sister Maria works
at Acme"), procedures and lessons from troubleshooting stories, and conflicts between
single-valued facts. It is the default when no LLM is configured and the reference the
LLM providers are checked against. It favours precision: text it does not recognise
gives no facts rather than doubtful ones.

The input checks at the end of this module (``check_*``) are shared with the other
providers, so every provider rejects the same bad input the same way.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence

from ucma_core.dynamics.importance import HeuristicImportance
from ucma_core.embedders.cache import check_int
from ucma_core.errors import InvalidInputError
from ucma_core.providers.protocols import DistilledLearning, ExtractedFact, ExtractedProcedure
from ucma_core.records import LearningType
from ucma_core.storage.keywords import STOPWORDS

__all__ = ["OfflineProvider"]


class OfflineProvider:
    """Rule-based :class:`~ucma_core.providers.protocols.Provider`: same input, same answer.

    Example:
        >>> provider = OfflineProvider()
        >>> [facts] = provider.extract_facts(["I live in Lisbon and I love jazz."], speakers=["Ana"])
        >>> [(f.subject, f.predicate, f.object) for f in facts]
        [('Ana', 'lives in', 'Lisbon'), ('Ana', 'likes', 'jazz')]
        >>> provider.extract_facts(["haha ok, see you tomorrow"], speakers=[None])
        [[]]
    """

    def __repr__(self) -> str:
        return "OfflineProvider()"

    def score_importance(self, content: str, *, source: str) -> float:
        """Importance in [0, 1], from the rule-based scorer."""
        return _HEURISTIC.score_importance(content, source=source)

    def summarize(self, groups: list[list[str]], *, max_words: int = 60) -> list[str]:
        """An extractive summary per group: its most informative sentences, in their order.

        A group that already fits in ``max_words`` comes back whole (texts joined by a
        space); otherwise sentences are ranked by how many of the group's recurring
        content words they carry, their importance and their position, and kept while
        they fit. The result never exceeds ``max_words`` words and is empty only for an
        empty group.
        """
        checked = check_groups(groups)
        check_int("max_words", max_words, 1)
        return [_summarize(group, max_words) for group in checked]

    def extract_facts(self, texts: list[str], *, speakers: list[str | None]) -> list[list[ExtractedFact]]:
        """Facts matched by patterns; first person is the speaker (``"user"`` when ``None``)."""
        items, who = check_texts_and_speakers(texts, speakers)
        return [
            _facts(text, (speaker or "").strip() or "user") for text, speaker in zip(items, who, strict=True)
        ]

    def extract_procedure(self, episodes: list[str]) -> ExtractedProcedure | None:
        """The action steps of a story that ends in success, or ``None``."""
        story = _Story(check_episodes(episodes))
        if story.outcome is not True or not story.steps:
            return None
        topic = story.topic()
        name = f"Fix {topic}" if story.problem else f"Procedure: {topic}"
        if story.problem:
            description = f"What worked when {_lower_first(story.problem)}."
        else:
            description = f"Steps that ended with: {story.success_line}."
        return ExtractedProcedure(
            name=name[:80],
            steps=tuple(_imperative(step) for step in story.steps),
            description=description,
            trigger_tags=story.tags(),
        )

    def distill_learning(self, episodes: list[str], *, succeeded: bool) -> DistilledLearning | None:
        """A "when <problem>, <what worked / what did not>" lesson, or ``None`` without one."""
        if not isinstance(succeeded, bool):
            raise InvalidInputError(f"succeeded must be a bool, got {type(succeeded).__name__}")
        story = _Story(check_episodes(episodes))
        if not story.steps and (succeeded or not story.problem):
            return None
        when = f"When {_lower_first(story.problem)}" if story.problem else f"When working on {story.topic()}"
        if succeeded:
            insight = f"{when}, {_join([_imperative(s, lower=True) for s in story.steps], ', then ')}."
            kind, title = LearningType.SUCCESS_PATTERN, "What fixed:"
        elif story.steps:
            insight = f"{when}, {_join([_gerund(s) for s in story.steps], ' and ')} did not work."
            kind, title = LearningType.FAILURE_ANALYSIS, "What did not fix:"
        else:
            insight = f"{when}, no working fix was found."
            kind, title = LearningType.FAILURE_ANALYSIS, "No fix found:"
        words = (story.problem or story.topic()).split()
        subject = " ".join(words[:10]) + (" …" if len(words) > 10 else "")
        return DistilledLearning(
            title=f"{title} {subject}",
            insight=insight,
            learning_type=kind.value,
            applicability=story.tags(),
            confidence=0.6 if story.problem and story.steps else 0.5,
        )

    def conflicts(self, pairs: list[tuple[ExtractedFact, ExtractedFact]]) -> list[bool]:
        """Whether each newer fact contradicts the older one (see :func:`facts_conflict`)."""
        return [facts_conflict(old, new) for old, new in check_fact_pairs(pairs)]


# -- text helpers --------------------------------------------------------------------

_TOKEN = re.compile(r"[^\W_]+")
_SENTENCE_END = re.compile(
    r"(?<=[.!?])(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\bSt\.)(?<!\bvs\.)(?<!\be\.g\.)"
    r"(?<!\bi\.e\.)(?<!\bProf\.)\s+|\n+"
)


def _sentences(text: str) -> list[str]:
    text = text.replace("\u2019", "'").replace("\u2018", "'")
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def _content_words(text: str) -> list[str]:
    """Lower-cased words that carry meaning (no stop words, no single letters)."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS and (len(t) > 1 or t.isdigit())]


def _lower_first(text: str) -> str:
    """Lower-case a leading capital ("The tests fail" → "the tests fail"), not an acronym or "Ana's"."""
    first = text.split(" ", 1)[0]
    if len(first) > 1 and first[0].isupper() and first[1:].islower() and "'" not in first:
        return text[0].lower() + text[1:]
    return text


def _join(parts: list[str], sep: str) -> str:
    return sep.join(p for p in parts if p)


# -- summaries -----------------------------------------------------------------------

_HEURISTIC = HeuristicImportance()
_NUMBER_OR_NAME = re.compile(r"\d|(?<!^)(?<![.!?]\s)\b[A-Z][a-z]{2,}")


def _summarize(group: list[str], max_words: int) -> str:
    texts = [t.strip() for t in group if t.strip()]
    if not texts:
        return ""
    whole = " ".join(dict.fromkeys(texts))
    if len(whole.split()) <= max_words:
        return group[0] if len(group) == 1 else whole
    units = list(dict.fromkeys(s for text in texts for s in _sentences(text)))  # repeats add nothing
    words = [set(_content_words(u)) for u in units]
    spread = Counter(w for ws in words for w in ws)
    central = [sum(spread[w] - 1 for w in ws) / math.sqrt(len(ws) + 1) for ws in words]
    most = max(central) or 1.0
    scores = [
        central[i] / most
        + 0.6 * _HEURISTIC.score_importance(unit, source="user")
        + (0.3 if i == 0 else 0.1 if unit in texts[0] else 0.0)
        + (0.2 if _NUMBER_OR_NAME.search(unit) else 0.0)
        for i, unit in enumerate(units)
    ]
    order = sorted(range(len(units)), key=lambda i: (-scores[i], i))
    chosen: list[int] = []
    used = 0
    for i in order:
        size = len(units[i].split())
        if used + size <= max_words and not any(_similar(words[i], words[j]) for j in chosen):
            chosen.append(i)
            used += size
    if not chosen:  # even the best sentence is too long: cut it
        return " ".join(units[order[0]].split()[:max_words]).rstrip(".,;:") + "…"
    return " ".join(units[i] for i in sorted(chosen))


def _similar(a: set[str], b: set[str]) -> bool:
    return bool(a and b) and len(a & b) / len(a | b) > 0.7


# -- facts ---------------------------------------------------------------------------
# Each rule is a case-insensitive pattern whose names (``(?-i:...)``) must be capitalised.
# The object is captured in a lookahead, so one sentence can hold several matches of a
# rule ("I like jazz and I like tea"); the object is then cut at the clause boundary.

_I = r"(?<![\w'])I"
_IM = _I + r"(?:'m|\s+am)"
_ADV = (
    r"(?:(?:really|also|absolutely|totally|genuinely|actually|currently|now|still|just|recently|"
    r"definitely|truly|usually|generally|strongly|kind\s+of|sort\s+of)\s+)*"
)
_NAME = r"(?<![\w'-])(?-i:(?:(?:Dr|Mr|Mrs|Ms|Prof)\.?\s+)?[A-Z][\w-]*(?:\s+[A-Z][\w-]*){0,2})"
_OBJ = r"(?=(?P<obj>.+))"
_ONE_RELATIONS = (
    "wife husband partner spouse girlfriend boyfriend fiance fiancee boss manager mother father mom "
    "mum dad doctor dentist therapist landlord"
).split()
_RELATIONS = [
    *_ONE_RELATIONS,
    *"sister brother son daughter friend colleague coworker roommate cousin aunt uncle niece nephew "
    "grandmother grandfather grandma grandpa dog cat kid child neighbor neighbour teacher coach".split(),
]
_REL = r"(?P<rel>best\s+friend|" + "|".join(sorted(_RELATIONS, key=len, reverse=True)) + r")\b"
_GROUPS = {  # bare "is" objects that exclude each other
    **dict.fromkeys(["single", "married", "engaged", "divorced", "widowed"], "marital"),
    **dict.fromkeys(["vegan", "vegetarian", "pescatarian"], "diet"),
}
_IDENTITIES = frozenset(
    [
        *_GROUPS,
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


def _facts(text: str, me: str) -> list[ExtractedFact]:
    hits: list[tuple[int, int, int, _Raw]] = []
    for s_index, sentence in enumerate(_sentences(text)):
        if sentence.endswith("?"):
            continue  # questions state nothing
        hedge = 0.1 if _HEDGE.search(sentence) else 0.0
        for r_index, (pattern, handle) in enumerate(_RULES):
            for m in pattern.finditer(sentence):
                for subject, predicate, obj, confidence in handle(m, me):
                    hits.append((s_index, m.start(), r_index, (subject, predicate, obj, confidence - hedge)))
    found: dict[tuple[str, str, str], ExtractedFact] = {}
    for *_, (subject, predicate, obj, confidence) in sorted(hits, key=lambda h: h[:3]):
        key = (subject.lower(), predicate, obj.lower())
        if key not in found or found[key].confidence < confidence:
            found[key] = ExtractedFact(subject, predicate, obj, round(confidence, 2))
    return list(found.values())


# -- procedures and lessons ----------------------------------------------------------

_IRREGULAR = {  # base: (past, gerund)
    base: (past, gerund)
    for base, past, gerund in (
        forms.split()
        for forms in (
            "run ran running | rerun reran rerunning | set set setting | "
            "reset reset resetting | put put putting | cut cut cutting | "
            "split split splitting | get got getting | write wrote writing | "
            "rewrite rewrote rewriting | make made making | build built building | "
            "rebuild rebuilt rebuilding | undo undid undoing | stop stopped stopping | "
            "pin pinned pinning | unpin unpinned unpinning | drop dropped dropping | "
            "swap swapped swapping | log logged logging"
        ).split(" | ")
    )
}
_VERBS = (
    "add adjust allow apply block bump cache change check clean clear commit compare configure convert "
    "copy create debug decrease delete deploy disable downgrade edit enable export extend fix flush "
    "grep handle import increase inspect install kill limit look lower merge migrate move open patch "
    "purge raise read reboot redeploy refactor refresh regenerate reinstall reload remove rename renew "
    "replace restart restore retry revert roll rotate shorten start suspect switch sync test trace try "
    "tune tweak uninstall update upgrade use verify wrap"
).split() + list(_IRREGULAR)


def _inflect(base: str) -> tuple[str, str]:
    """(past, gerund) of a verb in :data:`_VERBS`."""
    if base in _IRREGULAR:
        return _IRREGULAR[base]
    if base.endswith("e"):
        return base + "d", base[:-1] + "ing"
    if base.endswith("y") and base[-2] not in "aeiou":
        return base[:-1] + "ied", base + "ing"
    return base + "ed", base + "ing"


_FORMS = {form: base for base in _VERBS for form in (base, *_inflect(base))}
_STEP = re.compile(
    r"^(?:(?:then|so|next|first|finally|after\s+that|afterwards|eventually|later|also|and)\b[,\s]*)*"
    r"(?:(?:I|we)\s+(?:then\s+|also\s+|finally\s+|first\s+|just\s+)?)?"
    r"(?:(?:fixed|solved|resolved)\s+(?:it\s+|this\s+|that\s+|the\s+\w+\s+)?by\s+)?"
    r"(?P<verb>[a-z]+)\b(?P<rest>.*)$",
    re.I,
)
_SUCCESS = re.compile(
    r"\b(?:fixed|resolved|solved|works|worked|working|done|success(?:ful(?:ly)?)?|succeeded|pass(?:es|ed|ing)?|"
    r"green|back\s+to\s+normal)\b",
    re.I,
)
_NEGATED = re.compile(r"\b(?:not|never|no\s+longer|still|without)\b|n't\b", re.I)
_FAILURE = re.compile(
    r"\b(?:didn't|did\s+not|doesn't|does\s+not|don't|won't|wouldn't)\s+(?:work|help|fix|change|matter)|"
    r"\bstill\s+(?:fail\w*|broken|crash\w*|happen\w*|expir\w*|the\s+same|wrong|see\w*)|\bno\s+luck\b|"
    r"\bgave\s+up\b|\bnot\s+(?:fixed|resolved|solved|working)\b",
    re.I,
)
_PROBLEM = re.compile(
    r"\b(?:errors?|bugs?|fail\w*|broken|broke|breaks|crash\w*|issues?|problems?|exceptions?|timeouts?|"
    r"timed\s+out|wrong|unexpected(?:ly)?|instead\s+of|expir\w*|slow|missing|can't|cannot|couldn't|"
    r"unable|denied|refused|leak\w*|hang\w*|stuck|invalid|mismatch\w*|too\s+(?:early|late|slow|many|much))\b",
    re.I,
)
_OUTCOME_WORDS = frozenset(
    """fixed resolved solved works worked working done success successful successfully succeeded passes
    pass passed passing green back normal finally everything good great issue problem bug yay nice ok okay
    seems looks thanks didn doesn don won work help helped luck gave failed failing broken""".split()
)
_GENERIC = frozenset(
    [
        *_FORMS,
        *_OUTCOME_WORDS,
        *"instead minutes seconds hours days error errors fail fails bug bugs issue wrong".split(),
    ]
)


class _Story:
    """What a sequence of episodes says: the problem, the steps taken, how it ended."""

    def __init__(self, episodes: list[str]) -> None:
        self.problem = ""
        self.steps: list[tuple[str, str]] = []  # (verb, rest): ("add", "a leeway to decode()")
        self.outcome: bool | None = None
        self.success_line = ""
        self._words: Counter[str] = Counter()
        for line in (s.rstrip(".! ") for e in episodes for s in _sentences(e)):
            self._words.update(w for w in _content_words(line) if w not in _GENERIC and not w.isdigit())
            success = bool(_SUCCESS.search(line)) and not _NEGATED.search(line)
            failure = bool(_FAILURE.search(line)) or (bool(_SUCCESS.search(line)) and not success)
            only_outcome = (success or failure) and not set(_content_words(line)) - _OUTCOME_WORDS
            step = None if only_outcome else _step(line)
            if step:
                self.steps.append(step)
            elif not only_outcome and not self.problem and _PROBLEM.search(line):
                self.problem = line
            if success or failure:
                self.outcome, self.success_line = success, line if success else self.success_line

    def tags(self, n: int = 5) -> tuple[str, ...]:
        order = {w: i for i, w in enumerate(reversed(list(self._words)))}
        ranked = sorted(self._words, key=lambda w: (-self._words[w], -order[w]))
        return tuple(ranked[:n])

    def topic(self) -> str:
        """A few words naming what the story is about, from the problem when there is one."""
        source = self.problem or " ".join(self.tags(3))
        words = [w for w in _TOKEN.findall(source) if w.lower() in self._words]
        return " ".join(dict.fromkeys(words[:3])) or "task"


def _step(line: str) -> tuple[str, str] | None:
    m = _STEP.match(line)
    if m is None:
        return None
    verb = m["verb"].lower()
    base = _FORMS.get(verb)
    if base is None or (verb == base and _PROBLEM.search(line)):  # "Build fails on CI" is no step
        return None
    rest = m["rest"].strip(" ,")
    if base == "suspect":
        base, rest = ("check whether", rest[5:]) if rest.lower().startswith("that ") else ("check for", rest)
    return base, rest


def _imperative(step: tuple[str, str], *, lower: bool = False) -> str:
    text = f"{step[0]} {step[1]}".strip()
    return text if lower else text[0].upper() + text[1:]


def _gerund(step: tuple[str, str]) -> str:
    verb, _, more = step[0].partition(" ")
    return " ".join(p for p in (_inflect(verb)[1], more, step[1]) if p)


# -- conflicts -----------------------------------------------------------------------

_SINGLE_VALUED = frozenset(
    """lives in|works at|works as|is named|is married to|is|has birthday|has blood group|has email|
    has phone number|has address|has age|is aged""".replace("\n", "").split("|")
)
_SINGLE_VALUED = frozenset(p.strip() for p in _SINGLE_VALUED)
_SYNONYMS = {
    "works for": "works at",
    "is employed at": "works at",
    "is employed by": "works at",
    "lives at": "lives in",
    "resides in": "lives in",
    "is called": "is named",
    "has name": "is named",
    "loves": "likes",
    "enjoys": "likes",
    "hates": "dislikes",
    "does not like": "dislikes",
    "doesn't like": "dislikes",
    "has blood type": "has blood group",
}
_OPPOSITES = ({"likes", "dislikes"}, {"prefers", "dislikes"})


def facts_conflict(old: ExtractedFact, new: ExtractedFact) -> bool:
    """Whether ``new`` contradicts ``old``: same subject, same single-valued predicate, another object.

    Single-valued predicates are the ones in :data:`_SINGLE_VALUED`, ``has <relation>`` for
    relations a person has one of (wife, boss, doctor…) and ``has favorite <thing>``. An
    object that only adds detail ("Paris" → "Paris, France") is no contradiction. ``is`` is
    single-valued for roles ("a nurse" → "a teacher") and for exclusive states (married /
    single, vegan / vegetarian), not for unrelated traits ("Canadian", "a nurse"). Likes and
    dislikes of the same object contradict each other.

    Example:
        >>> facts_conflict(ExtractedFact("Ana", "lives in", "Lisbon", 0.8),
        ...                ExtractedFact("ana", "lives in", "Berlin", 0.8))
        True
        >>> facts_conflict(ExtractedFact("Ana", "likes", "jazz", 0.8),
        ...                ExtractedFact("Ana", "likes", "tea", 0.8))
        False
    """
    if _norm(old.subject) != _norm(new.subject):
        return False
    p, q = _predicate(old.predicate), _predicate(new.predicate)
    a, b = _norm(old.object), _norm(new.object)
    if p != q:
        return {p, q} in _OPPOSITES and _strip_article(a) == _strip_article(b)
    if a == b or not _single_valued(p):
        return False
    if p == "is":
        roles = a.startswith(("a ", "an ")) and b.startswith(("a ", "an "))
        return roles or (a in _GROUPS and _GROUPS[a] == _GROUPS.get(b))
    x, y = set(_TOKEN.findall(_strip_article(a))), set(_TOKEN.findall(_strip_article(b)))
    return x != y and not (x <= y or y <= x)


def _norm(text: str) -> str:
    return " ".join(text.lower().replace("_", " ").split()).strip(" .,!;:'\"")


def _strip_article(text: str) -> str:
    return re.sub(r"^(?:the|a|an)\s+", "", text)


def _predicate(predicate: str) -> str:
    p = _norm(predicate).replace("favourite", "favorite")
    return _SYNONYMS.get(p, p)


def _single_valued(predicate: str) -> bool:
    relation = predicate[4:] if predicate.startswith("has ") else ""
    return predicate in _SINGLE_VALUED or relation in _ONE_RELATIONS or relation.startswith("favorite ")


# -- input checks shared by the providers --------------------------------------------


def check_groups(groups: object) -> list[list[str]]:
    """``groups`` as a list of lists of strings, or :class:`InvalidInputError`."""
    return [_strings(f"groups[{i}]", group) for i, group in enumerate(_sequence("groups", groups))]


def check_texts_and_speakers(texts: object, speakers: object) -> tuple[list[str], list[str | None]]:
    """The texts and one speaker (a string or ``None``) per text, or :class:`InvalidInputError`."""
    items = _strings("texts", texts)
    who = _sequence("speakers", speakers)
    if len(who) != len(items):
        raise InvalidInputError(
            f"speakers has {len(who)} entries for {len(items)} texts; pass one speaker (or None) per text"
        )
    checked: list[str | None] = []
    for i, speaker in enumerate(who):
        if speaker is not None and not isinstance(speaker, str):
            raise InvalidInputError(f"speakers[{i}] must be a str or None, got {type(speaker).__name__}")
        checked.append(speaker)
    return items, checked


def check_episodes(episodes: object) -> list[str]:
    """``episodes`` as a list of strings, or :class:`InvalidInputError`."""
    return _strings("episodes", episodes)


def check_fact_pairs(pairs: object) -> list[tuple[ExtractedFact, ExtractedFact]]:
    """``pairs`` as (older, newer) :class:`ExtractedFact` tuples, or :class:`InvalidInputError`."""
    out = []
    for i, pair in enumerate(_sequence("pairs", pairs)):
        if not (
            isinstance(pair, (tuple, list))
            and len(pair) == 2
            and all(isinstance(fact, ExtractedFact) for fact in pair)
        ):
            raise InvalidInputError(
                f"pairs[{i}] must be an (older, newer) tuple of ExtractedFact, got {pair!r}"
            )
        out.append((pair[0], pair[1]))
    return out


def _sequence(name: str, value: object) -> list[object]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise InvalidInputError(f"{name} must be a list, got {type(value).__name__}")
    return list(value)


def _strings(name: str, value: object) -> list[str]:
    items = _sequence(name, value)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise InvalidInputError(f"{name}[{i}] must be a str, got {type(item).__name__}")
    return items  # type: ignore[return-value]
