"""Tell a new user, in one screen, what is ready and what is not (and how to fix it).

    python scripts/verify_setup.py [--cluster] [--env .env]

Library code: morphcpt.chain.setup_check. Exit status 1 if a required check fails.
"""

import sys

from morphcpt.chain.setup_check import main

if __name__ == "__main__":
    sys.exit(main())
