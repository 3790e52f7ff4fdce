#!/usr/bin/env bash
# leakbench (../shared/leakbench, issue 3) on `scrub redact`, with Claude Code's config dir,
# scrubber's state folder and HOME in fresh temp dirs (never the user's real ones).
# Prints leakbench's final line, recall per category and decoys per category; the full JSON
# result goes to bench/out/leakbench.json.
#
#   bench/run_leakbench.sh                  # from anywhere
#   SCRUB=/path/to/scrub bench/run_leakbench.sh    # another scrub binary
#   bench/run_leakbench.sh --files 'syn-0[0-4]'    # extra arguments go to leakbench.py
#
# Like bench/bench_scan.py, it times a snapshot of HEAD's scrubber/ (git archive, first on
# PYTHONPATH), because the working tree is shared and edited while benchmarks run;
# SCRUB_BENCH_WORKING_TREE=1 times the working tree instead.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
leakbench="$root/../shared/leakbench/leakbench.py"
if [[ ! -f "$leakbench" ]]; then
  echo "run_leakbench: $leakbench not found (the shared folder is absent); nothing to run" >&2
  exit 2
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/scrub-leakbench.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/claude" "$tmp/scrub" "$tmp/home" "$root/bench/out"
export CLAUDE_CONFIG_DIR="$tmp/claude" SCRUB_HOME="$tmp/scrub" HOME="$tmp/home"
unset SCRUB_POLICY SCRUB_PREFILTER

code="working tree"
if [[ "${SCRUB_BENCH_WORKING_TREE:-0}" != 1 ]] && git -C "$root" rev-parse HEAD >/dev/null 2>&1; then
  head="$(git -C "$root" rev-parse HEAD)"
  mkdir -p "$tmp/code"
  git -C "$root" archive --format=tar "$head" scrubber | tar -x -C "$tmp/code"
  export PYTHONPATH="$tmp/code${PYTHONPATH:+:$PYTHONPATH}"
  code="snapshot of ${head:0:10}"
fi
if [[ -n "$(git -C "$root" status --porcelain -- scrubber 2>/dev/null)" ]]; then
  code="$code (the working tree has uncommitted changes in scrubber/)"
fi

scrub="${SCRUB:-scrub}"
result="$root/bench/out/leakbench.json"
cd "$root"
python3 "$leakbench" --redactor "$scrub redact {in} --output {out}" --json "$@" >"$result"

echo "scrubber under test: $code; $(date -u +%Y-%m-%dT%H:%M:%SZ)"
python3 - "$result" <<'EOF'
import json
import sys

s = json.load(open(sys.argv[1]))
print(s["line"])
print(
    f"positives {s['positives']}, leaked {s['leaked']} (exact {s['leaked_exact']}, "
    f"partial {s['leaked_partial']}); decoys {s['decoys']}, damaged {s['decoys_damaged']}; "
    f"valid {s['valid_ok']}/{s['files']}; input modified {s['input_modified']}; "
    f"{s['input_mb']} MB in {s['wall_s']} s"
)
print()
print("| category | items | leaked | recall |")
print("|----------|------:|-------:|-------:|")
for name, g in s["recall_by_group"].items():
    print(f"| {name} | {g['items']} | {g['leaked']} | {g['recall']:.3f} |")
print()
print("| decoy category | items | damaged | kept |")
print("|----------------|------:|--------:|-----:|")
for name, d in s["decoys_by_category"].items():
    print(f"| {name} | {d['items']} | {d['damaged']} | {d['kept']:.3f} |")
EOF
