#!/usr/bin/env python3
"""Every public declaration of the libraries (LiveCollections, ByteJSON, LiveDeltaKit) carries a DocC comment,
and every other module declares nothing public: what they share inside the package is
`package`. Run by `make lint`; prints each offender with its file and line."""
import glob
import re
import sys

LIBRARIES = ("LiveCollections", "ByteJSON", "LiveDeltaKit")
DECLARATION = re.compile(r"\s*(@\w+(\([^)]*\))?\s+)*public\b")
ATTRIBUTE = re.compile(r"\s*@\w+")

offenders = []
for path in sorted(glob.glob("Sources/**/*.swift", recursive=True)):
    library = path.split("/")[1] in LIBRARIES
    lines = open(path, encoding="utf-8").read().split("\n")
    for number, line in enumerate(lines):
        if not DECLARATION.match(line):
            continue
        if not library:
            offenders.append(f"{path}:{number + 1}: public outside the libraries (use package): {line.strip()}")
            continue
        above = number - 1
        while above >= 0 and ATTRIBUTE.match(lines[above]):
            above -= 1
        if above < 0 or not lines[above].strip().startswith("///"):
            offenders.append(f"{path}:{number + 1}: public without a /// comment: {line.strip()}")

print("\n".join(offenders) if offenders else "public declarations: documented, libraries only")
sys.exit(1 if offenders else 0)
