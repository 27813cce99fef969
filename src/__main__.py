"""`python -m trafka`: the `trafka` command."""

import sys

from trafka.app.cli.main import main

sys.exit(main())
