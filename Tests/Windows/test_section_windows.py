"""Windows of sectioned sessions, against the real binary, on the memory store and on Redis (a
redis-server the test starts; written through one replica, followed through the other).

A window of a sectioned session is a range of whole sections. Random sessions get random
writes of every kind (whole updates, JSON Patch change lists, keyed change lists) and random
scrolls; followers of several windows in every format apply each event with appliers written
from the formats' documentation (Tests/PythonSupport/replayers.py, the jsonpatch package), and
after every event hold exactly the session's sections at that version where their window says,
the window placed where its rules put it (an offset stays, an `after`/`before` window stays
with its anchor section or the nearest one kept on its side). A scroll is one delta, never a
reset."""
import json
import os
import random
import sys
import urllib.request

import jsonpatch
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "PythonSupport"))
from livedelta_testing import redis_server, store_servers  # noqa: E402
from replayers import sectioned_android_apply, sectioned_batch_replay, sectioned_keyed_apply  # noqa: E402

BINARY = os.environ.get("LIVEDELTA_BINARY", ".build/debug/livedelta")
EXAMPLES = int(os.environ.get("WINDOW_EXAMPLES", "3"))
FORMATS = ["batch", "sequential", "keyed", "jsonPatch"]


@pytest.fixture(scope="module")
def redis_url():
    yield from redis_server()


@pytest.fixture(scope="module", params=["memory", "redis"])
def servers(request, tmp_path_factory):
    """One server on the memory store, or two replicas sharing a Redis. Every follower of the
    test reconnects at once to scroll, from one address: no limit on stream opens."""
    yield from store_servers(request, tmp_path_factory, BINARY, ["--stream-opens-per-second", "0"])


class Session:
    """A sectioned session and its sections at every version, read after each write."""

    def __init__(self, server, name, sections, options=None):
        self.server, self.name = server, name
        self.states = {}
        self.next_id = 1000
        body = {"sections": sections} | ({"options": options} if options else {})
        status, answer = server.request("PUT", f"/sessions/{name}", body)
        assert status in (200, 201), answer
        self.record()

    def record(self):
        status, answer = self.server.request("GET", f"/sessions/{self.name}?offset=0&limit=1000")
        assert status == 200, answer
        self.incarnation = answer["token"].split(".")[0]
        self.version = answer["version"]
        self.sections = answer["sections"]
        self.states[(self.incarnation, self.version)] = self.sections

    def write(self, rng):
        """One random write: a whole update, a JSON Patch or keyed operations, to a random next
        state."""
        new = self.mutated(rng)
        kind = rng.choice(["update", "jsonPatch", "keyed"])
        if kind == "update":
            status, answer = self.server.request("POST", f"/sessions/{self.name}/update", {"sections": new})
        elif kind == "jsonPatch":
            patch = jsonpatch.make_patch({"sections": self.sections}, {"sections": new}).patch
            status, answer = self.server.request("POST", f"/sessions/{self.name}/changes", patch, content_type="application/json-patch+json")
        else:
            status, diff = self.server.request("POST", "/diff", {"old": {"sections": self.sections}, "new": {"sections": new},
                                                                 "options": {"format": "keyed"}})
            assert status == 200, diff
            status, answer = self.server.request("POST", f"/sessions/{self.name}/changes", {"operations": diff["keyed"]})
        assert status == 200, (kind, self.sections, new, answer)
        self.record()
        assert self.sections == new, (kind, self.sections, new)

    def mutated(self, rng):
        sections = json.loads(json.dumps(self.sections))
        for _ in range(rng.randint(1, 4)):
            choice = rng.randrange(8)
            if choice == 0 and len(sections) > 3:
                sections.pop(rng.randrange(len(sections)))
            elif choice == 1:
                self.next_id += 1
                items = [{"id": self.next_id * 10 + k, "v": 0} for k in range(rng.randint(0, 2))]
                sections.insert(rng.randint(0, len(sections)), {"id": f"s{self.next_id}", "title": 0, "items": items})
            elif choice == 2:
                sections.insert(rng.randint(0, len(sections) - 1), sections.pop(rng.randrange(len(sections))))
            elif choice == 3:
                rng.choice(sections)["title"] = rng.randint(0, 3)
            elif choice == 4:
                source = rng.choice([s for s in sections if s["items"]] or sections)
                if source["items"]:
                    item = source["items"].pop(rng.randrange(len(source["items"])))
                    target = rng.choice(sections)
                    target["items"].insert(rng.randint(0, len(target["items"])), item)
            elif choice == 5:
                self.next_id += 1
                target = rng.choice(sections)
                target["items"].insert(rng.randint(0, len(target["items"])), {"id": self.next_id * 10, "v": 0})
            elif choice == 6:
                source = rng.choice(sections)
                if source["items"]:
                    source["items"].pop(rng.randrange(len(source["items"])))
            else:
                source = rng.choice(sections)
                if source["items"]:
                    rng.choice(source["items"])["v"] += 1
        return sections


class Follower:
    """A client of one window of a session in one format: it keeps the sections it was sent and
    applies every event to them, recording what it held after each."""

    def __init__(self, server, name, fmt, query, last_id=None):
        self.server, self.name, self.format = server, name, fmt
        self.sections, self.version, self.incarnation, self.window = [], None, None, None
        self.seen, self.problems = [], []
        self.last_id = None
        self.open(query, last_id)

    def open(self, query, last_id=None):
        self.query = query
        request = urllib.request.Request(self.server.url(f"/sessions/{self.name}/events?format={self.format}&{query}"))
        if last_id:
            request.add_header("Last-Event-ID", last_id)
        self.stream = urllib.request.urlopen(request, timeout=20)

    def move(self, query):
        """A scroll: the stream opened again with another window, resuming from the last id."""
        self.stream.close()
        self.open(query, self.last_id)

    def close(self):
        self.stream.close()

    def next(self):
        """Reads and applies the next event; its name."""
        fields = {}
        while True:
            line = self.stream.readline()
            assert line, f"{self.format} {self.query}: the stream ended"
            line = line.decode().rstrip("\n")
            if not line:
                if "event" in fields:
                    break
                continue
            if line.startswith(":"):
                continue
            key, _, value = line.partition(":")
            fields[key] = value[1:] if value.startswith(" ") else value
        self.apply(fields["event"], fields.get("id"), json.loads(fields["data"]))
        return fields["event"]

    def follow(self, incarnation, version):
        while (self.incarnation, self.version) != (incarnation, version):
            self.next()

    def apply(self, event, event_id, data):
        life = event_id.split(".")[0] if event_id else None
        if event == "reset":
            self.sections = data["sections"]
        elif event in ("delta", "window"):
            if (data["baseVersion"], life) != (self.version, self.incarnation):
                self.problems.append(f"{event} from {data['baseVersion']} on {self.version}")
            if event == "delta":
                try:
                    self.sections = self.replay(data)
                except AssertionError as error:
                    self.problems.append(f"version {data['version']} does not replay: {error!r} {json.dumps(data)[:600]}")
        else:
            return
        self.last_id = event_id
        self.version, self.incarnation, self.window = data["version"], life, data["window"]
        self.seen.append((event, life, self.version, self.sections, self.window, self.query))

    def replay(self, data):
        held = self.sections
        if self.format == "batch":
            new = data["sections"]
            assert sectioned_batch_replay(held, data["sectionDelta"], data["itemDelta"], new) == new
            return new
        if self.format == "sequential":
            new = data["sections"]
            assert sectioned_android_apply(held, data["sequential"], new) == new
            return new
        if self.format == "keyed":
            return sectioned_keyed_apply(held, data["keyed"])
        return jsonpatch.apply_patch({"sections": held}, data["jsonPatch"])["sections"]


def expected_range(query, window, sections):
    """Where the window's rules put it in `sections`, given the anchor its event names."""
    parameters = dict(pair.split("=", 1) for pair in query.split("&"))
    limit, overscan, total = int(parameters["limit"]), int(parameters.get("overscan", 0)), len(sections)

    def clamp(start):
        lower = min(total, max(0, start - overscan))
        return lower, min(total, max(lower, start + limit + overscan))

    def position(key, edge):
        anchor = window.get(key)
        if anchor is None:
            return edge
        ids = [s["id"] for s in sections]
        return ids.index(anchor) if anchor in ids else None

    if "after" in parameters:
        at = position("after", -1)
        return None if at is None else clamp(at + 1)
    if "before" in parameters:
        at = position("before", total)
        return None if at is None else clamp(at - limit)
    return clamp(int(parameters.get("offset", 0)))


def problems_of(follower, states):
    problems = list(follower.problems)
    for event, life, version, held, window, query in follower.seen:
        state = states.get((life, version))
        if state is None:
            problems.append(f"no state {life}.{version}")
            continue
        offset, count = window["offset"], window["count"]
        if window["total"] != len(state) or held != state[offset:offset + count]:
            problems.append(f"{event} {version} {window}: holds {held}, the session {state[offset:offset + count]}")
        if expected_range(query, window, state) != (offset, offset + count):
            problems.append(f"{event} {version}: window {window} is not where {query} puts it in {[s['id'] for s in state]}")
    return problems


counter = iter(range(1_000_000))


# Each case: how many sections a session starts with, the most items each, and its
# `dataCountAnimationThreshold`. In the second the session (about 40 sections) is over the
# threshold and every window (at most 7 sections of a few items) under it: a whole update,
# which tells a client of all the sections to reload, still sends each window its delta.
@pytest.mark.parametrize("sections,items,threshold", [(14, 3, None), (40, 1, 30)])
def test_windows_of_sections_hold_the_sessions_sections_at_every_version(servers, sections, items, threshold):
    writer, reader = servers[0], servers[-1]

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.randoms(use_true_random=False))
    def check(rng):
        name = f"w{next(counter)}"
        start = [{"id": f"s{n}", "title": 0, "items": [{"id": n * 10 + k, "v": 0} for k in range(rng.randint(0, items))]}
                 for n in range(sections)]
        session = Session(writer, name, start, threshold and {"dataCountAnimationThreshold": threshold})
        ids = [s["id"] for s in start]
        queries = ["offset=0&limit=3", "offset=4&limit=3&overscan=1", f"after={ids[3]}&limit=3", f"before={ids[9]}&limit=2&overscan=1",
                   "offset=12&limit=5"]
        followers = [Follower(reader, name, fmt, query) for query in queries for fmt in FORMATS]
        try:
            run(session, followers, rng)
        finally:
            for follower in followers:
                follower.close()

    check()


def run(session, followers, rng):
    def catch_up():
        for follower in followers:
            follower.follow(session.incarnation, session.version)

    catch_up()
    for _ in range(12):
        session.write(rng)
    catch_up()
    # Scrolls: each follower moves its window and is sent one delta from what it held.
    for follower in followers:
        ids = [s["id"] for s in session.sections]
        limit = rng.randint(1, 5)
        query = rng.choice([f"offset={rng.randrange(len(ids))}&limit={limit}", f"after={rng.choice(ids)}&limit={limit}&overscan=1",
                            f"before={rng.choice(ids)}&limit={limit}"])
        status, placed = session.server.request("GET", f"/sessions/{session.name}?{query}")
        assert status == 200, placed
        same = (placed["window"]["offset"], placed["window"]["count"]) == (follower.window["offset"], follower.window["count"])
        follower.move(query)
        if not same:
            event = follower.next()
            assert event == "delta", f"a scroll to {query} was sent {event}"
    for _ in range(12):
        session.write(rng)
    catch_up()
    deltas = 0
    for follower in followers:
        problems = problems_of(follower, session.states)
        assert not problems, (follower.format, follower.query, problems[:3])
        events = [seen[0] for seen in follower.seen]
        assert events.count("reset") == 1, (follower.format, follower.query, events)
        deltas += events.count("delta")
    assert deltas >= len(followers) * 3, deltas
