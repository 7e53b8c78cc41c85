#!/usr/bin/env bash
# The product's race cell beside a C floor and a plain driver of the same race (issue 26):
# Node's writeFileSync(p, token, {flag: 'wx'}) raced by K contenders, T trials each way.
#   bash benches/floor.sh [TRIALS] [K]    (default 3000 trials, 3 contenders: the default run's)
# Prints one line per way: trials/s, and for the product its barrier spread p50 (µs, the probes'
# monotonic stamps placed on one time line) and its amplified race's trials/s beside the
# natural one, then where a trial's time went in each mode (results.json's `cost`). A benchmark,
# not a test: run it on a quiet machine.
# Writes the round's summary (src/report/race_speed.rs has the shape) to SUMMARY (default: a
# target/race-speed.json); SAVE=1 copies it to benches/results/race-speed.json, which
# docs/MEASURING.md renders (`conformance docs`, scenario=race-speed). REV names the build
# measured (default: this checkout's commit, with -dirty when it has changes).
#   c-floor       benches/floor/excl_race.c: forked contenders blocked on pipes, open(O_EXCL)
#   plain-driver  benches/floor/plain_driver.py: persistent Node contenders over JSON lines,
#                 prepare + go round trips and a folder per trial, no checks
#   conformance   run -r node -v node.writeFileSync.wx --scenario race -n T (natural, then amplified)
set -euo pipefail
cd "$(dirname "$0")/.."
trials=${1:-3000}
k=${2:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v gcc >/dev/null || { echo "gcc is needed for the C floor" >&2; exit 1; }
node=$(command -v node) || { echo "node is needed" >&2; exit 1; }
cargo build --release -q
gcc -O2 -Wall -o "$work/excl_race" benches/floor/excl_race.c
mkdir "$work/c" "$work/plain"
read -r _ c_multi c_rate _ < <("$work/excl_race" "$work/c" "$trials" "$k")
read -r _ p_multi p_rate < <(python3 benches/floor/plain_driver.py "$node" "$work/plain" "$trials" "$k")
bin=target/release/conformance
"$bin" run -r node -v node.writeFileSync.wx --scenario race -n "$trials" -k "$k" -q --amplify off --out "$work/nat" >/dev/null
"$bin" run -r node -v node.writeFileSync.wx --scenario race -n "$trials" -k "$k" -q --thorough --out "$work/amp" >/dev/null
echo "$k contenders, $trials trials"
summary=${SUMMARY:-target/race-speed.json}
rev=${REV:-$(git describe --always --dirty --abbrev=7)}
os=$( (. /etc/os-release && echo "$PRETTY_NAME") 2>/dev/null || echo unknown)
machine="$(uname -m), $(nproc) cores, $(uname -s) $(uname -r), $os"
python3 - "$work" "$c_rate" "$c_multi" "$p_rate" "$p_multi" "$summary" "$machine" "$rev" "node $("$node" --version)" "$trials" "$k" <<'PY'
import datetime, json, sys
work, c_rate, c_multi, p_rate, p_multi = sys.argv[1], float(sys.argv[2]), sys.argv[3], float(sys.argv[4]), sys.argv[5]
summary, machine, rev, runtime, trials, k = sys.argv[6:12]
def cell(path, mode):
    r = json.load(open(path))
    c = next(c for c in r["cells"] if c["variant"] == "node.writeFileSync.wx" and c["scenario"] == "race")
    return c["result"][mode]
nat = cell(f"{work}/nat/results.json", "natural")
amp = cell(f"{work}/amp/results.json", "amplified")
n_rate, a_rate = nat["trials_per_second"], amp["trials_per_second"]
p50 = (nat["stats"].get("barrier_spread_us") or {}).get("p50")
print(f"c-floor       {c_rate:8.0f} trials/s  multi-winner trials {c_multi}")
print(f"plain-driver  {p_rate:8.0f} trials/s  multi-winner trials {p_multi}")
print(f"conformance   {n_rate:8.0f} trials/s natural ({n_rate / p_rate:.1f}x the plain driver, 1/{c_rate / n_rate:.1f} of the C floor), "
      f"barrier spread p50 {p50:.0f} us; amplified {a_rate:.0f} trials/s ({a_rate / n_rate:.2f}x natural)")
# a row whose detection control was weak (natural catch rate significantly under 20%: more
# likely with 2 contenders) is `inconclusive` and stops early: its rate is then of a few trials
counted = (nat["stats"]["trials"], amp["stats"]["trials"])
print(f"  trials counted: natural {counted[0]}, amplified {counted[1]}")
for name, m in (("natural", nat), ("amplified", amp)):
    cost = m.get("cost") or {}
    steps = ", ".join(f"{k[:-3].replace('_', '-')} {v:.0f}" for k, v in cost.items() if k.endswith("_us"))
    print(f"  {name:9} per trial (us): {steps}")
def product(way, m):
    sp = m["stats"].get("barrier_spread_us") or {}
    return {"way": way, "trials_per_s": round(m["trials_per_second"], 1), "trials_counted": m["stats"]["trials"],
            "multi_winner_trials": m["stats"].get("multi_winner_trials", 0),
            "barrier_p50_us": sp.get("p50"), "barrier_p99_us": sp.get("p99"), "cost": m.get("cost")}
def plain(way, rate, multi):
    return {"way": way, "trials_per_s": round(rate, 1), "trials_counted": int(trials), "multi_winner_trials": int(multi),
            "barrier_p50_us": None, "barrier_p99_us": None, "cost": None}
out = {"machine": machine, "conformance": rev, "date": datetime.date.today().isoformat(), "runtime": runtime,
       "call": "node.writeFileSync.wx", "contenders": int(k), "trials": int(trials),
       "ways": [plain("c-floor", c_rate, c_multi), plain("plain-driver", p_rate, p_multi),
                product("natural", nat), product("amplified", amp)]}
json.dump(out, open(summary, "w"), indent=2)
open(summary, "a").write("\n")
PY
echo "summary: $summary"
if [ "${SAVE:-}" = 1 ]; then
  cp "$summary" benches/results/race-speed.json
  echo "saved as benches/results/race-speed.json: regenerate docs/MEASURING.md with target/release/conformance docs docs/MEASURING.md"
fi
