"""``python -m ucma_core.cli``: the same as the ``ucma`` command."""

import sys

from ucma_core.cli.main import main

sys.exit(main())
