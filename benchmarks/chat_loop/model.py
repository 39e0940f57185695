"""A scripted chat model: canned replies, in a model's style, to what the benchmark sends.

:class:`ScriptedModel` is a :class:`~ucma_core.providers.ChatTransport`: it reads the
JSON the :class:`~ucma_core.providers.LLMProvider` sends, looks the texts up in the
tables below and answers with the JSON a capable model would write. The replies were
written for this benchmark, independently of the gold labels, and keep a few slips real
models make (a near-duplicate fact, a synonym for a predicate, an object with an extra
word, a self-naming fact, a borderline importance score). The rows it produces measure
what the library does with a model's answers (checking, normalising, superseding,
learning), not the quality of any real model.

A text the tables do not know gets a cautious answer (importance 0.5, no facts, no
procedure, no lesson); :attr:`ScriptedModel.unknown` records it.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["ScriptedModel"]

#: Importance a model gives each labelled turn (keep / drop set).
IMPORTANCE: dict[str, float] = {
    # user, worth keeping
    "I'm Priya, I run a small bakery in Leeds.": 0.8,
    "I prefer answers as bullet points, not long paragraphs.": 0.8,
    "My daughter starts primary school in September.": 0.7,
    "The build fails with ModuleNotFoundError: No module named 'yaml'.": 0.6,
    "How do I rotate the API keys without downtime?": 0.5,
    "Can you remind me to renew my passport next month?": 0.8,
    "I switched our CI from Jenkins to GitHub Actions last week.": 0.7,
    "We run three replicas behind nginx.": 0.45,
    "my flight to Oslo is on the 14th at 7am": 0.8,
    "I'm allergic to peanuts, keep that in mind for recipes.": 0.9,
    "Let's go with Postgres for the orders service.": 0.7,
    "I don't drink coffee anymore.": 0.55,
    "What's the difference between a mutex and a semaphore?": 0.3,
    "Budget is 1200 euros at most.": 0.7,
    "The deadline for the grant report is Friday.": 0.8,
    "I can't stand long meetings.": 0.5,
    "our staging cluster runs kubernetes 1.29": 0.5,
    "Memory usage climbs to 8 GB and then the worker gets OOM-killed.": 0.6,
    "I moved to Utrecht in March.": 0.8,
    "my manager is Carla and she wants a demo on Thursday": 0.75,
    "why does my sourdough come out so dense?": 0.35,
    "We decided to postpone the launch until after the audit.": 0.8,
    "I usually work from 7 to 3 so I can pick up the kids.": 0.65,
    "the tests pass locally but fail on CI": 0.5,
    "Actually I went with the blue one in the end.": 0.4,
    "I'm training for a half marathon in October.": 0.6,
    "Which is faster for 10 GB of CSV, pandas or polars?": 0.3,
    "I need the slides translated into German by Monday.": 0.7,
    "I'm vegetarian.": 0.85,
    "Tom is my co-founder, he handles sales.": 0.75,
    # user, noise
    "ok": 0.0,
    "thanks!": 0.05,
    "h": 0.0,
    "k": 0.0,
    "lol": 0.0,
    "ok thanks": 0.05,
    "cool cool": 0.05,
    "sounds good": 0.05,
    "great, thank you so much": 0.1,
    "\N{THUMBS UP SIGN}": 0.05,
    "?": 0.1,
    "hmm": 0.05,
    "yes": 0.1,
    "no worries": 0.05,
    "brb": 0.05,
    "ty": 0.0,
    "haha nice": 0.05,
    "perfect": 0.1,
    "got it": 0.1,
    "sure": 0.1,
    ".": 0.0,
    "asdf": 0.05,
    "hello": 0.05,
    "good morning!": 0.05,
    "bye for now": 0.05,
    "nice one": 0.05,
    "ok let me check": 0.15,
    "one sec": 0.1,
    "thx!!": 0.0,
    "yep yep": 0.05,
    "awesome, thanks a lot!": 0.1,
    "oh wow": 0.1,
    # assistant, worth keeping
    "That smells like a DNS cache on the client side still pointing at the old address.": 0.6,
    "The error comes from a version mismatch between numpy and pandas.": 0.65,
    "Sounds like the cron job runs in UTC rather than your local time.": 0.6,
    "Consider polars for that; it reads a 10 GB CSV lazily without running out of memory.": 0.55,
    "I'd keep the secrets in a vault instead of .env files.": 0.5,
    "Try lowering the batch size to 16.": 0.4,
    "You should pin requests to 2.31 until the proxy bug is fixed.": 0.6,
    "Run `kubectl rollout restart deployment/web` to restart the pods.": 0.6,
    "A mutex has one owner at a time; a semaphore lets up to N holders in.": 0.45,
    "The Eurostar takes about 2 hours 20 minutes from London to Paris.": 0.4,
    "To deploy: build the image, push it to the registry, then apply the manifest with kubectl.": 0.7,
    "So we'll use the blue-green rollout and keep the old stack for a day.": 0.75,
    "Your appointment is booked for Tuesday at 10:30.": 0.85,
    "For a vegetarian dinner near the cathedral, Da Terra is a good pick.": 0.45,
    "Dense sourdough usually means the starter was not active enough; feed it twice before baking.": 0.5,
    "The OOM kills are likely caused by the unbounded cache in the worker; cap it with maxsize.": 0.65,
    "Use a lock file and `pip install --require-hashes` so CI installs exactly what you tested.": 0.55,
    "It's probably the missing index on orders.customer_id that makes the query slow.": 0.6,
    "You can rotate keys with zero downtime by accepting both the old and new key for an hour.": 0.6,
    "Better to split the report into two PDFs; the portal rejects files over 20 MB.": 0.55,
    "The flaky test depends on dict ordering; sort the keys before comparing.": 0.6,
    "Mix 100 g flour with 100 g water, and feed the starter daily for a week.": 0.5,
    "Your passport renewal reminder is set for the 1st of next month.": 0.7,
    "I recommend the 14-inch model; the 13-inch one has only 8 GB of RAM.": 0.5,
    "Don't run migrations and the deploy in one step; run the migration job first.": 0.6,
    # assistant, noise (one borderline slip: "Glad that worked out." scored as worth keeping)
    "You're welcome!": 0.0,
    "Happy to help!": 0.0,
    "Glad that worked out.": 0.25,
    "Sure thing.": 0.05,
    "Let me know if there's anything else I can do.": 0.05,
    "Good morning! How can I help you today?": 0.05,
    "No problem at all.": 0.0,
    "Great question!": 0.05,
    "Anytime!": 0.0,
    "Sounds good.": 0.05,
    "Hi there!": 0.0,
    "I'm here if you need anything else.": 0.05,
    "Of course, happy to help with that.": 0.1,
    "Thanks for letting me know!": 0.1,
    # tool
    "Fixed: added a 60-second leeway to jwt.decode(); the logout issue is resolved.": 0.8,
    "pytest: 132 passed, 2 failed in 4.1s": 0.5,
    "HTTP 503 from payments-api after a 30 s timeout": 0.6,
    "disk usage on db-1 is at 93%": 0.45,
    "(no output)": 0.15,
    # held-out turns
    "My landlord is raising the rent by 15% in June.": 0.75,
    "I'm flying to Tokyo on the 3rd for two weeks.": 0.8,
    "can you explain what a race condition is?": 0.3,
    "The invoice from Acme is still unpaid.": 0.6,
    "I never eat before a run.": 0.55,
    "we're hiring two backend devs this quarter": 0.6,
    "Please don't use emojis in your replies.": 0.8,
    "It's my wedding anniversary next Saturday.": 0.85,
    "the API returns 401 after I refresh the token": 0.55,
    "Mum's surgery went well.": 0.6,
    "okie dokie": 0.0,
    "thank u": 0.05,
    "alright": 0.05,
    "yes please": 0.15,
    "cool, ty": 0.05,
    "x": 0.0,
    "no thanks": 0.1,
    "great stuff": 0.05,
    "nvm": 0.1,
    "see ya": 0.0,
    "That points to a race between the two writers; add a lock around the update.": 0.65,
    "Use `git bisect` to find the commit that introduced the regression.": 0.55,
    "The 401 happens because the refresh token is sent to the wrong endpoint.": 0.65,
    "A race condition is when the result depends on the timing of two threads.": 0.35,
    "I've added the anniversary to your calendar for Saturday.": 0.7,
    "You might want to ask for a written notice about the rent increase.": 0.45,
    "Tokyo in early spring is cold at night, so pack a warm jacket.": 0.3,
    "Set `PYTHONHASHSEED=0` if you need the same order on every run.": 0.5,
    "You're very welcome, good luck!": 0.0,
    "Glad I could help.": 0.05,
    "Hello again!": 0.0,
    "Is there anything else?": 0.05,
    "Okay!": 0.0,
    "Absolutely, happy to.": 0.05,
    "exit code 1: permission denied on /var/lib/app": 0.7,
    "build succeeded in 42s": 0.35,
    "[]": 0.1,
    "null": 0.05,
}

_F = tuple[str, str, str, float] | tuple[str, str, str, float, dict[str, Any]]
_R = {"revises": True}

#: Facts a model extracts from each user text; ``{me}`` stands for the speaker.
FACTS: dict[str, list[_F]] = {
    "I'm Michael.": [("{me}", "is named", "Michael", 0.9)],
    "Perfect. I prefer short answers with code, by the way.": [
        ("{me}", "prefers", "short answers with code", 0.9),
        ("{me}", "prefers", "short answers", 0.8),
    ],
    "My sister Marta lives in Porto.": [
        ("{me}", "has sister", "Marta", 0.95),
        ("Marta", "lives in", "Porto", 0.9),
    ],
    "I live in Lisbon, in Alfama.": [("{me}", "lives in", "Lisbon", 0.95)],
    "I'm vegetarian and allergic to cats.": [
        ("{me}", "is", "vegetarian", 0.95),
        ("{me}", "is allergic to", "cats", 0.95),
    ],
    "I work as a nurse at St Mary's hospital.": [
        ("{me}", "works as", "a nurse", 0.95),
        ("{me}", "works at", "St Mary's hospital", 0.9),
    ],
    "My wife Jenna works at Google as an engineer.": [
        ("{me}", "has wife", "Jenna", 0.95),
        ("Jenna", "works at", "Google", 0.9),
        ("Jenna", "works as", "engineer", 0.85),
    ],
    "I'm allergic to penicillin.": [("{me}", "is allergic to", "penicillin", 0.95)],
    "My son Max is allergic to peanuts.": [
        ("{me}", "has son", "Max", 0.95),
        ("Max", "is allergic to", "peanuts", 0.9),
    ],
    "I'm 34 and I grew up in Chennai.": [
        ("{me}", "is aged", "34", 0.9),
        ("{me}", "grew up in", "Chennai", 0.9),
    ],
    "My brother Raj just turned 40.": [("{me}", "has brother", "Raj", 0.95), ("Raj", "is aged", "40", 0.9)],
    "I love jazz and bouldering.": [("{me}", "likes", "jazz", 0.9), ("{me}", "likes", "bouldering", 0.9)],
    "My husband Luis loves heavy metal.": [
        ("{me}", "has husband", "Luis", 0.95),
        ("Luis", "loves", "heavy metal", 0.9),
    ],
    "I really don't like cilantro.": [("{me}", "dislikes", "cilantro", 0.9)],
    "Actually I decided on the MacBook Air instead.": [("{me}", "decided on", "MacBook Air", 0.9, _R)],
    "I'm going to buy the ThinkPad X1 Carbon for work.": [
        ("{me}", "plans to buy", "ThinkPad X1 Carbon", 0.8)
    ],
    "We moved to Lisbon last weekend!": [("{me}", "lives in", "Lisbon", 0.9, _R)],
    "I don't work at Initech anymore, I joined Globex in March.": [
        ("{me}", "no longer works at", "Initech", 0.9, {"revises": True, "replaces": "Initech"}),
        ("{me}", "works at", "Globex", 0.95, _R),
    ],
    "I'm not vegetarian anymore.": [
        ("{me}", "is no longer", "vegetarian", 0.9, {"revises": True, "replaces": "vegetarian"})
    ],
    "I switched from vim to VS Code last month.": [
        ("{me}", "uses", "VS Code", 0.9, {"revises": True, "replaces": "vim"})
    ],
    "I use vim for everything.": [("{me}", "uses", "vim", 0.9)],
    "I'm building a FastAPI app with JWT authentication.": [
        ("{me}", "is building", "FastAPI app with JWT authentication", 0.9)
    ],
    "The JWT expiry is 30 minutes but users get logged out after 5 minutes.": [],
    "Where do I live again?": [],
    "haha ok, see you tomorrow": [],
    "My birthday is on March 3.": [("{me}", "has birthday", "March 3", 0.95)],
    "My favourite band is Radiohead.": [("{me}", "has favorite band", "Radiohead", 0.9)],
    "I have a dog named Miso.": [("{me}", "has dog", "Miso", 0.95)],
    "I have a dentist appointment on Friday at 3pm.": [
        ("{me}", "has", "dentist appointment on Friday at 3pm", 0.9)
    ],
    "I go swimming every Tuesday morning.": [("{me}", "goes swimming", "every Tuesday morning", 0.85)],
    "My flight to Oslo is on May 14.": [("{me}", "has flight to Oslo on", "May 14", 0.9)],
    "Our standup is at 9:30 every day.": [("{me}", "has", "standup at 9:30 every day", 0.85)],
    "Hi, I'm Carlos from Madrid and I teach maths.": [
        ("{me}", "is named", "Carlos", 0.9),
        ("{me}", "is from", "Madrid", 0.9),
        ("{me}", "teaches", "maths", 0.9),
    ],
    "My name is Carlos but everyone calls me Charlie.": [("{me}", "is called", "Charlie", 0.9)],
    "I prefer trains over planes when I travel.": [("{me}", "prefers", "trains over planes", 0.9)],
    "I'd rather get answers in Spanish.": [("{me}", "prefers", "answers in Spanish", 0.85)],
    "Please keep answers short from now on, I prefer brevity.": [
        ("{me}", "prefers", "short answers", 0.9, _R)
    ],
    "My manager is Carla.": [("{me}", "has manager", "Carla", 0.95)],
    "Carla left; my new manager is Dev.": [("{me}", "has manager", "Dev", 0.95, _R)],
    "Let's use MongoDB for the events store.": [("{me}", "chose", "MongoDB for the events store", 0.8)],
    "Scratch that, we're going with Postgres instead.": [
        ("{me}", "chose", "Postgres", 0.85, {"revises": True, "replaces": "MongoDB"})
    ],
    "I'm a software engineer at Spotify.": [
        ("{me}", "is", "software engineer", 0.9),
        ("{me}", "works at", "Spotify", 0.95),
    ],
    "I'm Canadian but I've lived in Stockholm for six years.": [
        ("{me}", "is", "Canadian", 0.9),
        ("{me}", "lives in", "Stockholm", 0.9),
    ],
    "My partner Alex is a chef.": [("{me}", "has partner", "Alex", 0.95), ("Alex", "is", "chef", 0.9)],
    "I'm learning Swedish.": [("{me}", "is learning", "Swedish", 0.9)],
    "I speak French and Portuguese.": [
        ("{me}", "speaks", "French", 0.9),
        ("{me}", "speaks", "Portuguese", 0.9),
    ],
    "Can you recommend a good book on Rust?": [("{me}", "is interested in", "Rust", 0.6)],
    "thanks, that helped a lot": [],
    "I've been a Python developer for ten years.": [("{me}", "is", "Python developer", 0.9)],
    "I drive a 2015 Golf.": [("{me}", "drives", "2015 Golf", 0.9)],
    "My kids are called Yara and Sami.": [
        ("{me}", "has child", "Yara", 0.9),
        ("{me}", "has child", "Sami", 0.9),
    ],
    "I can't eat gluten, I'm celiac.": [
        ("{me}", "is", "celiac", 0.95),
        ("{me}", "cannot eat", "gluten", 0.9),
    ],
    "I'm working on a thesis about coral reefs.": [("{me}", "is writing", "thesis about coral reefs", 0.85)],
    "The server crashed again at 3am.": [],
    "ok": [],
    "I'm from Seoul originally, now based in Toronto.": [
        ("{me}", "is from", "Seoul", 0.9),
        ("{me}", "lives in", "Toronto", 0.9),
    ],
    "My mom lives in Busan.": [("{me}'s mom", "lives in", "Busan", 0.9)],
    "I decided to take the job at Shopify.": [("{me}", "works at", "Shopify", 0.8)],
    "I hate waking up early.": [("{me}", "dislikes", "waking up early", 0.9)],
    "I'm married to Jun.": [("{me}", "is married to", "Jun", 0.95)],
    "Jun works at Samsung.": [("Jun", "works at", "Samsung", 0.9)],
    "I prefer tea to coffee.": [("{me}", "prefers", "tea over coffee", 0.9)],
    "My sister lives in Porto.": [
        ("{me}", "has sister", "sister", 0.5),
        ("{me}'s sister", "lives in", "Porto", 0.85),
    ],
    # held-out texts
    "I'm a chemistry teacher in Braga.": [
        ("{me}", "works as", "chemistry teacher", 0.9),
        ("{me}", "lives in", "Braga", 0.7),
    ],
    "My wife Sofia is a dentist.": [
        ("{me}", "has wife", "Sofia", 0.95),
        ("Sofia", "works as", "dentist", 0.9),
    ],
    "I've lived in Braga since 2015.": [("{me}", "lives in", "Braga", 0.95)],
    "I hate cold showers.": [("{me}", "dislikes", "cold showers", 0.9)],
    "I'm allergic to shellfish and dust.": [
        ("{me}", "is allergic to", "shellfish", 0.95),
        ("{me}", "is allergic to", "dust", 0.95),
    ],
    "can you help me plan a trip to Japan?": [("{me}", "is planning", "trip to Japan", 0.6)],
    "I prefer emails over phone calls.": [("{me}", "prefers", "emails over phone calls", 0.9)],
    "My son Leo plays the violin.": [("{me}", "has son", "Leo", 0.95), ("Leo", "plays", "violin", 0.9)],
    "My dad lives in Valencia.": [("{me}'s dad", "lives in", "Valencia", 0.9)],
    "I work for the city council as an urban planner.": [
        ("{me}", "works for", "city council", 0.9),
        ("{me}", "works as", "urban planner", 0.9),
    ],
    "I'm 41.": [("{me}", "is aged", "41", 0.95)],
    "I don't eat pork anymore.": [("{me}", "does not eat", "pork", 0.9, _R)],
    "thanks, that's perfect": [],
    "I moved to Dublin in January.": [("{me}", "lives in", "Dublin", 0.9, _R)],
    "I'm going to learn Irish this year.": [("{me}", "plans to learn", "Irish", 0.85)],
    "We went with the cheaper flat in the end.": [("{me}", "chose", "the cheaper flat", 0.85, _R)],
    "I use Neovim and tmux.": [("{me}", "uses", "Neovim", 0.9), ("{me}", "uses", "tmux", 0.9)],
    "My girlfriend is called Aoife.": [("{me}", "has girlfriend", "Aoife", 0.95)],
    "Aoife works at Stripe.": [("Aoife", "works at", "Stripe", 0.9)],
    "I have a job interview on Thursday at 10am.": [
        ("{me}", "has job interview on", "Thursday at 10am", 0.9)
    ],
    "The VPN keeps dropping every few minutes.": [],
    "I'm originally from Lagos but I live in Leeds now.": [
        ("{me}", "is from", "Lagos", 0.95),
        ("{me}", "lives in", "Leeds", 0.95),
    ],
    "I love running and cooking Nigerian food.": [
        ("{me}", "likes", "running", 0.9),
        ("{me}", "likes", "cooking Nigerian food", 0.9),
    ],
    "My favourite team is Arsenal.": [("{me}", "has favorite team", "Arsenal", 0.9)],
    "I no longer work at Deloitte.": [("{me}", "no longer works at", "Deloitte", 0.9, _R)],
    "I decided to go freelance.": [("{me}", "decided to", "go freelance", 0.9)],
    "I play football every Sunday.": [("{me}", "plays", "football every Sunday", 0.9)],
    "my brother Femi is a pilot": [("{me}", "has brother", "Femi", 0.95), ("Femi", "works as", "pilot", 0.9)],
    "I'm vegan and I don't drink alcohol.": [
        ("{me}", "is", "vegan", 0.95),
        ("{me}", "does not drink", "alcohol", 0.9),
    ],
    "I'd rather have the summary in Japanese.": [("{me}", "prefers", "summaries in Japanese", 0.85)],
    "My cat's name is Mochi.": [("{me}", "has cat", "Mochi", 0.95)],
    "I switched to Firefox last week.": [("{me}", "uses", "Firefox", 0.9, _R)],
    "Our team meeting is on Mondays at 2pm.": [("{me}", "has", "team meeting on Mondays at 2pm", 0.85)],
    "Honestly I'm exhausted today.": [],
    "I think I might move to Osaka.": [("{me}", "might move to", "Osaka", 0.4)],
    # scenario and profile turns
    "I need a new laptop for work, mostly Python and some Docker.": [],
    "Hi, I'm Ana! I work remotely, so I live in Lisbon but travel a lot.": [
        ("{me}", "is named", "Ana", 0.9),
        ("{me}", "works", "remotely", 0.8),
        ("{me}", "lives in", "Lisbon", 0.95),
    ],
    "I'm Tom, I work as a nurse at St Mary's hospital, mostly night shifts.": [
        ("{me}", "works as", "nurse", 0.95),
        ("{me}", "works at", "St Mary's hospital", 0.9),
        ("{me}", "works", "night shifts", 0.7),
    ],
    "I drive a 2015 Golf, it still runs great.": [("{me}", "drives", "2015 Golf", 0.9)],
    "My dad drives a Tesla now.": [("{me}'s dad", "drives", "Tesla", 0.85)],
    "I have a cat named Pixel.": [("{me}", "has cat", "Pixel", 0.95)],
    "My neighbour Jonas has a dog named Bruno.": [
        ("{me}", "has neighbour", "Jonas", 0.9),
        ("Jonas", "has dog", "Bruno", 0.9),
    ],
    "I live in Berlin, near Tempelhof.": [("{me}", "lives in", "Berlin", 0.95)],
    "Any tips for learning German faster?": [],
    "I work at Initech as a data analyst.": [
        ("{me}", "works at", "Initech", 0.95),
        ("{me}", "works as", "data analyst", 0.9),
    ],
    "Mostly SQL Server and a lot of Excel.": [
        ("{me}", "uses", "SQL Server", 0.7),
        ("{me}", "uses", "Excel", 0.7),
    ],
    "I'm vegetarian, so no meat recipes please.": [("{me}", "is", "vegetarian", 0.95)],
    "Can you suggest a quick lunch?": [],
    "I'm not vegetarian anymore, I eat fish and chicken now.": [
        ("{me}", "is no longer", "vegetarian", 0.9, {"revises": True, "replaces": "vegetarian"}),
        ("{me}", "eats", "fish", 0.85),
        ("{me}", "eats", "chicken", 0.85),
    ],
    "We moved the standup to 10:15.": [
        ("{me}", "has", "standup at 10:15", 0.85, {"revises": True, "replaces": "standup at 9:30 every day"})
    ],
    "I prefer long, detailed explanations.": [("{me}", "prefers", "long, detailed explanations", 0.9)],
    "how do I deploy the staging app?": [],
    "ok thanks": [],
    "The staging database is getting slow.": [],
    "How do I reset my router to factory settings?": [],
    "great": [],
    "What port does Postgres listen on by default?": [],
    "thanks": [],
    "What was the name of that pasta place you suggested in Rome?": [],
    "lovely": [],
    "How can I make a sourdough starter?": [],
    "nice": [],
    "how do I undo the last git commit but keep the changes?": [],
    "perfect": [],
    "Hi! I'm Ana.": [("{me}", "is named", "Ana", 0.9)],
    "I live in Lisbon and I work at Initech as a data engineer.": [
        ("{me}", "lives in", "Lisbon", 0.95),
        ("{me}", "works at", "Initech", 0.95),
        ("{me}", "works as", "data engineer", 0.9),
    ],
    "I prefer short answers with code examples.": [
        ("{me}", "prefers", "short answers with code examples", 0.9)
    ],
    "lol": [],
    "My DuckDB query runs out of memory on a 40 GB parquet file.": [],
    "Set memory_limit to 8GB and temp_directory to /tmp/duck.": [],
    "Fixed, it works now!": [],
    "how do I export a DuckDB table to parquet?": [],
    "haha ok": [],
    "The weather in Lisbon was grey all week.": [],
}

#: ``(words an episode contains, procedure)``: the first match in the episodes sent wins.
PROCEDURES: list[tuple[str, dict[str, Any]]] = [
    (
        "docker build -t web",
        {
            "name": "Deploy the staging app",
            "description": "Build, push and apply the staging manifest.",
            "steps": [
                "Build the image with docker build -t web .",
                "Push it with docker push registry/web",
                "Run kubectl apply -f k8s/staging.yaml",
            ],
            "trigger_tags": ["deploy", "staging", "docker", "kubectl"],
        },
    ),
    (
        "Hold the reset button",
        {
            "name": "Factory-reset the router",
            "description": "Reset the router to factory settings.",
            "steps": [
                "Hold the reset button on the back for 10 seconds until the lights blink",
                "Wait two minutes",
                "Reconnect with the password on the sticker",
            ],
            "trigger_tags": ["router", "reset", "wifi"],
        },
    ),
    (
        "Mix 50 g of flour",
        {
            "name": "Make a sourdough starter",
            "description": "Grow a starter from flour and water in about a week.",
            "steps": [
                "Mix 50 g of flour and 50 g of water in a jar",
                "Leave it at room temperature",
                "Every day discard half and feed it again",
                "Use it once it doubles within six hours",
            ],
            "trigger_tags": ["sourdough", "starter", "baking"],
        },
    ),
    (
        "git reset --soft",
        {
            "name": "Undo the last git commit, keep the changes",
            "steps": ["Run git reset --soft HEAD~1"],
            "trigger_tags": ["git", "commit", "undo"],
        },
    ),
    (
        "COPY my_table TO",
        {
            "name": "Export a DuckDB table to parquet",
            "steps": ["Run COPY my_table TO 'out.parquet' (FORMAT parquet); in the DuckDB shell"],
            "trigger_tags": ["duckdb", "parquet", "export"],
        },
    ),
    (
        "memory_limit to 8GB",
        {
            "name": "Fix DuckDB out-of-memory on large parquet files",
            "description": "Let DuckDB spill to disk.",
            "steps": ["Set memory_limit to 8GB", "Set temp_directory to /tmp/duck"],
            "trigger_tags": ["duckdb", "memory", "parquet"],
        },
    ),
]

#: ``(words an episode contains, lesson)``.
LESSONS: list[tuple[str, dict[str, Any]]] = [
    (
        "memory_limit to 8GB",
        {
            "title": "DuckDB runs out of memory on big parquet files",
            "insight": "When a DuckDB query runs out of memory, set memory_limit and temp_directory so it "
            "spills to disk.",
            "learning_type": "success_pattern",
            "applicability": ["duckdb", "parquet", "memory"],
            "confidence": 0.8,
        },
    ),
]

#: ``(older object, newer object)`` pairs, lower case, that a model judges contradictory.
CONFLICTS = {
    ("berlin", "lisbon"),
    ("initech", "globex"),
    ("thinkpad x1 carbon", "macbook air"),
    ("vegetarian", "vegetarian"),
    ("vim", "vs code"),
    ("carla", "dev"),
    ("long, detailed explanations", "short answers"),
    ("mongodb for the events store", "postgres"),
    ("standup at 9:30 every day", "standup at 10:15"),
}


class ScriptedModel:
    """A :class:`~ucma_core.providers.ChatTransport` that answers from the tables above."""

    name = "scripted-model"

    def __init__(self) -> None:
        self.unknown: list[str] = []
        self.requests = 0

    def complete(self, system: str, user: str) -> str:
        self.requests += 1
        payload = json.loads(user)
        return json.dumps(self._answer(payload))

    def _answer(self, p: dict[str, Any]) -> dict[str, Any]:
        if "text" in p and "source" in p:
            return {"importance": self._importance(p["text"])}
        if "groups" in p:
            words = int(p["max_words"])
            return {
                "items": [
                    {"index": g["index"], "summary": " ".join(" ".join(g["texts"]).split()[:words])}
                    for g in p["groups"]
                ]
            }
        if "episodes" in p and "succeeded" in p:
            return {"learning": self._first(LESSONS, p["episodes"]) if p["succeeded"] else None}
        if "episodes" in p:
            return {"procedure": self._first(PROCEDURES, p["episodes"])}
        items = p["items"]
        if items and "older" in items[0]:
            return {
                "items": [
                    {
                        "index": i["index"],
                        "conflict": (i["older"]["object"].lower(), i["newer"]["object"].lower()) in CONFLICTS,
                    }
                    for i in items
                ]
            }
        return {
            "items": [{"index": i["index"], "facts": self._facts(i["text"], i["speaker"])} for i in items]
        }

    def _importance(self, text: str) -> float:
        if text not in IMPORTANCE:
            self.unknown.append(text)
        return IMPORTANCE.get(text, 0.5)

    def _facts(self, text: str, speaker: str) -> list[dict[str, Any]]:
        if text not in FACTS:
            self.unknown.append(text)
        out = []
        for subject, predicate, obj, confidence, *extra in FACTS.get(text, []):
            fact = {
                "subject": subject.replace("{me}", speaker),
                "predicate": predicate,
                "object": obj,
                "confidence": confidence,
            }
            for more in extra:
                fact.update(more)
            out.append(fact)
        return out

    @staticmethod
    def _first(table: list[tuple[str, dict[str, Any]]], episodes: list[str]) -> dict[str, Any] | None:
        for words, reply in table:
            if any(words in e for e in episodes):
                return reply
        return None
