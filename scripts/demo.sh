#!/bin/sh
# scripts/demo.sh BUILD_DIR - the README's first command (`make demo`):
# trace a real multi-threaded workload and show what ktrace reads back.
set -eu
B=${1:-build}
out=${KTRACE_DEMO_DIR:-/tmp/ktrace-demo}
"$B/examples/threads" -t 4 -n 20000 "$out"
echo
echo "== ktrace ctl $out/threads status"
"$B/ktrace" ctl "$out/threads" status
echo
echo "== ktrace print $out/threads (first 15 records)"
"$B/ktrace" print "$out/threads" | head -n 15
