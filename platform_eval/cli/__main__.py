"""``python -m platform_eval.cli``."""

import sys

from . import program

sys.exit(program())
