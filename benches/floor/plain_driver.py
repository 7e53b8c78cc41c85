#!/usr/bin/env python3
"""A plain driver of the same race as the product's node.writeFileSync.wx cell: K persistent
Node contenders read JSON lines (readline), and per trial the driver makes a folder, sends each a
`prepare` (the path and its token) and waits for `ready`, sends each `go` and reads its result,
reads whose token the name holds, and removes the folder: two round trips and a folder per
trial, with none of the harness's checks.

    plain_driver.py NODE DIR TRIALS CONTENDERS     prints: trials, multi-winner trials, trials/s
"""
import json
import os
import shutil
import subprocess
import sys
import time

CONTENDER = r"""
const fs = require('fs');
const rl = require('readline').createInterface({ input: process.stdin });
let p = null;
rl.on('line', (line) => {
  const m = JSON.parse(line);
  if (m.type === 'prepare') { p = m; process.stdout.write('{"type":"ready"}\n'); return; }
  let ok = true;
  try { fs.writeFileSync(p.target, p.token, { flag: 'wx' }); } catch (e) { ok = false; }
  process.stdout.write(JSON.stringify({ type: 'result', ok }) + '\n');
});
"""


def main():
    node, root, trials, k = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    procs = [subprocess.Popen([node, "-e", CONTENDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, bufsize=1) for _ in range(k)]
    multi = 0
    t0 = time.monotonic()
    for t in range(trials):
        d = os.path.join(root, f"t{t}")
        os.mkdir(d)
        target = os.path.join(d, "target")
        for i, p in enumerate(procs):
            p.stdin.write(json.dumps({"type": "prepare", "target": target, "token": f"c{i}-t{t}"}) + "\n")
        for p in procs:
            p.stdout.readline()
        for p in procs:
            p.stdin.write('{"type":"go"}\n')
        winners = sum(json.loads(p.stdout.readline())["ok"] for p in procs)
        with open(target) as f:
            f.read()
        multi += winners > 1
        shutil.rmtree(d)
    dt = time.monotonic() - t0
    for p in procs:
        p.stdin.close()
        p.wait()
    print(trials, multi, round(trials / dt))


if __name__ == "__main__":
    main()
