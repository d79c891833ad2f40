"""``python -m evaluation``: the command line, in a process of its own."""

import sys

from evaluation.cli import console_main

sys.exit(console_main())
