"""Entry point of the child process of ``isolate.Isolated`` (kept apart from ``isolate`` so
that ``python -m`` does not run a module the package has already imported)."""

import sys

from .isolate import _child_main

sys.exit(_child_main())
