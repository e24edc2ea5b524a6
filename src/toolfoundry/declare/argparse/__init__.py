"""Declarations from argparse parsers (``toolfoundry.declare.from_argparse``).

``parser.py`` reads a parser into one :class:`ArgparseCommand` per leaf command; ``schema.py``
turns its actions into JSON Schema, ``slot.py`` and ``values.py`` map each action's values to
and from JSON, ``command.py`` calls the parser with the arguments turned back into argv.

The package is named for what it reads; its modules import the standard library's ``argparse``
absolutely (``import argparse``), which this package never shadows.
"""
