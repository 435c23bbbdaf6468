"""Entry point of `python3 -m ocltune_report` (what `ocltune report` runs)."""
import sys

from ocltune_report.cli import main

sys.exit(main(sys.argv[1:]))
