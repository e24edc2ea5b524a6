"""The shop's command line; each subcommand is also a tool."""

from __future__ import annotations

import argparse


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="stock", description="The shop's stock.")
    commands = parser.add_subparsers()
    count = commands.add_parser("count", help="Count the items in stock")
    count.add_argument("item", help="the item to count")
    count.set_defaults(func=lambda args: {"item": args.item, "count": 4})
    move = commands.add_parser("move", help="Move items between shelves")
    move.add_argument("item", help="the item to move")
    move.add_argument("--to", choices=("front", "back"), default="front", help="target shelf")
    move.set_defaults(func=lambda args: {"moved": args.item, "to": args.to})
    return parser
