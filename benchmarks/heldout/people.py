"""The conversations of the held-out benchmark and the people who talk in them.

Every conversation is one memory scope (``user_id``): two or three named friends chatting
over dozens of sessions, with no assistant. The last two are *imported*: the runner loads
them after the fact, as an application loads a chat export, then runs one sleep cycle.
Third parties (a sister, a baby, a colleague) have names from :data:`OTHERS`, which no
participant shares.
"""

from __future__ import annotations

from typing import NamedTuple


class Person(NamedTuple):
    name: str
    #: possessive pronoun used in questions ("What has Leo said about his job?")
    their: str


class Chat(NamedTuple):
    conv_id: str
    people: tuple[Person, ...]
    imported: bool


CHATS: tuple[Chat, ...] = (
    Chat("c1", (Person("Maya", "her"), Person("Leo", "his")), False),
    Chat("c2", (Person("Priya", "her"), Person("Tomas", "his"), Person("Idris", "his")), False),
    Chat("c3", (Person("Nadia", "her"), Person("Oskar", "his")), False),
    Chat("c4", (Person("Ruth", "her"), Person("Kwame", "his"), Person("Ines", "her")), False),
    Chat("c5", (Person("Hana", "her"), Person("Felix", "his")), False),
    Chat("c6", (Person("Yusuf", "his"), Person("Clara", "her")), False),
    Chat("c7", (Person("Bea", "her"), Person("Arjun", "his")), True),
    Chat("c8", (Person("Mirela", "her"), Person("Dario", "his"), Person("Sofia", "her")), True),
)

#: Names of people who are talked about but never talk.
OTHERS: tuple[str, ...] = (
    "Zoe", "Ollie", "Marcus", "Elif", "Bram", "Juno", "Tariq", "Greta", "Nell", "Rafael",
    "Agnes", "Milo", "Suki", "Cormac", "Lena", "Teodor", "Wren", "Ayo", "Fenna", "Luca",
)  # fmt: skip
