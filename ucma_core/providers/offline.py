"""A deterministic provider that needs no model and no network.

:class:`OfflineProvider` answers every :class:`~ucma_core.providers.protocols.Provider`
method with rules: importance from :class:`~ucma_core.importance.HeuristicImportance`,
extractive summaries (:mod:`~ucma_core.providers.summary`), pattern-matched facts
("I live in Lisbon", "my sister Maria works at Acme": :mod:`~ucma_core.providers.fact_rules`),
procedures from how-to answers (:mod:`~ucma_core.providers.howto`) and, with lessons, from
troubleshooting stories (:mod:`~ucma_core.providers.story`),
and conflicts between single-valued facts (:mod:`~ucma_core.providers.conflicts`). It is
the default when no LLM is configured and the reference the LLM providers are checked
against. It favours precision: text it does not recognise gives no facts rather than
doubtful ones.
"""

from __future__ import annotations

from ucma_core.embedders.cache import check_int
from ucma_core.errors import InvalidInputError
from ucma_core.importance import HeuristicImportance
from ucma_core.providers.checks import (
    check_episodes,
    check_fact_pairs,
    check_groups,
    check_texts_and_speakers,
)
from ucma_core.providers.conflicts import facts_conflict
from ucma_core.providers.fact_rules import extract_facts
from ucma_core.providers.howto import how_to_procedure
from ucma_core.providers.protocols import DistilledLearning, ExtractedFact, ExtractedProcedure
from ucma_core.providers.story import Story, gerund, imperative
from ucma_core.providers.summary import summarize_group
from ucma_core.providers.text import join, lower_first
from ucma_core.records import LearningType

__all__ = ["OfflineProvider"]

_HEURISTIC = HeuristicImportance()


class OfflineProvider:
    """Rule-based :class:`~ucma_core.providers.protocols.Provider`: same input, same answer.

    Examples:
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

        Raises:
            InvalidInputError: ``groups`` is not a list of lists of strings, or ``max_words`` < 1.
        """
        checked = check_groups(groups)
        check_int("max_words", max_words, 1)
        return [summarize_group(group, max_words) for group in checked]

    def extract_facts(self, texts: list[str], *, speakers: list[str | None]) -> list[list[ExtractedFact]]:
        """Facts matched by patterns; first person is the speaker (``"user"`` when ``None``).

        No fact links a name to itself: "michael" saying "I'm Michael" gives none.

        Raises:
            InvalidInputError: ``texts`` is not a list of strings, or ``speakers`` does not
                hold one string or ``None`` per text.
        """
        items, who = check_texts_and_speakers(texts, speakers)
        return [
            extract_facts(text, (speaker or "").strip() or "user")
            for text, speaker in zip(items, who, strict=True)
        ]

    def extract_procedure(self, episodes: list[str]) -> ExtractedProcedure | None:
        """The steps of a how-to answer, or the action steps of a story that ends in success;
        ``None`` without either.

        A how-to answer is a question asking how to do something followed by the turns that
        answer it (:func:`~ucma_core.providers.howto.how_to_procedure`).

        Raises:
            InvalidInputError: ``episodes`` is not a list of strings.
        """
        checked = check_episodes(episodes)
        how_to = how_to_procedure(checked)
        if how_to is not None:
            return how_to
        story = Story(checked)
        if story.outcome is not True or not story.steps:
            return None
        name = story.name()
        if story.problem:
            description = f"What worked when {lower_first(story.problem)}."
        else:
            description = f"Steps that ended with: {story.success_line}."
        return ExtractedProcedure(
            name=name,
            steps=tuple(imperative(step) for step in story.steps),
            description=description,
            trigger_tags=story.tags(),
        )

    def distill_learning(self, episodes: list[str], *, succeeded: bool) -> DistilledLearning | None:
        """A "when <problem>, <what worked / what did not>" lesson, or ``None`` without one.

        Raises:
            InvalidInputError: ``episodes`` is not a list of strings or ``succeeded`` not a bool.
        """
        if not isinstance(succeeded, bool):
            raise InvalidInputError(f"succeeded must be a bool, got {type(succeeded).__name__}")
        story = Story(check_episodes(episodes))
        if not story.steps and (succeeded or not story.problem):
            return None
        when = f"When {lower_first(story.problem)}" if story.problem else f"When working on {story.topic()}"
        if succeeded:
            insight = f"{when}, {join([imperative(s, lower=True) for s in story.steps], ', then ')}."
            kind, title = LearningType.SUCCESS_PATTERN, "What fixed:"
        elif story.steps:
            insight = f"{when}, {join([gerund(s) for s in story.steps], ' and ')} did not work."
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
        """Whether each newer fact contradicts the older one.

        See :func:`~ucma_core.providers.conflicts.facts_conflict` for the rules.

        Raises:
            InvalidInputError: ``pairs`` is not a list of (older, newer) fact tuples.
        """
        return [facts_conflict(old, new) for old, new in check_fact_pairs(pairs)]
