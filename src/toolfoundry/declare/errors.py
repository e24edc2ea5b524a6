"""Errors raised when code cannot be described honestly as a tool."""

from __future__ import annotations


class DeclarationError(TypeError):
    """A function or parser that cannot become a ToolSpec without lying to the model.

    The message names the declaration and the offending parameter, and says how to fix it.
    """
