"""The commit-msg hook: a commit's subject says what changed in at most 72 characters.

    .venv/bin/python scripts/commit_subject.py .git/COMMIT_EDITMSG

Run by pre-commit at the commit-msg stage (.pre-commit-config.yaml; ``.venv/bin/pre-commit
install`` installs it). The subject is the message's first line that is not a comment; the
figures and the reasons belong in the body, after a blank line. Exit status 1, with the
reason on stderr, when the subject is empty, longer than 72 characters, or names an issue
number (the body says what an issue asked, in its own words).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

MAX_SUBJECT = 72
ISSUE = re.compile(r"\bissues? #?\d+", re.IGNORECASE)


def subject_of(message: str) -> str:
    """The first line that is neither a comment (git's ``#`` lines) nor blank."""
    for line in message.splitlines():
        if line.startswith("#"):
            continue
        if line.strip():
            return line.rstrip()
    return ""


def problems(message: str) -> list[str]:
    """What is wrong with ``message``'s subject (empty when nothing is)."""
    subject = subject_of(message)
    found = []
    if not subject:
        found.append("the subject is empty")
    elif len(subject) > MAX_SUBJECT:
        found.append(
            f"the subject has {len(subject)} characters, at most {MAX_SUBJECT}: say what "
            "changed, and move the figures and reasons to the body (after a blank line)"
        )
    if ISSUE.search(subject):
        found.append("the subject names an issue number: say what changed instead")
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: commit_subject.py COMMIT_MESSAGE_FILE", file=sys.stderr)
        return 2
    message = Path(argv[0]).read_text(encoding="utf-8", errors="replace")
    found = problems(message)
    for problem in found:
        print(f"commit message refused: {problem}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
