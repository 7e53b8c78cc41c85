#!/usr/bin/env bash
# Times the default `conformance run` (every runtime found here) and `run -r node,bun,deno`,
# three times each, with hyperfine (the budget of the answer by default: <= 90 s and <= 30 s
# on the project's 2-core Linux machine; the race engine's aim: <= 45 s and <= 15 s). Not
# part of CI's test path: it takes minutes and measures the machine.
#
#   bash benches/default-run.sh                  # the release binary of this checkout
#   CONFORMANCE=/path/to/conformance bash benches/default-run.sh   # another build (before/after)
#   RUNS=1 bash benches/default-run.sh           # fewer runs
#
# Writes hyperfine's JSON and Markdown, and each run's results.json (whose cells carry
# elapsed_ms: the share of each runtime), into ${OUT:-target/bench-default-run}, and their
# summary (benches/default-run-summary.sh) as default-run.json there; with SAVE=1 also as
# benches/results/default-run.json, the file the README's run-time table is rendered from
# (`conformance docs README.md` after it).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
runs=${RUNS:-3}
out=${OUT:-$here/target/bench-default-run}
mkdir -p "$out"

# Debian 12 packages hyperfine 1.15 (`cargo install hyperfine` would build it for minutes)
command -v hyperfine >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq hyperfine >/dev/null; }
command -v jq >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq jq >/dev/null; }

bin=${CONFORMANCE:-}
if [ -z "$bin" ]; then
    cargo build --release --quiet
    bin="${CARGO_TARGET_DIR:-$here/target}/release/conformance"
fi
# the runtimes .ci/install put in .runtimes/bin, as `run` finds them
export PATH="$here/.runtimes/bin:$PATH"
# its own Wine prefix: two runs sharing one disturb each other's cmd attempts (README, Known limits)
export CONFORMANCE_WINEPREFIX=${CONFORMANCE_WINEPREFIX:-$out/wineprefix}

# one untimed run starts Wine once (its prefix is made on first use: seconds)
"$bin" run -r cmd -v cmd.mkdir --scenario second-comer --target absent --no-relative --quiet \
    --force --out "$out/warm" >/dev/null 2>&1 || true

hyperfine --runs "$runs" --style basic \
    --export-json "$out/hyperfine.json" --export-markdown "$out/hyperfine.md" \
    -n "conformance run" "'$bin' run --quiet --force --out '$out/all'" \
    -n "conformance run -r node,bun,deno" "'$bin' run -r node,bun,deno --quiet --force --out '$out/nbd'"

# the share of each runtime in the last run of each command, from the cells' elapsed_ms
for r in all nbd; do
    echo "== $r: $out/$r/results.json"
    jq -r '
        .run_info.duration_s as $d
        | [.cells[] | {rt: .runtime, ms: .elapsed_ms}] | group_by(.rt)
        | map({rt: .[0].rt, s: (map(.ms) | add / 1000)})
        | (map(.s) | add) as $sum
        | (.[] | "\(.rt): \(.s * 10 | round / 10) s (\((.s / $sum * 100) | round)% of the cells)"),
          "run: \($d * 10 | round / 10) s, cells \($sum * 10 | round / 10) s"' "$out/$r/results.json"
done

bash "$here/benches/default-run-summary.sh" "$out"
if [ "${SAVE:-0}" = 1 ]; then
    cp "$out/default-run.json" "$here/benches/results/default-run.json"
    echo "saved benches/results/default-run.json: run \`conformance docs README.md\` to update the README"
fi
