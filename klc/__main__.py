"""``python -m klc``: the same as the ``klc`` command (useful where klc is not installed,
e.g. a checkout on ``PYTHONPATH``)."""

import sys

from klc.cli import main

sys.exit(main())
