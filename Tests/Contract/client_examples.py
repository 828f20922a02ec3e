"""The README's examples through a client generated from openapi.yaml by openapi-python-client.

Run by run.sh, with the generated package `livedelta_client` on the path and a server at the URL
given. A change to the spec that breaks generated clients (a model that no longer parses an
answer, a required key the server may leave out) fails here.
"""
import os
import sys

from livedelta_client import AuthenticatedClient
from livedelta_client.api.default import create_session, diff, get_session, put_session, update_session
from livedelta_client.models import (
    DiffOptions,
    DiffRequest,
    Error,
    FlatDiff,
    Section,
    SectionedDiff,
    SessionChangeBody,
    SessionContents,
    SessionCreateBody,
    SessionSummary,
    Sectioned,
)

# The token run.sh minted with PyJWT: the server checks tokens, as in production.
client = AuthenticatedClient(base_url=sys.argv[1], token=os.environ["LIVEDELTA_TOKEN"], raise_on_unexpected_status=True)


def check(condition, what):
    if not condition:
        raise SystemExit(f"client example failed: {what}")


def pairs(moves):
    return [(move.source, move.target) for move in moves]


# A flat diff of movies: one deleted, one inserted, one moved, one reloaded.
answer = diff.sync(client=client, body=DiffRequest(
    old=[{"id": 1, "title": "Alien"}, {"id": 2, "title": "Brazil"}, {"id": 3, "title": "Casablanca"}],
    new=[{"id": 3, "title": "Casablanca"}, {"id": 1, "title": "Alien (1979)"}, {"id": 4, "title": "Dune"}]))
check(isinstance(answer, FlatDiff), f"flat diff answered {answer!r}")
check(answer.animation.value == "preciseAnimations", "flat animation")
check(answer.delta.deletions == [1] and answer.delta.insertions == [2], "flat deletions and insertions")
check(pairs(answer.delta.moves) == [(0, 1)] and pairs(answer.delta.reloads) == [(0, 1)], "flat moves and reloads")

# Sections: an item moving between them, a header changing.
answer = diff.sync(client=client, body=DiffRequest(
    old=Sectioned(sections=[Section.from_dict({"id": "watching", "title": "Watching", "items": [{"id": 1}, {"id": 2}]}),
                            Section.from_dict({"id": "done", "title": "Done", "items": [{"id": 3}]})]),
    new=Sectioned(sections=[Section.from_dict({"id": "watching", "title": "Watching", "items": [{"id": 2}]}),
                            Section.from_dict({"id": "done", "title": "Finished", "items": [{"id": 1}, {"id": 3}]})])))
check(isinstance(answer, SectionedDiff), f"sectioned diff answered {answer!r}")
check(pairs(answer.section_delta.reloads) == [(1, 1)], "section reloads")
moves = [((m.source.section, m.source.item), (m.target.section, m.target.item)) for m in answer.item_delta.moves]
check(moves == [((0, 0), (1, 0))], f"item moves {moves}")

# A custom itemsKey: sections hold their items under "rows".
rows = DiffOptions(items_key="rows")
answer = diff.sync(client=client, body=DiffRequest(
    old=Sectioned(sections=[Section.from_dict({"id": "a", "rows": [{"id": 1}, {"id": 2}]})]),
    new=Sectioned(sections=[Section.from_dict({"id": "a", "rows": [{"id": 2}]})]),
    options=rows))
check(isinstance(answer, SectionedDiff), f"itemsKey diff answered {answer!r}")
check([(p.section, p.item) for p in answer.item_delta.deletions] == [(0, 0)], "itemsKey deletions")

# A session kept with If-Match: an update at the right version, then a stale one (412).
created = create_session.sync(client=client, body=SessionCreateBody(items=[{"id": 1, "title": "Alien"}, {"id": 2, "title": "Brazil"}]))
check(isinstance(created, SessionSummary) and created.version == 0, f"created {created!r}")
moved = update_session.sync_detailed(created.id, client=client, if_match='"0"', body=SessionChangeBody(
    items=[{"id": 2, "title": "Brazil"}, {"id": 3, "title": "Casablanca"}]))
check(moved.status_code == 200 and moved.parsed.version == 1 and moved.parsed.base_version == 0, f"update {moved!r}")
check(moved.parsed.delta.deletions == [0] and moved.parsed.delta.insertions == [1], "session delta")
stale = update_session.sync_detailed(created.id, client=client, if_match='"0"', body=SessionChangeBody(items=[]))
check(stale.status_code == 412 and isinstance(stale.parsed, Error), f"stale update {stale!r}")
check(stale.parsed.error.code.value == "version_mismatch" and stale.parsed.error.current_version == 1, "412 body")
check(stale.headers.get("ETag") == '"1"', "412 ETag")
held = get_session.sync(created.id, client=client)
check(isinstance(held, SessionContents) and held.version == 1 and [item["id"] for item in held.items] == [2, 3], f"held {held!r}")

# A sectioned session under a custom itemsKey, read back.
put = put_session.sync_detailed("client-rows", client=client, body=SessionCreateBody(
    sections=[Section.from_dict({"id": "a", "rows": [{"id": 1}]})], options=rows))
check(put.status_code in (200, 201), f"put {put!r}")
held = get_session.sync("client-rows", client=client)
check(isinstance(held, SessionContents) and held.sections[0].additional_properties["rows"] == [{"id": 1}], f"rows {held!r}")
check(held.options.items_key == "rows", "held options")

print("generated client: README examples passed (flat, sectioned, itemsKey, session with If-Match and 412)")
