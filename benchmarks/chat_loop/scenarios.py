"""Short chat histories with one question each, and a long-absence profile scenario.

Written for this benchmark. Three kinds of scenario, each a user's turns (with the day
they were said, counted from the scenario's start) and a question asked afterwards:

* ``update`` — the user said one thing, then revised it ("actually…", "we moved to…",
  "not … anymore"). Turns marked ``current`` hold the revision, ``stale`` the old
  statement. The question asks for the current state.
* ``echo`` — the user asked something and the assistant answered it. ``question`` marks
  the user's question, ``answer`` the assistant's reply. The question asks the same thing
  again; ``procedure`` lists words a learned procedure should contain when the answer is
  a how-to.
* ``whose`` — the user stated something about themselves (``self``) and something
  similar about a person they know (``other``). The question asks about the user.

The profile scenario is one user's month of chat (:data:`PROFILE`), the questions a
returning user asks (:data:`PROFILE_QUESTIONS`, each with words the answer contains) and
the facts a reader would have learned from it (:data:`PROFILE_FACTS`).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "MULTI_TOPIC",
    "PROFILE",
    "PROFILE_FACTS",
    "PROFILE_NAME",
    "PROFILE_QUESTIONS",
    "SCENARIOS",
    "Scenario",
    "Turn",
]


@dataclass(frozen=True)
class Turn:
    """One turn: the day it was said (from the scenario's start), who said it, the text, its role."""

    day: float
    source: str
    text: str
    role: str = ""
    topic: str = ""


@dataclass(frozen=True)
class Scenario:
    """A short history for one user and the question asked after it."""

    kind: str
    user_id: str
    name: str
    turns: tuple[Turn, ...]
    question: str
    procedure: tuple[str, ...] = ()


def _s(kind: str, user_id: str, question: str, *turns: Turn, procedure: tuple[str, ...] = ()) -> Scenario:
    return Scenario(kind, user_id, user_id.split("-")[0].capitalize(), turns, question, procedure)


U, A = "user", "assistant"

SCENARIOS: list[Scenario] = [
    # ------------------------------------------------------------------ knowledge updates
    _s(
        "update",
        "sam-laptop",
        "which laptop did I pick in the end?",
        Turn(0.0, U, "I need a new laptop for work, mostly Python and some Docker."),
        Turn(0.01, A, "For that workload, 16 GB of RAM matters more than the CPU."),
        Turn(0.02, U, "I'm going to buy the ThinkPad X1 Carbon for work.", "stale"),
        Turn(0.03, A, "Good choice for Linux; the keyboard is excellent."),
        Turn(2.0, U, "Actually I decided on the MacBook Air instead.", "current"),
        Turn(2.01, A, "Noted. The 16 GB model will handle Docker fine."),
    ),
    _s(
        "update",
        "ana-city",
        "where do I live now?",
        Turn(0.0, U, "I live in Berlin, near Tempelhof.", "stale"),
        Turn(0.01, A, "Tempelhof field is lovely in summer."),
        Turn(3.0, U, "Any tips for learning German faster?"),
        Turn(3.01, A, "Daily 20-minute sessions beat one long weekly lesson."),
        Turn(20.0, U, "We moved to Lisbon last weekend!", "current"),
        Turn(20.01, A, "Congratulations on the move! How is the new flat?"),
    ),
    _s(
        "update",
        "ines-job",
        "where do I work?",
        Turn(0.0, U, "I work at Initech as a data analyst.", "stale"),
        Turn(0.01, A, "Nice, what does the data stack look like there?"),
        Turn(0.02, U, "Mostly SQL Server and a lot of Excel."),
        Turn(30.0, U, "I don't work at Initech anymore, I joined Globex in March.", "current"),
        Turn(30.01, A, "Congrats on the new role at Globex!"),
    ),
    _s(
        "update",
        "rosa-diet",
        "am I vegetarian?",
        Turn(0.0, U, "I'm vegetarian, so no meat recipes please.", "stale"),
        Turn(0.01, A, "Understood, I'll stick to vegetarian recipes."),
        Turn(1.0, U, "Can you suggest a quick lunch?"),
        Turn(1.01, A, "A chickpea salad with lemon and feta takes ten minutes."),
        Turn(40.0, U, "I'm not vegetarian anymore, I eat fish and chicken now.", "current"),
        Turn(40.01, A, "Thanks for telling me, I'll include fish and chicken."),
    ),
    _s(
        "update",
        "michael-editor",
        "which editor do I use?",
        Turn(0.0, U, "I use vim for everything.", "stale"),
        Turn(0.01, A, "Then the ALE plugin gives you linting inside vim."),
        Turn(15.0, U, "I switched from vim to VS Code last month.", "current"),
        Turn(15.01, A, "The Vim extension for VS Code keeps most of your keybindings."),
    ),
    _s(
        "update",
        "lena-standup",
        "when is our standup?",
        Turn(0.0, U, "Our standup is at 9:30 every day.", "stale"),
        Turn(0.01, A, "I'll keep your mornings free before 9:30 then."),
        Turn(10.0, U, "We moved the standup to 10:15.", "current"),
        Turn(10.01, A, "Got it, your mornings are free until 10:15 now."),
    ),
    _s(
        "update",
        "ana-manager",
        "who is my manager?",
        Turn(0.0, U, "My manager is Carla.", "stale"),
        Turn(0.01, A, "Is Carla the one who wanted the quarterly demo?"),
        Turn(25.0, U, "Carla left; my new manager is Dev.", "current"),
        Turn(25.01, A, "Thanks, I'll address the next report to Dev."),
    ),
    _s(
        "update",
        "ana-answers",
        "how do I like my answers?",
        Turn(0.0, U, "I prefer long, detailed explanations.", "stale"),
        Turn(0.01, A, "I'll explain things step by step then."),
        Turn(5.0, U, "Please keep answers short from now on, I prefer brevity.", "current"),
        Turn(5.01, A, "Understood, short answers from now on."),
    ),
    _s(
        "update",
        "omar-database",
        "which database did we choose for the events store?",
        Turn(0.0, U, "Let's use MongoDB for the events store.", "stale"),
        Turn(0.01, A, "MongoDB works well for append-heavy event data."),
        Turn(1.0, U, "Scratch that, we're going with Postgres instead.", "current"),
        Turn(1.01, A, "Postgres with a JSONB column will do the job."),
    ),
    # ------------------------------------------------------------------ questions echoed
    _s(
        "echo",
        "jo-deploy",
        "how do I deploy the staging app?",
        Turn(0.0, U, "how do I deploy the staging app?", "question"),
        Turn(
            0.01,
            A,
            "Build the image with `docker build -t web .`, push it with `docker push registry/web`, "
            "then run `kubectl apply -f k8s/staging.yaml`.",
            "answer",
        ),
        Turn(0.02, U, "ok thanks"),
        Turn(3.0, U, "The staging database is getting slow."),
        Turn(3.01, A, "Check the slow query log first; a missing index is the usual cause."),
        procedure=("docker", "kubectl"),
    ),
    _s(
        "echo",
        "ben-router",
        "how do I reset the router?",
        Turn(0.0, U, "How do I reset my router to factory settings?", "question"),
        Turn(
            0.01,
            A,
            "Hold the reset button on the back for 10 seconds until the lights blink. Then wait two "
            "minutes and reconnect with the password printed on the sticker.",
            "answer",
        ),
        Turn(0.02, U, "great"),
        procedure=("reset button",),
    ),
    _s(
        "echo",
        "kai-postgres",
        "which port does postgres use?",
        Turn(0.0, U, "What port does Postgres listen on by default?", "question"),
        Turn(0.01, A, "Postgres listens on port 5432 by default.", "answer"),
        Turn(0.02, U, "thanks"),
    ),
    _s(
        "echo",
        "eva-rome",
        "what was the pasta place in Rome you suggested?",
        Turn(0.0, U, "What was the name of that pasta place you suggested in Rome?", "question"),
        Turn(0.01, A, "It was Da Enzo al 29, in Trastevere. Go early, there is always a queue.", "answer"),
        Turn(0.02, U, "lovely"),
    ),
    _s(
        "echo",
        "lou-sourdough",
        "how do I make a sourdough starter?",
        Turn(0.0, U, "How can I make a sourdough starter?", "question"),
        Turn(
            0.01,
            A,
            "Mix 50 g of flour and 50 g of water in a jar and leave it at room temperature. Every day, "
            "discard half and feed it again with the same amounts. After about a week it doubles "
            "within six hours and is ready.",
            "answer",
        ),
        Turn(0.02, U, "nice"),
        procedure=("flour", "water"),
    ),
    _s(
        "echo",
        "max-git",
        "how do I undo the last git commit but keep my changes?",
        Turn(0.0, U, "how do I undo the last git commit but keep the changes?", "question"),
        Turn(0.01, A, "Run `git reset --soft HEAD~1`; your changes stay staged.", "answer"),
        Turn(0.02, U, "perfect"),
        procedure=("git reset",),
    ),
    # ------------------------------------------------------------------ whose fact
    _s(
        "whose",
        "ana-home",
        "where do I live?",
        Turn(0.0, U, "Hi, I'm Ana! I work remotely, so I live in Lisbon but travel a lot.", "self"),
        Turn(0.01, A, "Nice to meet you, Ana. Lisbon is a great base for travel."),
        Turn(4.0, U, "My sister Marta lives in Porto.", "other"),
        Turn(4.01, A, "Porto is a short train ride from Lisbon."),
    ),
    _s(
        "whose",
        "tom-work",
        "what do I do for work?",
        Turn(0.0, U, "I'm Tom, I work as a nurse at St Mary's hospital, mostly night shifts.", "self"),
        Turn(0.01, A, "Night shifts must be tough."),
        Turn(2.0, U, "My wife Jenna works at Google as an engineer.", "other"),
        Turn(2.01, A, "Does Jenna work remotely?"),
    ),
    _s(
        "whose",
        "lena-allergy",
        "what am I allergic to?",
        Turn(0.0, U, "I'm allergic to penicillin.", "self"),
        Turn(0.01, A, "Good to know; I'll flag penicillin-based drugs."),
        Turn(6.0, U, "My son Max is allergic to peanuts.", "other"),
        Turn(6.01, A, "I'll leave peanuts out of the kids' recipes."),
    ),
    _s(
        "whose",
        "priya-age",
        "how old am I?",
        Turn(0.0, U, "I'm 34 and I grew up in Chennai.", "self"),
        Turn(0.01, A, "Chennai in December is lovely."),
        Turn(3.0, U, "My brother Raj just turned 40.", "other"),
        Turn(3.01, A, "Happy birthday to Raj!"),
    ),
    _s(
        "whose",
        "ana-music",
        "what music do I like?",
        Turn(0.0, U, "I love jazz and bouldering.", "self"),
        Turn(0.01, A, "There is a jazz night at the Hot Clube on Thursdays."),
        Turn(2.0, U, "My husband Luis loves heavy metal.", "other"),
        Turn(2.01, A, "Maybe a festival with both stages then!"),
    ),
    _s(
        "whose",
        "dan-car",
        "what car do I drive?",
        Turn(0.0, U, "I drive a 2015 Golf, it still runs great.", "self"),
        Turn(0.01, A, "Golfs from that year are very reliable."),
        Turn(5.0, U, "My dad drives a Tesla now.", "other"),
        Turn(5.01, A, "Does he like it so far?"),
    ),
    _s(
        "whose",
        "mia-pet",
        "what pet do I have?",
        Turn(0.0, U, "I have a cat named Pixel.", "self"),
        Turn(0.01, A, "Pixel is a great name for a cat."),
        Turn(3.0, U, "My neighbour Jonas has a dog named Bruno.", "other"),
        Turn(3.01, A, "Do Pixel and Bruno get along?"),
    ),
]

# ------------------------------------------------------------------ corrections on several topics
#: Chats where corrections on several topics interleave (``topic`` on every statement,
#: ``role`` stale / current), with one question per topic: ``(user_id, name, turns,
#: [(question, topic)])``. A correction must never supersede a statement on another topic.
MULTI_TOPIC: list[tuple[str, str, tuple[Turn, ...], list[tuple[str, str]]]] = [
    (
        "kim-two-decisions",
        "Kim",
        (
            Turn(0.0, U, "I'm going to buy the ThinkPad X1 Carbon for work.", "stale", "laptop"),
            Turn(0.01, A, "The X1 Carbon runs Linux very well."),
            Turn(1.0, U, "I'm going to deploy the API on Heroku.", "stale", "deploy"),
            Turn(1.01, A, "Heroku is simple; mind the cost of the dynos."),
            Turn(2.0, U, "Actually I decided on Fly.io for the deploy.", "current", "deploy"),
            Turn(2.01, A, "Fly.io runs close to your users, good pick."),
            Turn(3.0, U, "Actually I decided on the MacBook Air instead.", "current", "laptop"),
            Turn(3.01, A, "Noted. The 16 GB model will handle Docker fine."),
        ),
        [("where do I deploy the API?", "deploy"), ("which laptop did I choose?", "laptop")],
    ),
    (
        "omar-three-topics",
        "Omar",
        (
            Turn(0.0, U, "Let's use MongoDB for the events store.", "stale", "database"),
            Turn(0.01, A, "MongoDB works well for append-heavy event data."),
            Turn(0.02, U, "I use vim for everything.", "stale", "editor"),
            Turn(0.03, A, "Then the ALE plugin gives you linting inside vim."),
            Turn(0.04, U, "I live in Berlin, near Tempelhof.", "stale", "city"),
            Turn(1.0, U, "Scratch that, we're going with Postgres instead.", "current", "database"),
            Turn(1.01, A, "Postgres with a JSONB column will do the job."),
            Turn(2.0, U, "Actually I use Neovim now.", "current", "editor"),
            Turn(2.01, A, "Neovim reads most of your vimrc."),
            Turn(9.0, U, "We moved to Lisbon last weekend!", "current", "city"),
            Turn(9.01, A, "Congratulations on the move!"),
        ),
        [
            ("which database did we choose for the events store?", "database"),
            ("which editor do I use?", "editor"),
            ("where do I live?", "city"),
        ],
    ),
    (
        "lea-plans",
        "Lea",
        (
            Turn(0.0, U, "I'm going to learn the cello this year.", "stale", "instrument"),
            Turn(0.01, A, "The cello is a wonderful first string instrument."),
            Turn(1.0, U, "My manager is Carla.", "stale", "manager"),
            Turn(2.0, U, "I'm going to switch my phone to a Pixel 8.", "stale", "phone"),
            Turn(2.01, A, "The Pixel camera is excellent."),
            Turn(3.0, U, "Actually I decided on the violin instead.", "current", "instrument"),
            Turn(3.01, A, "The violin it is; a rental is a good start."),
            Turn(4.0, U, "Carla left; my new manager is Dev.", "current", "manager"),
            Turn(5.0, U, "No, I'm getting an iPhone 15, not the Pixel.", "current", "phone"),
        ),
        [
            ("which instrument am I learning?", "instrument"),
            ("who is my manager?", "manager"),
            ("which phone am I getting?", "phone"),
        ],
    ),
]

PROFILE_NAME = "Ana"
#: ``(day, source, text)``: one user's month with a chat assistant.
PROFILE: list[tuple[float, str, str]] = [
    (0.0, U, "Hi! I'm Ana."),
    (0.0, A, "Hi Ana, nice to meet you. What can I help with?"),
    (0.01, U, "I live in Lisbon and I work at Initech as a data engineer."),
    (0.02, A, "Great, I'll keep that in mind."),
    (0.03, U, "I prefer short answers with code examples."),
    (0.04, U, "ok"),
    (1.0, U, "My sister Marta lives in Porto."),
    (1.01, A, "Porto is lovely in spring."),
    (1.02, U, "I'm vegetarian and allergic to cats."),
    (1.03, A, "Noted: vegetarian, and no cat-friendly cafes."),
    (2.0, U, "lol"),
    (2.01, U, "My DuckDB query runs out of memory on a 40 GB parquet file."),
    (
        2.02,
        A,
        "That is likely the hash aggregate spilling; set memory_limit and temp_directory so it can spill "
        "to disk.",
    ),
    (2.03, U, "Set memory_limit to 8GB and temp_directory to /tmp/duck."),
    (2.04, U, "Fixed, it works now!"),
    (2.05, A, "Great, glad it worked."),
    (4.0, U, "I love jazz and bouldering."),
    (4.01, A, "There is a bouldering gym in Marvila you might like."),
    (5.0, U, "My birthday is on March 3."),
    (5.01, U, "I have a dog named Miso."),
    (5.02, A, "Miso is a great name for a dog!"),
    (6.0, U, "how do I export a DuckDB table to parquet?"),
    (6.01, A, "Run `COPY my_table TO 'out.parquet' (FORMAT parquet);` from the DuckDB shell."),
    (6.02, U, "thanks"),
    (8.0, U, "I'm going to buy the ThinkPad X1 Carbon for work."),
    (8.01, A, "The X1 Carbon runs Linux very well."),
    (9.0, U, "Actually I decided on the MacBook Air instead."),
    (9.01, A, "Good call, the battery life is excellent."),
    (10.0, U, "haha ok"),
    (12.0, U, "The weather in Lisbon was grey all week."),
    (12.01, A, "Sunnier days are forecast for the weekend."),
]
#: ``(question, words the answer contains)`` a returning user asks.
PROFILE_QUESTIONS: list[tuple[str, tuple[str, ...]]] = [
    ("where do I live?", ("lisbon",)),
    ("where do I work?", ("initech",)),
    ("what's my sister's name?", ("marta",)),
    ("where does my sister live?", ("porto",)),
    ("am I vegetarian?", ("vegetarian",)),
    ("what am I allergic to?", ("cats",)),
    ("how do I like my answers?", ("short answers",)),
    ("what's my dog called?", ("miso",)),
    ("when is my birthday?", ("march 3",)),
    ("what music do I like?", ("jazz",)),
    ("which laptop did I choose?", ("macbook air",)),
    ("how do I export a DuckDB table to parquet?", ("copy",)),
]
#: The facts a reader would have learned from :data:`PROFILE` (current at its end).
PROFILE_FACTS: list[tuple[str, str, str]] = [
    ("Ana", "lives in", "Lisbon"),
    ("Ana", "works at", "Initech"),
    ("Ana", "works as", "data engineer"),
    ("Ana", "prefers", "short answers with code examples"),
    ("Ana", "has sister", "Marta"),
    ("Marta", "lives in", "Porto"),
    ("Ana", "is", "vegetarian"),
    ("Ana", "is allergic to", "cats"),
    ("Ana", "likes", "jazz"),
    ("Ana", "likes", "bouldering"),
    ("Ana", "has birthday", "March 3"),
    ("Ana", "has dog", "Miso"),
    ("Ana", "chose", "MacBook Air"),
]
