"""Running the ``ucma`` command line in-process, for the CLI tests."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from ucma_core.cli import main


class Run:
    """The result of one ``ucma`` run: exit code, stdout, stderr."""

    def __init__(self, argv: list[str]) -> None:
        out, err = io.StringIO(), io.StringIO()
        self.code = main(argv, stdout=out, stderr=err)
        self.out, self.err = out.getvalue(), err.getvalue()

    def json(self) -> Any:
        return json.loads(self.out)


def ucma(*argv: str | Path) -> Run:
    return Run([str(a) for a in argv])
