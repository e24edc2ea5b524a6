"""The ``toolfoundry`` command line.

Each command group lives in its own module and is imported only when used, so
``toolfoundry --help`` stays fast and one area's dependencies never load for another.
"""

from __future__ import annotations

import importlib
import sys

import click

from toolfoundry.base.collector import gc_paused

__all__ = ["COMMANDS", "LazyGroup", "main"]

# command name -> "module:attribute" of a click command or group
COMMANDS: dict[str, str] = {
    "describe": "toolfoundry.cli.catalog:describe",
    "catalog": "toolfoundry.cli.catalog:catalog",
    "js": "toolfoundry.cli.js:js",
    "create": "toolfoundry.cli.create:create",
    "call": "toolfoundry.cli.call:call",
    "tools": "toolfoundry.cli.tools:tools",
    "approvals": "toolfoundry.cli.approvals:approvals",
    "upstream": "toolfoundry.cli.upstream:upstream",
    "demo": "toolfoundry.cli.demo:demo",
    "doctor": "toolfoundry.cli.doctor:doctor",
    "eval": "toolfoundry.cli.eval:eval_group",
    "agent": "toolfoundry.cli.agent:agent",
    "executor": "toolfoundry.cli.executor:executor",
    "mcp": "toolfoundry.cli.mcp:mcp_group",
    "serve": "toolfoundry.cli.serve:serve",
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def invoke(self, ctx: click.Context) -> object:
        """Run the command; an optional part it needs but lacks is one line, not a traceback."""
        from toolfoundry.base.extras import MissingExtra

        try:
            return super().invoke(ctx)
        except MissingExtra as exc:
            raise click.ClickException(str(exc)) from None

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """Click's, with its "Did you mean" for a mistyped command: click draws those from
        the commands it holds, and this group holds none until one is used."""
        unknown = args and args[0] not in COMMANDS and not args[0].startswith("-")
        if unknown and not ctx.resilient_parsing:
            raise click.exceptions.NoSuchCommand(args[0], possibilities=list(COMMANDS), ctx=ctx)
        return super().resolve_command(ctx, args)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        if module_name in sys.modules:
            module = sys.modules[module_name]
        else:
            with gc_paused(freeze=True):  # a command's imports are most of its start-up
                module = importlib.import_module(module_name)
        command = getattr(module, attr)
        assert isinstance(command, click.Command)
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="toolfoundry")
def main() -> None:
    """Let an agent make its own tools safely, and keep them."""
