"""The live page in a real browser: headless Chromium (Debian's) follows a session while a
writer posts 200 random updates and the server is restarted in the middle (Redis store, so
the session outlives it). The page's list (ids in order, their text) must end equal to the
session's final GET, and a screenshot of it is kept.

usage: live_page.py BINARY SCREENSHOT
"""
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "PythonSupport"))
from livedelta_testing import free_port  # noqa: E402

binary, screenshot = sys.argv[1], sys.argv[2]


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


def start_server(port, redis_port):
    process = subprocess.Popen(
        [binary, "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
         "--session-store", f"redis://127.0.0.1:{redis_port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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


def random_items(rng):
    ids = rng.sample(range(60), rng.randint(5, 30))
    return [{"id": i, "title": f"{rng.choice(WORDS)} {i}"} for i in ids]


def page_list(driver):
    return [(json.loads(element.get_attribute("data-key")), element.find_element(By.CLASS_NAME, "text").text)
            for element in driver.find_elements(By.CSS_SELECTOR, "#items li")]


def main():
    rng = random.Random(7)
    redis, redis_port, directory = start_redis()
    port = free_port()
    server = start_server(port, redis_port)
    base = f"http://127.0.0.1:{port}"
    options = Options()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=900,1400"]:
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
    try:
        call("PUT", f"{base}/sessions/shelf", {"items": random_items(rng)})
        driver.get(f"{base}/live/shelf")
        wait_for(lambda: driver.find_element(By.ID, "state").text == "live", "the page to go live")
        for update in range(1, 201):
            call("POST", f"{base}/sessions/shelf/update", {"items": random_items(rng)})
            if update == 100:
                # A restart: the page loses its stream, reconnects and resumes from its last id.
                server.terminate()
                server.wait(timeout=20)
                server = start_server(port, redis_port)
            time.sleep(0.01)
        final = call("GET", f"{base}/sessions/shelf")
        wait_for(lambda: driver.find_element(By.ID, "version").text == str(final["version"]), f"version {final['version']} on the page")
        expected = [(item["id"], item["title"]) for item in final["items"]]
        shown = page_list(driver)
        if shown != expected:
            raise SystemExit(f"FAIL: the page shows {shown}, the session holds {expected}")
        seen = driver.execute_script("const d = document.body.dataset; return [d.resets, d.deltas, d.first, d.skipped]")
        resets, deltas, first, skipped = (int(value or 0) for value in seen)
        # One reset to start and at most one after the restart (the new process keeps no
        # history, so that reset jumps over the versions committed while the page was away);
        # every other version arrives as a delta applied to the list, each once.
        if resets > 2 or deltas != final["version"] - first - skipped:
            raise SystemExit(f"FAIL: the page was reset {resets} times (skipping {skipped} versions) and applied {deltas} deltas"
                             f" from version {first} to {final['version']}")
        time.sleep(0.4)  # the last moves' animations
        driver.save_screenshot(screenshot)
        print(f"live page: {len(expected)} items at version {final['version']} equal the session after 200 updates and a restart"
              f" ({deltas} deltas applied, {resets} resets)")
        print("1 passed, 0 failed")
    finally:
        driver.quit()
        server.terminate()
        redis.terminate()
        shutil.rmtree(directory, ignore_errors=True)


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


main()
