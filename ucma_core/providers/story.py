"""Story analysis: the problem, the steps taken and the outcome in a sequence of episodes.

A troubleshooting story ("JWT tokens expire after 5 minutes." → "Added a leeway to
jwt.decode()." → "Fixed, works now.") is read sentence by sentence: a sentence that
starts with a known action verb is a step, the first one that names a problem is the
problem, and the last one that reports an outcome (:func:`ucma_core.outcomes.outcome`)
says how it ended. The offline provider turns a story into procedures and lessons.
"""

from __future__ import annotations

import re
from collections import Counter

from ucma_core.outcomes import outcome
from ucma_core.providers.text import TOKEN, content_words, lower_first, sentences

__all__ = ["VERB_FORMS", "Story", "gerund", "imperative"]

Step = tuple[str, str]  # (verb, rest): ("add", "a leeway to decode()")

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
#: Every form of the action verbs a story's steps start with, mapped to its base ("added" → "add").
VERB_FORMS = _FORMS
_STEP = re.compile(
    r"^(?:(?:then|so|next|first|finally|after\s+that|afterwards|eventually|later|also|and)\b[,\s]*)*"
    r"(?:(?:I|we)\s+(?:then\s+|also\s+|finally\s+|first\s+|just\s+)?)?"
    r"(?:(?:fixed|solved|resolved)\s+(?:it\s+|this\s+|that\s+|the\s+\w+\s+)?by\s+)?"
    r"(?P<verb>[a-z]+)\b(?P<rest>.*)$",
    re.I,
)
_FIXED = re.compile(r"^(?:fixed|solved|resolved|done)\s*[:\-\u2013\u2014]\s+", re.I)
_PROBLEM = re.compile(
    r"\b(?:errors?|bugs?|fail\w*|broken|broke|breaks|crash\w*|issues?|problems?|exceptions?|timeouts?|"
    r"timed\s+out|wrong|unexpected(?:ly)?|instead\s+of|expir\w*|slow|missing|can't|cannot|couldn't|"
    r"unable|denied|refused|leak\w*|hang\w*|stuck|invalid|mismatch\w*|too\s+(?:early|late|slow|many|much))\b",
    re.I,
)
_OUTCOME_WORDS = frozenset(
    """fixed resolved solved works worked working done success successful successfully succeeded passes
    pass passed passing green back normal finally everything good great issue problem bug yay nice ok okay
    seems looks thanks didn doesn don won work help helped luck gave giving failed failing broken still
    stopped quit keeps nothing difference""".split()
)
_GENERIC = frozenset(
    [
        *_FORMS,
        *_OUTCOME_WORDS,
        *"instead minutes seconds hours days error errors fail fails bug bugs issue wrong".split(),
    ]
)


class Story:
    """What a sequence of episodes says: the problem, the steps taken, how it ended.

    Attributes:
        problem: The first sentence that names a problem ("" when none does).
        steps: The actions taken, in order, as (base verb, rest) pairs.
        outcome: ``True`` if the last outcome reported is a success, ``False`` for a
            failure, ``None`` when no sentence reports one.
        success_line: The last sentence that reported a success.

    Examples:
        >>> story = Story(["Build fails on CI.", "Pinned numpy to 1.26.", "Works now."])
        >>> story.problem, story.steps, story.outcome
        ('Build fails on CI', [('pin', 'numpy to 1.26')], True)
    """

    def __init__(self, episodes: list[str]) -> None:
        self.problem = ""
        self.steps: list[Step] = []
        self.outcome: bool | None = None
        self.success_line = ""
        self._words: Counter[str] = Counter()
        for line in (c.rstrip(".! ") for e in episodes for s in sentences(e) for c in _clauses(s)):
            self._words.update(w for w in content_words(line) if w not in _GENERIC and not w.isdigit())
            said = outcome(line)
            action = _FIXED.sub("", line)  # "Fixed: added a leeway" reports success and a step
            only_outcome = said is not None and not set(content_words(action)) - _OUTCOME_WORDS
            step = None if only_outcome else _step(action)
            if step:
                self.steps.append(step)
            elif not only_outcome and not self.problem and _PROBLEM.search(line):
                self.problem = line
            if said is not None:
                self.outcome = said == "success"
                self.success_line = line if said == "success" else self.success_line

    def tags(self, n: int = 5) -> tuple[str, ...]:
        """The ``n`` words the story is most about (most frequent first, then latest first)."""
        order = {w: i for i, w in enumerate(reversed(list(self._words)))}
        ranked = sorted(self._words, key=lambda w: (-self._words[w], -order[w]))
        return tuple(ranked[:n])

    def name(self, limit: int = 80) -> str:
        """A procedure name a reader can scan: the fix for the problem, in its own words
        ("Fix: JWT tokens expire after 5 minutes"), or the first steps ("Run the database
        migration, then restart the worker"); at most ``limit`` characters, cut at a word.

        Examples:
            >>> Story(["The JWT tokens expire after 5 minutes and users get logged out.",
            ...        "Added a leeway to the validator.", "Works now."]).name()
            'Fix: JWT tokens expire after 5 minutes'
            >>> Story(["Ran the migration.", "Restarted the worker.", "Deploy works now."]).name()
            'Run the migration, then restart the worker'
        """
        if self.problem:
            clause = re.split(r",|;|\s+(?:and|but|so|because|which|when)\s", self.problem, maxsplit=1)[0]
            text = "Fix: " + lower_first(re.sub(r"^(?:the|a|an|my|our)\s+", "", clause.strip(), flags=re.I))
        elif self.steps:
            text = imperative(self.steps[0])
            if len(self.steps) > 1:
                text += ", then " + imperative(self.steps[1], lower=True)
        else:
            return "Procedure: " + self.topic()
        if len(text) <= limit:
            return text
        return text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;: ") + "…"

    def topic(self) -> str:
        """A few words naming what the story is about, from the problem when there is one."""
        source = self.problem or " ".join(self.tags(3))
        words = [w for w in TOKEN.findall(source) if w.lower() in self._words]
        return " ".join(dict.fromkeys(words[:3])) or "task"


def imperative(step: Step, *, lower: bool = False) -> str:
    """A step as an instruction: ``("add", "a leeway")`` → ``"Add a leeway"`` (or ``"add a leeway"``)."""
    text = f"{step[0]} {step[1]}".strip()
    return text if lower else text[0].upper() + text[1:]


def gerund(step: Step) -> str:
    """A step as something done: ``("add", "a leeway")`` → ``"adding a leeway"``."""
    verb, _, more = step[0].partition(" ")
    return " ".join(p for p in (_inflect(verb)[1], more, step[1]) if p)


def _clauses(sentence: str) -> list[str]:
    """A sentence's clauses for story reading, split at "; " ("Fixed: added a leeway; works now")."""
    return [c for c in re.split(r";\s+", sentence) if c.strip()]


def _step(line: str) -> Step | None:
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
