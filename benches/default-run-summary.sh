#!/usr/bin/env bash
# Writes the summary of a benches/default-run.sh round: hyperfine's times of the two commands
# and where each command's last run spent its cell time (per runtime and per scenario, from the
# cells' elapsed_ms) and its wall time (its run_info.phases), as JSON that `conformance docs` renders (`scenario=timings`, the README's
# run-time table; src/report/timings.rs has the shape).
#
#   bash benches/default-run-summary.sh OUT [SUMMARY]
#
# OUT is the round's folder (hyperfine.json, all/results.json, nbd/results.json); SUMMARY
# defaults to OUT/default-run.json. REV names the build measured (default: this checkout's
# commit, with -dirty when it has changes).
set -euo pipefail
out=${1:?usage: default-run-summary.sh OUT [SUMMARY]}
summary=${2:-$out/default-run.json}
here=$(cd "$(dirname "$0")/.." && pwd)
rev=${REV:-$(git -C "$here" describe --always --dirty --abbrev=7)}
os=$( (. /etc/os-release && echo "$PRETTY_NAME") 2>/dev/null || echo unknown)
machine="$(uname -m), $(nproc) cores, $(uname -s) $(uname -r), $os"
jq -n \
    --slurpfile h "$out/hyperfine.json" \
    --slurpfile a "$out/all/results.json" \
    --slurpfile b "$out/nbd/results.json" \
    --arg machine "$machine" --arg rev "$rev" --arg date "$(date -u +%F)" '
    def r3: . * 1000 | round / 1000;
    def shares(f): [.cells[] | {name: f, ms: (.elapsed_ms // 0)}] | group_by(.name)
        | map({name: .[0].name, s: ((map(.ms) | add) / 1000 | r3)});
    def cmd(i; r; name): $h[0].results[i] as $x | r | {
        command: name,
        times_s: ($x.times | map(r3)),
        mean_s: ($x.mean | r3),
        stddev_s: ($x.stddev | if . == null then null else r3 end),
        min_s: ($x.min | r3),
        max_s: ($x.max | r3),
        cells: (.cells | length),
        cell_s_by_runtime: shares(.runtime),
        cell_s_by_scenario: shares(.scenario),
        phases: (.run_info.phases // [] | map(.seconds |= r3))
    };
    {machine: $machine, conformance: $rev, date: $date,
     commands: [cmd(0; $a[0]; "conformance run"), cmd(1; $b[0]; "conformance run -r node,bun,deno")]}
' > "$summary"
echo "wrote $summary"
