"""`python -m trafka`: the `trafka` command."""

import sys

from trafka.app.cli import main

sys.exit(main())
