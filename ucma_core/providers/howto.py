"""Questions and how-to answers: which turns ask, and the steps an answer gives.

A chat turn that asks something (:func:`is_question`) is not an answer to it; when it
asks how to do something (:func:`how_to_task`) and the reply gives instructions,
:func:`how_to_procedure` turns the pair into a procedure: "how do I deploy the staging
app?" + "Build the image…, push it…, then run `kubectl apply…`" → "How to deploy the
staging app" with three steps. Code in backticks is kept whole.
"""

from __future__ import annotations

import re

from ucma_core.providers.protocols import ExtractedProcedure
from ucma_core.providers.story import VERB_FORMS
from ucma_core.providers.text import content_words, sentences

__all__ = ["how_to_procedure", "how_to_task", "instruction_steps", "is_question"]

_ASKS = re.compile(
    r"^\s*(?:(?:hey|hi|so|ok|okay|and|also|quick\s+question)[,!\s]+)?(?:how|what|why|when|where|which|who|"
    r"whose|can\s+(?:you|i|we)|could\s+(?:you|i|we)|would\s+you|should\s+(?:i|we)|do\s+(?:you|i|we)|"
    r"does|did\s+(?:you|i|we)|is\s+(?:it|there|this|that)|are\s+(?:there|you)|any\s+(?:idea|tips?))\b",
    re.I,
)
_HOW_TO = re.compile(
    r"\b(?:how\s+(?:do|can|should|would|could)\s+(?:i|we|you|one)\s+|how\s+to\s+|"
    r"what(?:'s|\s+is)\s+the\s+(?:best\s+|right\s+|easiest\s+)?way\s+to\s+|what\s+are\s+the\s+steps\s+to\s+|"
    r"(?:tell|show)\s+me\s+how\s+to\s+)(?P<task>[^?]+)",
    re.I,
)
_CODE = re.compile(r"`[^`]*`")
_SPLIT = re.compile(r"(\s*;\s*|,?\s+then\s+|,\s+and\s+|,\s+|\s+and\s+)", re.I)
_LEAD = re.compile(
    r"^(?:(?:first(?:ly)?|then|next|after\s+that|afterwards|finally|and|also|now|once\s+[^,]+(?=,)|"
    r"every\s+\w+|each\s+\w+|daily|to\s+[^,]+(?=,))[,:]?\s+)+",
    re.I,
)
#: Verbs of instructions that are not problem-solving actions (the story's verbs cover those).
_MORE_VERBS = frozenset(
    """bake boil book choose click clone compress connect cook cover discard download dump email enter
    extract feed fill generate go hold keep revoke save schedule send store unzip
    leave let log mix note pack paste pick plug pour press reconnect select sign sprinkle stir take type
    pull push unplug upload visit wait""".split()
)


#: What marks a sentence as one step of a sequence ("1.", "- ", "Step 2:", "First,", "Next,").
_SEQUENCE = re.compile(
    r"^\s*(?:\d+[.)]|[-*\u2022]|step\s+\d+\s*[:.)]?|first(?:ly)?\b|second(?:ly)?\b|next\b|"
    r"then\b|finally\b|after\s+that\b|afterwards\b|lastly\b)",
    re.I,
)
_NUMBER = re.compile(r"^\s*(?:\d+[.)]|[-*\u2022]|step\s+\d+\s*[:.)]?)\s*", re.I)
_ADVICE = re.compile(
    r"^(?:(?:you|we)\s+(?:(?:will\s+)?need|have|want)\s+to|(?:you|we)\s+(?:should|can|must)|just|"
    r"simply|please)\s+",
    re.I,
)
#: First words of clauses that are not instructions, whatever else the sentence holds.
_NOT_STEPS = frozenset(
    """i you we it this that these those there here the a an my your our its his her their they he she
    sure ok okay yes no yeah thanks thank if when while once because so but or great good nice hi hello
    hey well what why how who which where is are was were be been will would can could should
    may might must do does did has have had not also first firstly second secondly next then finally
    afterwards lastly now every each daily after before to""".split()
)


_VAGUE = frozenset("make get do use set keep last new best way change thing things stuff".split())


def is_question(text: str) -> bool:
    """Whether a turn asks something: it ends with "?" or opens like a question.

    Examples:
        >>> is_question("how do I deploy?"), is_question("Deployed it."), is_question("any tips for German")
        (True, False, True)
    """
    stripped = text.strip()
    return stripped.endswith("?") or (bool(_ASKS.match(stripped)) and len(stripped.split()) <= 25)


def how_to_task(text: str) -> str | None:
    """What a how-to question asks to do ("how do I deploy the app?" → "deploy the app"), or ``None``.

    Examples:
        >>> how_to_task("How can I make a sourdough starter?")
        'make a sourdough starter'
    """
    m = _HOW_TO.search(text)
    if m is None:
        return None
    task = re.split(r"[.!,;]", m["task"])[0].strip()
    return task or None


def _is_verb(word: str) -> bool:
    w = word.lower()
    return (w in VERB_FORMS and VERB_FORMS[w] == w) or w in _MORE_VERBS


def instruction_steps(text: str) -> list[str]:
    """The instructions in ``text``, in order: clauses that start with an imperative verb.

    Examples:
        >>> instruction_steps("Build the image, push it, then run `kubectl apply -f app.yaml`.")
        ['Build the image', 'Push it', 'Run `kubectl apply -f app.yaml`']
        >>> instruction_steps("1. Clone the repo. 2. Install the requirements.")
        ['Clone the repo', 'Install the requirements']
    """
    codes: list[str] = []

    def hide(m: re.Match[str]) -> str:
        codes.append(m[0])
        return f"\x00{len(codes) - 1}\x00"

    steps = []
    marked = False  # the sentence before was only a list marker ("1.")
    for sentence in sentences(_CODE.sub(hide, text)):
        if _NUMBER.sub("", sentence).strip(" .)") == "":
            marked = True
            continue
        in_sequence = marked or bool(_SEQUENCE.match(sentence))
        marked = False
        body = _NUMBER.sub("", sentence).rstrip(".!")
        cut = _clauses(body)
        clauses = [_ADVICE.sub("", _LEAD.sub("", c)) for c, _ in cut]
        known = [bool(c.split()) and _is_verb(c.split()[0]) for c in clauses]
        sequence = in_sequence or any(known) or any(forced for _, forced in cut)
        for n, clause in enumerate(clauses):
            words = clause.split()
            if not words:
                continue
            # a clause that opens a sequence of instructions, or that "then" opens, is one
            # too, whatever its verb ("Clone the repo, then install…", "1. Clone the repo.",
            # "…, then compress the file"): an instruction whose verb is not in the lists is
            # never lost
            in_line = (n == 0 and sequence) or cut[n][1]
            if not (known[n] or (in_line and _instruction_like(words[0]))):
                continue
            step = re.sub(r"\x00(\d+)\x00", lambda m: codes[int(m[1])], clause).strip(" ,.")
            steps.append(step[0].upper() + step[1:])
    return steps


def _instruction_like(word: str) -> bool:
    """Whether a clause's first word can be an imperative verb the lists do not know."""
    w = word.lower()
    return w.isalpha() and w not in _NOT_STEPS and not w.endswith(("ing", "ly"))


def _clauses(sentence: str) -> list[tuple[str, bool]]:
    """A sentence cut into instructions: at ";" and "then" always, at "," and "and" only
    where an instruction starts ("Mix flour and water" stays whole; "…, and leave it" splits).
    Each clause comes with whether a ";" or "then" opened it (a step of a sequence)."""
    parts = _SPLIT.split(sentence)
    out = [(_LEAD.sub("", parts[0].strip()), False)]
    for sep, part in zip(parts[1::2], parts[2::2], strict=True):
        clause = _LEAD.sub("", part.strip())
        first = clause.split()[0] if clause.split() else ""
        forced = sep.strip().lower() in (";", "then", ", then")
        if forced or _is_verb(first):
            out.append((clause, forced))
        else:
            out[-1] = (out[-1][0] + sep + part, out[-1][1])
    return out


def how_to_procedure(episodes: list[str]) -> ExtractedProcedure | None:
    """A procedure from a how-to question and the answer that follows it, or ``None``.

    The first episode must ask how to do something; the steps are the instructions of
    the episodes after it, and the description quotes the question.

    Examples:
        >>> p = how_to_procedure(["How do I undo the last commit?", "Run `git reset --soft HEAD~1`."])
        >>> p.name, p.steps
        ('How to undo the last commit', ('Run `git reset --soft HEAD~1`',))
    """
    if len(episodes) < 2:
        return None
    task = how_to_task(episodes[0])
    if task is None:
        return None
    steps = [step for answer in episodes[1:] for step in instruction_steps(answer)]
    if not steps:
        return None
    tags = tuple(dict.fromkeys(w for w in content_words(task) if not w.isdigit() and w not in _VAGUE))[:5]
    return ExtractedProcedure(
        name=f"How to {task}"[:80],
        steps=tuple(steps),
        description=f"steps given in answer to “{' '.join(episodes[0].split())}”",
        trigger_tags=tags,
    )
