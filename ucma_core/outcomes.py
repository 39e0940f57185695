"""Whether a text reports that something worked or failed.

One detector for every part of UCMA that asks: consolidation looks for episodes that
close a story ("Fixed, it works now!"), and the offline provider reads a story line
by line to find its steps and how it ended.

The text is read clause by clause (cut at sentence ends, commas, semicolons, dashes
and at "but", "and", "so", "then", "although", "though", "however", "because",
"whereas"); the last clause that reports an outcome decides, so "Still failing.
Cleared the cache, works now." is a success and "It worked, but now it still fails"
a failure. A clause reports a failure when it says so ("didn't help", "still broken",
"gave up", "stopped working", "no luck") or when a success word is negated by one of
the three words before it ("not fixed", "isn't working", "never passed", "nothing
worked"); it reports a success when it has a success word ("fixed", "resolved",
"solved", "done", "succeeded", "works", "passes", "green", "back to normal") that is
not negated. Questions report nothing ("Is it fixed?"), and neither do work in
progress or employment ("I'm working on it", "Ana works at Acme").
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["Outcome", "outcome"]

#: What a text reports: ``"success"`` or ``"failure"``.
Outcome = Literal["success", "failure"]

_SUCCESS = re.compile(
    r"\b(?:fixed|resolved|solved|done|succeeded|success(?:ful(?:ly)?)?|back\s+to\s+normal"
    # "it works", "works for me"; not employment or activity ("works at Acme", "working on it")
    r"|work(?:s|ed|ing)\b(?!\s+(?:at|as|on|in|with|from|under|through|remotely|part|full|hard|late|"
    r"long|overtime|nights?|weekends?|together|here|there)\b|\s+for\s+(?!(?:me|us|now)\b))"
    # "tests pass"; not "passed away", "passed the exam"
    r"|pass(?:es|ed|ing)?\b(?!\s+(?:the|a|an|by|away|through|on|out|along|it|me|you|this|that|my|your|"
    r"his|her|our|their)\b)"
    # "CI is green", "all green again"; not "green tea"
    r"|green(?=\s*(?:again\b|now\b|$|[.!,;:)])))",
    re.I,
)
_FAILURE = re.compile(
    r"\b(?:didn't|did\s+not|doesn't|does\s+not|don't|do\s+not|won't|wouldn't)\s+(?:seem\s+to\s+)?"
    r"(?:work|help|fix|change|matter)"
    r"|\bstill\s+(?:fail\w*|broken|crash\w*|happen\w*|expir\w*|the\s+same|wrong|see\w*)"
    r"|\b(?:failed|fails|crashed|broke)\s+again\b|\bkeeps?\s+(?:failing|crashing|breaking)\b"
    r"|\b(?:stop(?:s|ped)?|quit)\s+working\b|\b(?:made|makes)\s+no\s+difference\b"
    r"|\bno\s+luck\b|\bg(?:ave|iving)\s+up\b|\bnot\s+(?:fixed|resolved|solved|working)\b",
    re.I,
)
_NEGATIONS = frozenset("not no never nothing nobody without cannot hardly barely".split())
_BUSY = frozenset("i'm im am we're been you're".split())  # "I'm working" is activity, not an outcome
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_CLAUSE = re.compile(
    r"[,;:]|\s[-\u2013\u2014]\s|\b(?:but|and|so|then|although|though|however|because|whereas)\b", re.I
)
_WORD = re.compile(r"[\w']+")


def outcome(text: str) -> Outcome | None:
    """What ``text`` reports: ``"success"``, ``"failure"`` or ``None`` (no outcome).

    The last clause that reports an outcome decides (see the module docstring).

    Args:
        text: Any text: one sentence, a message or a whole episode.

    Returns:
        ``"success"``, ``"failure"``, or ``None`` when the text reports neither.

    Examples:
        >>> outcome("Fixed, it works now!")
        'success'
        >>> outcome("Restarted the pod. Still failing.")
        'failure'
        >>> outcome("It isn't working yet")
        'failure'
        >>> outcome("Still failing. Cleared the cache and it works now.")
        'success'
        >>> outcome("Is it fixed?") is None, outcome("I'm working on it") is None
        (True, True)
    """
    verdict: Outcome | None = None
    for sentence in _SENTENCE.split(text.replace("\u2019", "'")):
        if not sentence.strip() or sentence.rstrip().endswith("?"):
            continue  # questions report nothing
        for clause in _CLAUSE.split(sentence):
            verdict = _clause_outcome(clause) or verdict
    return verdict


def _clause_outcome(clause: str) -> Outcome | None:
    if _FAILURE.search(clause):
        return "failure"
    verdict: Outcome | None = None
    for match in _SUCCESS.finditer(clause):
        before = [w.lower() for w in _WORD.findall(clause[: match.start()])[-3:]]
        if match[0].lower() == "working" and before and (before[-1] in _BUSY or before[-2:] == ["we", "are"]):
            continue
        if any(w in _NEGATIONS or w.endswith("n't") for w in before):
            return "failure"
        verdict = "success"
    return verdict
