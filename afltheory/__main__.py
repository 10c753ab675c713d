"""``python -m afltheory ...``: the same command line as the ``afltheory`` script."""

import sys

from afltheory.cli import main

if __name__ == "__main__":
    sys.exit(main())
