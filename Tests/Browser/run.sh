#!/usr/bin/env bash
# The live page in headless Chromium (Debian's chromium and chromium-driver, installed when
# missing), driven by Selenium from PyPI in .build/browser-venv. $1: the binary; $2: where the
# screenshot goes (docs/live-page.png by default).
set -euo pipefail
cd "$(dirname "$0")/../.."
binary=${1:-.build/debug/livedelta}
screenshot=${2:-docs/live-page.png}
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
fi
venv=.build/browser-venv
if [ ! -x "$venv/bin/python" ] || ! cmp -s Tests/Browser/requirements.txt "$venv/requirements.txt"; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r Tests/Browser/requirements.txt
    cp Tests/Browser/requirements.txt "$venv/requirements.txt"
fi
mkdir -p "$(dirname "$screenshot")"
"$venv/bin/python" Tests/Browser/live_page.py "$binary" "$screenshot"
