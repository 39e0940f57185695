"""What kind of thing a statement is about: the rule that keeps a correction on its topic.

A correction that names no topic ("actually I decided on the MacBook Air") takes back the
earlier statement about the same kind of thing (the ThinkPad, a laptop), never one about
another (the deploy target). :func:`kind_of` reads the kind from the words of an object or
a whole turn: product and tool names people choose between (laptops, phones, hosting,
databases, editors, languages, frameworks, operating systems, browsers, cars), the topic
words themselves ("laptop", "deploy", "database"), and clock times. A text with no known
word has no kind (``None``): the rules cannot tell, and callers then rely on other evidence.

Examples:
    >>> kind_of("the MacBook Air"), kind_of("buy the ThinkPad X1 Carbon for work")
    ('laptop', 'laptop')
    >>> kind_of("Fly.io for the deploy"), kind_of("Postgres")
    ('hosting', 'database')
    >>> kind_of("standup at 10:15"), kind_of("brevity"), kind_of("jazz")
    ('time', 'answer style', None)
    >>> same_kind("MacBook Air", "Fly.io"), same_kind("MacBook Air", "ThinkPad"), same_kind("jazz", "Fly.io")
    (False, True, None)
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["kind_of", "same_kind"]

_KINDS: dict[str, str] = {
    "laptop": "laptop notebook macbook thinkpad chromebook zenbook xps pixelbook ultrabook "
    "latitude yoga spectre envy vivobook ideapad framework-laptop surface-laptop",
    "phone": "phone smartphone iphone android galaxy pixel oneplus xperia fairphone",
    "hosting": "deploy deployment deploying deployed host hosting hosted heroku fly.io netlify "
    "vercel render railway aws ec2 gcp azure digitalocean linode hetzner cloudflare lambda "
    "cloud-run app-engine kubernetes k8s vps",
    "database": "database db postgres postgresql mysql mariadb mongodb mongo sqlite redis "
    "dynamodb cassandra duckdb clickhouse elasticsearch supabase firebase",
    "editor": "editor ide vim neovim nvim emacs vscode vs-code pycharm intellij sublime atom zed "
    "cursor webstorm helix nano",
    "language": "python rust golang java kotlin typescript javascript ruby elixir haskell scala "
    "swift c++ c# php perl",
    "framework": "framework frontend react vue svelte angular django flask fastapi rails "
    "next.js nextjs nuxt remix laravel spring",
    "os": "linux windows macos ubuntu fedora debian arch-linux",
    "browser": "browser chrome firefox safari brave edge opera vivaldi",
    "car": "car tesla golf prius civic corolla volvo bmw audi toyota honda",
    "instrument": "instrument guitar piano violin cello viola drums ukulele flute saxophone trumpet",
    "answer style": "answer answers explanation explanations brevity brief short long concise "
    "verbose detailed terse",
}
_WORD_KIND: dict[tuple[str, ...], str] = {
    tuple(word.split("-")): kind for kind, words in _KINDS.items() for word in words.split()
}
_LONGEST = max(len(k) for k in _WORD_KIND)
_TOKEN = re.compile(r"[a-z0-9][a-z0-9+#.]*[a-z0-9+#]|[a-z0-9]")
_TIME = re.compile(r"\b\d{1,2}(?::\d{2}\s*(?:am|pm)?|\s*(?:am|pm))\b", re.I)


def _tokens(text: str) -> list[str]:
    out = []
    for token in _TOKEN.findall(text.lower()):
        out.append(token)
        if "." in token and token not in ("fly.io", "next.js") and (head := token.split(".")[0]):
            out.append(head)
    return out


@lru_cache(maxsize=4096)
def kind_of(text: str) -> str | None:
    """The kind of thing ``text`` is about (the first known word or phrase), or ``None``."""
    if _TIME.search(text):
        return "time"
    words = _tokens(text)
    for start in range(len(words)):
        for size in range(min(_LONGEST, len(words) - start), 0, -1):
            kind = _WORD_KIND.get(tuple(words[start : start + size]))
            if kind is not None:
                return kind
    return None


def same_kind(a: str, b: str) -> bool | None:
    """Whether ``a`` and ``b`` are about the same kind of thing; ``None`` when either has no
    known kind (the rule cannot tell)."""
    x, y = kind_of(a), kind_of(b)
    if x is None or y is None:
        return None
    return x == y
