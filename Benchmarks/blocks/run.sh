#!/usr/bin/env bash
# How fast 64-byte blocks of the 100,000-movie body are classified into six bitmasks: in pure
# Swift (three spellings, ByteLanes's among them) and in C with SSE2 (prints MB/s and checksums,
# which must agree). It chose ByteLanes's spelling. (A whole two-stage reader built on it read
# no faster than ByteJSON's one-pass scanner and was dropped; git history keeps it.)
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -c "
import json, sys
sys.path.insert(0, 'Benchmarks/load')
from bodies import movies
open(sys.argv[1], 'w').write(json.dumps(movies(100_000), separators=(',', ':')))
" "$work/movies.json"
echo "== 64-byte block classification, $(wc -c < "$work/movies.json") bytes"
swiftc -O -enable-experimental-feature BuiltinModule Benchmarks/blocks/classify.swift -o "$work/classify-swift"
cc -O2 Benchmarks/blocks/classify.c -o "$work/classify-c"
"$work/classify-swift" "$work/movies.json"
"$work/classify-c" "$work/movies.json"
