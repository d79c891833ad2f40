"""``python -m evaluation``: the command line, in a process of its own."""

import sys

from evaluation._allocator import retain_freed_memory
from evaluation.cli import main

retain_freed_memory()  # this program owns its process; the library itself never retunes malloc (see _allocator)
sys.exit(main())
