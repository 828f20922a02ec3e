#!/usr/bin/env bash
# The live page in headless Chromium (Debian's chromium and chromium-driver, installed when
# missing), driven by Selenium from PyPI in .build/browser-venv. $1: the binary; $2: the folder
# the screenshots go to (.build/screenshots by default; tests never change tracked files).
set -euo pipefail
cd "$(dirname "$0")/../.."
binary=${1:-.build/debug/livedelta}
screenshots=${2:-.build/screenshots}
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
fi
source Tests/PythonSupport/venv.sh
venv=$(python_venv browser Tests/Browser/requirements.txt)
mkdir -p "$screenshots"
"$venv/bin/python" Tests/Browser/live_page.py "$binary" "$screenshots"
