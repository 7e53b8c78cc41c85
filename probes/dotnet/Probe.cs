// conformance probe for the .NET file-system API family "dotnet" (protocol 2, session
// mode; see ../PROTOCOL.md). It performs exactly the call a variant names and reports the
// raw result; it never judges the outcome. Of version 2 it has the hello that lists its
// variants, and `stop` (ignored: it runs no loop); it knows no recipe, so a recipe `prepare`
// is answered `supported:false`.
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
using System.Globalization;
using System.IO;
using System.Reflection;
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
sealed class Obj : List<KeyValuePair<string, object>>
{
    public Obj Set(string key, object value)
    {
        Add(new KeyValuePair<string, object>(key, value));
        return this;
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
    }

    // Microseconds since the Unix epoch from DateTime.UtcNow (100 ns ticks), formatted from
    // integers so no double formatting can round it: "1764445800123456.7".
    static RawJson NowUs()
    {
        long t = DateTime.UtcNow.Ticks - EpochTicks;
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

    static int Pid()
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
    static Action<string, string, bool> LookupMoveOverwrite()
    {
        MethodInfo m = typeof(File).GetMethod("Move", BindingFlags.Public | BindingFlags.Static, null,
            new Type[] { typeof(string), typeof(string), typeof(bool) }, null);
        if (m == null) return null;
        return (Action<string, string, bool>)Delegate.CreateDelegate(typeof(Action<string, string, bool>), m);
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
            default:
                reason = "unknown variant " + variant;
                return null;
        }
    }

    // ---- protocol ---------------------------------------------------------------------

    static Obj RawError(Exception e, string typeOverride)
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
        var stdin = new StreamReader(Console.OpenStandardInput(), Utf8NoBom, false);

        try
        {
            return Loop(stdin);
        }
        catch (Exception e)
        {
            Diag("fatal: " + e);
            return 4;
        }
    }

    static int Loop(StreamReader stdin)
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
        hello.Set("variants", new List<object>(VariantIds));
        hello.Set("recipes", new List<object>());
        Send(hello);

        Attempt prepared = null;
        for (;;)
        {
            string line = stdin.ReadLine();
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

            // version 2: nothing loops here, so a stop has nothing to end
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
                if (recipe != null)
                {
                    Send(new Obj().Set("type", "ready").Set("id", id).Set("supported", false)
                        .Set("reason", "unknown recipe " + recipe));
                    continue;
                }
                byte[] data = Utf8NoBom.GetBytes(token);
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
                Send(Go(a));
                continue;
            }

            Diag("unknown message type " + (type ?? "null") + ": " + line);
            return 3;
        }
        stdout.Flush();
        return 0;
    }

    static Obj Go(Attempt a)
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
            .Set("type", "result")
            .Set("id", a.Id)
            .Set("ok", ok)
            .Set("t0_us", t0)
            .Set("t1_us", t1)
            .Set("error", error);
    }
}
