// conformance probe for the .NET file-system API family "dotnet" (protocol 2, session
// mode; see ../PROTOCOL.md). It performs exactly the call a variant names, or the steps a
// recipe names, and reports the raw result; it never judges the outcome. Of version 2 it has
// the hello that lists its variants and recipes, recipes (the hand-off routines of
// ../shared/session.mjs, step for step, with the .NET calls a C# integrator would use:
// FileStream, File.Move, File.ReadAllBytes, Directory.GetFiles, File.Exists, FileInfo,
// File.WriteAllBytes, FileStream.Lock, MemoryMappedFile, FileSystemWatcher,
// Directory.EnumerateFiles), and `stop`, which ends a loop recipe.
//
// One source file for every runtime: it compiles with Mono's `mcs` (no references beyond
// the defaults, C# 6 syntax) and with the .NET SDK (Probe.csproj). An mcs-built Probe.exe
// also runs on CoreCLR through its mscorlib facade. APIs that exist only on some runtimes
// (File.Move(string, string, bool)) are looked up by reflection at prepare time, so the
// probe still compiles everywhere and answers `supported:false` where they are missing.
//
// JSON is read and written by hand (no System.Text.Json on Mono, no extra references).
// Output is pure ASCII: every non-ASCII character is written as a \uXXXX escape.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.IO.MemoryMappedFiles;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading;

// Thrown by the check-then-create anti-pattern when its check sees the target.
// Global namespace on purpose: its FullName, reported as the error type, is "CheckExists".
sealed class CheckExists : Exception
{
    public CheckExists(string message) : base(message) { }
}

// A JSON number kept as its source text, so an attempt id is echoed exactly as received.
sealed class JsonNumber
{
    public readonly string Raw;
    public JsonNumber(string raw) { Raw = raw; }
    public double ToDouble() { return double.Parse(Raw, NumberStyles.Float, CultureInfo.InvariantCulture); }
}

static class Json
{
    // Parses one complete JSON text. Objects become Dictionary<string, object>, arrays
    // List<object>, numbers JsonNumber, strings string, true/false bool, null null.
    // The protocol only sends flat objects; nested values are parsed (and ignored by the
    // caller) rather than rejected.
    public static object Parse(string s)
    {
        int i = 0;
        SkipWs(s, ref i);
        object v = ParseValue(s, ref i, 0);
        SkipWs(s, ref i);
        if (i != s.Length) throw Fail(s, i, "trailing characters");
        return v;
    }

    static FormatException Fail(string s, int i, string what)
    {
        return new FormatException("JSON: " + what + " at offset " + i.ToString(CultureInfo.InvariantCulture));
    }

    static void SkipWs(string s, ref int i)
    {
        while (i < s.Length && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
    }

    static object ParseValue(string s, ref int i, int depth)
    {
        if (depth > 64) throw Fail(s, i, "nesting too deep");
        if (i >= s.Length) throw Fail(s, i, "unexpected end");
        char c = s[i];
        if (c == '{') return ParseObject(s, ref i, depth);
        if (c == '[') return ParseArray(s, ref i, depth);
        if (c == '"') return ParseString(s, ref i);
        if (c == '-' || (c >= '0' && c <= '9')) return ParseNumber(s, ref i);
        if (Literal(s, ref i, "true")) return true;
        if (Literal(s, ref i, "false")) return false;
        if (Literal(s, ref i, "null")) return null;
        throw Fail(s, i, "unexpected character");
    }

    static bool Literal(string s, ref int i, string word)
    {
        if (string.CompareOrdinal(s, i, word, 0, word.Length) != 0) return false;
        i += word.Length;
        return true;
    }

    static Dictionary<string, object> ParseObject(string s, ref int i, int depth)
    {
        var obj = new Dictionary<string, object>(StringComparer.Ordinal);
        i++; // '{'
        SkipWs(s, ref i);
        if (i < s.Length && s[i] == '}') { i++; return obj; }
        for (;;)
        {
            SkipWs(s, ref i);
            if (i >= s.Length || s[i] != '"') throw Fail(s, i, "expected a member name");
            string key = ParseString(s, ref i);
            SkipWs(s, ref i);
            if (i >= s.Length || s[i] != ':') throw Fail(s, i, "expected ':'");
            i++;
            SkipWs(s, ref i);
            obj[key] = ParseValue(s, ref i, depth + 1); // a repeated name: the last one wins
            SkipWs(s, ref i);
            if (i >= s.Length) throw Fail(s, i, "unexpected end in object");
            if (s[i] == ',') { i++; continue; }
            if (s[i] == '}') { i++; return obj; }
            throw Fail(s, i, "expected ',' or '}'");
        }
    }

    static List<object> ParseArray(string s, ref int i, int depth)
    {
        var list = new List<object>();
        i++; // '['
        SkipWs(s, ref i);
        if (i < s.Length && s[i] == ']') { i++; return list; }
        for (;;)
        {
            SkipWs(s, ref i);
            list.Add(ParseValue(s, ref i, depth + 1));
            SkipWs(s, ref i);
            if (i >= s.Length) throw Fail(s, i, "unexpected end in array");
            if (s[i] == ',') { i++; continue; }
            if (s[i] == ']') { i++; return list; }
            throw Fail(s, i, "expected ',' or ']'");
        }
    }

    static string ParseString(string s, ref int i)
    {
        i++; // opening quote
        var sb = new StringBuilder();
        for (;;)
        {
            if (i >= s.Length) throw Fail(s, i, "unterminated string");
            char c = s[i++];
            if (c == '"') return sb.ToString();
            if (c < 0x20) throw Fail(s, i - 1, "control character in string");
            if (c != '\\') { sb.Append(c); continue; }
            if (i >= s.Length) throw Fail(s, i, "unterminated escape");
            char e = s[i++];
            switch (e)
            {
                case '"': sb.Append('"'); break;
                case '\\': sb.Append('\\'); break;
                case '/': sb.Append('/'); break;
                case 'b': sb.Append('\b'); break;
                case 'f': sb.Append('\f'); break;
                case 'n': sb.Append('\n'); break;
                case 'r': sb.Append('\r'); break;
                case 't': sb.Append('\t'); break;
                case 'u':
                    // UTF-16 code units: an escaped surrogate pair becomes the two halves in a
                    // row, which is exactly how a .NET string holds that character.
                    if (i + 4 > s.Length) throw Fail(s, i, "short \\u escape");
                    int code = 0;
                    for (int k = 0; k < 4; k++)
                    {
                        int h = HexValue(s[i + k]);
                        if (h < 0) throw Fail(s, i + k, "bad hex digit");
                        code = code * 16 + h;
                    }
                    i += 4;
                    sb.Append((char)code);
                    break;
                default:
                    throw Fail(s, i - 1, "bad escape");
            }
        }
    }

    static int HexValue(char c)
    {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    }

    // Grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
    static JsonNumber ParseNumber(string s, ref int i)
    {
        int start = i;
        if (s[i] == '-') i++;
        if (i < s.Length && s[i] == '0') i++;
        else if (i < s.Length && s[i] >= '1' && s[i] <= '9') { while (i < s.Length && IsDigit(s[i])) i++; }
        else throw Fail(s, i, "bad number");
        if (i < s.Length && s[i] == '.')
        {
            i++;
            if (i >= s.Length || !IsDigit(s[i])) throw Fail(s, i, "bad fraction");
            while (i < s.Length && IsDigit(s[i])) i++;
        }
        if (i < s.Length && (s[i] == 'e' || s[i] == 'E'))
        {
            i++;
            if (i < s.Length && (s[i] == '+' || s[i] == '-')) i++;
            if (i >= s.Length || !IsDigit(s[i])) throw Fail(s, i, "bad exponent");
            while (i < s.Length && IsDigit(s[i])) i++;
        }
        return new JsonNumber(s.Substring(start, i - start));
    }

    static bool IsDigit(char c) { return c >= '0' && c <= '9'; }

    // Writes a JSON string literal. Escapes ", \ and every control character, and writes
    // every non-ASCII UTF-16 code unit as \uXXXX, so the output is ASCII whatever encoding
    // the stream has. A lone surrogate (not valid Unicode, rejected by strict parsers such
    // as serde_json) is replaced by U+FFFD.
    public static void WriteString(StringBuilder sb, string s)
    {
        sb.Append('"');
        for (int i = 0; i < s.Length; i++)
        {
            char c = s[i];
            switch (c)
            {
                case '"': sb.Append("\\\""); continue;
                case '\\': sb.Append("\\\\"); continue;
                case '\n': sb.Append("\\n"); continue;
                case '\r': sb.Append("\\r"); continue;
                case '\t': sb.Append("\\t"); continue;
                case '\b': sb.Append("\\b"); continue;
                case '\f': sb.Append("\\f"); continue;
            }
            if (c >= 0x20 && c < 0x7f) { sb.Append(c); continue; }
            if (char.IsHighSurrogate(c))
            {
                if (i + 1 < s.Length && char.IsLowSurrogate(s[i + 1]))
                {
                    AppendU(sb, c);
                    AppendU(sb, s[++i]);
                }
                else AppendU(sb, '\uFFFD');
                continue;
            }
            if (char.IsLowSurrogate(c)) { AppendU(sb, '\uFFFD'); continue; }
            AppendU(sb, c);
        }
        sb.Append('"');
    }

    static void AppendU(StringBuilder sb, char c)
    {
        sb.Append("\\u").Append(((int)c).ToString("x4", CultureInfo.InvariantCulture));
    }

    public static void WriteValue(StringBuilder sb, object v)
    {
        if (v == null) sb.Append("null");
        else if (v is bool) sb.Append((bool)v ? "true" : "false");
        else if (v is JsonNumber) sb.Append(((JsonNumber)v).Raw);
        else if (v is string) WriteString(sb, (string)v);
        else if (v is int) sb.Append(((int)v).ToString(CultureInfo.InvariantCulture));
        else if (v is long) sb.Append(((long)v).ToString(CultureInfo.InvariantCulture));
        else if (v is RawJson) sb.Append(((RawJson)v).Text);
        else if (v is List<object>)
        {
            sb.Append('[');
            bool first = true;
            foreach (object item in (List<object>)v)
            {
                if (!first) sb.Append(',');
                first = false;
                WriteValue(sb, item);
            }
            sb.Append(']');
        }
        else if (v is IEnumerable<KeyValuePair<string, object>>)
        {
            sb.Append('{');
            bool first = true;
            foreach (KeyValuePair<string, object> kv in (IEnumerable<KeyValuePair<string, object>>)v)
            {
                if (!first) sb.Append(',');
                first = false;
                WriteString(sb, kv.Key);
                sb.Append(':');
                WriteValue(sb, kv.Value);
            }
            sb.Append('}');
        }
        else throw new ArgumentException("cannot write " + v.GetType().FullName + " as JSON");
    }
}

// Pre-formatted JSON text (timestamps).
sealed class RawJson
{
    public readonly string Text;
    public RawJson(string text) { Text = text; }
}

// An ordered JSON object, so replies read in the protocol's documented field order.
// The libc calls .NET has no equivalent of: open(2) with O_APPEND (Linux flag values).
static class Libc
{
    public const int O_WRONLY = 0x1;
    public const int O_CREAT = 0x40;
    public const int O_APPEND = 0x400;

    [DllImport("libc", SetLastError = true)]
    public static extern int open(string path, int flags, int mode);

    [DllImport("libc", SetLastError = true)]
    public static extern IntPtr write(int fd, byte[] buf, IntPtr count);

    [DllImport("libc", SetLastError = true)]
    public static extern int close(int fd);
}

sealed class Obj : List<KeyValuePair<string, object>>
{
    public Obj Set(string key, object value)
    {
        Add(new KeyValuePair<string, object>(key, value));
        return this;
    }

    // This object with the fields of `more` appended.
    public Obj Concat(Obj more)
    {
        AddRange(more);
        return this;
    }
}

// The lines of stdin. The main loop reads them on its own thread, blocking (the release path
// is one ReadLine, as before recipes existed). While a loop recipe runs, the main thread is busy
// with the recipe, so Poll hands the reading to a helper thread one line at a time and returns
// at once; the recipe asks again about once a millisecond. The helper reads only when asked,
// so the reader has one user at a time: a loop ends only after the helper has delivered a line
// (stop, quit, end of input), and then the main thread reads again itself.
sealed class StdinLines
{
    readonly StreamReader reader;
    readonly object gate = new object();
    // (a List: CoreCLR's mscorlib facade does not forward Queue<T>, which an mcs build takes
    // from Mono's mscorlib)
    readonly List<string> back = new List<string>();
    Thread helper;
    bool asked;      // the helper is to read (or is reading) one line
    bool delivered;  // it has: `line` (null at end of input) or `error`
    string line;
    Exception error;
    bool eof;

    public StdinLines(StreamReader reader) { this.reader = reader; }

    // Puts a line back: the next Next() or Poll() returns it first.
    public void Unread(string l) { back.Add(l); }

    // The next line, blocking; null at end of input.
    public string Next()
    {
        if (back.Count > 0) return Shift();
        if (eof) return null;
        lock (gate)
        {
            if (asked)
            {
                while (!delivered) Monitor.Wait(gate);
                return TakeLocked();
            }
        }
        string l = reader.ReadLine();
        if (l == null) eof = true;
        return l;
    }

    // True with the line (null at end of input) when one is there without waiting; false
    // otherwise (the helper is then reading the next one).
    public bool Poll(out string l)
    {
        l = null;
        if (back.Count > 0) { l = Shift(); return true; }
        if (eof) return true;
        lock (gate)
        {
            if (delivered) { l = TakeLocked(); return true; }
            if (!asked)
            {
                asked = true;
                if (helper == null)
                {
                    helper = new Thread(Help);
                    helper.IsBackground = true;
                    helper.Name = "stdin";
                    helper.Start();
                }
                Monitor.PulseAll(gate);
            }
            return false;
        }
    }

    string Shift()
    {
        string l = back[0];
        back.RemoveAt(0);
        return l;
    }

    string TakeLocked()
    {
        asked = false;
        delivered = false;
        string l = line;
        Exception e = error;
        line = null;
        error = null;
        if (e != null) throw new IOException("reading stdin: " + e.Message, e);
        if (l == null) eof = true;
        return l;
    }

    void Help()
    {
        for (;;)
        {
            lock (gate)
            {
                while (!asked || delivered) Monitor.Wait(gate);
            }
            string l = null;
            Exception e = null;
            try { l = reader.ReadLine(); }
            catch (Exception x) { e = x; }
            lock (gate)
            {
                line = l;
                error = e;
                delivered = true;
                Monitor.PulseAll(gate);
            }
        }
    }
}

// A recipe's prepare cannot use the request: `ready` with supported:false and this reason.
sealed class Unsupported : Exception
{
    public Unsupported(string reason) : base(reason) { }
}

// What a recipe's prepare gets: the prepare message's fields.
sealed class RecipeRequest
{
    public string IdText;   // the attempt id as text (a number: its digits), for temp names
    public string Target;
    public string Source;
    public string Token;
    public byte[] Data;     // the token's UTF-8 bytes
    public Dictionary<string, object> Params;
    public string Role;     // the prepare's role (the mutex scenario's contender, holder, releaser)
}

// What a recipe's run returns: `step` names the step that failed (null on success), `error`
// is that step's raw error; loop recipes add counters and errors_sample.
sealed class RecipeOutcome
{
    public bool Ok;
    public Obj Error;
    public string Step;
    public Obj Counters;
    public List<object> Sample;

    public static RecipeOutcome Success() { return new RecipeOutcome { Ok = true }; }
    public static RecipeOutcome Failure(string step, Obj error) { return new RecipeOutcome { Ok = false, Step = step, Error = error }; }
}

delegate RecipeOutcome RecipeRun();

// The recipes of ../shared/session.mjs (same names, parameters, steps, counters and step
// names; see ../PROTOCOL.md, "Recipes"), written with the .NET calls a C# integrator would use.
// Each prepare checks the request and returns the routine, or throws Unsupported.
static class Recipes
{
    // Every recipe, in the order of RECIPES in session.mjs: the hello lists them.
    public static readonly string[] Ids = {
        "publish.temp-rename-cross-volume",
        "done.marker-after-data",
        "done.marker-before-data",
        "done.size-stable",
        "done.mtime-stable",
        "consume.poll",
        "publish.direct",
        "publish.temp-rename",
        "claim.rename",
        "read.poll",
        "claim.rename-claim",
        "claim.list-then-open",
        "claim.exclusive-marker",
        "lease.mtime-delete-create",
        "lease.expires-delete-create",
        "lease.rename-aside",
        "lease.breaker",
        "lease.dir-mtime",
        "holder.no-check",
        "holder.renew-blind",
        "holder.check-owner",
        "ledger.key-first",
        "ledger.check-process-append",
        "ledger.check-process-create",
        "update.read-modify-write",
        "update.locked-read-modify-write",
        "update.temp-rename",
        "update.locked-temp-rename",
        "update.append-line",
        "os-lock.none",
        "os-lock.fileshare-none",
        "os-lock.filestream-lock",
        "os-lock.intrude",
        "watch.events-only",
        "watch.events-and-rescan",
        "watch.poll",
        "mutex.check-then-create",
        "mutex.exclusive-create",
        "mutex.module",
    };

    // At most this many raw errors travel in a result's errors_sample.
    const int ErrorsSampleMax = 8;
    // Largest single write of the publish and done recipes (bytes).
    const int Chunk = 4096;
    // Rounds without progress after which a claim worker gives up (step `stuck`).
    const int ClaimStuckRounds = 100000;
    // The FileStream buffer size that makes every Write one write(2) (no buffering in
    // FileStream; CoreCLR treats 1 as "unbuffered", Mono writes anything larger than its
    // minimum buffer straight through), as writeSync does.
    const int Unbuffered = 1;

    static readonly UTF8Encoding Utf8 = new UTF8Encoding(false);

    public static RecipeRun Prepare(string name, RecipeRequest req)
    {
        switch (name)
        {
            case "done.marker-after-data": return DoneWriter("marker-after-data", req);
            case "done.marker-before-data": return DoneWriter("marker-before-data", req);
            case "done.size-stable": return DoneWriter("size-stable", req);
            case "done.mtime-stable": return DoneWriter("mtime-stable", req);
            case "consume.poll": return ConsumePoll(req);
            case "publish.direct": return PublishDirect(req);
            case "publish.temp-rename": return PublishTempRename(req);
            // the same steps with params.temp on another file system (the harness's second
            // scratch folder): what the runtime's move does across file systems
            case "publish.temp-rename-cross-volume": return PublishTempRename(req);
            case "claim.rename": return ClaimRename(req);
            case "read.poll": return ReadPoll(req);
            case "claim.rename-claim": return ClaimWorker("rename", req);
            case "claim.list-then-open": return ClaimWorker("list-then-open", req);
            case "claim.exclusive-marker": return ClaimWorker("marker", req);
            case "lease.mtime-delete-create": return LeaseTaker("mtime", req);
            case "lease.expires-delete-create": return LeaseTaker("expires", req);
            case "lease.rename-aside": return LeaseTaker("rename-aside", req);
            case "lease.breaker": return LeaseTaker("breaker", req);
            case "lease.dir-mtime":
                // Directory.CreateDirectory succeeds on an existing directory (its docs: "Creates all
                // directories and subdirectories in the specified path unless they already exist"),
                // so .NET has no mkdir that refuses, which a directory lock needs
                throw new Unsupported("lease.dir-mtime needs a mkdir that refuses an existing directory; .NET's Directory.CreateDirectory does not");
            case "holder.no-check": return HolderWorker("no-check", req);
            case "holder.renew-blind": return HolderWorker("renew-blind", req);
            case "holder.check-owner": return HolderWorker("check-owner", req);
            case "ledger.key-first": return LedgerWorker("key-first", req);
            case "ledger.check-process-append": return LedgerWorker("check-process-append", req);
            case "ledger.check-process-create": return LedgerWorker("check-process-create", req);
            case "update.read-modify-write": return UpdateWorker("read-modify-write", req);
            case "update.locked-read-modify-write": return UpdateWorker("locked-read-modify-write", req);
            case "update.temp-rename": return UpdateWorker("temp-rename", req);
            case "update.locked-temp-rename": return UpdateWorker("locked-temp-rename", req);
            case "update.append-line": return UpdateWorker("append-line", req);
            case "os-lock.none":
            case "os-lock.fileshare-none":
            case "os-lock.filestream-lock":
                return OsLockHolder(name, req);
            case "os-lock.intrude": return OsLockIntruder(req);
            case "watch.events-only": return WatchConsumer("events", req);
            case "watch.events-and-rescan": return WatchConsumer("events-and-rescan", req);
            case "watch.poll": return WatchConsumer("poll", req);
            case "mutex.check-then-create":
            case "mutex.exclusive-create":
            case "mutex.module":
                return MutexWorker(name, req);
            default: throw new Unsupported("unknown recipe " + name);
        }
    }

    // ---- parameters (the rules of stringParam, boolParam and friends in session.mjs) --------

    static object Param(RecipeRequest req, string name)
    {
        object v;
        return req.Params.TryGetValue(name, out v) ? v : null;
    }

    static string StringParam(RecipeRequest req, string name, string fallback)
    {
        object v = Param(req, name);
        if (v == null) return fallback;
        string s = v as string;
        if (s == null || s.Length == 0) throw new Unsupported("params." + name + " must be a non-empty string");
        return s;
    }

    static bool BoolParam(RecipeRequest req, string name)
    {
        object v = Param(req, name);
        if (v == null) return false;
        if (!(v is bool)) throw new Unsupported("params." + name + " must be true or false");
        return (bool)v;
    }

    // An integer parameter from min to max (JavaScript's Number.isInteger: 40.0 and 4e1 are
    // integers); `fallback` when absent or null.
    static long IntParam(RecipeRequest req, string name, long fallback, long min, long max, string why)
    {
        object v = Param(req, name);
        if (v == null) return fallback;
        JsonNumber n = v as JsonNumber;
        if (n == null) throw new Unsupported(why);
        double d;
        try { d = n.ToDouble(); }
        catch (Exception) { throw new Unsupported(why); }
        if (Math.Floor(d) != d || d < min || d > max) throw new Unsupported(why);
        return (long)d;
    }

    // ---- the content ----------------------------------------------------------------------

    // The token's UTF-8 bytes, or, with params.size (1 to 16 MiB), the framed content
    // `conformance-publish <token> <size>\n`, `size` bytes of `<token>\n` repeated (the last
    // copy cut), `end <token>\n`: publishContent in session.mjs, `framed` in src/handoff.rs.
    static byte[] PublishContent(RecipeRequest req)
    {
        if (Param(req, "size") == null) return req.Data;
        long size = IntParam(req, "size", 0, 1, 16 * 1024 * 1024, "params.size must be an integer from 1 to 16777216");
        byte[] head = Utf8.GetBytes("conformance-publish " + req.Token + " " + size.ToString(CultureInfo.InvariantCulture) + "\n");
        byte[] line = Utf8.GetBytes(req.Token + "\n");
        byte[] tail = Utf8.GetBytes("end " + req.Token + "\n");
        var all = new byte[head.Length + size + tail.Length];
        Buffer.BlockCopy(head, 0, all, 0, head.Length);
        for (long off = 0; off < size; off += line.Length)
            Buffer.BlockCopy(line, 0, all, (int)(head.Length + off), (int)Math.Min(line.Length, size - off));
        Buffer.BlockCopy(tail, 0, all, (int)(head.Length + size), tail.Length);
        return all;
    }

    // Writes `data` in writes of at most Chunk bytes, sleeping `pauseMs` between them.
    static void WriteChunks(FileStream fs, byte[] data, int pauseMs)
    {
        for (int off = 0; off < data.Length; off += Chunk)
        {
            if (off > 0 && pauseMs > 0) Thread.Sleep(pauseMs);
            fs.Write(data, off, Math.Min(Chunk, data.Length - off));
        }
    }

    // fs.openSync(path, 'w'): create or truncate, write only.
    static FileStream OpenW(string path)
    {
        return new FileStream(path, FileMode.Create, FileAccess.Write, FileShare.Read, Unbuffered);
    }

    // fs.openSync(path, 'wx'): create, failing if the name exists.
    static FileStream OpenWx(string path)
    {
        return new FileStream(path, FileMode.CreateNew, FileAccess.Write, FileShare.Read, Unbuffered);
    }

    static Obj Raw(Exception e) { return Probe.RawError(e, null); }

    static bool IsAbsent(Exception e) { return e is FileNotFoundException || e is DirectoryNotFoundException; }

    static bool SameBytes(byte[] a, byte[] b)
    {
        if (a == b) return true;
        if (a == null || b == null || a.Length != b.Length) return false;
        for (int i = 0; i < a.Length; i++) if (a[i] != b[i]) return false;
        return true;
    }

    static bool IsOneOf(byte[] bytes, List<byte[]> candidates)
    {
        foreach (byte[] c in candidates) if (SameBytes(bytes, c)) return true;
        return false;
    }

    static double NowMs() { return System.Diagnostics.Stopwatch.GetTimestamp() * 1000.0 / System.Diagnostics.Stopwatch.Frequency; }

    // File.Move(string, string, bool) (.NET Core 3.0+): with overwrite, rename(2) on Unix.
    static Action<string, string, bool> moveOverwrite;
    static bool moveLooked;

    // Renames `from` onto `to`, replacing it, as renameSync does. Where the runtime has
    // File.Move(from, to, true) (.NET Core 3.0+), that call: rename(2) on Unix. Elsewhere (Mono
    // 6.8, .NET Framework) the pair those runtimes offer: File.Replace(from, to, null) when `to`
    // exists (rename(2) on Mono), File.Move(from, to) when it does not (File.Replace needs an
    // existing `to`, File.Move refuses one) — a check, then the call.
    static void RenameOnto(string from, string to)
    {
        if (!moveLooked)
        {
            moveOverwrite = Probe.LookupMoveOverwrite();
            moveLooked = true;
        }
        if (moveOverwrite != null) moveOverwrite(from, to, true);
        else if (File.Exists(to)) File.Replace(from, to, null);
        else File.Move(from, to);
    }

    // ---- publish ----------------------------------------------------------------------------

    // publish.direct: open the target itself (FileMode.Create: create or truncate), write in
    // Chunk-byte writes, close. Steps: open, write, close.
    static RecipeRun PublishDirect(RecipeRequest req)
    {
        byte[] data = PublishContent(req);
        string target = req.Target;
        return () =>
        {
            FileStream fs;
            try { fs = OpenW(target); }
            catch (Exception e) { return RecipeOutcome.Failure("open", Raw(e)); }
            try { WriteChunks(fs, data, 0); }
            catch (Exception e)
            {
                try { fs.Dispose(); } catch (Exception) { }
                return RecipeOutcome.Failure("write", Raw(e));
            }
            try { fs.Dispose(); }
            catch (Exception e) { return RecipeOutcome.Failure("close", Raw(e)); }
            return RecipeOutcome.Success();
        };
    }

    // publish.temp-rename: open a temp name beside the target (FileMode.CreateNew), write in
    // chunks, [Flush(true): fsync], close, rename it onto the target (RenameOnto). After a
    // failed step the temp file, if it was created, is removed (best effort). params: temp
    // (default `<dir>/.<name>.<pid>.<id>.tmp`), fsync, size. Steps: open, write, fsync, close,
    // rename.
    static RecipeRun PublishTempRename(RecipeRequest req)
    {
        string dir = Path.GetDirectoryName(req.Target) ?? "";
        string fallback = Path.Combine(dir, "." + Path.GetFileName(req.Target) + "." +
            Probe.Pid().ToString(CultureInfo.InvariantCulture) + "." + req.IdText + ".tmp");
        string temp = StringParam(req, "temp", fallback);
        bool fsync = BoolParam(req, "fsync");
        byte[] data = PublishContent(req);
        string target = req.Target;
        return () =>
        {
            string step = "open";
            bool created = false;
            try
            {
                FileStream fs = OpenWx(temp);
                created = true;
                bool open = true;
                try
                {
                    step = "write";
                    WriteChunks(fs, data, 0);
                    if (fsync)
                    {
                        step = "fsync";
                        fs.Flush(true);
                    }
                    step = "close";
                    open = false;
                    fs.Dispose();
                }
                finally
                {
                    if (open) { try { fs.Dispose(); } catch (Exception) { } }
                }
                step = "rename";
                RenameOnto(temp, target);
                return RecipeOutcome.Success();
            }
            catch (Exception e)
            {
                if (created) { try { File.Delete(temp); } catch (Exception) { } }
                return RecipeOutcome.Failure(step, Raw(e));
            }
        };
    }

    // claim.rename: rename the prepared source onto the target (RenameOnto). Step: rename.
    static RecipeRun ClaimRename(RecipeRequest req)
    {
        if (string.IsNullOrEmpty(req.Source)) throw new Unsupported("claim.rename needs a source");
        string source = req.Source, target = req.Target;
        return () =>
        {
            try
            {
                RenameOnto(source, target);
                return RecipeOutcome.Success();
            }
            catch (Exception e) { return RecipeOutcome.Failure("rename", Raw(e)); }
        };
    }

    // ---- read.poll --------------------------------------------------------------------------

    // Reads the whole target (File.ReadAllBytes) again and again until `stop`, then once more,
    // counting reads, complete (the bytes equal one of params.expect, UTF-8), empty, torn,
    // absent (FileNotFoundException, DirectoryNotFoundException: ENOENT), errors (any other,
    // the first ErrorsSampleMax in errors_sample) and changes (reads whose class or bytes
    // differ from the previous read's). stdin is polled at most once a millisecond, after a
    // read. Step: read.
    static RecipeRun ReadPoll(RecipeRequest req)
    {
        List<object> expect = Param(req, "expect") as List<object>;
        if (expect == null || expect.Exists(x => !(x is string)))
            throw new Unsupported("read.poll needs params.expect: the list of complete contents (strings)");
        var whole = new List<byte[]>();
        foreach (object x in expect) whole.Add(Utf8.GetBytes((string)x));
        string target = req.Target;
        return () =>
        {
            long reads = 0, complete = 0, empty = 0, torn = 0, absent = 0, errors = 0, changes = 0;
            var sample = new List<object>();
            bool first = true;
            char lastClass = ' ';
            byte[] lastBytes = null;
            string lastError = null;
            double nextPoll = 0;
            bool stopping = false;
            for (;;)
            {
                char cls;
                byte[] bytes = null;
                string err = null;
                reads++;
                try
                {
                    bytes = File.ReadAllBytes(target);
                    if (bytes.Length == 0) { empty++; cls = 'E'; }
                    else if (IsOneOf(bytes, whole)) { complete++; cls = 'C'; }
                    else { torn++; cls = 'T'; }
                }
                catch (Exception e)
                {
                    bytes = null;
                    if (IsAbsent(e)) { absent++; cls = 'A'; }
                    else
                    {
                        errors++;
                        cls = 'X';
                        err = e.GetType().FullName + " " + e.HResult.ToString(CultureInfo.InvariantCulture);
                        if (sample.Count < ErrorsSampleMax) sample.Add(Raw(e));
                    }
                }
                if (cls == 'E') bytes = null;
                if (!first && (cls != lastClass || err != lastError || !SameBytes(bytes, lastBytes))) changes++;
                first = false;
                lastClass = cls;
                lastBytes = bytes;
                lastError = err;
                if (stopping) break;
                double now = NowMs();
                if (now >= nextPoll)
                {
                    stopping = Probe.StopRequested();
                    nextPoll = now + 1;
                }
            }
            var c = new Obj().Set("reads", reads).Set("complete", complete).Set("empty", empty).Set("torn", torn)
                .Set("absent", absent).Set("errors", errors).Set("changes", changes);
            return new RecipeOutcome { Ok = true, Counters = c, Sample = sample };
        };
    }

    // ---- claim workers ----------------------------------------------------------------------

    // One worker: list params.incoming (Directory.GetFiles; `.claim` markers skipped) until it
    // is empty; per listed item claim it — nothing (list-then-open) / File.Move into
    // params.processing (rename) / create `<item>.claim` with FileMode.CreateNew (marker) —
    // then read it (File.ReadAllBytes), append its content and "\n" to params.output (opened
    // once, FileMode.Append), delete it (File.Delete). A worker without progress for
    // ClaimStuckRounds rounds stops (step `stuck`). counters: rounds, listed, claimed,
    // claim_failed, delete_failed, processed; errors_sample. Steps: output, list, stuck.
    static RecipeRun ClaimWorker(string method, RecipeRequest req)
    {
        string incoming = StringParam(req, "incoming", null);
        string output = StringParam(req, "output", null);
        string processing = method == "rename" ? StringParam(req, "processing", null) : null;
        if (incoming == null || output == null || (method == "rename" && processing == null))
            throw new Unsupported("claim workers need params.incoming, params.output (and params.processing to rename into)");
        return () =>
        {
            long rounds = 0, listed = 0, claimed = 0, claimFailed = 0, deleteFailed = 0, processed = 0;
            var sample = new List<object>();
            Func<string, Exception, RecipeOutcome> end = (step, e) =>
            {
                var c = new Obj().Set("rounds", rounds).Set("listed", listed).Set("claimed", claimed)
                    .Set("claim_failed", claimFailed).Set("delete_failed", deleteFailed).Set("processed", processed);
                return new RecipeOutcome { Ok = step == null, Step = step, Error = e == null ? null : Raw(e), Counters = c, Sample = sample };
            };
            FileStream outFs;
            try { outFs = new FileStream(output, FileMode.Append, FileAccess.Write, FileShare.Read, Unbuffered); }
            catch (Exception e) { return end("output", e); }
            try
            {
                int idle = 0;
                for (;;)
                {
                    rounds++;
                    var names = new List<string>();
                    try
                    {
                        foreach (string f in Directory.GetFiles(incoming))
                        {
                            string n = Path.GetFileName(f);
                            if (!n.EndsWith(".claim", StringComparison.Ordinal)) names.Add(n);
                        }
                    }
                    catch (Exception e) { return end("list", e); }
                    if (names.Count == 0) break;
                    bool progress = false;
                    foreach (string name in names)
                    {
                        listed++;
                        string item = Path.Combine(incoming, name);
                        string at = item;
                        byte[] data;
                        try
                        {
                            if (method == "rename")
                            {
                                // the call a C# worker writes to move an item into its own
                                // folder (nothing there to replace). On Unix both runtimes
                                // make it link(2) then unlink(2) of the source, and ignore
                                // that unlink's ENOENT: it is what is measured, not rename(2)
                                at = Path.Combine(processing, name);
                                File.Move(item, at);
                            }
                            else if (method == "marker")
                            {
                                OpenWx(item + ".claim").Dispose();
                            }
                            data = File.ReadAllBytes(at);
                            claimed++;
                        }
                        catch (Exception e)
                        {
                            claimFailed++;
                            if (sample.Count < ErrorsSampleMax) sample.Add(Raw(e));
                            continue;
                        }
                        var line = new byte[data.Length + 1];
                        Buffer.BlockCopy(data, 0, line, 0, data.Length);
                        line[data.Length] = (byte)'\n';
                        outFs.Write(line, 0, line.Length);
                        processed++;
                        progress = true;
                        try { File.Delete(at); }
                        catch (Exception e)
                        {
                            deleteFailed++;
                            if (sample.Count < ErrorsSampleMax) sample.Add(Raw(e));
                        }
                    }
                    idle = progress ? 0 : idle + 1;
                    if (idle >= ClaimStuckRounds) return end("stuck", null);
                }
            }
            finally
            {
                outFs.Dispose();
            }
            return end(null, null);
        };
    }

    // ---- lease takers --------------------------------------------------------------------

    // True for the IOException a create of an existing name throws: errno EEXIST (17) on
    // CoreCLR on Unix, ERROR_FILE_EXISTS (80) or ERROR_ALREADY_EXISTS (183) in the HResult's
    // low word on Mono and on Windows.
    static bool IsExists(Exception e)
    {
        if (!(e is IOException) || e is FileNotFoundException || e is DirectoryNotFoundException) return false;
        int low = e.HResult & 0xFFFF;
        return e.HResult == 17 || low == 80 || low == 183;
    }

    // The lease record at `path`: null when there is none; `unreadable` set when it does not
    // parse as a JSON object.
    static Dictionary<string, object> ReadLease(string path, out bool unreadable)
    {
        unreadable = false;
        string text;
        try { text = File.ReadAllText(path); }
        catch (FileNotFoundException) { return null; }
        try
        {
            var d = Json.Parse(text) as Dictionary<string, object>;
            if (d == null) unreadable = true;
            return d;
        }
        catch (FormatException) { unreadable = true; return null; }
    }

    static string OwnerOf(Dictionary<string, object> record)
    {
        object v;
        return record != null && record.TryGetValue("ownerId", out v) ? v as string : null;
    }

    static bool Expired(Dictionary<string, object> record)
    {
        object v;
        if (!record.TryGetValue("expiresAt", out v) || !(v is JsonNumber)) return false;
        double at;
        try { at = ((JsonNumber)v).ToDouble(); }
        catch (Exception) { return false; }
        return at <= DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
    }

    // A lease record of session.mjs (leaseRecord), UTF-8: the token as ownerId, acquired now,
    // expiring ttlMs later (ms since the Unix epoch).
    static byte[] LeaseRecord(RecipeRequest req, long ttlMs)
    {
        long now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        var sb = new StringBuilder("{\"ownerId\":");
        JsStringify(sb, req.Token);
        sb.Append(",\"host\":");
        JsStringify(sb, Environment.MachineName);
        sb.Append(",\"pid\":").Append(Probe.Pid().ToString(CultureInfo.InvariantCulture));
        string t = now.ToString(CultureInfo.InvariantCulture);
        sb.Append(",\"acquiredAt\":").Append(t);
        sb.Append(",\"expiresAt\":").Append((now + ttlMs).ToString(CultureInfo.InvariantCulture));
        sb.Append(",\"heartbeatAt\":").Append(t).Append('}');
        return Utf8.GetBytes(sb.ToString());
    }

    // The lease holders of session.mjs (holderWorker), with the calls a C# integrator would use:
    // Thread.Sleep for the work, File.ReadAllText for the record (ReadLease), File.WriteAllBytes
    // to renew, FileMode.CreateNew for the effect, File.Delete to release. counters: effect,
    // renewed, released, lost. Steps: work, check, renew, effect, release.
    static RecipeRun HolderWorker(string method, RecipeRequest req)
    {
        string lease = StringParam(req, "lease", null);
        string effect = StringParam(req, "effect", null);
        if (lease == null || effect == null) throw new Unsupported("a lease holder needs params.lease and params.effect");
        long ttlMs = IntParam(req, "ttl_ms", 0, 1, 86400000, "params.ttl_ms must be an integer from 1 to 86400000");
        long workMs = IntParam(req, "work_ms", 0, 1, 86400000, "params.work_ms must be an integer from 1 to 86400000");
        if (ttlMs == 0 || workMs == 0) throw new Unsupported("a lease holder needs params.ttl_ms and params.work_ms");
        return () =>
        {
            long made = 0, renewed = 0, released = 0, lost = 0;
            string step = "work";
            Func<Obj> counters = () => new Obj().Set("effect", made).Set("renewed", renewed)
                .Set("released", released).Set("lost", lost);
            Func<bool> mine = () =>
            {
                step = "check";
                bool unreadable;
                bool own = OwnerOf(ReadLease(lease, out unreadable)) == req.Token;
                if (!own) lost = 1;
                return own;
            };
            Func<RecipeOutcome> ok = () => new RecipeOutcome { Ok = true, Counters = counters() };
            try
            {
                Thread.Sleep((int)workMs);
                if (method == "check-owner" && !mine()) return ok();
                if (method != "no-check")
                {
                    step = "renew";
                    File.WriteAllBytes(lease, LeaseRecord(req, ttlMs));
                    renewed = 1;
                }
                if (method == "check-owner" && !mine()) return ok();
                step = "effect";
                using (var f = OpenWx(effect)) f.Write(req.Data, 0, req.Data.Length);
                made = 1;
                if (method == "renew-blind") return ok();
                if (method == "check-owner" && !mine()) return ok();
                step = "release";
                File.Delete(lease);
                released = 1;
                return ok();
            }
            catch (Exception e)
            {
                return new RecipeOutcome { Ok = false, Step = step, Error = Raw(e), Counters = counters() };
            }
        };
    }

    // The lease takers of session.mjs (leaseTaker), with the calls a C# integrator would use:
    // FileInfo's Exists and LastWriteTimeUtc for the mtime check (File.GetLastWriteTimeUtc
    // answers 1601-01-01 for a missing file instead of failing), File.ReadAllText for the
    // record, File.Delete (which succeeds on a missing file), FileMode.CreateNew for the
    // exclusive create, File.Move (no overwrite) to rename aside and to put a live lease back
    // (.NET has no link call). A taker that believes it took the lease writes its token to
    // params.held (CreateNew) and keeps the lease. counters: acquired, fresh, unreadable,
    // restore_failed. Steps: check, delete, rename, recheck, restore, breaker, unbreak, create,
    // held.
    static RecipeRun LeaseTaker(string method, RecipeRequest req)
    {
        string lease = StringParam(req, "lease", null);
        string held = StringParam(req, "held", null);
        if (lease == null || held == null) throw new Unsupported("a lease taker needs params.lease and params.held");
        if (Param(req, "stale_ms") == null || Param(req, "ttl_ms") == null)
            throw new Unsupported("a lease taker needs params.stale_ms and params.ttl_ms");
        long staleMs = IntParam(req, "stale_ms", 0, 1, 86400000, "params.stale_ms must be an integer from 1 to 86400000");
        long ttlMs = IntParam(req, "ttl_ms", 0, 1, 86400000, "params.ttl_ms must be an integer from 1 to 86400000");
        long stallUs = IntParam(req, "stall_us", 0, 0, 1000000, "params.stall_us must be an integer from 0 to 1000000");
        return () =>
        {
            long acquired = 0, fresh = 0, unreadableCount = 0, restoreFailed = 0;
            string step = "check";
            // a slow taker (params.stall_us): it waits before each step after its check, as one
            // descheduled between its steps would
            Action<string> to = next =>
            {
                if (stallUs > 0) Thread.Sleep(TimeSpan.FromTicks(stallUs * 10));
                step = next;
            };
            Func<Obj> counters = () => new Obj().Set("acquired", acquired).Set("fresh", fresh)
                .Set("unreadable", unreadableCount).Set("restore_failed", restoreFailed);
            // the marker is written as soon as the taker holds the lease (before a breaker is
            // removed), so a later failed step cannot hide a holder
            Action markHeld = () =>
            {
                if (acquired == 1) return;
                step = "held";
                using (var f = OpenWx(held)) f.Write(req.Data, 0, req.Data.Length);
                acquired = 1;
            };
            Func<bool, RecipeOutcome> done = took =>
            {
                if (took) markHeld();
                return new RecipeOutcome { Ok = true, Counters = counters() };
            };
            Func<bool> create = () =>
            {
                to("create");
                byte[] record = LeaseRecord(req, ttlMs);
                FileStream fs;
                try { fs = OpenWx(lease); }
                catch (Exception e) { if (IsExists(e)) return false; throw; }
                using (fs) fs.Write(record, 0, record.Length);
                return true;
            };
            try
            {
                if (method == "mtime")
                {
                    var fi = new FileInfo(lease);
                    if (fi.Exists && (DateTime.UtcNow - fi.LastWriteTimeUtc).TotalMilliseconds < staleMs) { fresh = 1; return done(false); }
                    to("delete");
                    if (fi.Exists) File.Delete(lease);
                    return done(create());
                }
                bool unreadable;
                var seen = ReadLease(lease, out unreadable);
                if (unreadable) { unreadableCount = 1; return done(false); }
                if (seen == null) return done(create());
                if (!Expired(seen)) { fresh = 1; return done(false); }
                if (method == "expires")
                {
                    to("delete");
                    File.Delete(lease);
                    return done(create());
                }
                if (method == "rename-aside")
                {
                    string aside = lease + "." + req.Token + ".stale";
                    to("rename");
                    try { File.Move(lease, aside); }
                    catch (FileNotFoundException) { return done(false); }
                    to("recheck");
                    var moved = ReadLease(aside, out unreadable);
                    if (moved != null && OwnerOf(moved) == OwnerOf(seen))
                    {
                        to("delete");
                        File.Delete(aside);
                        return done(create());
                    }
                    to("restore");
                    try { File.Move(aside, lease); }
                    catch (IOException e) { if (!IsExists(e)) throw; restoreFailed = 1; File.Delete(aside); }
                    return done(false);
                }
                // breaker
                string breaker = lease + ".takeover";
                to("breaker");
                try { OpenWx(breaker).Dispose(); }
                catch (Exception e) { if (IsExists(e)) return done(false); throw; }
                bool tookIt = false;
                Exception failed = null;
                string failedStep = null;
                try
                {
                    to("recheck");
                    var again = ReadLease(lease, out unreadable);
                    if (!unreadable && (again == null || OwnerOf(again) == OwnerOf(seen)))
                    {
                        to("delete");
                        if (again != null) File.Delete(lease);
                        tookIt = create();
                        if (tookIt) markHeld();
                    }
                }
                catch (Exception e) { failed = e; failedStep = step; }
                // the breaker goes whatever happened; a failed step before it is the one reported
                try { File.Delete(breaker); }
                catch (Exception e) { if (failed == null) { failed = e; failedStep = "unbreak"; } }
                if (failed != null)
                {
                    return new RecipeOutcome { Ok = false, Step = failedStep, Error = Raw(failed), Counters = counters() };
                }
                return done(tookIt);
            }
            catch (Exception e)
            {
                return new RecipeOutcome { Ok = false, Step = step, Error = Raw(e), Counters = counters() };
            }
        };
    }

    // ---- ledger -------------------------------------------------------------------------------

    // The ledger workers of session.mjs (ledgerWorker), with the calls a C# integrator would use:
    // FileMode.CreateNew for the key file and the effect file, File.Exists for the check,
    // File.ReadAllText (FileNotFoundException: an empty list) and File.AppendAllText for the
    // processed list. counters: processed, skipped, record_refused. Steps: check, record, effect.
    static RecipeRun LedgerWorker(string method, RecipeRequest req)
    {
        string key = StringParam(req, "key", null);
        string effect = StringParam(req, "effect", null);
        string ledger = StringParam(req, "ledger", null);
        string list = StringParam(req, "list", null);
        if (key == null || effect == null || ledger == null || list == null)
            throw new Unsupported("a ledger worker needs params.key, params.effect, params.ledger and params.list");
        string keyFile = Path.Combine(ledger, key);
        return () =>
        {
            long processed = 0, skipped = 0, recordRefused = 0;
            string step = "check";
            Func<Obj> counters = () => new Obj().Set("processed", processed).Set("skipped", skipped)
                .Set("record_refused", recordRefused);
            Func<RecipeOutcome> ok = () => new RecipeOutcome { Ok = true, Counters = counters() };
            Action effectNow = () =>
            {
                step = "effect";
                using (var f = OpenWx(effect)) f.Write(req.Data, 0, req.Data.Length);
                processed = 1;
            };
            try
            {
                if (method == "key-first")
                {
                    step = "record";
                    try { using (var f = OpenWx(keyFile)) f.Write(req.Data, 0, req.Data.Length); }
                    catch (Exception e) { if (IsExists(e)) { skipped = 1; return ok(); } throw; }
                    effectNow();
                }
                else if (method == "check-process-append")
                {
                    string text = "";
                    try { text = File.ReadAllText(list); }
                    catch (FileNotFoundException) { }
                    if (Array.IndexOf(text.Split('\n'), key) >= 0) { skipped = 1; return ok(); }
                    effectNow();
                    step = "record";
                    File.AppendAllText(list, key + "\n");
                }
                else
                {
                    if (File.Exists(keyFile)) { skipped = 1; return ok(); }
                    effectNow();
                    step = "record";
                    try { using (var f = OpenWx(keyFile)) f.Write(req.Data, 0, req.Data.Length); }
                    catch (Exception e) { if (!IsExists(e)) throw; recordRefused = 1; }
                }
                return ok();
            }
            catch (Exception e)
            {
                return new RecipeOutcome { Ok = false, Step = step, Error = Raw(e), Counters = counters() };
            }
        };
    }

    // ---- update -------------------------------------------------------------------------------

    // How long a locked update waits for the lock before it gives up (step `lock`), ms.
    const int UpdateLockWaitMs = 10000;
    // How often a worker reads the counter again when it held no whole number, at most.
    const int UpdateReadTries = 1000;

    // The update workers of session.mjs (updateWorker), with the calls a C# integrator would
    // use: File.ReadAllText and File.WriteAllText (FileMode.Create: truncate, write) for the
    // value, FileMode.CreateNew for the lock (retried about every 0.1 ms: SpinWait, then
    // Thread.Sleep(0)/(1)) and the temp file, RenameOnto for the rename, File.Delete to unlock,
    // File.AppendAllText for a line (FileMode.Append: on Unix CoreCLR opens without O_APPEND and
    // writes at the end it saw, https://github.com/dotnet/runtime/pull/55465, closed unmerged).
    // counters: increments, unreadable_reads, lock_waits. Steps: lock, read, write, rename,
    // unlock, append.
    static RecipeRun UpdateWorker(string method, RecipeRequest req)
    {
        string counter = StringParam(req, "counter", null);
        string lockPath = StringParam(req, "lock", null);
        string temp = StringParam(req, "temp", null);
        long increments = IntParam(req, "increments", -1, 0, 1000000,
            "an update worker needs params.increments, a whole number from 0 to 1000000");
        if (counter == null || lockPath == null || temp == null || increments < 0)
            throw new Unsupported("an update worker needs params.counter, params.lock, params.temp and params.increments");
        bool locked = method.StartsWith("locked-", StringComparison.Ordinal);
        bool viaTemp = method.EndsWith("temp-rename", StringComparison.Ordinal);
        return () =>
        {
            long made = 0, unreadable = 0, lockWaits = 0;
            string step = "read";
            Func<Obj> counters = () => new Obj().Set("increments", made).Set("unreadable_reads", unreadable)
                .Set("lock_waits", lockWaits);
            Func<long> readValue = () =>
            {
                for (int tries = 0; ; tries++)
                {
                    step = "read";
                    string text = File.ReadAllText(counter).Trim();
                    long n;
                    bool digits = text.Length > 0;
                    foreach (char ch in text) digits &= ch >= '0' && ch <= '9';
                    if (digits && long.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out n)) return n;
                    unreadable++;
                    if (tries >= UpdateReadTries)
                        throw new IOException("the counter held no whole number " + UpdateReadTries + " times in a row");
                }
            };
            try
            {
                for (long i = 0; i < increments; i++)
                {
                    if (method == "append-line")
                    {
                        step = "append";
                        File.AppendAllText(counter, "1\n");
                        made++;
                        continue;
                    }
                    if (locked)
                    {
                        step = "lock";
                        var wait = System.Diagnostics.Stopwatch.StartNew();
                        var spin = new SpinWait();
                        for (;;)
                        {
                            try { OpenWx(lockPath).Dispose(); break; }
                            catch (Exception e) { if (!IsExists(e)) throw; }
                            lockWaits++;
                            if (wait.ElapsedMilliseconds > UpdateLockWaitMs)
                                throw new IOException("the lock stayed taken for " + UpdateLockWaitMs + " ms");
                            spin.SpinOnce();
                        }
                    }
                    string next = (readValue() + 1).ToString(CultureInfo.InvariantCulture) + "\n";
                    if (viaTemp)
                    {
                        step = "write";
                        byte[] b = Encoding.UTF8.GetBytes(next);
                        using (var f = OpenWx(temp)) f.Write(b, 0, b.Length);
                        step = "rename";
                        RenameOnto(temp, counter);
                    }
                    else
                    {
                        step = "write";
                        File.WriteAllText(counter, next);
                    }
                    made++;
                    if (locked)
                    {
                        step = "unlock";
                        File.Delete(lockPath);
                    }
                }
                return new RecipeOutcome { Ok = true, Counters = counters() };
            }
            catch (Exception e)
            {
                return new RecipeOutcome { Ok = false, Step = step, Error = Raw(e), Counters = counters() };
            }
        };
    }

    // ---- mutex (lock code) ---------------------------------------------------------------------

    // A lock implementation: acquire(path, owner) -> took it; release(path, owner).
    sealed class LockCode
    {
        public Func<string, string, bool> Acquire;
        public Action<string, string> Release;
    }

    // The built-in locks of session.mjs (LOCKS), with the calls a C# integrator would use:
    // - check-then-create: File.Exists, then File.WriteAllText with the owner id; release:
    //   File.Delete (the anti-pattern: two calls);
    // - exclusive-create: FileMode.CreateNew with the owner id, IOException with the file there
    //   -> not acquired; release: File.Delete while it holds the owner id.
    static LockCode BuiltinLock(string id)
    {
        if (id == "mutex.check-then-create")
            return new LockCode
            {
                Acquire = (p, owner) =>
                {
                    if (File.Exists(p)) return false;
                    File.WriteAllText(p, owner);
                    return true;
                },
                Release = (p, owner) => File.Delete(p),
            };
        return new LockCode
        {
            Acquire = (p, owner) =>
            {
                try
                {
                    using (var f = OpenWx(p)) { byte[] b = Utf8.GetBytes(owner); f.Write(b, 0, b.Length); }
                    return true;
                }
                catch (IOException) when (File.Exists(p)) { return false; }
            },
            Release = (p, owner) =>
            {
                string seen;
                try { seen = File.ReadAllText(p); }
                catch (Exception e) when (IsAbsent(e)) { return; }
                if (seen == owner) File.Delete(p);
            },
        };
    }

    // The user's compiled lock code (conformance check Lock.cs: the harness compiled it to
    // params.module, a library): the first public type with public static Acquire(string path,
    // string owner) returning bool or Task<bool>, and Release(string path, string owner)
    // returning void or Task. An exception of the user's code comes out as itself (not wrapped
    // in TargetInvocationException), its stack in the raw error.
    static readonly Dictionary<string, LockCode> UserLocks = new Dictionary<string, LockCode>(StringComparer.Ordinal);

    static LockCode UserLock(string dll)
    {
        LockCode found;
        if (UserLocks.TryGetValue(dll, out found)) return found;
        Assembly a = Assembly.LoadFrom(dll);
        Type[] sig = { typeof(string), typeof(string) };
        // more than one candidate is refused: racing the first would judge code the user did
        // not mean
        var candidates = new List<string>();
        foreach (Type t in a.GetExportedTypes())
        {
            MethodInfo acq = t.GetMethod("Acquire", BindingFlags.Public | BindingFlags.Static, null, sig, null);
            if (acq != null && t.GetMethod("Release", BindingFlags.Public | BindingFlags.Static, null, sig, null) != null) candidates.Add(t.FullName);
        }
        if (candidates.Count > 1)
            throw new InvalidOperationException("more than one public type has static Acquire(string, string) and Release(string, string): " + string.Join(", ", candidates) + "; keep one in the file");
        foreach (Type t in a.GetExportedTypes())
        {
            MethodInfo acquire = t.GetMethod("Acquire", BindingFlags.Public | BindingFlags.Static, null, sig, null);
            MethodInfo release = t.GetMethod("Release", BindingFlags.Public | BindingFlags.Static, null, sig, null);
            if (acquire == null || release == null) continue;
            if (acquire.ReturnType != typeof(bool) && acquire.ReturnType != typeof(System.Threading.Tasks.Task<bool>))
                throw new InvalidOperationException(t.FullName + ".Acquire returns " + acquire.ReturnType + "; it must return bool or Task<bool>");
            Func<MethodInfo, string, string, object> call = (m, p, o) =>
            {
                try { return m.Invoke(null, new object[] { p, o }); }
                catch (TargetInvocationException e) when (e.InnerException != null)
                {
                    System.Runtime.ExceptionServices.ExceptionDispatchInfo.Capture(e.InnerException).Throw();
                    throw;
                }
            };
            found = new LockCode
            {
                Acquire = (p, o) =>
                {
                    object r = call(acquire, p, o);
                    var task = r as System.Threading.Tasks.Task<bool>;
                    return task != null ? task.GetAwaiter().GetResult() : (bool)r;
                },
                Release = (p, o) =>
                {
                    var task = call(release, p, o) as System.Threading.Tasks.Task;
                    if (task != null) task.GetAwaiter().GetResult();
                },
            };
            UserLocks[dll] = found;
            return found;
        }
        throw new InvalidOperationException(dll + " has no public type with public static bool Acquire(string path, string owner) and Release(string path, string owner)");
    }

    // One line appended with O_APPEND (open(2) O_WRONLY|O_CREAT|O_APPEND, one write(2)): .NET's
    // FileMode.Append seeks to the end it saw instead on Unix CoreCLR
    // (https://github.com/dotnet/runtime/pull/55465, closed unmerged), and two contenders'
    // lines would overwrite each other.
    static void AppendLine(string path, string line)
    {
        byte[] b = Utf8.GetBytes(line + "\n");
        int fd = Libc.open(path, Libc.O_WRONLY | Libc.O_CREAT | Libc.O_APPEND, 420);
        if (fd < 0) throw new IOException("open " + path + ": errno " + Marshal.GetLastWin32Error());
        try
        {
            long n = (long)Libc.write(fd, b, (IntPtr)b.Length);
            if (n != b.Length) throw new IOException("write " + path + ": " + n + " of " + b.Length + " bytes, errno " + Marshal.GetLastWin32Error());
        }
        finally { Libc.close(fd); }
    }

    static bool LogHas(string log, string prefix)
    {
        string text;
        try { text = File.ReadAllText(log); }
        catch (Exception e) when (IsAbsent(e)) { return false; }
        foreach (string l in text.Split('\n')) if (l.StartsWith(prefix, StringComparison.Ordinal)) return true;
        return false;
    }

    static void WaitUntil(Func<bool> ready, long ms, string what)
    {
        double until = NowMs() + ms;
        while (!ready())
        {
            if (NowMs() > until) throw new TimeoutException(what + " did not come within " + ms + " ms");
            Thread.Sleep(1);
        }
    }

    // The mutex contenders of session.mjs (mutexWorker): the same roles (contender, holder,
    // releaser), parameters, log lines (`enter|leave|done <token> <ms>`, <ms> the wall clock,
    // DateTimeOffset.UtcNow), counters (acquired, released, tries, foreign_release) and steps
    // (load, wait, release-other, acquire, enter, hold, leave, release).
    static RecipeRun MutexWorker(string id, RecipeRequest req)
    {
        string lockPath = StringParam(req, "lock", null);
        string log = StringParam(req, "log", null);
        if (lockPath == null || log == null) throw new Unsupported("a mutex contender needs params.lock and params.log");
        string module = StringParam(req, "module", null);
        if (id == "mutex.module" && module == null) throw new Unsupported("mutex.module races the lock code of params.module (conformance check FILE)");
        string role = req.Role;
        if (role != "contender" && role != "holder" && role != "releaser") throw new Unsupported("no mutex role " + role);
        long waitMs = IntParam(req, "wait_ms", 0, 0, 3600000, "params.wait_ms must be an integer from 0 to 3600000");
        long retryMs = IntParam(req, "retry_ms", 5, 1, 10000, "params.retry_ms must be an integer from 1 to 10000");
        long holdMs = IntParam(req, "hold_ms", 20, 1, 600000, "params.hold_ms must be an integer from 1 to 600000");
        long goWaitMs = IntParam(req, "go_wait_ms", 600000, 1, 3600000, "params.go_wait_ms must be an integer from 1 to 3600000");
        string go = StringParam(req, "go", null);
        string holder = StringParam(req, "holder", null);
        string releasedMarker = StringParam(req, "released", null);
        if (role == "releaser" && (holder == null || releasedMarker == null)) throw new Unsupported("a releaser needs params.holder and params.released");
        return () =>
        {
            long acquired = 0, released = 0, tries = 0, foreign = 0, refused = 0;
            Action<string> line = what => AppendLine(log, what + " " + req.Token + " " + DateTimeOffset.UtcNow.ToUnixTimeMilliseconds().ToString(CultureInfo.InvariantCulture));
            string step = "load";
            Exception failed = null;
            string failedStep = null;
            try
            {
                LockCode code = id == "mutex.module" ? UserLock(module) : BuiltinLock(id);
                if (go != null)
                {
                    step = "wait";
                    WaitUntil(() => File.Exists(go), goWaitMs, "the go marker " + go);
                }
                if (role == "releaser")
                {
                    step = "wait";
                    WaitUntil(() => LogHas(log, "enter " + holder + " "), goWaitMs, "the holder's enter line");
                    step = "release-other";
                    // a lock that refuses someone else's release by throwing does its job
                    try { code.Release(lockPath, req.Token); foreign = 1; }
                    catch (Exception) { refused = 1; }
                    using (var f = OpenWx(releasedMarker)) f.Write(req.Data, 0, req.Data.Length);
                }
                step = "acquire";
                double until = NowMs() + waitMs;
                for (;;)
                {
                    tries++;
                    if (code.Acquire(lockPath, req.Token)) { acquired = 1; break; }
                    if (NowMs() >= until) break;
                    Thread.Sleep((int)retryMs);
                }
                if (acquired == 1)
                {
                    step = "enter";
                    line("enter");
                    step = "hold";
                    if (role == "holder") { while (!Probe.StopRequested()) Thread.Sleep(2); }
                    else Thread.Sleep((int)holdMs);
                    step = "leave";
                    line("leave");
                    step = "release";
                    code.Release(lockPath, req.Token);
                    released = 1;
                }
            }
            catch (Exception e)
            {
                failed = e;
                failedStep = step;
            }
            try { line("done"); }
            catch (Exception e) { if (failed == null) { failed = e; failedStep = "done"; } }
            var c = new Obj().Set("acquired", acquired).Set("released", released).Set("tries", tries).Set("foreign_release", foreign).Set("foreign_refused", refused);
            if (failed != null) return new RecipeOutcome { Ok = false, Step = failedStep, Error = UserRaw(failed), Counters = c };
            return new RecipeOutcome { Ok = true, Counters = c };
        };
    }

    // The raw error of `e` with its stack as the message (user code's faults say where).
    static Obj UserRaw(Exception e)
    {
        Obj raw = Raw(e);
        for (int i = 0; i < raw.Count; i++)
            if (raw[i].Key == "message") raw[i] = new KeyValuePair<string, object>("message", e.ToString());
        return raw;
    }

    // ---- os-lock ------------------------------------------------------------------------------

    // The holders' kinds of lock (OS_LOCKS in session.mjs), by recipe id.
    static readonly string[] OsLockIds = { "os-lock.none", "os-lock.fileshare-none", "os-lock.filestream-lock" };
    // The files the intruder goes at, by their name in params.files.
    static readonly string[] OsLockIntrusions = { "write", "append", "rename", "delete", "mmap", "relock" };

    // Opens `path` and takes the lock of recipe `id` on it, with the calls a C# integrator would
    // use; returns its release, or throws:
    // - os-lock.none: new FileStream(path, Open, ReadWrite, ReadWrite | Delete), no lock (the
    //   control); release: Dispose.
    // - os-lock.fileshare-none: new FileStream(path, Open, ReadWrite, FileShare.None); release:
    //   Dispose.
    // - os-lock.filestream-lock: new FileStream(path, Open, ReadWrite, ReadWrite), then
    //   Lock(0, Math.Max(1, Length)); release: Unlock of that range, then Dispose.
    // None of them waits: a lock another process holds is refused with an exception, so a second
    // holder's try (the intruder's relock) is the same call.
    static Action TakeOsLock(string id, string path)
    {
        if (id == "os-lock.none")
        {
            var open = new FileStream(path, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite | FileShare.Delete);
            return open.Dispose;
        }
        if (id == "os-lock.fileshare-none")
        {
            var alone = new FileStream(path, FileMode.Open, FileAccess.ReadWrite, FileShare.None);
            return alone.Dispose;
        }
        if (id != "os-lock.filestream-lock") throw new ArgumentException("no OS lock " + id);
        var fs = new FileStream(path, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite);
        long length;
        try
        {
            length = Math.Max(1, fs.Length);
            fs.Lock(0, length);
        }
        catch (Exception)
        {
            fs.Dispose();
            throw;
        }
        return () =>
        {
            try { fs.Unlock(0, length); }
            finally { fs.Dispose(); }
        };
    }

    // params.files: an object of paths (a name -> its file), in the order the harness sent them;
    // null when absent.
    static Dictionary<string, string> FilesParam(RecipeRequest req)
    {
        object v = Param(req, "files");
        if (v == null) return null;
        var obj = v as Dictionary<string, object>;
        if (obj == null) throw new Unsupported("params.files must be an object of paths");
        var files = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (KeyValuePair<string, object> kv in obj)
        {
            string p = kv.Value as string;
            if (string.IsNullOrEmpty(p)) throw new Unsupported("params.files." + kv.Key + " must be a non-empty string");
            files.Add(kv.Key, p);
        }
        return files;
    }

    // The OS-lock holders of session.mjs (osLockHolder), one per kind of lock (TakeOsLock): lock
    // every file of params.files, create params.locked (FileMode.CreateNew) once all are locked,
    // hold them until `stop` (stdin polled about once a millisecond, Thread.Sleep(1) between
    // polls), then release every one; after a failed step what was held is released and that
    // step is reported. counters: locked (files locked), released. Steps: lock, mark, hold,
    // release.
    static RecipeRun OsLockHolder(string id, RecipeRequest req)
    {
        Dictionary<string, string> files = FilesParam(req);
        string locked = StringParam(req, "locked", null);
        if (files == null || locked == null) throw new Unsupported("an OS-lock holder needs params.files and params.locked");
        if (Array.IndexOf(OsLockIds, id) < 0) throw new Unsupported("no " + id + " here");
        return () =>
        {
            long lockedN = 0, released = 0;
            var held = new List<Action>();
            string step = "lock";
            Exception failed = null;
            string failedStep = null;
            try
            {
                foreach (string p in files.Values)
                {
                    held.Add(TakeOsLock(id, p));
                    lockedN++;
                }
                step = "mark";
                OpenWx(locked).Dispose();
                step = "hold";
                while (!Probe.StopRequested()) Thread.Sleep(1);
            }
            catch (Exception e)
            {
                failed = e;
                failedStep = step;
            }
            foreach (Action release in held)
            {
                try
                {
                    release();
                    released++;
                }
                catch (Exception e)
                {
                    if (failed == null) { failed = e; failedStep = "release"; }
                }
            }
            var c = new Obj().Set("locked", lockedN).Set("released", released);
            if (failed != null) return new RecipeOutcome { Ok = false, Step = failedStep, Error = Raw(failed), Counters = c };
            return new RecipeOutcome { Ok = true, Counters = c };
        };
    }

    // The OS-lock intruder of session.mjs (osLockIntruder), with the calls a C# integrator would
    // use: waits (File.Exists, about once a millisecond, up to params.wait_ms) for the holder's
    // params.locked, then goes at its own files of params.files without asking, each call on
    // its own: write (File.WriteAllText), append (File.AppendAllText), rename (File.Move to
    // params.moved), delete (File.Delete, which also returns for a missing file: the harness
    // reads the disk), a mapped write (MemoryMappedFile.CreateFromFile(ReadWrite), a view
    // accessor, the token's UTF-8 bytes at offset 0 as far as the file reaches, Flush), then
    // the holder's own kind of lock (params.lock, TakeOsLock) on the relock file and, only while
    // it holds it, params.relocked (FileMode.CreateNew, its token). .NET's lock calls refuse
    // instead of waiting, so params.relock_ms is checked but not needed. counters: write,
    // append, rename, delete, relock (1 when the call returned without an exception; what got
    // through is the harness's to read from the files), mmap_tried (1 once CreateFromFile
    // returned or failed with anything but NotSupportedException, PlatformNotSupportedException
    // among them); errors_sample: the refusals. Step: wait.
    static RecipeRun OsLockIntruder(RecipeRequest req)
    {
        Dictionary<string, string> files = FilesParam(req);
        string locked = StringParam(req, "locked", null);
        string relocked = StringParam(req, "relocked", null);
        string moved = StringParam(req, "moved", null);
        string lockId = StringParam(req, "lock", null);
        if (files == null || locked == null || relocked == null || moved == null || lockId == null)
            throw new Unsupported("an OS-lock intruder needs params.files, params.locked, params.relocked, params.moved and params.lock");
        foreach (string name in OsLockIntrusions)
            if (!files.ContainsKey(name)) throw new Unsupported("an OS-lock intruder needs params.files." + name);
        if (Array.IndexOf(OsLockIds, lockId) < 0) throw new Unsupported("no " + lockId + " here");
        long waitMs = IntParam(req, "wait_ms", 0, 1, 600000, "params.wait_ms must be an integer from 1 to 600000");
        long relockMs = IntParam(req, "relock_ms", 0, 1, 600000, "params.relock_ms must be an integer from 1 to 600000");
        if (waitMs == 0 || relockMs == 0) throw new Unsupported("an OS-lock intruder needs params.wait_ms and params.relock_ms");
        return () =>
        {
            long write = 0, append = 0, rename = 0, delete = 0, mmapTried = 0, relock = 0;
            var sample = new List<object>();
            Func<Obj> counters = () => new Obj().Set("write", write).Set("append", append).Set("rename", rename)
                .Set("delete", delete).Set("mmap_tried", mmapTried).Set("relock", relock);
            Action<Exception> refused = e => { if (sample.Count < ErrorsSampleMax) sample.Add(Raw(e)); };
            Func<Action, long> attempt = f =>
            {
                try
                {
                    f();
                    return 1;
                }
                catch (Exception e)
                {
                    refused(e);
                    return 0;
                }
            };
            double until = NowMs() + waitMs;
            while (!File.Exists(locked))
            {
                if (NowMs() > until)
                {
                    var e = new IOException("the holder had not locked its files after " + waitMs.ToString(CultureInfo.InvariantCulture) + " ms");
                    return new RecipeOutcome { Ok = false, Step = "wait", Error = Raw(e), Counters = counters() };
                }
                Thread.Sleep(1);
            }
            write = attempt(() => File.WriteAllText(files["write"], req.Token));
            append = attempt(() => File.AppendAllText(files["append"], req.Token));
            rename = attempt(() => File.Move(files["rename"], moved));
            delete = attempt(() => File.Delete(files["delete"]));
            MemoryMappedFile map = null;
            try
            {
                map = MemoryMappedFile.CreateFromFile(files["mmap"], FileMode.Open, null, 0, MemoryMappedFileAccess.ReadWrite);
                mmapTried = 1;
            }
            catch (Exception e)
            {
                // NotSupportedException covers PlatformNotSupportedException: no mapping here
                if (!(e is NotSupportedException)) mmapTried = 1;
                refused(e);
            }
            if (map != null)
            {
                try
                {
                    using (map)
                    using (MemoryMappedViewAccessor view = map.CreateViewAccessor(0, 0, MemoryMappedFileAccess.ReadWrite))
                    {
                        long room = Math.Min(view.Capacity, new FileInfo(files["mmap"]).Length);
                        int n = (int)Math.Min(req.Data.Length, room);
                        view.WriteArray(0, req.Data, 0, n);
                        view.Flush();
                    }
                }
                catch (Exception e) { refused(e); }
            }
            try
            {
                Action release = TakeOsLock(lockId, files["relock"]);
                try
                {
                    using (var f = OpenWx(relocked)) f.Write(req.Data, 0, req.Data.Length);
                    relock = 1;
                }
                finally { release(); }
            }
            catch (Exception e) { refused(e); }
            return new RecipeOutcome { Ok = true, Counters = counters(), Sample = sample };
        };
    }

    // ---- watch --------------------------------------------------------------------------------

    // The folder-watch consumers of session.mjs (watchConsumer), by method: `events` (the
    // watcher only), `events-and-rescan` (the watcher and a listing of params.dir every
    // params.rescan_ms), `poll` (the listing only). The watcher is what a C# integrator writes:
    // new FileSystemWatcher(dir) with the default InternalBufferSize (what users get),
    // NotifyFilter = NotifyFilters.FileName, a Created handler (e.Name) and an Error handler,
    // which only counts (overflows: its InternalBufferOverflowException; the first raw errors in
    // errors_sample) — an events-only consumer does not rescan on it, relying on events alone is
    // the recipe — then EnableRaisingEvents = true. The listing is Directory.EnumerateFiles(dir),
    // by file name. The handlers run on threads of the runtime's, so the set of recorded names and
    // the record share one lock with the listing. Every name not recorded yet is appended as a
    // line to params.record (opened once, FileMode.Append, unbuffered: one Write per name, which
    // the harness reads as it grows); once it watches it creates params.watching
    // (FileMode.CreateNew), then loops until `stop` (stdin polled about once a millisecond,
    // Thread.Sleep(1) between looks). Then the watcher is disposed and the record closed.
    // counters: events (names the events gave), listings, recorded, overflows (Error events;
    // only those raised before `stop`: events still on their way then are dropped, and Mono
    // 6.8's watcher, a proxy of the CoreFX one, never raises Error at all, measured).
    // Steps: watch, mark, list, record.
    static RecipeRun WatchConsumer(string method, RecipeRequest req)
    {
        string dir = StringParam(req, "dir", null);
        string record = StringParam(req, "record", null);
        string watching = StringParam(req, "watching", null);
        if (dir == null || record == null || watching == null)
            throw new Unsupported("a watch consumer needs params.dir, params.record and params.watching");
        long rescanMs = IntParam(req, "rescan_ms", 0, 1, 600000, "params.rescan_ms must be an integer from 1 to 600000");
        if (rescanMs == 0) throw new Unsupported("params.rescan_ms must be an integer from 1 to 600000");
        return () =>
        {
            long events = 0, listings = 0, recorded = 0, overflows = 0;
            var sample = new List<object>();
            var seen = new Dictionary<string, bool>(StringComparer.Ordinal);
            var gate = new object();
            bool closed = false;
            string step = "record";
            Exception failed = null;
            string failedStep = null;
            FileStream rec = null;
            FileSystemWatcher watcher = null;
            // under the gate: record `name` once
            Action<string> note = name =>
            {
                if (seen.ContainsKey(name)) return;
                seen.Add(name, true);
                byte[] line = Utf8.GetBytes(name + "\n");
                rec.Write(line, 0, line.Length);
                recorded++;
            };
            try
            {
                rec = new FileStream(record, FileMode.Append, FileAccess.Write, FileShare.Read, Unbuffered);
                if (method != "poll")
                {
                    step = "watch";
                    watcher = new FileSystemWatcher(dir);
                    watcher.NotifyFilter = NotifyFilters.FileName;
                    watcher.Created += (sender, e) =>
                    {
                        lock (gate)
                        {
                            if (closed || failed != null) return;
                            events++;
                            // an exception here would end the process: kept for the result
                            try { if (e.Name != null) note(e.Name); }
                            catch (Exception x) { failed = x; failedStep = "record"; }
                        }
                    };
                    watcher.Error += (sender, e) =>
                    {
                        lock (gate)
                        {
                            if (closed) return;
                            overflows++;
                            Exception x = e.GetException();
                            if (x != null && sample.Count < ErrorsSampleMax) sample.Add(Raw(x));
                        }
                    };
                    watcher.EnableRaisingEvents = true;
                }
                step = "mark";
                OpenWx(watching).Dispose();
                double nextList = method == "events" ? double.PositiveInfinity : NowMs() + rescanMs;
                for (;;)
                {
                    lock (gate) { if (failed != null) break; }
                    if (Probe.StopRequested()) break;
                    if (NowMs() >= nextList)
                    {
                        step = "list";
                        lock (gate)
                        {
                            foreach (string p in Directory.EnumerateFiles(dir)) note(Path.GetFileName(p));
                            listings++;
                        }
                        nextList = NowMs() + rescanMs;
                    }
                    Thread.Sleep(1);
                }
            }
            catch (Exception e)
            {
                lock (gate)
                {
                    if (failed == null) { failed = e; failedStep = step; }
                }
            }
            lock (gate) { closed = true; }
            if (watcher != null)
            {
                try
                {
                    watcher.EnableRaisingEvents = false;
                    watcher.Dispose();
                }
                catch (Exception e) { if (failed == null) { failed = e; failedStep = "watch"; } }
            }
            if (rec != null)
            {
                try { rec.Dispose(); }
                catch (Exception e) { if (failed == null) { failed = e; failedStep = "record"; } }
            }
            Obj c;
            lock (gate)
            {
                c = new Obj().Set("events", events).Set("listings", listings).Set("recorded", recorded).Set("overflows", overflows);
            }
            if (failed != null) return new RecipeOutcome { Ok = false, Step = failedStep, Error = Raw(failed), Counters = c, Sample = sample };
            return new RecipeOutcome { Ok = true, Counters = c, Sample = sample };
        };
    }

    // ---- done-marker --------------------------------------------------------------------------

    // The done-marker writers: the data file (PublishContent; FileMode.Create, Chunk-byte writes
    // params.chunk_ms apart, close) and, by the method, a manifest at params.marker
    // (File.WriteAllBytes; JSON {name, size, records, idempotency_key}, the bytes JSON.stringify
    // makes) after the data, before it, or none. Steps: manifest, open, write, close.
    static RecipeRun DoneWriter(string method, RecipeRequest req)
    {
        byte[] data = PublishContent(req);
        string marker = StringParam(req, "marker", null);
        if (marker == null && method.StartsWith("marker", StringComparison.Ordinal))
            throw new Unsupported("a marker method needs params.marker");
        int chunkMs = (int)IntParam(req, "chunk_ms", 0, 0, 1000, "params.chunk_ms must be an integer from 0 to 1000");
        long records = 0;
        foreach (byte b in data) if (b == (byte)'\n') records++;
        var sb = new StringBuilder();
        sb.Append("{\"name\":");
        JsStringify(sb, Path.GetFileName(req.Target));
        sb.Append(",\"size\":").Append(data.Length.ToString(CultureInfo.InvariantCulture));
        sb.Append(",\"records\":").Append(records.ToString(CultureInfo.InvariantCulture));
        sb.Append(",\"idempotency_key\":");
        JsStringify(sb, req.Token);
        sb.Append('}');
        byte[] manifest = Utf8.GetBytes(sb.ToString());
        string target = req.Target;
        return () =>
        {
            try
            {
                if (method == "marker-before-data") File.WriteAllBytes(marker, manifest);
            }
            catch (Exception e) { return RecipeOutcome.Failure("manifest", Raw(e)); }
            FileStream fs;
            try { fs = OpenW(target); }
            catch (Exception e) { return RecipeOutcome.Failure("open", Raw(e)); }
            try { WriteChunks(fs, data, chunkMs); }
            catch (Exception e)
            {
                try { fs.Dispose(); } catch (Exception) { }
                return RecipeOutcome.Failure("write", Raw(e));
            }
            try { fs.Dispose(); }
            catch (Exception e) { return RecipeOutcome.Failure("close", Raw(e)); }
            try
            {
                if (method == "marker-after-data") File.WriteAllBytes(marker, manifest);
            }
            catch (Exception e) { return RecipeOutcome.Failure("manifest", Raw(e)); }
            return RecipeOutcome.Success();
        };
    }

    // A string as JSON.stringify writes it: ", \ and control characters escaped (\b \f \n \r
    // \t, others \u00xx), lone surrogates as \udxxx, everything else as it is.
    static void JsStringify(StringBuilder sb, string s)
    {
        sb.Append('"');
        for (int i = 0; i < s.Length; i++)
        {
            char c = s[i];
            switch (c)
            {
                case '"': sb.Append("\\\""); continue;
                case '\\': sb.Append("\\\\"); continue;
                case '\b': sb.Append("\\b"); continue;
                case '\f': sb.Append("\\f"); continue;
                case '\n': sb.Append("\\n"); continue;
                case '\r': sb.Append("\\r"); continue;
                case '\t': sb.Append("\\t"); continue;
            }
            bool lone = (char.IsHighSurrogate(c) && !(i + 1 < s.Length && char.IsLowSurrogate(s[i + 1])))
                || (char.IsLowSurrogate(c) && !(i > 0 && char.IsHighSurrogate(s[i - 1])));
            if (c < 0x20 || lone) sb.Append("\\u").Append(((int)c).ToString("x4", CultureInfo.InvariantCulture));
            else sb.Append(c);
        }
        sb.Append('"');
    }

    // consume.poll: about once a millisecond, whether the target counts as complete by
    // params.rule — `marker` (File.Exists(params.marker)), `size-stable` / `mtime-stable` (a
    // new FileInfo(target): it exists, its Length is not 0, and its Length / LastWriteTimeUtc
    // has not changed for params.stable_ms) — then read it once (File.ReadAllBytes) and
    // compare with params.expect[0]: counters consumed (0/1), whole, partial, checks. Runs until
    // `stop`; after the stop it keeps checking for up to 2 × stable_ms + 100 ms.
    static RecipeRun ConsumePoll(RecipeRequest req)
    {
        string rule = StringParam(req, "rule", null);
        string marker = StringParam(req, "marker", null);
        object sm = Param(req, "stable_ms");
        double stableMs = 0;
        if (sm != null)
        {
            JsonNumber n = sm as JsonNumber;
            if (n == null) throw new Unsupported("params.stable_ms must be a number of milliseconds");
            stableMs = n.ToDouble();
        }
        if ((rule != "marker" && rule != "size-stable" && rule != "mtime-stable") || (rule == "marker" && marker == null))
            throw new Unsupported("consume.poll needs params.rule (marker, size-stable, mtime-stable) and params.marker for marker");
        List<object> expect = Param(req, "expect") as List<object>;
        if (expect == null || expect.Count == 0 || !(expect[0] is string)) throw new Unsupported("consume.poll needs params.expect");
        byte[] whole = Utf8.GetBytes((string)expect[0]);
        string target = req.Target;
        return () =>
        {
            long consumed = 0, wholeN = 0, partial = 0, checks = 0;
            bool haveLast = false;
            long last = 0;
            double since = 0;
            double deadline = double.NaN;
            for (;;)
            {
                checks++;
                double now = NowMs();
                bool ready = false;
                try
                {
                    if (rule == "marker")
                    {
                        ready = File.Exists(marker);
                    }
                    else
                    {
                        // one stat: a FileInfo reads them all on first use
                        var fi = new FileInfo(target);
                        if (fi.Exists)
                        {
                            long size = fi.Length;
                            long key = rule == "size-stable" ? size : fi.LastWriteTimeUtc.Ticks;
                            if (size > 0 && haveLast && key == last) ready = now - since >= stableMs;
                            else { last = key; haveLast = true; since = now; }
                        }
                    }
                }
                catch (Exception) { /* not there yet */ }
                if (ready)
                {
                    consumed = 1;
                    byte[] bytes = null;
                    try { bytes = File.ReadAllBytes(target); } catch (Exception) { /* counted as partial */ }
                    if (bytes != null && SameBytes(bytes, whole)) wholeN = 1; else partial = 1;
                    break;
                }
                if (double.IsNaN(deadline) && Probe.StopRequested()) deadline = now + 2 * stableMs + 100;
                if (!double.IsNaN(deadline) && now >= deadline) break;
                Thread.Sleep(1);
            }
            while (double.IsNaN(deadline) && !Probe.StopRequested()) Thread.Sleep(1);
            var c = new Obj().Set("consumed", consumed).Set("whole", wholeN).Set("partial", partial).Set("checks", checks);
            return new RecipeOutcome { Ok = true, Counters = c, Sample = new List<object>() };
        };
    }
}

static class Probe
{
    const int PROTOCOL = 2;
    static readonly UTF8Encoding Utf8NoBom = new UTF8Encoding(false);
    static readonly long EpochTicks = new DateTime(1970, 1, 1, 0, 0, 0, DateTimeKind.Utc).Ticks;

    static StreamWriter stdout;

    // A call returns null, or a handle the probe keeps open for hold_ms before closing it.
    delegate IDisposable Call();

    sealed class Attempt
    {
        public object Id;
        public string IdKey;
        public Call Call;
        public string Mark;
        public byte[] Data;
        public int HoldMs;
        public RecipeRun Recipe;   // a recipe attempt: its routine (Call is then null)
    }

    static StdinLines lines;
    // The id (as JSON text) of the loop recipe that runs, or null: a `stop` must name it.
    static string running;

    // The clock of every *_us stamp (../PROTOCOL.md, "Clocks"). On Linux, Stopwatch reads
    // the system's CLOCK_MONOTONIC on CoreCLR and on Mono (measured against
    // clock_gettime(CLOCK_MONOTONIC) of another process: equal to the microsecond), the same
    // clock for every process, so the harness can compare the stamps of different contenders:
    // "monotonic". Elsewhere DateTime.UtcNow, microseconds since the Unix epoch: "wall".
    static readonly bool Monotonic = Stopwatch.IsHighResolution && File.Exists("/proc/self/stat");
    static string ClockKind { get { return Monotonic ? "monotonic" : "wall"; } }

    // The stamp now, in microseconds on the clock above, formatted from integers so no double
    // formatting can round it: "1764445800123456.7".
    static RawJson NowUs()
    {
        long t; // in 100 ns units
        if (Monotonic)
        {
            long ts = Stopwatch.GetTimestamp();
            long f = Stopwatch.Frequency;
            t = (ts / f) * 10000000L + (ts % f) * 10000000L / f;
        }
        else t = DateTime.UtcNow.Ticks - EpochTicks;
        return new RawJson((t / 10).ToString(CultureInfo.InvariantCulture) + "." +
                           (t % 10).ToString(CultureInfo.InvariantCulture));
    }

    static void Send(Obj msg)
    {
        var sb = new StringBuilder();
        Json.WriteValue(sb, msg);
        sb.Append('\n');
        stdout.Write(sb.ToString());
    }

    static void Diag(string text)
    {
        try { Console.Error.WriteLine("probe: " + text); } catch (Exception) { }
    }

    // ---- runtime identification -------------------------------------------------------

    static string FrameworkDescription()
    {
        // RuntimeInformation lives in System.Private.CoreLib (.NET 5+), in the
        // System.Runtime.InteropServices.RuntimeInformation assembly (.NET Core 3.x, Mono,
        // .NET Framework 4.7.1+), or nowhere (older .NET Framework). Reflection keeps mcs
        // from needing a reference.
        string[] names = {
            "System.Runtime.InteropServices.RuntimeInformation",
            "System.Runtime.InteropServices.RuntimeInformation, System.Runtime.InteropServices.RuntimeInformation",
            "System.Runtime.InteropServices.RuntimeInformation, mscorlib",
        };
        foreach (string name in names)
        {
            try
            {
                Type t = Type.GetType(name, false);
                if (t == null) continue;
                PropertyInfo p = t.GetProperty("FrameworkDescription", BindingFlags.Public | BindingFlags.Static);
                if (p == null) continue;
                object v = p.GetValue(null, null);
                if (v != null) return v.ToString();
            }
            catch (Exception) { }
        }
        return null;
    }

    static void RuntimeInfo(out string runtime, out string version, out string framework)
    {
        framework = FrameworkDescription();
        Type mono = Type.GetType("Mono.Runtime");
        if (mono != null)
        {
            runtime = "mono";
            version = null;
            try
            {
                MethodInfo m = mono.GetMethod("GetDisplayName", BindingFlags.NonPublic | BindingFlags.Public | BindingFlags.Static);
                string display = m == null ? null : m.Invoke(null, null) as string;
                if (display != null)
                {
                    // "6.8.0.105 (Debian 6.8.0.105+dfsg-3.3+deb12u1 Sat Jun 21 ...)" -> "6.8.0.105"
                    display = display.Trim();
                    int sp = display.IndexOf(' ');
                    version = sp < 0 ? display : display.Substring(0, sp);
                }
            }
            catch (Exception) { }
            if (string.IsNullOrEmpty(version)) version = Environment.Version.ToString();
            return;
        }
        // .NET Framework reports the CLR version (4.0.30319.x) in Environment.Version.
        if (framework != null && framework.StartsWith(".NET Framework", StringComparison.Ordinal))
        {
            runtime = "netfx";
            version = framework.Substring(".NET Framework".Length).Trim();
            return;
        }
        runtime = "coreclr";
        version = Environment.Version.ToString();
    }

    internal static int Pid()
    {
        try { return System.Diagnostics.Process.GetCurrentProcess().Id; }
        catch (Exception) { return -1; }
    }

    // ---- the variants -----------------------------------------------------------------

    static void WriteAll(FileStream fs, byte[] data)
    {
        fs.Write(data, 0, data.Length);
    }

    // File.Move(string, string, bool): .NET Core 3.0+ only.
    internal static Action<string, string, bool> LookupMoveOverwrite()
    {
        MethodInfo m = typeof(File).GetMethod("Move", BindingFlags.Public | BindingFlags.Static, null,
            new Type[] { typeof(string), typeof(string), typeof(bool) }, null);
        if (m == null) return null;
        return (Action<string, string, bool>)Delegate.CreateDelegate(typeof(Action<string, string, bool>), m);
    }

    // File.OpenHandle(string, FileMode, FileAccess, FileShare, FileOptions, long): .NET 6+ only
    // (learn.microsoft.com, File.OpenHandle, "Applies to"); looked up at run time.
    delegate Microsoft.Win32.SafeHandles.SafeFileHandle OpenHandleFn(string path, FileMode mode, FileAccess access, FileShare share, FileOptions options, long preallocationSize);

    static OpenHandleFn LookupOpenHandle()
    {
        MethodInfo m = typeof(File).GetMethod("OpenHandle", BindingFlags.Public | BindingFlags.Static, null,
            new Type[] { typeof(string), typeof(FileMode), typeof(FileAccess), typeof(FileShare), typeof(FileOptions), typeof(long) }, null);
        if (m == null) return null;
        return (OpenHandleFn)Delegate.CreateDelegate(typeof(OpenHandleFn), m);
    }

    // Every variant id Prepare knows, in its order: the hello lists them. Keep in step with
    // the switch below (the integration test compares the hello with matrices/dotnet.toml).
    static readonly string[] VariantIds = {
        "dotnet.FileMode.CreateNew",
        "dotnet.FileMode.Create",
        "dotnet.FileMode.OpenOrCreate",
        "dotnet.File.Create",
        "dotnet.File.WriteAllText",
        "dotnet.File.Move",
        "dotnet.File.Move.overwrite",
        "dotnet.File.Copy",
        "dotnet.File.Copy.overwrite",
        "dotnet.File.Replace",
        "dotnet.Directory.CreateDirectory",
        "dotnet.Directory.Move",
        "dotnet.FileShare.None",
        "dotnet.File.Exists+WriteAllText",
        "dotnet.File.OpenHandle.CreateNew",
        "dotnet.File.Exists+Move.overwrite",
    };

    // Builds the call for a variant, or returns null with a reason. Everything that can be
    // resolved ahead of the release (lookups, encoding, arguments) is resolved here.
    static Call Prepare(string variant, string target, string source, string token, byte[] data, out string reason)
    {
        reason = null;
        switch (variant)
        {
            case "dotnet.FileMode.CreateNew":
                return () => { using (var fs = new FileStream(target, FileMode.CreateNew, FileAccess.Write)) WriteAll(fs, data); return null; };
            case "dotnet.FileMode.Create":
                return () => { using (var fs = new FileStream(target, FileMode.Create, FileAccess.Write)) WriteAll(fs, data); return null; };
            case "dotnet.FileMode.OpenOrCreate":
                // No truncation: the token overwrites the start of an existing file.
                return () => { using (var fs = new FileStream(target, FileMode.OpenOrCreate, FileAccess.Write)) WriteAll(fs, data); return null; };
            case "dotnet.File.Create":
                return () => { using (FileStream fs = File.Create(target)) WriteAll(fs, data); return null; };
            case "dotnet.File.WriteAllText":
                return () => { File.WriteAllText(target, token, Utf8NoBom); return null; };
            case "dotnet.File.Move":
                return () => { File.Move(source, target); return null; };
            case "dotnet.File.Move.overwrite":
                {
                    Action<string, string, bool> move = LookupMoveOverwrite();
                    if (move == null)
                    {
                        reason = "File.Move(string, string, bool) is not available on this runtime (.NET Core 3.0+ only)";
                        return null;
                    }
                    return () => { move(source, target, true); return null; };
                }
            case "dotnet.File.Copy":
                return () => { File.Copy(source, target); return null; };
            case "dotnet.File.Copy.overwrite":
                return () => { File.Copy(source, target, true); return null; };
            case "dotnet.File.Replace":
                return () => { File.Replace(source, target, null); return null; };
            case "dotnet.Directory.CreateDirectory":
                return () => { Directory.CreateDirectory(target); return null; };
            case "dotnet.Directory.Move":
                return () => { Directory.Move(source, target); return null; };
            case "dotnet.FileShare.None":
                // The handle stays open for hold_ms after the call; the caller closes it.
                return () =>
                {
                    var fs = new FileStream(target, FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.None);
                    try
                    {
                        fs.SetLength(0);
                        WriteAll(fs, data);
                        fs.Flush();
                    }
                    catch (Exception)
                    {
                        fs.Dispose();
                        throw;
                    }
                    return fs;
                };
            case "dotnet.File.Exists+WriteAllText":
                return () =>
                {
                    if (File.Exists(target))
                        throw new CheckExists("target exists (checked with File.Exists): " + target);
                    File.WriteAllText(target, token, Utf8NoBom);
                    return null;
                };
            case "dotnet.File.OpenHandle.CreateNew":
                {
                    OpenHandleFn open = LookupOpenHandle();
                    if (open == null)
                    {
                        reason = "File.OpenHandle is not available on this runtime (.NET 6+ only)";
                        return null;
                    }
                    return () =>
                    {
                        var h = open(target, FileMode.CreateNew, FileAccess.Write, FileShare.None, FileOptions.None, 0);
                        using (var fs = new FileStream(h, FileAccess.Write)) WriteAll(fs, data);
                        return null;
                    };
                }
            case "dotnet.File.Exists+Move.overwrite":
                {
                    Action<string, string, bool> move = LookupMoveOverwrite();
                    if (move == null)
                    {
                        reason = "File.Move(string, string, bool) is not available on this runtime (.NET Core 3.0+ only)";
                        return null;
                    }
                    return () =>
                    {
                        if (File.Exists(target))
                            throw new CheckExists("target exists (checked with File.Exists): " + target);
                        move(source, target, true);
                        return null;
                    };
                }
            default:
                reason = "unknown variant " + variant;
                return null;
        }
    }

    // ---- protocol ---------------------------------------------------------------------

    internal static Obj RawError(Exception e, string typeOverride)
    {
        return new Obj()
            .Set("type", typeOverride ?? e.GetType().FullName)
            .Set("code", null)
            .Set("errno", null)
            .Set("hresult", e.HResult)
            .Set("message", e.Message);
    }

    static string Str(Dictionary<string, object> msg, string key)
    {
        object v;
        if (!msg.TryGetValue(key, out v) || v == null) return null;
        string s = v as string;
        if (s == null) throw new FormatException("field '" + key + "' is not a string");
        return s;
    }

    static int Int(Dictionary<string, object> msg, string key)
    {
        object v;
        if (!msg.TryGetValue(key, out v) || v == null) return 0;
        JsonNumber n = v as JsonNumber;
        if (n == null) throw new FormatException("field '" + key + "' is not a number");
        double d = n.ToDouble();
        if (d <= 0) return 0;
        if (d >= int.MaxValue) return int.MaxValue;
        return (int)d;
    }

    static string IdKey(object id)
    {
        var sb = new StringBuilder();
        Json.WriteValue(sb, id);
        return sb.ToString();
    }

    static int Main()
    {
        // Only protocol lines may reach stdout: anything written through Console.Out by
        // accident goes to stderr instead.
        stdout = new StreamWriter(Console.OpenStandardOutput(), Utf8NoBom);
        stdout.AutoFlush = true;
        stdout.NewLine = "\n";
        Console.SetOut(Console.Error);
        lines = new StdinLines(new StreamReader(Console.OpenStandardInput(), Utf8NoBom, false));

        try
        {
            return Loop();
        }
        catch (Exception e)
        {
            Diag("fatal: " + e);
            return 4;
        }
    }

    static int Loop()
    {
        string runtime, version, framework;
        RuntimeInfo(out runtime, out version, out framework);
        var hello = new Obj()
            .Set("protocol", PROTOCOL)
            .Set("type", "hello")
            .Set("probe", "dotnet")
            .Set("families", new List<object> { "dotnet" })
            .Set("runtime", runtime)
            .Set("version", version);
        if (framework != null) hello.Set("framework", framework);
        hello.Set("pid", Pid());
        hello.Set("clock", ClockKind);
        hello.Set("variants", new List<object>(VariantIds));
        hello.Set("recipes", new List<object>(Recipes.Ids));
        hello.Set("capabilities", new List<object> { "threads" });
        Send(hello);

        Attempt prepared = null;
        ThreadRace threads = null;
        for (;;)
        {
            string line = lines.Next();
            if (line == null) break;
            if (line.Trim().Length == 0) continue;
            Dictionary<string, object> msg;
            try
            {
                msg = Json.Parse(line) as Dictionary<string, object>;
                if (msg == null) throw new FormatException("not a JSON object");
            }
            catch (FormatException e)
            {
                Diag("not a protocol line (" + e.Message + "): " + line);
                return 3;
            }

            string type;
            try { type = Str(msg, "type"); }
            catch (FormatException e) { Diag(e.Message); return 3; }

            if (type == "quit") break;

            // version 2: nothing runs (a loop's stop is read by StopRequested), so the result
            // was sent already
            if (type == "stop") continue;

            if (type == "prepare")
            {
                prepared = null;
                object id;
                msg.TryGetValue("id", out id);
                string variant, recipe, target, source, token, mark;
                int holdMs;
                try
                {
                    variant = Str(msg, "variant");
                    recipe = Str(msg, "recipe");
                    target = Str(msg, "target");
                    source = Str(msg, "source");
                    token = Str(msg, "token") ?? "";
                    mark = Str(msg, "mark");
                    holdMs = Int(msg, "hold_ms");
                }
                catch (FormatException e)
                {
                    Diag("bad prepare: " + e.Message + ": " + line);
                    return 3;
                }
                byte[] data = Utf8NoBom.GetBytes(token);
                if (recipe != null)
                {
                    object ps;
                    msg.TryGetValue("params", out ps);
                    var req = new RecipeRequest
                    {
                        IdText = id is JsonNumber ? ((JsonNumber)id).Raw : id as string ?? IdKey(id),
                        Target = target,
                        Source = source,
                        Token = token,
                        Data = data,
                        Params = ps as Dictionary<string, object> ?? new Dictionary<string, object>(StringComparer.Ordinal),
                        Role = msg.ContainsKey("role") ? msg["role"] as string : null,
                    };
                    RecipeRun run;
                    try
                    {
                        run = Recipes.Prepare(recipe, req);
                    }
                    catch (Unsupported e)
                    {
                        Send(new Obj().Set("type", "ready").Set("id", id).Set("supported", false).Set("reason", e.Message));
                        continue;
                    }
                    prepared = new Attempt { Id = id, IdKey = IdKey(id), Recipe = run, Mark = mark, Data = data };
                    Send(new Obj().Set("type", "ready").Set("id", id).Set("supported", true));
                    continue;
                }
                string reason;
                Call call = null;
                try
                {
                    call = Prepare(variant ?? "", target, source, token, data, out reason);
                }
                catch (Exception e)
                {
                    reason = "lookup failed: " + e.GetType().FullName + ": " + e.Message;
                }
                if (call == null)
                {
                    Send(new Obj().Set("type", "ready").Set("id", id).Set("supported", false).Set("reason", reason));
                    continue;
                }
                prepared = new Attempt { Id = id, IdKey = IdKey(id), Call = call, Mark = mark, Data = data, HoldMs = holdMs };
                Send(new Obj().Set("type", "ready").Set("id", id).Set("supported", true));
                continue;
            }

            if (type == "prepare-threads")
            {
                prepared = null;
                threads = null;
                object id;
                msg.TryGetValue("id", out id);
                string reason;
                try
                {
                    threads = ThreadRace.Prepare(id, msg, out reason);
                }
                catch (FormatException e)
                {
                    Diag("bad prepare-threads: " + e.Message + ": " + line);
                    return 3;
                }
                var ready = new Obj().Set("type", "ready").Set("id", id).Set("supported", threads != null);
                if (threads == null) ready.Set("reason", reason);
                Send(ready);
                continue;
            }

            if (type == "go" && threads != null)
            {
                object id;
                msg.TryGetValue("id", out id);
                if (threads.IdKey != IdKey(id))
                {
                    Diag("go " + IdKey(id) + " without prepare-threads");
                    return 3;
                }
                ThreadRace t = threads;
                threads = null;
                Send(t.Go());
                continue;
            }

            if (type == "go")
            {
                object id;
                msg.TryGetValue("id", out id);
                if (prepared == null || prepared.IdKey != IdKey(id))
                {
                    Diag("go " + IdKey(id) + " without prepare");
                    return 3;
                }
                Attempt a = prepared;
                prepared = null;
                Send(a.Recipe != null ? GoRecipe(a) : Go(a));
                continue;
            }

            Diag("unknown message type " + (type ?? "null") + ": " + line);
            return 3;
        }
        stdout.Flush();
        return 0;
    }

    // True when the harness asked the running loop recipe to end: `stop` for this attempt (or
    // without id), `quit` or end of input (both left for the main loop). Never waits. Any other
    // message while a loop runs is a protocol error (exit 3), as is a line that is not JSON.
    internal static bool StopRequested()
    {
        for (;;)
        {
            string line;
            if (!lines.Poll(out line)) return false;
            if (line == null) return true;
            if (line.Trim().Length == 0) continue;
            Dictionary<string, object> msg = null;
            string type = null;
            try
            {
                msg = Json.Parse(line) as Dictionary<string, object>;
                if (msg != null) type = Str(msg, "type");
            }
            catch (FormatException) { msg = null; }
            if (msg == null) Fatal("not a protocol line: " + line);
            if (type == "stop")
            {
                object id;
                msg.TryGetValue("id", out id);
                if (id == null || IdKey(id) == running) return true;
                continue;
            }
            if (type == "quit")
            {
                lines.Unread(line);
                return true;
            }
            Fatal((type ?? "null") + " while attempt " + running + " runs (only stop or quit may come)");
        }
    }

    static void Fatal(string why)
    {
        Diag(why);
        try { stdout.Flush(); } catch (Exception) { }
        Environment.Exit(3);
    }

    // A recipe: t0, its steps, t1; then the mark (after success), and the result with step,
    // counters and errors_sample.
    static Obj GoRecipe(Attempt a)
    {
        running = a.IdKey;
        RawJson t0 = NowUs();
        RecipeOutcome o;
        try
        {
            o = a.Recipe();
        }
        catch (Exception e)
        {
            o = RecipeOutcome.Failure("recipe", RawError(e, null));
        }
        RawJson t1 = NowUs();
        running = null;
        bool ok = o.Ok;
        Obj error = ok ? null : o.Error;
        if (ok && a.Mark != null)
        {
            try
            {
                File.WriteAllBytes(a.Mark, a.Data);
            }
            catch (Exception e)
            {
                ok = false;
                error = RawError(e, "MarkError");
            }
        }
        var result = new Obj()
            .Set("type", "result")
            .Set("id", a.Id)
            .Set("ok", ok)
            .Set("t0_us", t0)
            .Set("t1_us", t1)
            .Set("error", error)
            .Set("step", o.Step);
        if (o.Counters != null) result.Set("counters", o.Counters);
        if (o.Sample != null) result.Set("errors_sample", o.Sample);
        return result;
    }

    static Obj Go(Attempt a)
    {
        return new Obj().Set("type", "result").Set("id", a.Id).Concat(MakeCall(a));
    }

    // The call between two stamps, the mark and the hold: the result's fields (ok, t0_us, t1_us,
    // error), without type and id.
    static Obj MakeCall(Attempt a)
    {
        bool ok = true;
        Obj error = null;
        IDisposable handle = null;

        RawJson t0 = NowUs();
        try
        {
            handle = a.Call();
        }
        catch (Exception e)
        {
            ok = false;
            error = RawError(e, null);
        }
        RawJson t1 = NowUs();

        if (ok && a.Mark != null)
        {
            try
            {
                File.WriteAllBytes(a.Mark, a.Data);
            }
            catch (Exception e)
            {
                ok = false;
                error = RawError(e, "MarkError");
                Diag("mark write failed: " + e.GetType().FullName + ": " + e.Message);
            }
        }
        if (handle != null)
        {
            try
            {
                if (ok && a.HoldMs > 0) Thread.Sleep(a.HoldMs);
                handle.Dispose();
            }
            catch (Exception e)
            {
                if (ok)
                {
                    ok = false;
                    error = RawError(e, "MarkError");
                }
                Diag("closing the held handle failed: " + e.GetType().FullName + ": " + e.Message);
            }
        }
        return new Obj()
            .Set("ok", ok)
            .Set("t0_us", t0)
            .Set("t1_us", t1)
            .Set("error", error);
    }

    // A thread race (../PROTOCOL.md, "Threads"): K contenders of one prepare-threads, each
    // on its own thread of this process, all waiting on one ManualResetEventSlim that `go`
    // sets; each then waits its delay_us after the release stamp (spinning on the Stopwatch
    // clock), makes its call between two stamps and keeps its result for the `results` line.
    sealed class ThreadRace
    {
        public string IdKey;
        object id;
        Thread[] threads;
        Obj[] results;
        readonly ManualResetEventSlim gate = new ManualResetEventSlim(false);
        long releasedAt; // Stopwatch ticks, written before the gate is set

        // Resolves every contender's call and starts its thread (waiting at the gate); null
        // with the first reason when a call cannot be made here. Errors: FormatException for a
        // malformed message.
        public static ThreadRace Prepare(object id, Dictionary<string, object> msg, out string reason)
        {
            reason = null;
            object v;
            msg.TryGetValue("contenders", out v);
            var list = v as List<object>;
            if (list == null || list.Count == 0) throw new FormatException("field 'contenders' is not a non-empty list");
            var attempts = new Attempt[list.Count];
            var delays = new long[list.Count];
            for (int i = 0; i < list.Count; i++)
            {
                var c = list[i] as Dictionary<string, object>;
                if (c == null) throw new FormatException("a contender is not an object");
                string token = Str(c, "token") ?? "";
                byte[] data = Utf8NoBom.GetBytes(token);
                Call call = null;
                try
                {
                    call = Probe.Prepare(Str(c, "variant") ?? "", Str(c, "target"), Str(c, "source"), token, data, out reason);
                }
                catch (Exception e)
                {
                    reason = "lookup failed: " + e.GetType().FullName + ": " + e.Message;
                }
                if (call == null) return null;
                attempts[i] = new Attempt { Id = id, IdKey = Probe.IdKey(id), Call = call, Mark = Str(c, "mark"), Data = data, HoldMs = Int(c, "hold_ms") };
                delays[i] = (long)Int(c, "delay_us") * Stopwatch.Frequency / 1000000L;
            }
            var t = new ThreadRace { IdKey = Probe.IdKey(id), id = id, threads = new Thread[list.Count], results = new Obj[list.Count] };
            for (int i = 0; i < list.Count; i++)
            {
                int slot = i;
                t.threads[i] = new Thread(() =>
                {
                    t.gate.Wait();
                    long at = Volatile.Read(ref t.releasedAt) + delays[slot];
                    while (delays[slot] > 0 && Stopwatch.GetTimestamp() < at) { }
                    t.results[slot] = Probe.MakeCall(attempts[slot]);
                });
                t.threads[i].IsBackground = true;
                t.threads[i].Start();
            }
            return t;
        }

        // Releases every thread at once and waits for all of them: the `results` line.
        public Obj Go()
        {
            Volatile.Write(ref releasedAt, Stopwatch.GetTimestamp());
            gate.Set();
            foreach (Thread th in threads) th.Join();
            var all = new List<object>();
            foreach (Obj r in results) all.Add(r);
            return new Obj().Set("type", "results").Set("id", id).Set("results", all);
        }
    }
}
