"""User turns labelled with the facts a reader would write down from them.

Written for this benchmark. Each row: ``(speaker, text, facts)``; a fact is
``(subject, predicate, object)`` with first person resolved to the speaker. Predicates
use one vocabulary (see :data:`PREDICATE_SYNONYMS` for the wordings counted as the same):
``is named``, ``is``, ``is no longer``, ``has age``, ``lives in``, ``is from``,
``works at``, ``works as``, ``likes``, ``dislikes``, ``prefers``, ``is allergic to``,
``has <relation>``, ``has birthday``, ``has favorite <thing>``, ``chose``, ``plans to``,
``decided to``, ``uses``, ``no longer <predicate>``, ``is building``, ``is learning``,
``is working on``, ``speaks``, ``teaches``, ``drives``, ``cannot eat``, ``goes`` and
``has`` (for appointments and schedules). Questions, small talk, problem reports and
statements about a name the speaker already has give no facts. A fact about someone
the speaker mentions has that person as subject ("Ana's sister" when unnamed).
"""

from __future__ import annotations

__all__ = ["HELD_OUT", "PREDICATE_SYNONYMS", "TEXTS", "Fact"]

Fact = tuple[str, str, str]

#: Wordings a model or a rule may use for the same predicate (compared after lower-casing).
PREDICATE_SYNONYMS = {
    "loves": "likes",
    "enjoys": "likes",
    "adores": "likes",
    "is a fan of": "likes",
    "hates": "dislikes",
    "does not like": "dislikes",
    "doesn't like": "dislikes",
    "works for": "works at",
    "is employed at": "works at",
    "is employed by": "works at",
    "resides in": "lives in",
    "is based in": "lives in",
    "lives at": "lives in",
    "comes from": "is from",
    "grew up in": "is from",
    "is called": "is named",
    "goes by": "is named",
    "picked": "chose",
    "decided on": "chose",
    "went with": "chose",
    "is going with": "chose",
    "selected": "chose",
    "opted for": "chose",
    "is going to": "plans to",
    "intends to": "plans to",
    "is aged": "has age",
    "has favourite band": "has favorite band",
    "has child": "has kid",
    "doesn't drink": "does not drink",
    "never drinks": "does not drink",
}

TEXTS: list[tuple[str, str, list[Fact]]] = [
    ("Michael", "I'm Michael.", []),
    (
        "Michael",
        "Perfect. I prefer short answers with code, by the way.",
        [("Michael", "prefers", "short answers with code")],
    ),
    (
        "Ana",
        "My sister Marta lives in Porto.",
        [("Ana", "has sister", "Marta"), ("Marta", "lives in", "Porto")],
    ),
    ("Ana", "I live in Lisbon, in Alfama.", [("Ana", "lives in", "Lisbon")]),
    (
        "Ana",
        "I'm vegetarian and allergic to cats.",
        [("Ana", "is", "vegetarian"), ("Ana", "is allergic to", "cats")],
    ),
    (
        "Tom",
        "I work as a nurse at St Mary's hospital.",
        [("Tom", "works as", "nurse"), ("Tom", "works at", "St Mary's hospital")],
    ),
    (
        "Tom",
        "My wife Jenna works at Google as an engineer.",
        [("Tom", "has wife", "Jenna"), ("Jenna", "works at", "Google"), ("Jenna", "works as", "engineer")],
    ),
    ("Lena", "I'm allergic to penicillin.", [("Lena", "is allergic to", "penicillin")]),
    (
        "Lena",
        "My son Max is allergic to peanuts.",
        [("Lena", "has son", "Max"), ("Max", "is allergic to", "peanuts")],
    ),
    (
        "Priya",
        "I'm 34 and I grew up in Chennai.",
        [("Priya", "has age", "34"), ("Priya", "is from", "Chennai")],
    ),
    ("Priya", "My brother Raj just turned 40.", [("Priya", "has brother", "Raj"), ("Raj", "has age", "40")]),
    ("Ana", "I love jazz and bouldering.", [("Ana", "likes", "jazz"), ("Ana", "likes", "bouldering")]),
    (
        "Ana",
        "My husband Luis loves heavy metal.",
        [("Ana", "has husband", "Luis"), ("Luis", "likes", "heavy metal")],
    ),
    ("Sam", "I really don't like cilantro.", [("Sam", "dislikes", "cilantro")]),
    ("Sam", "Actually I decided on the MacBook Air instead.", [("Sam", "chose", "MacBook Air")]),
    (
        "Sam",
        "I'm going to buy the ThinkPad X1 Carbon for work.",
        [("Sam", "plans to", "buy the ThinkPad X1 Carbon for work")],
    ),
    ("Ana", "We moved to Lisbon last weekend!", [("Ana", "lives in", "Lisbon")]),
    (
        "Ana",
        "I don't work at Initech anymore, I joined Globex in March.",
        [("Ana", "no longer works at", "Initech"), ("Ana", "works at", "Globex")],
    ),
    ("Ana", "I'm not vegetarian anymore.", [("Ana", "is no longer", "vegetarian")]),
    (
        "Michael",
        "I switched from vim to VS Code last month.",
        [("Michael", "uses", "VS Code"), ("Michael", "no longer uses", "vim")],
    ),
    ("Michael", "I use vim for everything.", [("Michael", "uses", "vim")]),
    (
        "Michael",
        "I'm building a FastAPI app with JWT authentication.",
        [("Michael", "is building", "a FastAPI app with JWT authentication")],
    ),
    ("Michael", "The JWT expiry is 30 minutes but users get logged out after 5 minutes.", []),
    ("Ana", "Where do I live again?", []),
    ("Ana", "haha ok, see you tomorrow", []),
    ("Dev", "My birthday is on March 3.", [("Dev", "has birthday", "March 3")]),
    ("Dev", "My favourite band is Radiohead.", [("Dev", "has favorite band", "Radiohead")]),
    ("Dev", "I have a dog named Miso.", [("Dev", "has dog", "Miso")]),
    (
        "Dev",
        "I have a dentist appointment on Friday at 3pm.",
        [("Dev", "has", "dentist appointment on Friday at 3pm")],
    ),
    ("Dev", "I go swimming every Tuesday morning.", [("Dev", "goes", "swimming every Tuesday morning")]),
    ("Lena", "My flight to Oslo is on May 14.", [("Lena", "has", "flight to Oslo on May 14")]),
    ("Lena", "Our standup is at 9:30 every day.", [("Lena", "has", "standup at 9:30 every day")]),
    (
        "Carlos",
        "Hi, I'm Carlos from Madrid and I teach maths.",
        [("Carlos", "is from", "Madrid"), ("Carlos", "teaches", "maths")],
    ),
    ("Carlos", "My name is Carlos but everyone calls me Charlie.", [("Carlos", "is named", "Charlie")]),
    ("Carlos", "I prefer trains over planes when I travel.", [("Carlos", "prefers", "trains over planes")]),
    ("Carlos", "I'd rather get answers in Spanish.", [("Carlos", "prefers", "answers in Spanish")]),
    ("Ana", "Please keep answers short from now on, I prefer brevity.", [("Ana", "prefers", "brevity")]),
    ("Ana", "My manager is Carla.", [("Ana", "has manager", "Carla")]),
    ("Ana", "Carla left; my new manager is Dev.", [("Ana", "has manager", "Dev")]),
    ("Ana", "Let's use MongoDB for the events store.", [("Ana", "chose", "MongoDB for the events store")]),
    ("Ana", "Scratch that, we're going with Postgres instead.", [("Ana", "chose", "Postgres")]),
    (
        "Nia",
        "I'm a software engineer at Spotify.",
        [("Nia", "is", "a software engineer"), ("Nia", "works at", "Spotify")],
    ),
    (
        "Nia",
        "I'm Canadian but I've lived in Stockholm for six years.",
        [("Nia", "is", "Canadian"), ("Nia", "lives in", "Stockholm")],
    ),
    ("Nia", "My partner Alex is a chef.", [("Nia", "has partner", "Alex"), ("Alex", "is", "a chef")]),
    ("Nia", "I'm learning Swedish.", [("Nia", "is learning", "Swedish")]),
    ("Nia", "I speak French and Portuguese.", [("Nia", "speaks", "French"), ("Nia", "speaks", "Portuguese")]),
    ("Nia", "Can you recommend a good book on Rust?", []),
    ("Nia", "thanks, that helped a lot", []),
    ("Omar", "I've been a Python developer for ten years.", [("Omar", "is", "a Python developer")]),
    ("Omar", "I drive a 2015 Golf.", [("Omar", "drives", "2015 Golf")]),
    ("Omar", "My kids are called Yara and Sami.", [("Omar", "has kid", "Yara"), ("Omar", "has kid", "Sami")]),
    (
        "Omar",
        "I can't eat gluten, I'm celiac.",
        [("Omar", "is", "celiac"), ("Omar", "cannot eat", "gluten")],
    ),
    (
        "Omar",
        "I'm working on a thesis about coral reefs.",
        [("Omar", "is working on", "a thesis about coral reefs")],
    ),
    ("Omar", "The server crashed again at 3am.", []),
    ("Omar", "ok", []),
    (
        "Kim",
        "I'm from Seoul originally, now based in Toronto.",
        [("Kim", "is from", "Seoul"), ("Kim", "lives in", "Toronto")],
    ),
    ("Kim", "My mom lives in Busan.", [("Kim's mom", "lives in", "Busan")]),
    ("Kim", "I decided to take the job at Shopify.", [("Kim", "decided to", "take the job at Shopify")]),
    ("Kim", "I hate waking up early.", [("Kim", "dislikes", "waking up early")]),
    ("Kim", "I'm married to Jun.", [("Kim", "is married to", "Jun")]),
    ("Kim", "Jun works at Samsung.", [("Jun", "works at", "Samsung")]),
    ("Kim", "I prefer tea to coffee.", [("Kim", "prefers", "tea to coffee")]),
    ("Ana", "My sister lives in Porto.", [("Ana's sister", "lives in", "Porto")]),
]

#: A second set, written after the rules were tuned on :data:`TEXTS` and not used to tune
#: them: the rows the tables call "held out".
HELD_OUT: list[tuple[str, str, list[Fact]]] = [
    ("Rui", "I'm a chemistry teacher in Braga.", [("Rui", "is", "a chemistry teacher")]),
    ("Rui", "My wife Sofia is a dentist.", [("Rui", "has wife", "Sofia"), ("Sofia", "is", "a dentist")]),
    ("Rui", "I've lived in Braga since 2015.", [("Rui", "lives in", "Braga")]),
    ("Rui", "I hate cold showers.", [("Rui", "dislikes", "cold showers")]),
    (
        "Rui",
        "I'm allergic to shellfish and dust.",
        [("Rui", "is allergic to", "shellfish"), ("Rui", "is allergic to", "dust")],
    ),
    ("Rui", "can you help me plan a trip to Japan?", []),
    ("Bea", "I prefer emails over phone calls.", [("Bea", "prefers", "emails over phone calls")]),
    ("Bea", "My son Leo plays the violin.", [("Bea", "has son", "Leo"), ("Leo", "plays", "violin")]),
    ("Bea", "My dad lives in Valencia.", [("Bea's dad", "lives in", "Valencia")]),
    (
        "Bea",
        "I work for the city council as an urban planner.",
        [("Bea", "works at", "city council"), ("Bea", "works as", "urban planner")],
    ),
    ("Bea", "I'm 41.", [("Bea", "has age", "41")]),
    ("Bea", "I don't eat pork anymore.", [("Bea", "no longer eats", "pork")]),
    ("Bea", "thanks, that's perfect", []),
    ("Finn", "I moved to Dublin in January.", [("Finn", "lives in", "Dublin")]),
    ("Finn", "I'm going to learn Irish this year.", [("Finn", "plans to", "learn Irish this year")]),
    ("Finn", "We went with the cheaper flat in the end.", [("Finn", "chose", "cheaper flat")]),
    ("Finn", "I use Neovim and tmux.", [("Finn", "uses", "Neovim"), ("Finn", "uses", "tmux")]),
    ("Finn", "My girlfriend is called Aoife.", [("Finn", "has girlfriend", "Aoife")]),
    ("Finn", "Aoife works at Stripe.", [("Aoife", "works at", "Stripe")]),
    (
        "Finn",
        "I have a job interview on Thursday at 10am.",
        [("Finn", "has", "job interview on Thursday at 10am")],
    ),
    ("Finn", "The VPN keeps dropping every few minutes.", []),
    (
        "Gus",
        "I'm originally from Lagos but I live in Leeds now.",
        [("Gus", "is from", "Lagos"), ("Gus", "lives in", "Leeds")],
    ),
    (
        "Gus",
        "I love running and cooking Nigerian food.",
        [("Gus", "likes", "running"), ("Gus", "likes", "cooking Nigerian food")],
    ),
    ("Gus", "My favourite team is Arsenal.", [("Gus", "has favorite team", "Arsenal")]),
    ("Gus", "I no longer work at Deloitte.", [("Gus", "no longer works at", "Deloitte")]),
    ("Gus", "I decided to go freelance.", [("Gus", "decided to", "go freelance")]),
    ("Gus", "I play football every Sunday.", [("Gus", "plays", "football every Sunday")]),
    ("Gus", "my brother Femi is a pilot", [("Gus", "has brother", "Femi"), ("Femi", "is", "a pilot")]),
    (
        "Hana",
        "I'm vegan and I don't drink alcohol.",
        [("Hana", "is", "vegan"), ("Hana", "does not drink", "alcohol")],
    ),
    ("Hana", "I'd rather have the summary in Japanese.", [("Hana", "prefers", "summary in Japanese")]),
    ("Hana", "My cat's name is Mochi.", [("Hana", "has cat", "Mochi")]),
    ("Hana", "I switched to Firefox last week.", [("Hana", "uses", "Firefox")]),
    ("Hana", "Our team meeting is on Mondays at 2pm.", [("Hana", "has", "team meeting on Mondays at 2pm")]),
    ("Hana", "Honestly I'm exhausted today.", []),
    ("Hana", "I think I might move to Osaka.", []),
]
