"""Declarations from argparse parsers: one tool per leaf command, called through the parser.

    parser = argparse.ArgumentParser(prog="board")
    sub = parser.add_subparsers()
    posts = sub.add_parser("posts", help="Query a public board's feed")
    posts.add_argument("board")
    posts.add_argument("--sort", choices=("hot", "new"), default="hot")
    posts.set_defaults(func=run_posts)
    [cmd] = from_argparse(parser)          # cmd.spec.name == "board_posts"
    cmd.call({"board": "python", "sort": "new"})

The parser is the single source of truth: the JSON Schema is read from its actions, and a
call turns the JSON arguments back into argv and runs ``parse_args`` on that same parser.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Mapping
from typing import Any

from toolfoundry.declare.argparse.command import (
    ArgparseCommand,
    ArgumentsRejected,
    Handler,
    subparsers_of,
)
from toolfoundry.declare.argparse.schema import parser_slots, tidy
from toolfoundry.declare.argparse.slot import ArgumentSlot
from toolfoundry.declare.errors import DeclarationError
from toolfoundry.spec import Capabilities, InvalidName, Level, ToolSpec, validate_name

__all__ = ["ArgparseCommand", "ArgumentsRejected", "from_argparse"]


def from_argparse(
    parser: argparse.ArgumentParser,
    *,
    name: str | None = None,
    handler: Handler | None = None,
    group: str | None = None,
    capabilities: Capabilities | Mapping[str, Any] | None = None,
) -> list[ArgparseCommand]:
    """Read one :class:`ArgparseCommand` per leaf command of ``parser``.

    A parser with subparsers yields one command per subcommand (recursively), named
    ``<parent>_<command>`` with ``ToolSpec.group`` set to the parent's name; a parser
    without subparsers yields one command. ``set_defaults(_command_level="workflow")`` on a
    command's parser marks it a workflow.

    Args:
        parser: the root parser; it is read, never modified.
        name: name of the root (default: ``parser.prog`` without a ``.py`` suffix),
            sanitised to the portable tool-name pattern.
        handler: called with the parsed Namespace for every command; when omitted, each
            command's ``set_defaults(func=...)`` (or ``handler=...``) is used.
        group: overrides ``ToolSpec.group`` of every command.
        capabilities: capabilities of every command (default: none, a pure tool).

    Returns:
        The commands in declaration order.

    Raises:
        DeclarationError: when a name cannot be made portable, two commands end up with the
            same name, or an argument cannot be described honestly as JSON.
    """
    if not isinstance(parser, argparse.ArgumentParser):
        raise DeclarationError(f"from_argparse needs an ArgumentParser, not {type(parser)!r}")
    root = name if name is not None else _prog_name(parser.prog)
    caps = (
        capabilities
        if isinstance(capabilities, Capabilities)
        else Capabilities.from_dict(capabilities)
    )
    found: list[ArgparseCommand] = []
    _walk(parser, [parser], (), [_portable(root, parser.prog)], None, handler, group, caps, found)
    seen: dict[str, tuple[str, ...]] = {}
    for command in found:
        if command.spec.name in seen:
            raise DeclarationError(
                f"commands {' '.join(seen[command.spec.name]) or parser.prog!r} and "
                f"{' '.join(command.words)!r} both become the tool name {command.spec.name!r}"
            )
        seen[command.spec.name] = command.words
    return found


def _walk(
    parser: argparse.ArgumentParser,
    chain: list[argparse.ArgumentParser],
    words: tuple[str, ...],
    parts: list[str],
    help_: str | None,
    handler: Handler | None,
    group: str | None,
    caps: Capabilities,
    found: list[ArgparseCommand],
) -> None:
    sub = subparsers_of(parser)
    if sub is None:
        parent = "_".join(parts[:-1]) or None
        found.append(_command(chain, words, "_".join(parts), help_, handler, group or parent, caps))
        return
    helps = {a.dest: a.help for a in sub._choices_actions}
    visited: set[int] = set()
    for word, child in sub.choices.items():
        if id(child) in visited:  # an alias of a command already read
            continue
        visited.add(id(child))
        child_help = helps.get(word)
        if child_help == argparse.SUPPRESS:
            continue
        if child_help and "%(" in child_help:
            child_help = child_help % {"prog": parser.prog, "dest": word}
        part = _portable(word, child.prog)
        _walk(
            child,
            [*chain, child],
            (*words, word),
            [*parts, part],
            child_help,
            handler,
            group,
            caps,
            found,
        )


def _command(
    chain: list[argparse.ArgumentParser],
    words: tuple[str, ...],
    name: str,
    help_: str | None,
    handler: Handler | None,
    group: str | None,
    caps: Capabilities,
) -> ArgparseCommand:
    leaf = chain[-1]
    if not (name[0].isalpha() or name[0] == "_"):
        name = f"_{name}"
    try:
        validate_name(name)
    except InvalidName as exc:
        raise DeclarationError(f"{leaf.prog}: {exc}; pass name= to from_argparse") from exc
    levels = [parser_slots(p, leaf=p is leaf) for p in chain]
    # a subcommand's namespace overwrites its parent's, so the parent's same-named option is moot
    taken: set[str] = set()
    kept: list[tuple[ArgumentSlot, ...]] = []
    for level in reversed(levels):
        kept.insert(0, tuple(s for s in level if s.name not in taken))
        taken.update(s.name for s in level)
    slots = [s for level in kept for s in level]
    exclusive = _exclusive_groups(chain, {id(a): s.name for s in slots for a in s.actions})
    properties = {s.name: s.schema for s in slots}
    required = [s.name for s in slots if s.required]
    for is_required, names in exclusive:
        if is_required and len(names) == 1 and names[0] not in required:
            required.append(names[0])  # the group's other members are hidden
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    level_value = _inherited(chain, "_command_level")
    try:
        kind = Level(level_value) if level_value is not None else Level.PRIMITIVE
    except ValueError as exc:
        raise DeclarationError(
            f"{leaf.prog}: _command_level must be 'primitive' or 'workflow', not {level_value!r}"
        ) from exc
    chosen = handler or _inherited(chain, "func") or _inherited(chain, "handler")
    if chosen is not None and not callable(chosen):
        raise DeclarationError(f"{leaf.prog}: the handler {chosen!r} is not callable")
    description = _description(leaf, help_, exclusive)
    spec = ToolSpec(name, description, schema, level=kind, capabilities=caps, group=group)
    rules = tuple((r, n) for r, n in exclusive if len(n) > 1)
    return ArgparseCommand(spec, chain[0], words, tuple(kept), rules, chosen)


def _inherited(chain: list[argparse.ArgumentParser], key: str) -> Any:
    """A ``set_defaults`` value as the Namespace will hold it: the deepest parser's wins."""
    for parser in reversed(chain):
        value = parser.get_default(key)
        if value is not None:
            return value
    return None


def _exclusive_groups(
    chain: list[argparse.ArgumentParser], names: dict[int, str]
) -> list[tuple[bool, tuple[str, ...]]]:
    out: list[tuple[bool, tuple[str, ...]]] = []
    for parser in chain:
        for group in parser._mutually_exclusive_groups:
            members = [names[id(a)] for a in group._group_actions if id(a) in names]
            unique = tuple(dict.fromkeys(members))
            if unique:
                out.append((bool(group.required), unique))
    return out


def _description(
    leaf: argparse.ArgumentParser,
    help_: str | None,
    exclusive: list[tuple[bool, tuple[str, ...]]],
) -> str:
    raw = isinstance(leaf._get_formatter(), argparse.RawDescriptionHelpFormatter)
    texts: list[str] = []
    if help_:
        texts.append(tidy(help_, raw=False))
    if leaf.description and leaf.description != argparse.SUPPRESS:
        text = leaf.description
        if "%(prog)" in text:
            text = text % {"prog": leaf.prog}
        text = tidy(text, raw=raw)
        if not texts or not text.startswith(texts[0].rstrip(".")):
            texts.append(text)
        else:
            texts = [text]
    if not texts:
        texts.append(f"The '{leaf.prog}' command.")
    rules = [
        f"{'Exactly' if required else 'At most'} one of: {', '.join(names)}."
        for required, names in exclusive
        if len(names) > 1
    ]
    if rules:
        texts.append(" ".join(rules))
    return "\n\n".join(texts)


def _prog_name(prog: str) -> str:
    base = os.path.basename(prog.strip())
    return base[:-3] if base.endswith(".py") else base


def _portable(word: str, where: str) -> str:
    part = re.sub(r"[^A-Za-z0-9_-]+", "_", word).strip("_")
    if not part:
        raise DeclarationError(
            f"{where}: {word!r} has no letters or digits to make a tool name from; pass name="
        )
    return part
