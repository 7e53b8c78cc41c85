// conformance probe for Deno's own file-system API family (protocol 1, see ../PROTOCOL.md).
// Run with `deno run -A probe.ts`. It performs exactly the call a variant names and reports
// the raw result; it never judges the outcome. Deno's node:fs variants are served by
// ../node/probe.mjs, which Deno runs as well.
const PROTOCOL = 1;
const enc = new TextEncoder();
const dec = new TextDecoder();

function nowUs(): number {
  return (performance.timeOrigin + performance.now()) * 1000;
}

function send(obj: unknown): void {
  const bytes = enc.encode(JSON.stringify(obj) + "\n");
  let off = 0;
  while (off < bytes.length) off += Deno.stdout.writeSync(bytes.subarray(off));
}

interface Params {
  target: string;
  source: string | null;
  data: Uint8Array;
  text: string;
}

function writeThroughFile(f: Deno.FsFile, data: Uint8Array): void {
  try {
    let off = 0;
    while (off < data.length) off += f.writeSync(data.subarray(off));
  } finally {
    f.close();
  }
}

type Call = (p: Params) => void | Promise<void>;

const VARIANTS: Record<string, Call> = {
  "deno.writeFileSync.createNew": (p) => Deno.writeFileSync(p.target, p.data, { createNew: true }),
  "deno.writeFileSync": (p) => Deno.writeFileSync(p.target, p.data),
  "deno.writeFile.createNew": (p) => Deno.writeFile(p.target, p.data, { createNew: true }),
  "deno.writeTextFileSync.createNew": (p) => Deno.writeTextFileSync(p.target, p.text, { createNew: true }),
  "deno.writeFileSync.append": (p) => Deno.writeFileSync(p.target, p.data, { append: true }),
  "deno.openSync.createNew": (p) => writeThroughFile(Deno.openSync(p.target, { write: true, createNew: true }), p.data),
  "deno.openSync.create": (p) =>
    writeThroughFile(Deno.openSync(p.target, { write: true, create: true, truncate: true }), p.data),
  "deno.copyFileSync": (p) => Deno.copyFileSync(p.source!, p.target),
  "deno.renameSync": (p) => Deno.renameSync(p.source!, p.target),
  "deno.linkSync": (p) => Deno.linkSync(p.source!, p.target),
  "deno.symlinkSync": (p) => Deno.symlinkSync(p.source!, p.target),
  "deno.mkdirSync": (p) => Deno.mkdirSync(p.target),
  "deno.mkdirSync.recursive": (p) => Deno.mkdirSync(p.target, { recursive: true }),
  "deno.statSync+writeFileSync": (p) => {
    let exists = true;
    try {
      Deno.statSync(p.target);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
      exists = false;
    }
    if (exists) {
      const err = new Error(`target exists (checked with statSync): ${p.target}`);
      err.name = "CheckExists";
      throw err;
    }
    Deno.writeFileSync(p.target, p.data);
  },
};

// deno-lint-ignore no-explicit-any
function rawError(e: any) {
  if (e === null || typeof e !== "object") {
    return { type: typeof e, code: null, errno: null, hresult: null, message: String(e) };
  }
  return {
    type: e.name || (e.constructor && e.constructor.name) || "Error",
    code: typeof e.code === "string" ? e.code : null,
    errno: typeof e.errno === "number" ? e.errno : null,
    hresult: null,
    message: String(e.message ?? e),
  };
}

// Synchronous line reader on stdin: keeps the release path free of event-loop latency.
let pending = new Uint8Array(0);
const chunk = new Uint8Array(65536);
function nextLine(): string | null {
  for (;;) {
    const nl = pending.indexOf(10);
    if (nl >= 0) {
      const line = dec.decode(pending.subarray(0, nl));
      pending = pending.slice(nl + 1);
      return line;
    }
    const n = Deno.stdin.readSync(chunk);
    if (n === null || n === 0) return null;
    const merged = new Uint8Array(pending.length + n);
    merged.set(pending);
    merged.set(chunk.subarray(0, n), pending.length);
    pending = merged;
  }
}

function fatal(msg: string, code: number): never {
  console.error(`probe: ${msg}`);
  Deno.exit(code);
}

async function main() {
  send({
    protocol: PROTOCOL,
    type: "hello",
    probe: "deno",
    families: ["deno"],
    runtime: "deno",
    version: Deno.version.deno,
    pid: Deno.pid,
  });
  let prepared: { id: number; fn: Call; p: Params; mark: string | null; token: string } | null = null;
  for (;;) {
    const line = nextLine();
    if (line === null) break;
    if (line.trim() === "") continue;
    // deno-lint-ignore no-explicit-any
    let msg: any;
    try {
      msg = JSON.parse(line);
    } catch {
      fatal(`not JSON: ${line}`, 3);
    }
    if (msg.type === "quit") break;
    if (msg.type === "prepare") {
      const fn = VARIANTS[msg.variant];
      if (!fn) {
        prepared = null;
        send({ type: "ready", id: msg.id, supported: false, reason: `unknown variant ${msg.variant}` });
        continue;
      }
      prepared = {
        id: msg.id,
        fn,
        p: { target: msg.target, source: msg.source, data: enc.encode(msg.token), text: msg.token },
        mark: msg.mark,
        token: msg.token,
      };
      send({ type: "ready", id: msg.id, supported: true });
      continue;
    }
    if (msg.type === "go") {
      if (!prepared || prepared.id !== msg.id) fatal(`go ${msg.id} without prepare`, 3);
      const { fn, p, mark, token } = prepared!;
      prepared = null;
      let ok = true;
      // deno-lint-ignore no-explicit-any
      let error: any = null;
      const t0 = nowUs();
      try {
        const r = fn(p);
        if (r instanceof Promise) await r;
      } catch (e) {
        ok = false;
        error = rawError(e);
      }
      const t1 = nowUs();
      if (ok && mark) {
        try {
          Deno.writeTextFileSync(mark, token);
        } catch (e) {
          ok = false;
          error = { ...rawError(e), type: "MarkError" };
        }
      }
      send({ type: "result", id: msg.id, ok, t0_us: t0, t1_us: t1, error });
      continue;
    }
    fatal(`unknown message type ${msg.type}`, 3);
  }
  Deno.exit(0);
}

main().catch((e) => fatal(`fatal: ${e?.stack ?? e}`, 4));
