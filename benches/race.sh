#!/usr/bin/env bash
# End-to-end race benchmark: one race cell (and its family's detection control, which every
# racing run includes) run natural and amplified, side by side.
#   bash benches/race.sh [RUNTIME] [VARIANT] [TRIALS]      (default: node node.writeFileSync.wx 500)
# Prints hyperfine's wall times for both commands, then each run's own figures from
# results.json: trials per second per cell, the barrier spread (µs) and where a trial's time went
# (set-up, prepare round trip, release plan, calls, read, clean-up: `cost` in results.json).
# A benchmark, not a test: run it on a quiet machine and compare with the figures in README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
rt=${1:-node}; variant=${2:-node.writeFileSync.wx}; trials=${3:-500}
command -v hyperfine >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq hyperfine >/dev/null; }
command -v strace >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq strace >/dev/null; }
cargo build --release -q
bin="$PWD/target/release/conformance"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() { echo "$bin run -r $rt -v $variant --scenario race -n $trials -q --amplify $1 --force --out $out/$1"; }
hyperfine --warmup 1 --runs 5 --export-json "$out/hyperfine.json" -n natural "$(run off)" -n amplified "$(run on)"
python3 - "$out" "$variant" <<'PY'
import json, sys
out, variant = sys.argv[1], sys.argv[2]
for mode, key in (("off", "natural"), ("on", "amplified")):
    r = json.load(open(f"{out}/{mode}/results.json"))
    for c in r["cells"]:
        m = c.get("result", {}).get(key) if c.get("scenario") == "race" else None
        if not m:
            continue
        st = m["stats"]
        sp = st.get("barrier_spread_us") or {}
        print(f"{key:9} {c['variant']:40} {m['verdict']:16} {st['trials']:5} trials  "
              f"{m.get('trials_per_second', 0):7.0f} trials/s  spread p50 {sp.get('p50', 0):5.0f} µs  "
              f"p99 {sp.get('p99', 0):5.0f} µs  loose {m.get('loose_trials', 0)}")
        cost = m.get("cost")
        if cost:
            steps = ", ".join(f"{k[:-3].replace('_', '-')} {v:.0f}" for k, v in cost.items() if k.endswith("_us"))
            print(f"{'':9} per trial (µs, mean of {cost['trials']}): {steps}")
PY
