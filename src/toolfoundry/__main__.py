"""``python -m toolfoundry`` runs the CLI."""

from toolfoundry.cli import main

main()
