"""The command-line reference, generated from the click command tree.

One walk over :func:`toolfoundry.cli.main`, two renderings: the table of commands in
README.md ("The command line") and ``docs/cli.md`` (every command's ``--help``). Both are
committed and compared with the code by ``make docs-check`` (``scripts/generated_docs.py``),
so a new command or option cannot go undocumented.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import click

# Help is wrapped at click's usual width, fixed so the output does not depend on the terminal.
WIDTH = 80


@dataclass(frozen=True)
class CommandDoc:
    """One command or group of the tree, with the click context its help is rendered in."""

    command: click.Command
    context: click.Context

    @property
    def path(self) -> str:
        """The full command, e.g. ``toolfoundry tools show``."""
        return self.context.command_path

    @property
    def is_group(self) -> bool:
        """True for a group (``toolfoundry tools``), False for a command that runs."""
        return isinstance(self.command, click.Group)

    def usage(self) -> str:
        """The command with its arguments and required options: ``toolfoundry call NAME``."""
        pieces = [self.path]
        for param in self.command.params:
            if isinstance(param, click.Argument):
                pieces.append(param.make_metavar(self.context))
            elif isinstance(param, click.Option) and param.required:
                pieces.append(f"{param.opts[0]} {param.make_metavar(self.context)}")
        return " ".join(pieces)

    def summary(self) -> str:
        """The first sentence of the command's help."""
        return self.command.get_short_help_str(limit=1000)

    def help(self) -> str:
        """The command's ``--help`` output."""
        return self.command.get_help(self.context)


def walk(root: click.Command, name: str = "toolfoundry") -> Iterator[CommandDoc]:
    """Every command and group under ``root`` (``root`` first), depth first, by name."""
    yield from _walk(root, None, name)


def _walk(command: click.Command, parent: click.Context | None, name: str) -> Iterator[CommandDoc]:
    # As click's make_context does: the command's own settings (-h for --help) apply.
    settings = {"terminal_width": WIDTH, "max_content_width": WIDTH, **command.context_settings}
    context = click.Context(command, parent=parent, info_name=name, **settings)
    yield CommandDoc(command, context)
    if isinstance(command, click.Group):
        for sub_name in command.list_commands(context):
            sub = command.get_command(context, sub_name)
            if sub is not None and not sub.hidden:
                yield from _walk(sub, context, sub_name)


def command_table(root: click.Command) -> str:
    """A Markdown table of every command that runs: its usage and what it does."""
    rows = ["| command | what it does |", "|---|---|"]
    for doc in walk(root):
        if not doc.is_group:
            rows.append(f"| `{doc.usage()}` | {_cell(doc.summary())} |")
    return "\n".join(rows) + "\n"


def full_reference(root: click.Command) -> str:
    """``docs/cli.md``: a heading and the ``--help`` output of every command and group."""
    out = [
        "# The command line",
        "",
        "Generated from the click commands by `scripts/generated_docs.py`; `make docs-check`",
        "fails when this file differs from the code. Edit the commands' docstrings and options,",
        "then run `make docs`.",
    ]
    for doc in walk(root):
        out += ["", f"## `{doc.path}`", "", "```text", doc.help().rstrip(), "```"]
    return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")
