"""The ``ucma`` command line: ``ucma info | search | show | consolidate | prune | verify |
export | import | forget-user | plot``. Run ``ucma --help`` for the commands and
``ucma COMMAND --help`` for each one's options; ``docs/cli.md`` describes them."""

from ucma_core.cli.main import main

__all__ = ["main"]
