"""Values for the placeholders of the planted facts, and the names of the people in the dataset."""

from __future__ import annotations

import random
from typing import ClassVar

from . import content as ct


class SlotValues:
    """Draws slot values for one user without repeating a value within that user."""

    POOLS: ClassVar[dict[str, list[str]]] = {
        "city": ct.CITIES,
        "company": ct.COMPANIES,
        "petname": ct.PET_NAMES,
        "pet": ct.PETS,
        "instrument": ct.INSTRUMENTS,
        "car": ct.CARS,
        "allergen": ct.ALLERGENS,
        "field": ct.FIELDS,
        "sport": ct.SPORTS,
        "street": ct.STREETS,
        "restaurant": ct.RESTAURANTS,
        "language": ct.LANGUAGES,
        "codename": ct.CODENAMES,
        "bloodtype": ct.BLOOD_TYPES,
        "surname": ct.SURNAMES,
        "monthname": ct.MONTH_NAMES,
    }

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: dict[str, set[str]] = {}

    def draw(self, name: str) -> dict[str, str]:
        rng = self.rng
        if name in self.POOLS:
            taken = self.used.setdefault(name, set())
            value = rng.choice([v for v in self.POOLS[name] if v not in taken])
            taken.add(value)
            return {name: value}
        if name == "code4":
            return {name: f"{rng.randint(1000, 9999)}"}
        if name == "flightno":
            airline = rng.choice(["TP", "KL", "SK", "LH", "IB", "AY", "OS", "EI"])
            return {name: f"{airline} {rng.randint(200, 2999)}"}
        if name == "fullname":
            return {name: f"{rng.choice(ct.MALE_NAMES)} {rng.choice(ct.SURNAMES)}"}
        if name == "wifipw":
            return {name: f"{rng.choice(ct.WIFI_WORDS)}{rng.randint(10, 99)}"}
        if name == "orderno":
            return {name: f"#{rng.randint(100000, 999999)}"}
        if name == "price":
            return {name: f"{rng.choice(range(85, 260, 5))}"}
        if name == "rent":
            return {name: f"{rng.choice(range(780, 1900, 15))}"}
        if name == "ordinal":
            n = rng.randint(2, 28)
            suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
            return {name: f"{n}{suffix}"}
        if name == "attempt":
            word = rng.choice(["Second", "Third", "Fourth", "Fifth"])
            return {"attempt": word, "attempt_lower": word.lower()}
        if name == "waketime":
            return {name: rng.choice(["5:15", "5:30", "5:45", "6:00", "6:10"])}
        if name == "rate":
            return {name: f"{rng.randint(2, 4)}.{rng.randint(1, 9)}"}
        if name == "size":
            return {name: f"{rng.choice(['38', '39', '41', '42', '44', '45', '46'])}"}
        raise KeyError(f"unknown slot {name!r}")


class NameBook:
    """Hands out first names, never the same one twice in the dataset."""

    def __init__(self, rng: random.Random) -> None:
        self.pools = {
            "f": rng.sample(ct.FEMALE_NAMES, len(ct.FEMALE_NAMES)),
            "m": rng.sample(ct.MALE_NAMES, len(ct.MALE_NAMES)),
        }
        self.rng = rng

    def take(self, gender: str) -> str:
        gender = gender or self.rng.choice("fm")
        return self.pools[gender].pop()
