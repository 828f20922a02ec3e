#!/usr/bin/env python3
"""Writes the flags table of docs/operations.md from the flags themselves.

Each flag is declared once, in Sources/livedelta (name, default, help); its environment
variable follows from its name (Sources/livedelta/EnvironmentArguments.swift). This reads them from the
binary (`livedelta serve --experimental-dump-help`) and writes the table between the
`<!-- flags -->` marks. With --check it changes nothing and fails where the table differs.

    scripts/configuration-table.py [--check] [path/to/livedelta]
"""
import json
import re
import subprocess
import sys

DOCUMENT = "docs/operations.md"
START, END = "<!-- flags -->", "<!-- /flags -->"


def rows(binary):
    dump = json.loads(subprocess.run([binary, "serve", "--experimental-dump-help"], check=True, capture_output=True, text=True).stdout)
    lines = ["| flag | variable | default | |", "|---|---|---|---|"]
    for argument in dump["command"]["arguments"]:
        name = argument.get("preferredName", {}).get("name")
        if argument.get("kind") != "option" or not argument.get("shouldDisplay", True) or name in (None, "help"):
            continue
        variable = "LIVEDELTA_" + name.upper().replace("-", "_")
        if argument.get("isRepeating"):
            variable = f"`{variable}` (comma-separated)"
        else:
            variable = f"`{variable}`"
        default = argument.get("defaultValue")
        default = f"`{default}`" if default not in (None, "") else ""
        # Flags named in the help read as code in the table.
        text = re.sub(r"(?<![\w`])(--[a-z][a-z-]*)", r"`\1`", argument.get("abstract", "")).replace("|", "\\|")
        lines.append(f"| `--{name}` | {variable} | {default} | {text} |")
    return "\n".join(lines) + "\n"


def main():
    arguments = sys.argv[1:]
    check = "--check" in arguments
    binaries = [argument for argument in arguments if argument != "--check"]
    binary = binaries[0] if binaries else ".build/debug/livedelta"
    document = open(DOCUMENT).read()
    if START not in document or END not in document:
        sys.exit(f"{DOCUMENT} lacks the {START} and {END} marks")
    head, rest = document.split(START, 1)
    _, tail = rest.split(END, 1)
    written = head + START + "\n" + rows(binary) + END + tail
    if check:
        if written != document:
            sys.exit(f"{DOCUMENT}'s flags table is not the flags' own: run scripts/configuration-table.py")
        return
    open(DOCUMENT, "w").write(written)


if __name__ == "__main__":
    main()
