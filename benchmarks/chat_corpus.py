"""The synthetic chat corpus of the throughput benchmark: distinct statements and questions.

Each item is drawn from its own seeded generator (seed, index and retry count), so
an item's slot values are re-created on demand when a question is asked about it
instead of being kept for every item: 100,000 items cost tens of MiB, which keeps
the benchmark's own data out of the peak-RSS figures it reports.
"""

from __future__ import annotations

import calendar
import random
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["N_USERS", "SEED", "Item", "make_items", "make_queries"]

SEED = 20240611
N_USERS = 20

_NAMES = [
    "Ana",
    "Ben",
    "Chloe",
    "Dmitri",
    "Elena",
    "Farid",
    "Grace",
    "Hiro",
    "Ines",
    "Jonas",
    "Kofi",
    "Lena",
    "Marco",
    "Nadia",
    "Omar",
    "Priya",
    "Quentin",
    "Rosa",
    "Sven",
    "Tariq",
    "Uma",
    "Victor",
    "Wen",
    "Ximena",
    "Yusuf",
    "Zoe",
    "Aiko",
    "Bruno",
    "Carmen",
    "Diego",
    "Esther",
    "Felix",
    "Gita",
    "Hugo",
    "Ivana",
    "Jamal",
    "Kasia",
    "Luis",
    "Maya",
    "Nils",
    "Olga",
    "Pablo",
    "Rhea",
    "Sami",
    "Tomas",
    "Ulla",
    "Vera",
    "Wes",
]
_SURNAMES = [
    "Okafor",
    "Lindqvist",
    "Moreau",
    "Tanaka",
    "Novak",
    "Haddad",
    "Fischer",
    "Costa",
    "Patel",
    "Kowalski",
    "Reyes",
    "Nakamura",
    "Brennan",
    "Svensson",
    "Adeyemi",
    "Rossi",
]
_PROJECTS = [
    "Atlas",
    "Borealis",
    "Cobalt",
    "Delta",
    "Ember",
    "Falcon",
    "Granite",
    "Helix",
    "Iris",
    "Juniper",
    "Kestrel",
    "Lumen",
    "Meridian",
    "Nimbus",
    "Orion",
    "Pioneer",
    "Quartz",
    "Redwood",
    "Sierra",
    "Tundra",
    "Umbra",
    "Vertex",
    "Willow",
    "Zephyr",
]
_DAYS = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
    "tomorrow",
    "next Monday",
    "next Friday",
]
_MONTHS = list(calendar.month_name)[1:]
_TIMES = ["8:30", "9am", "10:15", "11am", "noon", "1:30pm", "2pm", "3:45pm", "4pm", "5:30pm", "7pm", "9pm"]
_CITIES = [
    "Lisbon",
    "Oslo",
    "Nairobi",
    "Kyoto",
    "Toronto",
    "Lima",
    "Krakow",
    "Melbourne",
    "Cairo",
    "Seoul",
    "Dublin",
    "Montreal",
    "Porto",
    "Hanoi",
    "Bogota",
    "Vienna",
    "Denver",
    "Marrakesh",
    "Tallinn",
    "Austin",
]
_ITEMS = [
    "standing desk",
    "rain jacket",
    "coffee grinder",
    "mechanical keyboard",
    "bike helmet",
    "hiking boots",
    "air fryer",
    "monitor arm",
    "yoga mat",
    "noise-cancelling headphones",
    "cast iron pan",
    "backpack",
    "desk lamp",
    "espresso machine",
    "winter coat",
    "tent",
]
_SHOPS = [
    "the hardware store",
    "the corner shop",
    "the outlet mall",
    "an online shop",
    "the flea market",
    "the department store",
    "the bike shop",
    "the outdoor store",
]
_BOOKS = [
    "The Overstory",
    "Piranesi",
    "Dune",
    "Educated",
    "The Left Hand of Darkness",
    "Circe",
    "Project Hail Mary",
    "Middlemarch",
    "Sapiens",
    "The Dispossessed",
    "Klara and the Sun",
    "Beloved",
]
_FOODS = [
    "peanuts",
    "shellfish",
    "gluten",
    "dairy",
    "sesame",
    "strawberries",
    "eggs",
    "soy",
    "kiwi",
    "mustard",
    "celery",
    "walnuts",
]
_TOOLS = [
    "webpack",
    "gradle",
    "numpy",
    "node",
    "postgres",
    "docker",
    "kubernetes",
    "terraform",
    "pytest",
    "react",
    "django",
    "rust",
]
_PLACES = ["river", "canal", "park", "harbour", "old railway line", "beach", "lake", "ridge trail"]
_GIFTS = [
    "a board game",
    "a plant",
    "concert tickets",
    "a cookbook",
    "a scarf",
    "a watercolour set",
    "a mug",
    "headphones",
    "a puzzle",
    "running socks",
]
_ROOMS = ["living room", "bedroom", "office", "kitchen", "guest room", "basement"]
_DRINKS = [
    "green tea",
    "black coffee",
    "oat latte",
    "sparkling water",
    "rooibos",
    "hot chocolate",
    "espresso",
    "chai",
]
_DAYPARTS = ["morning", "afternoon", "evening", "late evening"]
_COMPANIES = [
    "Northwind",
    "Acme",
    "Globex",
    "Initech",
    "Umbrella Logistics",
    "Stark Foods",
    "Wayne Media",
    "Hooli",
    "Vandelay Imports",
    "Soylent Labs",
]
_VEHICLES = ["car", "bike", "scooter", "van", "motorbike"]
_PARTS = ["brakes", "tyres", "a battery", "wipers", "a chain", "brake pads", "headlights"]
_RESTAURANTS = [
    "Casa Lupa",
    "the ramen bar",
    "Sakura",
    "Le Petit Jardin",
    "Taqueria Sol",
    "the Thai place",
    "Bistro Nord",
    "the pizza place on Elm Street",
]
_DISHES = ["ramen", "paella", "dal", "tacos", "risotto", "pho", "dumplings", "shakshuka", "lasagna", "curry"]
_LANGUAGES = ["Spanish", "Japanese", "German", "Portuguese", "Korean", "Italian", "Swahili", "Dutch"]
_TASKS = [
    "migration",
    "onboarding",
    "budget",
    "hiring",
    "security review",
    "release notes",
    "QA",
    "customer interviews",
    "roadmap",
]
_SHOWS = ["Severance", "The Bear", "Dark", "Slow Horses", "Shogun", "Andor", "Fleabag", "Succession"]
_DOCUMENTS = [
    "passport",
    "driving licence",
    "car insurance",
    "gym membership",
    "library card",
    "work visa",
    "health insurance",
    "domain name",
]
_TAILS = [
    "",
    "",
    "",
    " Not sure yet.",
    " {name} agreed.",
    " Need to double-check later.",
    " Honestly a relief.",
    " Will confirm by email.",
    " Keep this in mind.",
    " Ugh.",
]

# (statement template, [query templates that ask about it in other words])
_TEMPLATES: list[tuple[str, list[str]]] = [
    (
        "{name} moved the {project} review to {day} at {time}.",
        ["when is the {project} review now?", "what time did {name} pick for the {project} review?"],
    ),
    (
        "I paid {amount} dollars for the {item} at {shop}.",
        ["how much did the {item} cost?", "where did I buy the {item} and for how much?"],
    ),
    (
        "My flight to {city} leaves on {day}, seat {seat}.",
        ["when do I fly to {city}?", "which seat do I have on the flight to {city}?"],
    ),
    (
        "{name} recommended the book {book}, it has {pages} pages.",
        ["what book did {name} suggest?", "how long is {book}?"],
    ),
    (
        "Remember that {name} is allergic to {food}.",
        ["what is {name} allergic to?", "any food allergies for {name}?"],
    ),
    (
        "The {project} build failed with error {code} after the {tool} upgrade.",
        ["why did the {project} build break?", "what error did upgrading {tool} cause?"],
    ),
    (
        "I ran {km} km in {minutes} minutes along the {place} this morning.",
        ["how far did I run by the {place}?", "what was my time for the {km} km run?"],
    ),
    (
        "{name}'s birthday is on {month} {daynum}, maybe get them {gift}.",
        ["when is {name}'s birthday?", "what gift should I get {name}?"],
    ),
    (
        "We agreed with {name} on a budget of {amount} for the {project} launch.",
        ["what is the budget for the {project} launch?", "how much money did {name} approve for {project}?"],
    ),
    (
        "The {room} thermostat has been set to {temp} degrees since {day}.",
        ["what temperature is the {room} set to?", "how warm is the {room} thermostat?"],
    ),
    (
        "I prefer {drink} in the {daypart}, never {drink2}.",
        ["what do I like to drink in the {daypart}?", "do I drink {drink2}?"],
    ),
    (
        "{name} from {company} will call about the {project} contract on {day}.",
        ["who is calling about the {project} contract?", "when will {company} call me?"],
    ),
    (
        "Dentist appointment with Dr. {surname} on {day} at {time}, room {roomno}.",
        ["when is my dentist appointment?", "which room is Dr. {surname} in?"],
    ),
    (
        "My {vehicle} needs {part}, the garage quoted {amount} dollars.",
        ["what does my {vehicle} need?", "how much will the {vehicle} repair cost?"],
    ),
    (
        "Dinner with {name} at {restaurant} was great, we had {dish}.",
        ["where did I have dinner with {name}?", "what did we eat at {restaurant}?"],
    ),
    (
        "I'm learning {language} and finished lesson {n} today.",
        ["how far am I in my {language} course?", "which {language} lesson did I finish?"],
    ),
    (
        "The {project} notes say {name} owns the {task} work until {month}.",
        ["who is responsible for {task} on {project}?", "what does {name} own in {project}?"],
    ),
    (
        "Package {tracking} from {shop} should arrive {day}.",
        ["when does my package from {shop} arrive?", "what is the tracking number of my delivery?"],
    ),
    (
        "{name} says I have to watch {show}, season {n} is the best.",
        ["what show did {name} recommend?", "which season of {show} is the good one?"],
    ),
    (
        "Set a reminder to renew my {document} before {month} {daynum}.",
        ["when do I need to renew my {document}?", "what is the deadline for the {document}?"],
    ),
]


def _slots(rng: random.Random) -> dict[str, str]:
    drink, drink2 = rng.sample(_DRINKS, 2)
    return {
        "name": rng.choice(_NAMES),
        "surname": rng.choice(_SURNAMES),
        "project": rng.choice(_PROJECTS),
        "day": rng.choice(_DAYS),
        "time": rng.choice(_TIMES),
        "month": rng.choice(_MONTHS),
        "daynum": str(rng.randint(1, 28)),
        "city": rng.choice(_CITIES),
        "item": rng.choice(_ITEMS),
        "shop": rng.choice(_SHOPS),
        "book": rng.choice(_BOOKS),
        "food": rng.choice(_FOODS),
        "tool": rng.choice(_TOOLS),
        "place": rng.choice(_PLACES),
        "gift": rng.choice(_GIFTS),
        "room": rng.choice(_ROOMS),
        "drink": drink,
        "drink2": drink2,
        "daypart": rng.choice(_DAYPARTS),
        "company": rng.choice(_COMPANIES),
        "vehicle": rng.choice(_VEHICLES),
        "part": rng.choice(_PARTS),
        "restaurant": rng.choice(_RESTAURANTS),
        "dish": rng.choice(_DISHES),
        "language": rng.choice(_LANGUAGES),
        "task": rng.choice(_TASKS),
        "show": rng.choice(_SHOWS),
        "document": rng.choice(_DOCUMENTS),
        "amount": str(rng.choice([rng.randint(5, 200), rng.randint(200, 5000), rng.randint(5, 99) * 100])),
        "seat": f"{rng.randint(1, 40)}{rng.choice('ABCDEF')}",
        "pages": str(rng.randint(150, 900)),
        "code": f"E{rng.randint(100, 9999)}",
        "km": str(rng.choice([3, 5, 7, 8, 10, 12, 15, 21])),
        "minutes": str(rng.randint(15, 130)),
        "temp": str(rng.randint(16, 25)),
        "roomno": str(rng.randint(1, 30)),
        "n": str(rng.randint(1, 60)),
        "tracking": f"{rng.choice('JKLMNPQRTX')}{rng.randint(10**7, 10**8 - 1)}",
    }


@dataclass(frozen=True)
class Item:
    text: str
    user_id: str
    template: int
    #: Which draw of this item's generator produced a text not seen before.
    attempt: int


def _draw(seed: int, index: int, attempt: int) -> tuple[int, dict[str, str], str, random.Random]:
    rng = random.Random(f"{seed}:{index}:{attempt}")
    template = rng.randrange(len(_TEMPLATES))
    slots = _slots(rng)
    text = _TEMPLATES[template][0].format(**slots) + rng.choice(_TAILS).format(**slots)
    return template, slots, text, rng


def make_items(n: int, seed: int = SEED) -> list[Item]:
    """``n`` distinct chat-like statements spread over ``N_USERS`` users (deterministic)."""
    users = [f"user-{i:02d}" for i in range(N_USERS)]
    weights = [1.0 / (i + 1) ** 0.5 for i in range(N_USERS)]  # some users talk more than others
    seen: set[str] = set()
    out: list[Item] = []
    for index in range(n):
        attempt = 0
        while True:
            template, _, text, rng = _draw(seed, index, attempt)
            if text not in seen:
                break
            attempt += 1
        seen.add(text)
        out.append(Item(text, rng.choices(users, weights)[0], template, attempt))
    return out


def make_queries(
    items: Sequence[Item], count: int, seed: int = SEED, query_seed: int = SEED + 1
) -> list[tuple[str, str, int]]:
    """``count`` distinct ``(query, user_id, index of the item asked about)``, none equal to a
    stored text; ``seed`` must be the one ``items`` were made with."""
    rng = random.Random(query_seed)
    stored = {it.text for it in items}
    seen: set[str] = set()
    out: list[tuple[str, str, int]] = []
    attempts = 0
    while len(out) < count:
        attempts += 1
        i = rng.randrange(len(items))
        it = items[i]
        _, slots, _, _ = _draw(seed, i, it.attempt)
        q = rng.choice(_TEMPLATES[it.template][1]).format(**slots)
        if attempts > 50 * count:  # tiny corpora: make the phrasing unique
            q = f"{q} (#{len(out)})"
        if q in seen or q in stored:
            continue
        seen.add(q)
        out.append((q, it.user_id, i))
    return out
