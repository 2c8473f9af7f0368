#!/bin/sh
# Render a tamp HTML report in headless Chromium and take a screenshot, to check by eye that
# the page (source, axioms, the failure automaton drawing) displays without any network access.
#
#   scripts/check_report_renders.sh [FILE.prob] [OUT_DIR]
#
# FILE.prob defaults to benchmarks/dp/ex2.prob (a loop: the automaton has a back edge);
# OUT_DIR defaults to a new temporary folder. Writes OUT_DIR/report.html and OUT_DIR/report.png
# and prints their paths. Needs Chromium (Debian: apt-get install -y chromium); graphviz's
# `dot` is optional (the report falls back to its own layout without it).
# Set TAMP_REPORT_ENGINE=builtin to check the built-in drawing even when `dot` is installed.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
prob=${1:-$here/benchmarks/dp/ex2.prob}
out=${2:-$(mktemp -d)}
mkdir -p "$out"
out=$(cd "$out" && pwd)

browser=""
for b in chromium chromium-browser google-chrome google-chrome-stable; do
  if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
done
if [ -z "$browser" ]; then
  echo "check_report_renders: no Chromium found (Debian: apt-get install -y chromium)" >&2
  exit 2
fi

python=${PYTHON:-python3}
if [ -x "$here/.venv/bin/python" ]; then python=$here/.venv/bin/python; fi

# 1. the report (tamp prove exits 1 for an unproved claim: still a report worth looking at)
set +e
PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" "$python" - "$prob" "$out/report.html" <<'PY'
import os, sys
import tamp
from tamp.report import write_report

prob, html = sys.argv[1], sys.argv[2]
result = tamp.prove(prob, timeout=float(os.environ.get("TAMP_TIMEOUT", "300")))
with open(prob, encoding="utf-8") as fh:
    source = fh.read()
write_report(html, result, source, engine=os.environ.get("TAMP_REPORT_ENGINE", "auto"))
print(f"{prob}: {result.verdict}")
PY
status=$?
set -e
if [ $status -ne 0 ]; then echo "check_report_renders: writing the report failed" >&2; exit 1; fi

# 2. the screenshot, with everything that could reach the network switched off
profile=$(mktemp -d)
"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --screenshot="$out/report.png" --window-size=1400,2000 \
  "file://$out/report.html" >/dev/null 2>&1 || true
rm -rf "$profile"

if [ ! -s "$out/report.png" ]; then
  echo "check_report_renders: Chromium wrote no screenshot" >&2
  exit 1
fi
size=$(wc -c < "$out/report.png")
echo "report:     $out/report.html"
echo "screenshot: $out/report.png ($size bytes)"
