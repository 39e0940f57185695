"""Offline, deterministic importance scoring for observations.

A rule-based scorer: no model, no network. It reads what a turn *does*, by who said it:

* noise scores near zero: acknowledgements and greetings ("ok thanks", "got it"),
  stray keystrokes ("h", "asdf", "?"), assistant pleasantries ("Happy to help!",
  "Let me know if there's anything else"), empty tool output;
* a user turn is kept when it says something about the user or their world:
  self-descriptions, preferences, plans and decisions, corrections ("actually…",
  "not … anymore"), problems, dates, numbers, names, or a question with substance;
* an assistant turn is kept when it carries a diagnosis ("sounds like clock skew",
  "probably the missing index"), advice ("consider polars", "you should pin…"), an
  instruction or answer (commands, code, steps, figures) or a decision or booking
  ("we'll use…", "booked for Tuesday"); a short reply that does none of these is not;
* tool output is kept unless it is empty.

LLM-backed scorers plug in through the same
:class:`~ucma_core.protocols.ImportanceScorer` protocol.
"""

from __future__ import annotations

import re

__all__ = ["HeuristicImportance"]

_WORD = re.compile(r"\w+")
_LETTERS = re.compile(r"[a-z']+")
#: Words that, alone, make an acknowledgement, greeting or sign-off.
_FILLER_WORDS = frozenset(
    """ok okay k kk hi hello hey yo thanks thank thx ty tysm you so much a lot lots cool great nice
    awesome perfect sure yes yep yeah yup no nope nah worries problem np bye for now good morning ha
    night evening afternoon lol haha hah hehe lmao hmm hm uh um oh wow got it sounds alright all right
    fine brb one sec second moment let me check see later cheers will do that is amazing love lovely
    welcome indeed exactly true right gotcha noted agreed bet again very really super kind of""".split()
)
_PLEASANTRY = re.compile(
    r"^\W*(?:you'?re\s+(?:very\s+)?welcome|(?:i'?m\s+)?(?:happy|glad)\s+(?:to|that|it)|sure\s+thing|no\s+problem|"
    r"anytime|any\s+time|great\s+question|good\s+question|(?:hi|hello|hey)(?:\s+there)?\b|"
    r"good\s+(?:morning|afternoon|evening)|let\s+me\s+know|i'?m\s+here|of\s+course|thanks?\s+for|"
    r"thank\s+you|sounds\s+(?:good|great)|you\s+got\s+it|my\s+pleasure|cheers|have\s+a\s+(?:good|great|nice))",
    re.IGNORECASE,
)
_EMPTY_TOOL = re.compile(r"^\W*(?:no\s+output|none|null|nil|empty|ok|\[\]|\{\})\W*$", re.IGNORECASE)
#: Verbs an instruction starts with ("Run …", "Mix 50 g of flour …").
_IMPERATIVES = frozenset(
    """add adjust allow apply avoid back boil bump buy cache call cap change check choose clean clear click
    close commit compare configure consider convert copy create cut debug delete deploy disable do don't
    download drop edit enable ensure export feed fill fix flush follow go grep hold import increase inspect
    install keep kill leave limit look lower make merge migrate mix move open pass patch pick pin pour
    press pull purge push put raise read reboot rebuild redeploy refactor refresh reinstall reload remove
    rename replace reset restart restore retry return revert roll rotate run save send set shorten skip
    sort split start stir stop store switch sync take tap test trace try tune turn type undo uninstall
    update upgrade use verify wait wrap write""".split()
)
_SIGNALS_USER: tuple[tuple[re.Pattern[str], float], ...] = (
    # self-description and identity
    (
        re.compile(
            r"\b(?:i am|i'm|my name is|call me|i work|i live|i was born|my (?:wife|husband|partner|"
            r"son|daughter|sister|brother|mother|father|mom|dad|friend|boss|team|job|birthday))\b",
            re.I,
        ),
        0.25,
    ),
    # preferences
    (
        re.compile(
            r"\b(?:i (?:really )?(?:like|love|prefer|hate|dislike|enjoy|want|need)|i'd rather|"
            r"favou?rite|allergic|can't stand|don't like)\b",
            re.I,
        ),
        0.25,
    ),
    # corrections and updates
    (
        re.compile(
            r"\b(?:actually|instead|changed my mind|scratch that|no longer|any ?more|we moved|i moved|"
            r"switched|from now on|not any ?more|correction|in the end)\b",
            re.I,
        ),
        0.2,
    ),
)
_SIGNALS_COMMON: tuple[tuple[re.Pattern[str], float], ...] = (
    # explicit importance, decisions, commitments
    (
        re.compile(
            r"\b(?:remember|important|always|never|must|decided|decision|deadline|promise|"
            r"plan(?:ning)? to|going to|will|agreed|goal|todo|to-do|remind)\b",
            re.I,
        ),
        0.15,
    ),
    # problems and fixes
    (
        re.compile(
            r"\b(?:error|bug|fail(?:ed|ure|s)?|crash(?:ed)?|broken|fix(?:ed)?|resolved|"
            r"workaround|exception|issue)\b",
            re.I,
        ),
        0.15,
    ),
    # dates and times
    (
        re.compile(
            r"\b(?:\d{4}-\d{2}-\d{2}|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
            r"january|february|march|april|may|june|july|august|september|october|november|"
            r"december|tomorrow|yesterday|next week|last week)\b",
            re.I,
        ),
        0.1,
    ),
    # numbers and quantities
    (re.compile(r"\d"), 0.05),
)
_DIAGNOSIS = re.compile(
    r"\b(?:smells|sounds|looks|seems)\s+like\b|\b(?:likely|probably|most\s+likely|usually\s+means|"
    r"(?:the\s+)?(?:cause|culprit|problem|issue|reason)\s+is|caused\s+by|comes\s+from|due\s+to|because|"
    r"that'?s\s+why|the\s+error\s+means)\b",
    re.I,
)
_ADVICE = re.compile(
    r"\b(?:i'?d|i\s+would|you\s+should|you\s+could|you\s+can|you\s+need\s+to|i\s+recommend|i\s+suggest|"
    r"consider|better\s+to|recommend|suggest|instead\s+of|rather\s+than|make\s+sure|don'?t|avoid|"
    r"try|is\s+a\s+good\s+(?:pick|choice|option))\b",
    re.I,
)
_INSTRUCTION = re.compile(
    r"`[^`]+`|\b\w+\(\)|(?:^|\s)--?[a-z][\w-]*|(?:^|\s)/[\w.-]+/|\b\w+\.\w+\b(?<!\.\.)|"
    r"^\s*(?:\d+[.)]|[-*])\s|(?:^|[.;,:]\s*)(?:first|then|next|finally)\b|\bstep\s+\d|\b\d+(?:\.\d+)?\s?(?:g|kg|ml|l|mb|gb|"
    r"kb|ms|s|min|minutes|hours?|days?|%|km|m)\b",
    re.I | re.M,
)
_DECISION = re.compile(
    r"\b(?:booked|scheduled|set\s+for|reminder|we'?ll|we\s+will|let'?s|decided|going\s+with|"
    r"i'?ll|i\s+will|confirmed|is\s+set)\b",
    re.I,
)
_PROPER_NOUN = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]{2,}")
_STOP = frozenset(
    """a an the and or but so to of in on at for with by from is are was were be been am it its this that
    i you he she we they me my your our their there here what which who how when where why do does did
    have has had can could would should will just not no yes if then than as up out about into over""".split()
)
_BASE_BY_SOURCE = {"user": 0.3, "tool": 0.3, "environment": 0.25, "assistant": 0.15, "system": 0.2}


def _content_words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP and (len(w) > 2 or w.isdigit())]


def _is_filler(text: str) -> bool:
    words = _LETTERS.findall(text.lower().replace("\u2019", "'"))
    return (
        bool(words)
        and not any(c.isdigit() for c in text)
        and len(words) <= 8
        and all(w.strip("'") in _FILLER_WORDS for w in words)
    )


class HeuristicImportance:
    """Rule-based importance in [0, 1]; the same input always gives the same score.

    Examples:
        >>> scorer = HeuristicImportance()
        >>> scorer.score_importance("ok thanks", source="user") < 0.2
        True
        >>> scorer.score_importance("h", source="user") < 0.2
        True
        >>> scorer.score_importance("I'm Ana and I prefer concise answers.", source="user") > 0.5
        True
        >>> scorer.score_importance("That smells like clock skew.", source="assistant") > 0.3
        True
        >>> scorer.score_importance("Happy to help!", source="assistant") < 0.2
        True
    """

    def score_importance(self, content: str, *, source: str) -> float:
        text = content.strip()
        words = _WORD.findall(text)
        if not words or _is_filler(text):
            return 0.05
        if len(words) == 1 and not re.search(r"\d|[A-Z]", text) and len(words[0]) <= 4:
            return 0.1  # "h", "asdf", "meh"
        if source == "tool" and _EMPTY_TOOL.match(text):
            return 0.05
        if source == "assistant":
            score = self._assistant(text, words)
        else:
            score = _BASE_BY_SOURCE.get(source, 0.2)
            if source == "user":
                score += sum(weight for pattern, weight in _SIGNALS_USER if pattern.search(text))
            score += sum(weight for pattern, weight in _SIGNALS_COMMON if pattern.search(text))
            if _PROPER_NOUN.search(text):
                score += 0.1
            if len(words) <= 3:
                score -= 0.15  # "great stuff", "see ya": short and saying nothing recognisable
            elif len(words) >= 12:
                score += 0.05
            if text.endswith("?") and score < 0.5:
                score -= 0.05
        return round(min(1.0, max(0.0, score)), 4)

    @staticmethod
    def _assistant(text: str, words: list[str]) -> float:
        """An assistant turn: what it does (diagnose, advise, instruct, decide) makes it worth keeping."""
        content = _content_words(text)
        acts = 0.0
        if _DIAGNOSIS.search(text):
            acts += 0.3
        first = words[0].lower()
        asks = text.endswith("?") or (len(words) > 1 and words[1].lower() in ("you", "i", "we", "they"))
        if _ADVICE.search(text) or (first in _IMPERATIVES and not asks):
            acts += 0.3
        if _INSTRUCTION.search(text):
            acts += 0.15
        if _DECISION.search(text):
            acts += 0.2
        if _PLEASANTRY.match(text) and len(content) <= 5 and acts < 0.3:
            return 0.05  # "Glad that worked out.", "Let me know if there's anything else I can do."
        score = 0.15 + min(acts, 0.5)
        if len(content) >= 6:
            score += 0.1  # an informative reply: an explanation, a fact, a suggestion
        elif len(content) <= 2 and acts == 0:
            score -= 0.1
        score += sum(weight for pattern, weight in _SIGNALS_COMMON[1:] if pattern.search(text))
        if _PROPER_NOUN.search(text):
            score += 0.05
        if text.endswith("?") and acts == 0:
            score -= 0.05  # a follow-up question carries little on its own
        return score
