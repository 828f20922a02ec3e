"""The live page and the JavaScript client in a real browser (Debian's headless Chromium):

- the page at /live/{id} follows sessions of integers (the README's), strings, objects by an
  `idKey` (a dotted one), and sections, each through 200 random updates (the integers' with a
  server restart in the middle, on Redis): the page's list (keys in order, their text, section
  titles) equals the session's GET at checkpoints and at the end; a screenshot of each;
- an item whose fields are objects (`{"title": {"toString": 1}}`) shows as text;
- a session that does not exist, one replaced and one deleted while shown, are shown as such,
  and the page does not keep asking;
- the page and its files carry their security headers;
- a session of 1,000,000 rows is shown as a virtual list: scrolled to the middle and to the end
  while a writer commits, the rows on the page are the session's rows at those positions, and
  the page never takes the list whole (one reset, then deltas);
- a deleted row fades out where it was and a changed one flashes;
- a sectioned session of 100,000 rows (followed whole) is shown, and its replacement by
  100,000 other rows, each timed (the figures printed) and checked equal to GET (a section far
  from view by its count of rows: the page makes them as it comes into view, as the last
  section's do when scrolled to);
- the web example of docs/clients.md, served from a second origin that --cors-origins lists,
  shows its session; served from a third origin, the browser refuses it the module and the
  page says which flag allows its origin.

usage: live_page.py BINARY SCREENSHOT_FOLDER
"""
import http.server
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "PythonSupport"))
from livedelta_testing import free_port  # noqa: E402

binary, screenshots = sys.argv[1], sys.argv[2]
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
passed = []


def start_redis():
    port = free_port()
    directory = tempfile.mkdtemp()
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", directory],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process, port, directory
        except OSError:
            time.sleep(0.05)
    raise SystemExit("redis-server did not start")


def start_server(port, flags):
    log = tempfile.TemporaryFile()
    process = subprocess.Popen([binary, "--host", "127.0.0.1", "--port", str(port), *flags], stdout=log, stderr=subprocess.STDOUT)
    process.log = log
    for _ in range(400):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).read()
            return process
        except OSError:
            time.sleep(0.05)
    raise SystemExit("livedelta did not start")


def call(method, url, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    for _ in range(50):
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as error:
            if error.code != 503:
                raise
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"{method} {url} kept failing")


WORDS = "apple banana cherry damson elder fig grape hazel iris juniper kiwi lemon mango nectar olive".split()


def integers(rng):
    return rng.sample(range(60), rng.randint(3, 25))


def strings(rng):
    return [f"w{i}" for i in rng.sample(range(40), rng.randint(3, 20))]


def objects(rng):
    # Ids under a dotted idKey, and fields that are not text.
    # Every third has its title beside its id (`movie.title`), which the page shows.
    return [{"movie": {"id": f"m{i}", **({"title": f"Film {i}"} if i % 3 == 0 else {})}, "year": 1950 + i, "tags": [rng.choice(WORDS)]}
            for i in rng.sample(range(50), rng.randint(3, 20))]


def shelves(rng):
    sections = [{"id": f"s{i}", "title": f"Shelf {i} {rng.choice(WORDS)}", "items": []} for i in rng.sample(range(6), rng.randint(1, 5))]
    for item in rng.sample(range(40), rng.randint(0, 25)):
        sections[rng.randrange(len(sections))]["items"].append({"id": item, "title": f"{rng.choice(WORDS)} {item}"})
    return {"sections": sections}


def expected_text(item, id_key="id"):
    """What the page shows for an item (renderItem in clients/js/dom.js)."""
    if not isinstance(item, dict):
        return item if isinstance(item, str) else json.dumps(item)
    path = id_key.split(".")
    holder = item
    for part in path[:-1]:
        holder = holder.get(part) if isinstance(holder, dict) else None
    for titled in [item, holder]:
        for field in ["title", "name", "label", "text"]:
            if isinstance(titled, dict) and isinstance(titled.get(field), str):
                return titled[field]
    top = path[0]
    return ", ".join(f"{name}: {value if isinstance(value, str) else json.dumps(value, separators=(',', ':'))}"
                     for name, value in item.items() if name != top)


def item_id(item, id_key):
    if not isinstance(item, dict):
        return item
    for part in id_key.split("."):
        item = item[part]
    return item


def page_state(driver):
    """The page's list: flat, [(key, text)]; sectioned, [(title, [(key, text)])]. A section whose
    rows the page has not made yet (far from the viewport: a lazy list) shows as
    [(title, {"rows": count})]."""
    return driver.execute_script("""
        const row = (li) => [JSON.parse(li.dataset.key), li.querySelector('.livedelta-text').textContent];
        const sections = [...document.querySelectorAll('#items > section')];
        const rows = (s) => s.querySelector('ul').dataset.rows;
        if (sections.length) return sections.map((s) => [s.querySelector('h2').textContent,
            rows(s) === undefined ? [...s.querySelectorAll('li')].map(row) : { rows: Number(rows(s)) }]);
        return [...document.querySelectorAll('#items > li')].map(row);
    """)


def same_state(shown, expected, sectioned):
    """Whether the page shows the expected list: every row made equal, and a section whose rows
    are not made yet holding as many; the first section's rows are made (it is in view)."""
    if not sectioned:
        return shown == expected
    if len(shown) != len(expected) or (expected and expected[0][1] and isinstance(shown[0][1], dict)):
        return False
    return all(title == want_title and (rows == want if isinstance(rows, list) else rows["rows"] == len(want))
               for (title, rows), (want_title, want) in zip(shown, expected))


def expected_state(session, id_key="id"):
    if "sections" in session:
        return [[s["title"], [[item_id(i, id_key), expected_text(i, id_key)] for i in s["items"]]] for s in session["sections"]]
    return [[item_id(i, id_key), expected_text(i, id_key)] for i in session["items"]]


def wait_for(condition, what, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if condition():
                return
        except Exception:
            pass
        time.sleep(0.05)
    raise SystemExit(f"FAIL: waited {seconds} s for {what}")


def shown_version(driver):
    return driver.execute_script("return document.body.dataset.version")


def check_equal(driver, base, session_id, id_key):
    final = call("GET", f"{base}/sessions/{session_id}")
    wait_for(lambda: shown_version(driver) == str(final["version"]), f"version {final['version']} of {session_id} on the page")
    expected = expected_state(final, id_key)
    # The version is shown once the delta is applied; a lazy list makes the rows of a section
    # that comes into view on the next frame, which a loaded machine may not have drawn yet.
    # The version cannot move on (no write is under way), so what the page shows may only settle.
    deadline = time.time() + 10
    while not same_state(shown := page_state(driver), expected, "sections" in final):
        if time.time() > deadline:
            raise SystemExit(f"FAIL: {session_id}: the page shows {shown}, the session holds {expected}")
        time.sleep(0.05)
    return final


def follow_through_updates(driver, context, session_id, make, options, restart_at=None):
    rng = random.Random(session_id)
    base = context["base"]
    call("PUT", f"{base}/sessions/{session_id}", {**(make(rng) if make is shelves else {"items": make(rng)}), "options": options})
    driver.get(f"{base}/live/{session_id}")
    wait_for(lambda: driver.find_element(By.ID, "state").text == "live", f"the page of {session_id} to go live")
    id_key = options.get("idKey", "id")
    for update in range(1, 201):
        body = make(rng) if make is shelves else {"items": make(rng)}
        call("POST", f"{base}/sessions/{session_id}/update", body)
        if restart_at == update:
            context["restart"]()
        if update % 50 == 0:
            check_equal(driver, base, session_id, id_key)
    final = check_equal(driver, base, session_id, id_key)
    seen = driver.execute_script("const d = document.body.dataset; return [d.resets, d.deltas, d.advanced, d.first, d.skipped]")
    resets, deltas, advanced, first, skipped = (int(value or 0) for value in seen)
    # One reset to start and at most one after the restart (the new process keeps no history);
    # every other version arrives by deltas applied to the list (one each, but for a window
    # that reconnects: one delta over the versions it missed), none twice.
    if resets > (2 if restart_at else 1) or advanced != final["version"] - first - skipped or deltas > advanced:
        raise SystemExit(f"FAIL: {session_id}: {resets} resets (skipping {skipped}) and {deltas} deltas from {first} to {final['version']}")
    time.sleep(0.4)  # the last moves' animations
    driver.save_screenshot(os.path.join(screenshots, f"live-{session_id}.png"))
    passed.append(f"{session_id}: equal to GET after 200 updates ({deltas} deltas, {resets} resets)")


def problems_are_shown(driver, context):
    base = context["base"]
    driver.get(f"{base}/live/nobody-here")
    wait_for(lambda: driver.find_element(By.ID, "state").text == "no such session", "the missing session to be said")
    problem = driver.find_element(By.ID, "problem").text
    assert "no session" in problem, problem
    # Once its follower has let go for good (its run has returned), the page asks nothing more:
    # what it asked by then is all it will ever ask.
    wait_for(lambda: driver.execute_script("return document.body.dataset.asking") == "no", "the follower to let go")
    asked = driver.execute_script("return performance.getEntriesByType('resource').filter((e) => e.name.includes('/nobody-here/')).length")
    assert asked == 1, f"the page asked for the missing session {asked} times"
    driver.save_screenshot(os.path.join(screenshots, "live-missing.png"))
    passed.append("a missing session is said, and asked for once")

    call("PUT", f"{base}/sessions/going", {"items": [{"id": 1, "title": {"toString": 1}}, {"id": 2, "title": "plain"}]})
    driver.get(f"{base}/live/going")
    wait_for(lambda: driver.find_element(By.ID, "state").text == "live", "the page of going to go live")
    shown = page_state(driver)
    assert shown == [[1, 'title: {"toString":1}'], [2, "plain"]], shown
    call("PUT", f"{base}/sessions/going", {"items": [{"id": 3, "title": "new life"}]})
    wait_for(lambda: "replaced" in driver.find_element(By.ID, "problem").text, "the replacement to be said")
    assert page_state(driver) == [[3, "new life"]], page_state(driver)
    call("DELETE", f"{base}/sessions/going")
    wait_for(lambda: driver.find_element(By.ID, "state").text == "ended: deleted", "the deleted session to be said")
    assert "deleted" in driver.find_element(By.ID, "problem").text
    passed.append("an item of objects shows as text; a replaced session and a deleted one are said")


def million_rows(driver, context):
    base = context["base"]
    count = 1_000_000
    body = json.dumps({"items": [{"id": i, "title": f"row {i}"} for i in range(count)]}, separators=(",", ":")).encode()
    urllib.request.urlopen(urllib.request.Request(f"{base}/sessions/million", data=body, method="PUT",
                                                  headers={"Content-Type": "application/json"}), timeout=120).read()
    driver.get(f"{base}/live/million")
    wait_for(lambda: driver.find_element(By.ID, "state").text == "live", "the page of a million rows to go live")
    rng = random.Random(7)
    writing, pause, paused = threading.Event(), threading.Event(), threading.Event()
    removed, failures, commits = set(), [], [0]

    def writer():
        # Changes where the page looks, and above it (which shifts the rows below).
        while writing.is_set():
            if pause.is_set():
                paused.set()
                time.sleep(0.01)
                continue
            paused.clear()
            target = int(driver_top[0]) + rng.randrange(-60, 60)
            target = max(0, min(count - 1, target))
            kind = rng.randrange(3)
            if kind == 0:
                operation = {"op": "update", "id": target, "item": {"id": target, "title": f"row {target} v{commits[0]}"}}
            elif kind == 1:
                new = count + commits[0]
                operation = {"op": "insert", "id": new, "before": target, "item": {"id": new, "title": f"new {new}"}}
            else:
                operation = {"op": "remove", "id": target}
            if target in removed:
                continue
            try:
                call("POST", f"{base}/sessions/million/changes", {"operations": [operation]})
                if kind == 2:
                    removed.add(target)
                commits[0] += 1
            except Exception as error:  # noqa: BLE001 - reported by the test
                failures.append(repr(error))

    def checkpoint(where):
        pause.set()
        wait_for(paused.is_set, "the writer to pause")
        head = call("GET", f"{base}/sessions/million?offset=0&limit=1")
        wait_for(lambda: shown_version(driver) == str(head["version"]), f"version {head['version']} on the page ({where})")
        wait_for(lambda: driver.execute_script(
            "const d = document.body.dataset; return Number(d.offset) <= Number(d.top) && Number(d.top) < Number(d.offset) + Number(d.rows)"),
            f"the window to hold the rows in view ({where})")
        offset, rows, top = driver.execute_script("const d = document.body.dataset; return [Number(d.offset), Number(d.rows), Number(d.top)]")
        # The page may move its window once more as it settles: read the page and the session
        # at the same window and version.
        expected = call("GET", f"{base}/sessions/million?offset={offset}&limit={rows}")
        shown = page_state(driver)
        if expected["version"] != head["version"] or shown != expected_state(expected):
            raise SystemExit(f"FAIL: a million rows, {where}: the page shows {shown[:3]}... at {offset}, the session {expected_state(expected)[:3]}...")
        pause.clear()
        return offset, top, expected["window"]["total"]

    driver_top = [0]
    writing.set()
    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    def some_commits():
        # Commits land while the page stays where it is.
        before = commits[0]
        wait_for(lambda: commits[0] >= before + 5, "five commits")

    try:
        some_commits()
        checkpoint("at the top")
        driver.execute_script("const v = document.getElementById('viewport'); v.scrollTop = v.scrollHeight / 2;")
        driver_top[0] = count // 2
        wait_for(lambda: driver.execute_script("return Number(document.body.dataset.top)") > count // 3, "the page to scroll to the middle")
        driver_top[0] = driver.execute_script("return Number(document.body.dataset.top)")
        some_commits()
        offset, top, _ = checkpoint("in the middle")
        middle = (offset, top)
        driver.execute_script("const v = document.getElementById('viewport'); v.scrollTop = v.scrollHeight;")
        driver_top[0] = count - 20
        some_commits()
        offset, top, total = checkpoint("at the end")
        rows = driver.execute_script("return Number(document.body.dataset.rows)")
        if offset + rows != total:
            raise SystemExit(f"FAIL: a million rows, at the end: the window holds {offset} to {offset + rows} of {total}")
        driver.save_screenshot(os.path.join(screenshots, "live-million.png"))
    finally:
        writing.clear()
        thread.join(timeout=30)
    resets, because = driver.execute_script("const d = document.body.dataset; return [Number(d.resets), d.resetBecause]")
    if failures or resets != 1:
        raise SystemExit(f"FAIL: a million rows: {resets} resets (the last: {because}); the writer met {failures[:3]}")
    passed.append(f"a million rows: the rows in view equal the session's at the top, the middle (row {middle[1]}) and the end,"
                  f" through {commits[0]} commits, with one reset")


def changes_are_animated(driver, context):
    """A deleted row fades out where it was, a changed one flashes: every animation the page
    starts is recorded as it starts (a check after the fact would race its 200 ms)."""
    base = context["base"]
    call("PUT", f"{base}/sessions/animated", {"items": [{"id": 1, "title": "Ann"}, {"id": 2, "title": "Bob"}, {"id": 3, "title": "Cy"}]})
    driver.get(f"{base}/live/animated")
    wait_for(lambda: shown_version(driver) == "0", "version 0 of animated")
    driver.execute_script("""
        window.animated = [];
        const start = Element.prototype.animate;
        Element.prototype.animate = function (frames, options) {
          window.animated.push({ key: this.dataset.key ?? null, leaving: this.classList.contains("livedelta-leaving"),
                                 text: this.textContent, frames: JSON.stringify(frames) });
          return start.call(this, frames, options);
        };
    """)
    call("POST", f"{base}/sessions/animated/update", {"items": [{"id": 1, "title": "Ann"}, {"id": 3, "title": "Cyrus"}]})
    wait_for(lambda: shown_version(driver) == "1", "version 1 of animated")
    animated = driver.execute_script("return window.animated")
    leaving = [a for a in animated if a["leaving"]]
    assert len(leaving) == 1 and "Bob" in leaving[0]["text"] and "opacity" in leaving[0]["frames"], animated
    flashed = [a for a in animated if a["key"] == "3" and "backgroundColor" in a["frames"]]
    assert len(flashed) == 1 and "Cyrus" in flashed[0]["text"], animated
    assert not [a for a in animated if a["key"] == "1" and "backgroundColor" in a["frames"]], animated
    wait_for(lambda: not driver.find_elements(By.CSS_SELECTOR, ".livedelta-leaving"), "the deleted row's copy to go")
    passed.append("a deleted row fades out where it was, a changed row flashes, an unchanged one does not")


def hundred_thousand_rows_whole(driver, context):
    """A session followed whole (sectioned: sections vary in height, so no window; their rows are
    made as they come into view) of 100,000 rows: the time to show it, and to show its
    replacement by 100,000 other rows. Figures printed, not asserted (a loaded machine is
    slower); the rows are checked equal to GET."""
    base = context["base"]

    def shelves_of(first):
        return {"sections": [{"id": f"s{s}", "title": f"Shelf {s}", "items": list(range(first + s * 1000, first + (s + 1) * 1000))}
                             for s in range(100)]}

    call("PUT", f"{base}/sessions/hundred-k", shelves_of(0))
    started = time.time()
    driver.get(f"{base}/live/hundred-k")
    wait_for(lambda: shown_version(driver) == "0", "100,000 rows shown", seconds=120)
    shown = time.time() - started
    drawn = driver.execute_script("return document.body.dataset.drawn")
    body = shelves_of(1_000_000)
    started = time.time()
    call("POST", f"{base}/sessions/hundred-k/update", body)
    committed = time.time() - started
    wait_for(lambda: shown_version(driver) == "1", "their replacement shown", seconds=120)
    replaced = time.time() - started
    redrawn = driver.execute_script("return document.body.dataset.drawn")
    check_equal(driver, base, "hundred-k", "id")
    # The page makes a section's rows as it comes into view: scrolled to the end, the last
    # section's are there, and right.
    driver.execute_script("document.getElementById('viewport').scrollTop = 1e9")
    last_rows = """const s = [...document.querySelectorAll('#items > section')].at(-1);
                   return s.querySelector('ul').dataset.rows === undefined ? [...s.querySelectorAll('li')].map((li) => JSON.parse(li.dataset.key)) : null"""
    wait_for(lambda: driver.execute_script(last_rows) is not None, "the last section's rows to be made once in view")
    assert driver.execute_script(last_rows) == body["sections"][-1]["items"], "the last section's rows"
    passed.append(f"100,000 rows followed whole: shown in {shown:.2f} s (drawn in {drawn} ms), replaced by 100,000 others in "
                  f"{replaced:.2f} s (the update call {committed:.2f} s, drawing {redrawn} ms); a section's rows made as it comes into view")


def headers_are_set(context):
    for path in ["/live/x", "/clients/livedelta.js", "/clients/appliers.js", "/clients/dom.js", "/clients/live.js", "/clients/live.css"]:
        with urllib.request.urlopen(context["base"] + path) as answer:
            policy = answer.headers["Content-Security-Policy"] or ""
            assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy, (path, policy)
            assert answer.headers["X-Content-Type-Options"] == "nosniff", path
            assert answer.headers["Referrer-Policy"], path
    passed.append("the page and its files carry a CSP, nosniff and a Referrer-Policy")


def docs_example():
    text = open(os.path.join(ROOT, "docs", "clients.md")).read()
    return re.search(r"### A complete web page.*?```html\n(.*?)```", text, re.S).group(1)


class Origin:
    """A static server on its own port (so its own origin) serving one page at /."""

    def __init__(self, page):
        body = page.encode()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def other_origins(driver, context, allowed, refused):
    base = context["base"]
    call("PUT", f"{base}/sessions/feed-42", {"items": [{"id": 1, "title": "Ann"}, {"id": 2, "title": "Bob"}]})
    driver.get(allowed.url)
    wait_for(lambda: driver.execute_script("return document.body.dataset.version") == "0", "the docs' example to show version 0")
    call("POST", f"{base}/sessions/feed-42/update", {"items": [{"id": 2, "title": "Bob"}, {"id": 3, "title": "Cy"}, {"id": 1, "title": "Ann"}]})
    wait_for(lambda: driver.execute_script("return document.body.dataset.version") == "1", "the docs' example to show version 1")
    shown = driver.execute_script("return [...document.querySelectorAll('#feed li')].map((li) => li.textContent)")
    assert shown == ["2Bob", "3Cy", "1Ann"], shown
    driver.save_screenshot(os.path.join(screenshots, "docs-example.png"))
    driver.get(refused.url)
    # The browser says it blocked the module; by then the page had its one chance to load it.
    logged = []
    wait_for(lambda: logged.extend(entry["message"] for entry in driver.get_log("browser")) or any("CORS" in m for m in logged),
             "the browser to say CORS blocked the module")
    # The page says so, and which flag lets its origin in.
    wanted = f"is the server running with --cors-origins {refused.url.rstrip('/')}?"
    wait_for(lambda: wanted in driver.find_element(By.ID, "status").text, f"the page to say: {wanted}")
    assert driver.execute_script("return document.body.dataset.version") is None
    passed.append(f"the docs' web example works from {allowed.url} (listed) and is refused from {refused.url}")


def main():
    os.makedirs(screenshots, exist_ok=True)
    redis, redis_port, directory = start_redis()
    port = free_port()
    # The docs' example names the server as localhost:8080; here it is this one.
    allowed = Origin(docs_example().replace("http://localhost:8080", f"http://127.0.0.1:{port}"))
    refused = Origin(docs_example().replace("http://localhost:8080", f"http://127.0.0.1:{port}"))
    flags = ["--log-level", "warning", "--session-store", f"redis://127.0.0.1:{redis_port}", "--cors-origins", allowed.url,
             "--max-session-items", "2000000", "--max-body-size", "100000000"]
    context = {"base": f"http://127.0.0.1:{port}", "server": start_server(port, flags)}

    def restart():
        context["server"].terminate()
        context["server"].wait(timeout=20)
        context["server"] = start_server(port, flags)

    context["restart"] = restart
    options = Options()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=900,1000"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
    try:
        headers_are_set(context)
        follow_through_updates(driver, context, "feed-42", integers, {}, restart_at=100)
        follow_through_updates(driver, context, "words", strings, {})
        follow_through_updates(driver, context, "films", objects, {"idKey": "movie.id"})
        follow_through_updates(driver, context, "shelves", shelves, {})
        problems_are_shown(driver, context)
        million_rows(driver, context)
        hundred_thousand_rows_whole(driver, context)
        changes_are_animated(driver, context)
        other_origins(driver, context, allowed, refused)
        for line in passed:
            print("ok:", line)
        print(f"{len(passed)} passed, 0 failed; screenshots in {screenshots}")
    finally:
        driver.quit()
        context["server"].terminate()
        redis.terminate()
        shutil.rmtree(directory, ignore_errors=True)


main()
