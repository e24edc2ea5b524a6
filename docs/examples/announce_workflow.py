"""Example: a deterministic workflow that researches, drafts and publishes an announcement.

    python docs/examples/announce_workflow.py --topic sandbox --publish
    python docs/examples/announce_workflow.py --topic sandbox --max-feed-items 0   # skipped
    python docs/examples/announce_workflow.py --topic sandbox --feed-down           # unavailable
    python docs/examples/announce_workflow.py --topic sandbox --publish --no-session
    python docs/examples/announce_workflow.py --topic gardening                     # empty
    python docs/examples/announce_workflow.py --skill        # the workflow in SKILL.md

Four steps share one state: search the release archive (capped by ``max_notes``), pull
related items from a partner feed (capped by ``max_feed_items``; the feed can be down), draft
the post from the evidence (blocked when there is none), publish it on the team board (needs
a board session; only when ``publish`` is true, otherwise the step is ``ready``: a preview).
The workflow succeeds when the post is published.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field

from toolfoundry.catalog import skill_markdown
from toolfoundry.spec import StepResult, StepStatus
from toolfoundry.workflow import Workflow

BOARD_LIMIT = 600  # characters the team board accepts in one post

ARCHIVE = [
    {"title": "0.4: QuickJS sandbox", "body": "Tools now run in a QuickJS sandbox in Wasm."},
    {"title": "0.5: sandbox limits", "body": "Per-call memory and time limits in the sandbox."},
    {"title": "0.6: registry rollback", "body": "Any tool version can be restored by rollback."},
]
FEED = [
    {"title": "Partner: sandbox audit published", "url": "https://partner.example/audit"},
    {"title": "Partner: registry mirror", "url": "https://partner.example/mirror"},
]


class FeedDown(Exception):
    """The partner feed did not answer."""


class BoardDown(Exception):
    """The team board refused the post for a reason of its own (outage, rate limit)."""


@dataclass
class Feed:
    """The partner feed (an outside service that may be down)."""

    items: list[dict[str, str]]
    online: bool = True

    def search(self, topic: str, limit: int) -> list[dict[str, str]]:
        if not self.online:
            raise FeedDown("partner feed answered 503 Service Unavailable")
        return [i for i in self.items if topic.lower() in i["title"].lower()][:limit]


@dataclass
class Board:
    """The team board: posting needs a session, opened with the operator's token."""

    token: str | None
    posts: list[dict[str, str]] = field(default_factory=list)

    def open_session(self) -> str | None:
        return f"session-for-{self.token}" if self.token else None

    def post(self, session: str, title: str, body: str) -> str:
        self.posts.append({"session": session, "title": title, "body": body})
        return f"https://board.example/posts/{len(self.posts)}"


@dataclass
class AnnounceState:
    topic: str
    max_notes: int
    max_feed_items: int
    publish: bool
    session: str | None
    evidence: list[dict[str, str]] = field(default_factory=list)
    draft: str | None = None
    url: str | None = None


def build_announce(
    archive: list[dict[str, str]], feed: Feed, board: Board
) -> Workflow[AnnounceState]:
    """The ``announce`` workflow bound to its archive, feed and board."""

    def announce(
        topic: str, max_notes: int = 5, max_feed_items: int = 3, publish: bool = False
    ) -> AnnounceState:
        """Research a topic in the release archive and the partner feed, draft an
        announcement from the evidence, and publish it on the team board.

        Args:
            topic: what the announcement is about, e.g. "sandbox".
            max_notes: how many archive notes to use; 0 turns the archive search off.
            max_feed_items: how many partner feed items to use; 0 turns the feed off.
            publish: post the draft; when false the run stops at a preview.
        """
        return AnnounceState(topic, max_notes, max_feed_items, publish, board.open_session())

    flow = Workflow(
        announce,
        capabilities={"network": ["partner.example", "board.example"]},
        unavailable_on=(FeedDown, BoardDown),
        outputs=lambda s: {"evidence": s.evidence, "draft": s.draft, "url": s.url},
        done=lambda s: s.url is not None,
    )

    @flow.step(cap="max_notes")
    def search_archive(state: AnnounceState) -> StepResult:
        word = state.topic.lower()
        hits = [n for n in archive if word in (n["title"] + " " + n["body"]).lower()]
        hits = hits[: state.max_notes]
        state.evidence += [{"source": "archive", "title": n["title"]} for n in hits]
        if not hits:
            return StepResult(StepStatus.EMPTY, message=f"no archive note mentions {word!r}")
        return StepResult(StepStatus.COMPLETED, data={"notes": len(hits)})

    @flow.step(cap="max_feed_items")
    def search_feed(state: AnnounceState) -> StepResult:
        items = feed.search(state.topic, state.max_feed_items)
        state.evidence += [{"source": "feed", "title": i["title"]} for i in items]
        if not items:
            return StepResult(StepStatus.EMPTY, message=f"no feed item mentions {state.topic!r}")
        return StepResult(StepStatus.COMPLETED, data={"items": len(items)})

    @flow.step(requires={"research_evidence_empty": lambda s: bool(s.evidence)})
    def draft_post(state: AnnounceState) -> StepResult:
        lines = [f"# News about {state.topic}", ""]
        lines += [f"- {e['title']} ({e['source']})" for e in state.evidence]
        state.draft = "\n".join(lines)
        return StepResult(StepStatus.COMPLETED, data={"chars": len(state.draft)})

    @flow.step(
        needs={"board_session": lambda s: s.session is not None},
        after=("draft_post",),
        requires={
            "draft_over_board_limit": lambda s: s.draft is None or len(s.draft) <= BOARD_LIMIT
        },
        run_if=lambda s: s.publish,
    )
    def publish_post(state: AnnounceState) -> StepResult:
        # guaranteed by the gates above
        assert state.session is not None
        assert state.draft is not None
        state.url = board.post(state.session, f"News about {state.topic}", state.draft)
        return StepResult(StepStatus.COMPLETED, data={"url": state.url})

    return flow


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the announce example workflow.")
    parser.add_argument("--topic", default="sandbox")
    parser.add_argument("--max-notes", type=int, default=5)
    parser.add_argument("--max-feed-items", type=int, default=3)
    parser.add_argument("--publish", action="store_true")
    parser.add_argument("--feed-down", action="store_true", help="the partner feed is down")
    parser.add_argument("--no-session", action="store_true", help="no board token configured")
    parser.add_argument("--skill", action="store_true", help="print the workflow's SKILL.md")
    args = parser.parse_args(argv)
    board = Board(token=None if args.no_session else "operator-token")
    flow = build_announce(ARCHIVE, Feed(FEED, online=not args.feed_down), board)
    if args.skill:
        print(skill_markdown([flow.spec]), end="")
        return 0
    result = flow.call(
        {
            "topic": args.topic,
            "max_notes": args.max_notes,
            "max_feed_items": args.max_feed_items,
            "publish": args.publish,
        }
    )
    print(json.dumps(result.to_dict(), indent=2))
    return 0 if result.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
