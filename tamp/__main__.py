import sys

from tamp.cli import main

sys.exit(main())
