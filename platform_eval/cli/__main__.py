"""``python -m platform_eval.cli``."""

import sys

from . import main

sys.exit(main())
