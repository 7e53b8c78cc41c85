# conformance probe for PowerShell cmdlets and .NET calls made from PowerShell
# (protocol 2, session mode, with the hand-off recipes; see ../PROTOCOL.md). Runs unchanged on PowerShell 7.x
# (pwsh, PSEdition Core) and Windows PowerShell 5.1 (powershell.exe, PSEdition Desktop):
#
#   pwsh -NoProfile -NonInteractive -File probe.ps1
#   powershell.exe -NoProfile -NonInteractive -ExecutionPolicy Bypass -File probe.ps1
#
# It performs exactly the call a variant names and reports the raw result; it never
# judges the outcome. Rules kept throughout:
# - Paths and tokens are data. They reach cmdlets only as parameter values (named
#   parameters or splatting), with -LiteralPath wherever the cmdlet has one, so
#   [ ] * ? ` are never read as wildcards. New-Item has no -LiteralPath; its -Path is
#   documented as literal ("works like the LiteralPath parameter of other cmdlets").
#   Move-Item and Copy-Item have no literal form of -Destination (see README.md).
#   No Invoke-Expression, no command strings.
# - Every cmdlet runs with -ErrorAction Stop, so a failure is an exception.
# - This file is ASCII only (5.1 reads a BOM-less script as ANSI) and avoids syntax
#   newer than 5.1 (no ??, ?:, &&, ||, ::new, classes, -AsHashtable).
# - Protocol I/O uses streams of its own over the standard handles, UTF-8 without BOM.
#   The console code pages ([Console]::InputEncoding/OutputEncoding) are left alone:
#   setting them calls SetConsoleCP/SetConsoleOutputCP, which changes the code page of
#   the whole console, shared with the harness when it has one. Every non-ASCII
#   character in an output line is written as a \u escape, so stdout is pure ASCII and
#   no console or host encoding can alter it.
# - JSON is not read with ConvertFrom-Json: it differs between 5.1 and 7 (7 turns
#   date-like strings into DateTime) and would have to be trusted with paths. PowerShell 7
#   reads it with System.Text.Json's JsonDocument; 5.1 with a small parser of its own (both
#   give the same shapes, see ConvertFrom-ProtocolLine). JSON is written with a small
#   escaper of its own.

$ErrorActionPreference = 'Stop'
$ProgressPreference = 'SilentlyContinue'
$WarningPreference = 'SilentlyContinue'
$ConfirmPreference = 'None'

$script:Utf8 = New-Object System.Text.UTF8Encoding($false)
$script:Invariant = [System.Globalization.CultureInfo]::InvariantCulture
$script:StdIn = New-Object System.IO.StreamReader([Console]::OpenStandardInput(), $script:Utf8, $false)
$script:StdOut = New-Object System.IO.StreamWriter([Console]::OpenStandardOutput(), $script:Utf8)
$script:StdOut.AutoFlush = $true
$script:StdErr = New-Object System.IO.StreamWriter([Console]::OpenStandardError(), $script:Utf8)
$script:StdErr.AutoFlush = $true

# Relative paths. The harness starts the probe with its working directory set to the
# scratch root. PowerShell keeps two notions of "current directory": the provider
# location ($PWD, used by cmdlets) and the process directory
# ([Environment]::CurrentDirectory, used by .NET calls such as FileStream). They agree
# at start but can drift apart. The probe takes the process directory once, here, and
# turns every relative target, source and mark into an absolute path against it before
# any call, so cmdlet and .NET variants see the very same path. Nothing else is done
# to the path: no normalisation, no GetFullPath.
$script:BaseDir = [Environment]::CurrentDirectory
$script:IsWindowsPath = ([System.IO.Path]::DirectorySeparatorChar -eq [char]92)

if ($PSVersionTable.ContainsKey('PSEdition') -and $PSVersionTable.PSEdition -eq 'Core') {
    $script:Runtime = 'pwsh'
    $script:IsCore = $true
} else {
    $script:Runtime = 'powershell'
    $script:IsCore = $false
}
$script:RuntimeVersion = $PSVersionTable.PSVersion.ToString()
$script:HasNoNewline = ($PSVersionTable.PSVersion.Major -ge 5)

function Write-Diag([string]$text) {
    $script:StdErr.Write('probe: ' + $text + "`n")
}

function Send-Line([string]$line) {
    $script:StdOut.Write($line + "`n")
}

# ---------------------------------------------------------------------------------
# JSON output

# Printable ASCII without `"` and `\`: such a string is its own JSON text between quotes. The
# character loop below costs about 3 us a character in the interpreter (0.4 ms for an error
# message, a third of a refused attempt's cost in a race); most strings take this path.
$script:PlainJsonRx = New-Object System.Text.RegularExpressions.Regex('^[ !#-\[\]-~]*\z')

function Format-JsonString($value) {
    if ($null -eq $value) { return 'null' }
    $s = [string]$value
    if ($script:PlainJsonRx.IsMatch($s)) { return '"' + $s + '"' }
    $sb = New-Object System.Text.StringBuilder
    [void]$sb.Append('"')
    $n = $s.Length
    for ($i = 0; $i -lt $n; $i++) {
        $c = [int]$s[$i]
        if ($c -eq 34) { [void]$sb.Append('\"') }
        elseif ($c -eq 92) { [void]$sb.Append('\\') }
        elseif ($c -ge 32 -and $c -lt 127) { [void]$sb.Append([char]$c) }
        elseif ($c -eq 10) { [void]$sb.Append('\n') }
        elseif ($c -eq 13) { [void]$sb.Append('\r') }
        elseif ($c -eq 9) { [void]$sb.Append('\t') }
        elseif ($c -ge 0xD800 -and $c -le 0xDBFF -and ($i + 1) -lt $n -and [int]$s[$i + 1] -ge 0xDC00 -and [int]$s[$i + 1] -le 0xDFFF) {
            # a surrogate pair: both halves as escapes, which JSON readers join again
            [void]$sb.Append('\u').Append($c.ToString('x4', $script:Invariant))
            $i++
            [void]$sb.Append('\u').Append(([int]$s[$i]).ToString('x4', $script:Invariant))
        }
        elseif ($c -ge 0xD800 -and $c -le 0xDFFF) {
            # a lone surrogate (possible in Windows names) is not valid UTF-16 text;
            # strict JSON readers reject its escape, so it becomes U+FFFD
            [void]$sb.Append('\ufffd')
        }
        else { [void]$sb.Append('\u').Append($c.ToString('x4', $script:Invariant)) }
    }
    [void]$sb.Append('"')
    return $sb.ToString()
}

function Format-JsonInt($value) {
    if ($null -eq $value) { return 'null' }
    return ([long]$value).ToString($script:Invariant)
}

# The clock of every *_us stamp (../PROTOCOL.md, "Clocks"). On Linux, pwsh 7's Stopwatch reads
# the system's CLOCK_MONOTONIC in nanoseconds (dotnet/runtime: Stopwatch.Unix.cs calls
# SystemNative_GetTimestamp, which reads clock_gettime(CLOCK_MONOTONIC) in
# https://github.com/dotnet/runtime/blob/main/src/native/minipal/time.c), one clock for every
# process, as the .NET probe's: "monotonic". Elsewhere (Windows, Windows
# PowerShell 5.1) DateTime.UtcNow ticks since the Unix epoch: "wall". A stamp is the raw
# reading; the result line turns it into microseconds with decimal arithmetic, which keeps
# every digit (a double would not: the tick count is above 2^53).
$script:Monotonic = [System.Diagnostics.Stopwatch]::IsHighResolution -and [System.IO.File]::Exists('/proc/self/stat')
if ($script:Monotonic) {
    $script:ClockKind = 'monotonic'
    $script:StampOffset = [long]0
    $script:StampScale = [decimal]1000000 / [decimal][System.Diagnostics.Stopwatch]::Frequency
} else {
    $script:ClockKind = 'wall'
    $script:StampOffset = [long]621355968000000000
    $script:StampScale = [decimal]0.1
}


# ---------------------------------------------------------------------------------
# JSON input: objects, arrays, strings, numbers, true, false, null. Objects become
# case-sensitive Hashtables, arrays ArrayLists, numbers doubles.

$script:JsonText = ''
$script:JsonPos = 0
$script:JsonStops = [char[]]@([char]34, [char]92)
$script:JsonNumberRx = New-Object System.Text.RegularExpressions.Regex('\G-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?')
$script:JsonHexRx = New-Object System.Text.RegularExpressions.Regex('^[0-9A-Fa-f]{4}$')

function Skip-JsonSpace {
    $t = $script:JsonText
    $i = $script:JsonPos
    while ($i -lt $t.Length) {
        $c = [int]$t[$i]
        if ($c -eq 32 -or $c -eq 9 -or $c -eq 10 -or $c -eq 13) { $i++ } else { break }
    }
    $script:JsonPos = $i
}

function Get-JsonChar {
    if ($script:JsonPos -ge $script:JsonText.Length) { return -1 }
    return [int]$script:JsonText[$script:JsonPos]
}

function Read-JsonString {
    $t = $script:JsonText
    if ((Get-JsonChar) -ne 34) { throw ('JSON: string expected at ' + $script:JsonPos) }
    $i = $script:JsonPos + 1
    $sb = New-Object System.Text.StringBuilder
    while ($true) {
        $j = $t.IndexOfAny($script:JsonStops, $i)
        if ($j -lt 0) { throw 'JSON: unterminated string' }
        if ($j -gt $i) { [void]$sb.Append($t, $i, $j - $i) }
        if ([int]$t[$j] -eq 34) {
            $script:JsonPos = $j + 1
            return $sb.ToString()
        }
        if (($j + 1) -ge $t.Length) { throw 'JSON: unterminated escape' }
        $e = [int]$t[$j + 1]
        $i = $j + 2
        if ($e -eq 34) { [void]$sb.Append([char]34) }
        elseif ($e -eq 92) { [void]$sb.Append([char]92) }
        elseif ($e -eq 47) { [void]$sb.Append([char]47) }
        elseif ($e -eq 98) { [void]$sb.Append([char]8) }
        elseif ($e -eq 102) { [void]$sb.Append([char]12) }
        elseif ($e -eq 110) { [void]$sb.Append([char]10) }
        elseif ($e -eq 114) { [void]$sb.Append([char]13) }
        elseif ($e -eq 116) { [void]$sb.Append([char]9) }
        elseif ($e -eq 117) {
            if (($i + 4) -gt $t.Length) { throw 'JSON: short \u escape' }
            $hex = $t.Substring($i, 4)
            if (-not $script:JsonHexRx.IsMatch($hex)) { throw 'JSON: bad \u escape' }
            [void]$sb.Append([char][Convert]::ToInt32($hex, 16))
            $i += 4
        }
        else { throw ('JSON: bad escape at ' + $j) }
    }
}

function Read-JsonLiteral([string]$word) {
    if ([string]::CompareOrdinal($script:JsonText, $script:JsonPos, $word, 0, $word.Length) -ne 0) {
        throw ('JSON: unexpected text at ' + $script:JsonPos)
    }
    $script:JsonPos += $word.Length
}

function Read-JsonNumber {
    $m = $script:JsonNumberRx.Match($script:JsonText, $script:JsonPos)
    if (-not $m.Success) { throw ('JSON: bad number at ' + $script:JsonPos) }
    $script:JsonPos += $m.Length
    return [double]::Parse($m.Value, $script:Invariant)
}

function Read-JsonObject {
    $script:JsonPos++
    $h = New-Object System.Collections.Hashtable
    Skip-JsonSpace
    if ((Get-JsonChar) -eq 125) { $script:JsonPos++; return $h }
    while ($true) {
        Skip-JsonSpace
        $k = Read-JsonString
        Skip-JsonSpace
        if ((Get-JsonChar) -ne 58) { throw ('JSON: colon expected at ' + $script:JsonPos) }
        $script:JsonPos++
        $v = Read-JsonValue
        $h[$k] = $v
        Skip-JsonSpace
        $c = Get-JsonChar
        if ($c -eq 44) { $script:JsonPos++; continue }
        if ($c -eq 125) { $script:JsonPos++; return $h }
        throw ('JSON: comma or } expected at ' + $script:JsonPos)
    }
}

function Read-JsonArray {
    $script:JsonPos++
    $list = New-Object System.Collections.ArrayList
    Skip-JsonSpace
    if ((Get-JsonChar) -eq 93) { $script:JsonPos++; return ,$list }
    while ($true) {
        $v = Read-JsonValue
        [void]$list.Add($v)
        Skip-JsonSpace
        $c = Get-JsonChar
        if ($c -eq 44) { $script:JsonPos++; continue }
        if ($c -eq 93) { $script:JsonPos++; return ,$list }
        throw ('JSON: comma or ] expected at ' + $script:JsonPos)
    }
}

function Read-JsonValue {
    Skip-JsonSpace
    $c = Get-JsonChar
    if ($c -eq 123) { return (Read-JsonObject) }
    if ($c -eq 91) { return ,(Read-JsonArray) }
    if ($c -eq 34) { return (Read-JsonString) }
    if ($c -eq 116) { Read-JsonLiteral 'true'; return $true }
    if ($c -eq 102) { Read-JsonLiteral 'false'; return $false }
    if ($c -eq 110) { Read-JsonLiteral 'null'; return $null }
    if ($c -eq 45 -or ($c -ge 48 -and $c -le 57)) { return (Read-JsonNumber) }
    throw ('JSON: value expected at ' + $script:JsonPos)
}

# PowerShell 7 runs on .NET Core 3.0 or later, whose System.Text.Json parses a protocol line in
# about 0.05 ms where the parser above takes about 5 ms (measured: pwsh 7.6.9, a prepare line;
# the probe's per-trial cost in a race). The tree becomes the shapes the parser above builds
# (Hashtable, ArrayList, string, double, bool, null); 5.1 (.NET Framework) keeps that parser.
if ($PSVersionTable.PSEdition -eq 'Core') {
    try { Add-Type -AssemblyName System.Text.Json -ErrorAction Stop } catch { }
}
$script:HasJsonDocument = $null -ne ('System.Text.Json.JsonDocument' -as [type])

function ConvertFrom-JsonElement($e) {
    $kind = [string]$e.ValueKind
    if ($kind -eq 'Object') {
        $h = New-Object System.Collections.Hashtable
        foreach ($p in $e.EnumerateObject()) { $h[$p.Name] = ConvertFrom-JsonElement $p.Value }
        return $h
    }
    if ($kind -eq 'Array') {
        $list = New-Object System.Collections.ArrayList
        foreach ($x in $e.EnumerateArray()) { [void]$list.Add((ConvertFrom-JsonElement $x)) }
        return ,$list
    }
    if ($kind -eq 'String') { return $e.GetString() }
    if ($kind -eq 'Number') { return [double]::Parse($e.GetRawText(), $script:Invariant) }
    if ($kind -eq 'True') { return $true }
    if ($kind -eq 'False') { return $false }
    return $null
}

function ConvertFrom-ProtocolLine([string]$text) {
    if ($script:HasJsonDocument) {
        $doc = [System.Text.Json.JsonDocument]::Parse($text)
        try {
            if ([string]$doc.RootElement.ValueKind -ne 'Object') { throw 'JSON: not an object' }
            return (ConvertFrom-JsonElement $doc.RootElement)
        } finally {
            $doc.Dispose()
        }
    }
    $script:JsonText = $text
    $script:JsonPos = 0
    Skip-JsonSpace
    if ((Get-JsonChar) -ne 123) { throw 'JSON: not an object' }
    $obj = Read-JsonObject
    Skip-JsonSpace
    if ($script:JsonPos -ne $script:JsonText.Length) { throw 'JSON: text after the object' }
    return $obj
}

# The id is echoed back as the harness wrote it (an integer in practice).
function Format-Id($id) {
    if ($id -is [double]) {
        if ([Math]::Floor($id) -eq $id -and [Math]::Abs($id) -lt 9007199254740992) {
            return ([long]$id).ToString($script:Invariant)
        }
        return $id.ToString('R', $script:Invariant)
    }
    if ($null -eq $id) { return 'null' }
    return (Format-JsonString $id)
}

# A variant's prepare as the harness writes it (`src/exec/protocol.rs`: fields in this order, no
# space), with no escape in any string: read by one regular expression into the table the
# general parser would build (numbers as doubles), 0.3 ms less per trial than the parser. Any
# other line (a recipe, an escape, another order) takes the parser.
$script:PrepareRx = New-Object System.Text.RegularExpressions.Regex('^\{"type":"prepare","id":(0|[1-9][0-9]{0,14}),"variant":"([^"\\]*)","target":"([^"\\]*)","source":(?:null|"([^"\\]*)"),"token":"([^"\\]*)","mark":(?:null|"([^"\\]*)"),"hold_ms":(0|[1-9][0-9]{0,14})\}$')

function ConvertFrom-PrepareMatch($m) {
    $g = $m.Groups
    $h = New-Object System.Collections.Hashtable
    $h['type'] = 'prepare'
    $h['id'] = [double]::Parse($g[1].Value, $script:Invariant)
    $h['variant'] = $g[2].Value
    $h['target'] = $g[3].Value
    $h['source'] = $null
    if ($g[4].Success) { $h['source'] = $g[4].Value }
    $h['token'] = $g[5].Value
    $h['mark'] = $null
    if ($g[6].Success) { $h['mark'] = $g[6].Value }
    $h['hold_ms'] = [double]::Parse($g[7].Value, $script:Invariant)
    return $h
}

# "go" arrives when every contender waits: skip the general parser for it.
$script:GoRx = New-Object System.Text.RegularExpressions.Regex('^\s*\{\s*"type"\s*:\s*"go"\s*,\s*"id"\s*:\s*(-?(?:0|[1-9][0-9]*))\s*\}\s*$')

# ---------------------------------------------------------------------------------
# Paths

function Test-RootedPath([string]$path) {
    if ($script:IsWindowsPath) {
        if ($path.Length -ge 1 -and ($path[0] -eq [char]92 -or $path[0] -eq [char]47)) { return $true }
        if ($path.Length -ge 2 -and $path[1] -eq [char]58) { return $true }
        return $false
    }
    return ($path.Length -ge 1 -and $path[0] -eq [char]47)
}

function Resolve-ProbePath($path) {
    if ($null -eq $path) { return $null }
    $p = [string]$path
    if ($p.Length -eq 0) { return $p }
    if (Test-RootedPath $p) { return $p }
    $base = $script:BaseDir
    $last = $base[$base.Length - 1]
    if ($last -eq [System.IO.Path]::DirectorySeparatorChar -or $last -eq [System.IO.Path]::AltDirectorySeparatorChar) {
        return $base + $p
    }
    return $base + [System.IO.Path]::DirectorySeparatorChar + $p
}

# Last component, cut at the platform's separators (Windows: \ and /; elsewhere: /).
function Get-LeafName([string]$path) {
    $i = $path.LastIndexOf([char]47)
    if ($script:IsWindowsPath) {
        $j = $path.LastIndexOf([char]92)
        if ($j -gt $i) { $i = $j }
    }
    return $path.Substring($i + 1)
}

# ---------------------------------------------------------------------------------
# Variants. Each Run block gets $p: Target, Source, Token (string), Bytes (UTF-8 of the
# token), Leaf (last component of Target), Args (a splatting table built at prepare).
# Token bytes written per edition: see matrices/pwsh.toml.

$script:Variants = New-Object System.Collections.Hashtable   # case-sensitive ids

$script:Variants['pwsh.New-Item.File'] = @{ NeedsSource = $false; Run = {
    param($p)
    $null = New-Item -ItemType File -Path $p.Target -Value $p.Token -ErrorAction Stop
} }

$script:Variants['pwsh.New-Item.File.Force'] = @{ NeedsSource = $false; Run = {
    param($p)
    $null = New-Item -ItemType File -Path $p.Target -Value $p.Token -Force -ErrorAction Stop
} }

$script:Variants['pwsh.New-Item.Directory'] = @{ NeedsSource = $false; Run = {
    param($p)
    $null = New-Item -ItemType Directory -Path $p.Target -ErrorAction Stop
} }

$script:Variants['pwsh.New-Item.Directory.Force'] = @{ NeedsSource = $false; Run = {
    param($p)
    $null = New-Item -ItemType Directory -Path $p.Target -Force -ErrorAction Stop
} }

$script:Variants['pwsh.Move-Item'] = @{ NeedsSource = $true; Run = {
    param($p)
    Move-Item -LiteralPath $p.Source -Destination $p.Target -ErrorAction Stop
} }

$script:Variants['pwsh.Move-Item.Force'] = @{ NeedsSource = $true; Run = {
    param($p)
    Move-Item -LiteralPath $p.Source -Destination $p.Target -Force -ErrorAction Stop
} }

$script:Variants['pwsh.Rename-Item'] = @{ NeedsSource = $true; Run = {
    param($p)
    Rename-Item -LiteralPath $p.Source -NewName $p.Leaf -ErrorAction Stop
} }

$script:Variants['pwsh.Copy-Item'] = @{ NeedsSource = $true; Run = {
    param($p)
    Copy-Item -LiteralPath $p.Source -Destination $p.Target -ErrorAction Stop
} }

# Core:    Set-Content -LiteralPath t -Value token -NoNewline -Encoding utf8NoBOM
# Desktop: Set-Content -LiteralPath t -Value <UTF-8 bytes of token> -Encoding Byte
#          (5.1's UTF8 encoding writes a BOM; Byte writes the bytes as given)
$script:Variants['pwsh.Set-Content'] = @{ NeedsSource = $false; NeedsNoNewline = $true; Run = {
    param($p)
    $a = $p.Args
    Set-Content @a
} }

# Core:    Out-File -LiteralPath t -InputObject token -NoClobber -NoNewline -Encoding utf8NoBOM
# Desktop: the same with -Encoding ascii (5.1's Out-File has no byte or BOM-less UTF-8
#          encoding; characters outside ASCII would become '?')
$script:Variants['pwsh.Out-File.NoClobber'] = @{ NeedsSource = $false; NeedsNoNewline = $true; Run = {
    param($p)
    $a = $p.Args
    Out-File @a
} }

$script:Variants['pwsh.FileStream.CreateNew'] = @{ NeedsSource = $false; Run = {
    param($p)
    $fs = New-Object -TypeName System.IO.FileStream -ArgumentList $p.Target, ([System.IO.FileMode]::CreateNew)
    try {
        $fs.Write($p.Bytes, 0, $p.Bytes.Length)
    } finally {
        $fs.Dispose()
    }
} }

# Anti-pattern: check, then create (TOCTOU). The create step is the plain New-Item.
$script:Variants['pwsh.Test-Path+New-Item'] = @{ NeedsSource = $false; Run = {
    param($p)
    if (Test-Path -LiteralPath $p.Target) {
        $ex = New-Object System.IO.IOException ('target exists (checked with Test-Path): ' + $p.Target)
        $rec = New-Object System.Management.Automation.ErrorRecord ($ex, 'CHECK_EXISTS', [System.Management.Automation.ErrorCategory]::ResourceExists, $p.Target)
        throw $rec
    }
    $null = New-Item -ItemType File -Path $p.Target -Value $p.Token -ErrorAction Stop
} }

$script:Variants['pwsh.New-Item.SymbolicLink'] = @{ NeedsSource = $true; Run = {
    param($p)
    $null = New-Item -ItemType SymbolicLink -Path $p.Target -Target $p.Source -ErrorAction Stop
} }

$script:Variants['pwsh.New-Item.HardLink'] = @{ NeedsSource = $true; Run = {
    param($p)
    $null = New-Item -ItemType HardLink -Path $p.Target -Target $p.Source -ErrorAction Stop
} }

$script:Variants['pwsh.Copy-Item.Force'] = @{ NeedsSource = $true; Run = {
    param($p)
    Copy-Item -LiteralPath $p.Source -Destination $p.Target -Force -ErrorAction Stop
} }

$script:Variants['pwsh.Rename-Item.Force'] = @{ NeedsSource = $true; Run = {
    param($p)
    Rename-Item -LiteralPath $p.Source -NewName $p.Leaf -Force -ErrorAction Stop
} }

# mkdir and md as a script names them: on Windows the mkdir function (New-Item -ItemType
# Directory), elsewhere the native mkdir(1) that PATH finds (md is an alias of mkdir). A
# native command's failure is only its exit code ($LASTEXITCODE; no exception unless
# $PSNativeCommandUseErrorActionPreference): a non-zero one is reported as the error, with
# what it printed.
# What `mkdir` / `md` names, looked up once per name (Get-Command gives the command the bare
# name runs): a script's bare `mkdir p` repeats the lookup on every call, and on Linux that
# scans every folder of PATH (a stat per file found), which is PowerShell's, not the call's,
# and under the amplifier's delay on each stat would cost seconds per attempt.
$script:MkdirCommands = @{}

# The command `name` runs, from the cache (looked up at start-up, before the hello and so before
# any tracer attaches; a name not found then is looked up again here and throws).
function Get-MkdirCommand([string]$name) {
    $cmd = $script:MkdirCommands[$name]
    if ($null -eq $cmd) {
        $cmd = Get-Command -Name $name -ErrorAction Stop | Select-Object -First 1
        # an alias (md) is called as the command it resolves to: calling the alias itself
        # would look its target up by name again on each call
        if ($cmd.CommandType -eq 'Alias' -and $null -ne $cmd.ResolvedCommand) { $cmd = $cmd.ResolvedCommand }
        $script:MkdirCommands[$name] = $cmd
    }
    return $cmd
}

function Invoke-MkdirAs([string]$name, [string]$target) {
    # a native command's stderr through 2>&1 must not stop the script (pwsh 7.0-7.1 raise
    # NativeCommandError under Stop): its exit code decides
    $ErrorActionPreference = 'Continue'
    $cmd = Get-MkdirCommand $name
    if ($cmd.CommandType -eq 'Application') {
        $global:LASTEXITCODE = 0
        $said = & $cmd -- $target 2>&1 | ForEach-Object { [string]$_ }
        if ($LASTEXITCODE -ne 0) {
            $ex = New-Object System.IO.IOException (($name + ' exited with ' + $LASTEXITCODE + ': ' + ($said -join ' ')).Trim())
            throw (New-Object System.Management.Automation.ErrorRecord ($ex, ('NativeCommandExitCode' + $LASTEXITCODE), [System.Management.Automation.ErrorCategory]::WriteError, $target))
        }
    } else {
        $null = & $cmd $target -ErrorAction Stop
    }
}

$script:Variants['pwsh.mkdir'] = @{ NeedsSource = $false; Run = {
    param($p)
    Invoke-MkdirAs 'mkdir' $p.Target
} }

$script:Variants['pwsh.md'] = @{ NeedsSource = $false; Run = {
    param($p)
    Invoke-MkdirAs 'md' $p.Target
} }

# Core:    Add-Content -LiteralPath t -Value token -NoNewline -Encoding utf8NoBOM
# Desktop: Add-Content -LiteralPath t -Value <UTF-8 bytes of token> -Encoding Byte
$script:Variants['pwsh.Add-Content'] = @{ NeedsSource = $false; NeedsNoNewline = $true; Run = {
    param($p)
    $a = $p.Args
    Add-Content @a
} }

# Out-File without -NoClobber (its default replaces). Encodings as pwsh.Out-File.NoClobber.
$script:Variants['pwsh.Out-File'] = @{ NeedsSource = $false; NeedsNoNewline = $true; Run = {
    param($p)
    $a = $p.Args
    Out-File @a
} }

# .NET called from PowerShell: the calls of matrices/dotnet.toml as a script writes them.
$script:Variants['pwsh.IO.File.Move'] = @{ NeedsSource = $true; Run = {
    param($p)
    [System.IO.File]::Move($p.Source, $p.Target)
} }

$script:Variants['pwsh.IO.Directory.CreateDirectory'] = @{ NeedsSource = $false; Run = {
    param($p)
    $null = [System.IO.Directory]::CreateDirectory($p.Target)
} }

$script:Variants['pwsh.IO.File.Open.CreateNew'] = @{ NeedsSource = $false; Run = {
    param($p)
    $fs = [System.IO.File]::Open($p.Target, [System.IO.FileMode]::CreateNew)
    try {
        $fs.Write($p.Bytes, 0, $p.Bytes.Length)
    } finally {
        $fs.Dispose()
    }
} }

# Anti-pattern: check, then New-Item -ItemType Directory (which, unlike the file form, did
# not refuse every existing name by itself when raced).
$script:Variants['pwsh.Test-Path+New-Item.Directory'] = @{ NeedsSource = $false; Run = {
    param($p)
    if (Test-Path -LiteralPath $p.Target) {
        $ex = New-Object System.IO.IOException ('target exists (checked with Test-Path): ' + $p.Target)
        $rec = New-Object System.Management.Automation.ErrorRecord ($ex, 'CHECK_EXISTS', [System.Management.Automation.ErrorCategory]::ResourceExists, $p.Target)
        throw $rec
    }
    $null = New-Item -ItemType Directory -Path $p.Target -ErrorAction Stop
} }

# Anti-pattern and the family's detection control: check, then a create that replaces
# (Set-Content). pwsh.Test-Path+New-Item cannot be the control: New-Item -ItemType File
# without -Force refuses an existing file itself, so its check-then-create never shows two
# winners however the race overlaps (measured: 0 of 100 natural trials, p50 spread 203 us).
$script:Variants['pwsh.Test-Path+Set-Content'] = @{ NeedsSource = $false; NeedsNoNewline = $true; Run = {
    param($p)
    if (Test-Path -LiteralPath $p.Target) {
        $ex = New-Object System.IO.IOException ('target exists (checked with Test-Path): ' + $p.Target)
        $rec = New-Object System.Management.Automation.ErrorRecord ($ex, 'CHECK_EXISTS', [System.Management.Automation.ErrorCategory]::ResourceExists, $p.Target)
        throw $rec
    }
    $a = $p.Args
    Set-Content @a
} }

# Anti-pattern: check, then move over (Move-Item -Force replaces what appeared in between).
$script:Variants['pwsh.Test-Path+Move-Item.Force'] = @{ NeedsSource = $true; Run = {
    param($p)
    if (Test-Path -LiteralPath $p.Target) {
        $ex = New-Object System.IO.IOException ('target exists (checked with Test-Path): ' + $p.Target)
        $rec = New-Object System.Management.Automation.ErrorRecord ($ex, 'CHECK_EXISTS', [System.Management.Automation.ErrorCategory]::ResourceExists, $p.Target)
        throw $rec
    }
    Move-Item -LiteralPath $p.Source -Destination $p.Target -Force -ErrorAction Stop
} }

function New-VariantArgs([string]$variant, $p) {
    if ($variant -eq 'pwsh.Set-Content' -or $variant -eq 'pwsh.Test-Path+Set-Content') {
        if ($script:IsCore) {
            return @{ LiteralPath = $p.Target; Value = $p.Token; NoNewline = $true; Encoding = 'utf8NoBOM'; ErrorAction = 'Stop' }
        }
        return @{ LiteralPath = $p.Target; Value = $p.Bytes; Encoding = 'Byte'; ErrorAction = 'Stop' }
    }
    if ($variant -eq 'pwsh.Add-Content') {
        if ($script:IsCore) {
            return @{ LiteralPath = $p.Target; Value = $p.Token; NoNewline = $true; Encoding = 'utf8NoBOM'; ErrorAction = 'Stop' }
        }
        return @{ LiteralPath = $p.Target; Value = $p.Bytes; Encoding = 'Byte'; ErrorAction = 'Stop' }
    }
    if ($variant -eq 'pwsh.Out-File') {
        if ($script:IsCore) {
            return @{ LiteralPath = $p.Target; InputObject = $p.Token; NoNewline = $true; Encoding = 'utf8NoBOM'; ErrorAction = 'Stop' }
        }
        return @{ LiteralPath = $p.Target; InputObject = $p.Token; NoNewline = $true; Encoding = 'ascii'; ErrorAction = 'Stop' }
    }
    if ($variant -eq 'pwsh.Out-File.NoClobber') {
        if ($script:IsCore) {
            return @{ LiteralPath = $p.Target; InputObject = $p.Token; NoClobber = $true; NoNewline = $true; Encoding = 'utf8NoBOM'; ErrorAction = 'Stop' }
        }
        return @{ LiteralPath = $p.Target; InputObject = $p.Token; NoClobber = $true; NoNewline = $true; Encoding = 'ascii'; ErrorAction = 'Stop' }
    }
    return $null
}

# ---------------------------------------------------------------------------------
# Raw errors

function Get-RawError($record, [string]$typeOverride) {
    $rec = $record
    $ex = $null
    if ($rec -is [System.Management.Automation.ErrorRecord]) {
        $ex = $rec.Exception
        if ($ex -is [System.Management.Automation.ActionPreferenceStopException] -and $null -ne $ex.ErrorRecord) {
            $rec = $ex.ErrorRecord
            $ex = $rec.Exception
        }
    } elseif ($rec -is [System.Exception]) {
        $ex = $rec
        $rec = $null
    }
    # PowerShell wraps exceptions thrown by .NET methods and constructors
    # (MethodInvocationException, TargetInvocationException): report the .NET one.
    while ($null -ne $ex -and $null -ne $ex.InnerException -and
           ($ex -is [System.Management.Automation.MethodInvocationException] -or
            $ex -is [System.Reflection.TargetInvocationException])) {
        $ex = $ex.InnerException
    }
    $type = 'Unknown'
    $message = ''
    $hresult = $null
    if ($null -ne $ex) {
        $type = $ex.GetType().FullName
        $message = $ex.Message
        $hresult = $ex.HResult
    }
    if ($typeOverride) { $type = $typeOverride }
    $code = $null
    if ($null -ne $rec) { $code = $rec.FullyQualifiedErrorId }
    # the losers of a race are refused with the same error trial after trial: the last one's
    # JSON is kept and reused while its parts stay the same. Keys are compared with
    # [string]::Equals (ordinal): -ceq compares by culture and takes names that differ only by
    # NFC/NFD, a zero-width character or a NUL for equal.
    $key = [string]$type + [char]0 + [string]$code + [char]0 + [string]$hresult + [char]0 + [string]$message +
           [char]0 + [string]($null -eq $code) + [string]($null -eq $hresult)
    if ([string]::Equals($script:LastErrorKey, $key)) { return $script:LastErrorJson }
    $json = '{"type":' + (Format-JsonString $type) +
           ',"code":' + (Format-JsonString $code) +
           ',"errno":null,"hresult":' + (Format-JsonInt $hresult) +
           ',"message":' + (Format-JsonString $message) + '}'
    $script:LastErrorKey = $key
    $script:LastErrorJson = $json
    return $json
}
$script:LastErrorKey = $null
$script:LastErrorJson = $null

# ---------------------------------------------------------------------------------
# Recipes (protocol 2, ../PROTOCOL.md "Recipes"): the steps of ../shared/session.mjs and
# ../dotnet/Probe.cs, with the calls a PowerShell user makes: .NET FileStream for the
# writes (FileShare.Read, buffer size 1: each Write is one write(2)/WriteFile), Move-Item
# for every rename/move, [IO.File]::Open(..., CreateNew) for the exclusive claim marker,
# [IO.File]::ReadAllBytes for reads, [IO.File]::Delete for deletes. Each Prepare block gets
# $r (Id, Target, Token, Params) and returns the state its Run block gets, or throws
# (New-Unsupported 'reason'). Run returns @{Ok; Error (raw error JSON or 'null'); Step;
# Counters (ordered [name, value] pairs, or $null); Sample (raw error JSON strings)}.

$script:Recipes = New-Object System.Collections.Hashtable   # case-sensitive names
$script:RecipeOrder = @('publish.direct', 'publish.temp-rename', 'publish.temp-rename-cross-volume',
    'claim.rename', 'read.poll', 'claim.list-then-open', 'claim.rename-claim', 'claim.exclusive-marker',
    'done.marker-after-data', 'done.marker-before-data', 'done.size-stable', 'done.mtime-stable', 'consume.poll',
    'lease.mtime-delete-create', 'lease.expires-delete-create', 'lease.rename-aside', 'lease.breaker', 'lease.dir-mtime',
    'holder.no-check', 'holder.renew-blind', 'holder.check-owner',
    'ledger.key-first', 'ledger.check-process-append', 'ledger.check-process-create',
    'update.read-modify-write', 'update.locked-read-modify-write', 'update.temp-rename', 'update.locked-temp-rename',
    'update.append-line', 'os-lock.none', 'os-lock.fileshare-none', 'os-lock.filestream-lock', 'os-lock.intrude',
    'watch.events-only', 'watch.events-and-rescan', 'watch.poll')
$script:Chunk = 4096
$script:ErrorsSampleMax = 8
$script:ClaimStuckRounds = 100000
$script:Clock = [System.Diagnostics.Stopwatch]::StartNew()

function New-Unsupported([string]$why) {
    $ex = New-Object System.NotSupportedException ('unsupported: ' + $why)
    $ex.Data['unsupported'] = $why
    return $ex
}

function New-RecipeResult([bool]$ok, [string]$errJson, $step, $counters, $sample) {
    if (-not $errJson) { $errJson = 'null' }
    return @{ Ok = $ok; Error = $errJson; Step = $step; Counters = $counters; Sample = $sample }
}

# The .NET exception inside what PowerShell wraps around a method's or constructor's.
function Get-InnerException($record) {
    $ex = $record
    if ($record -is [System.Management.Automation.ErrorRecord]) { $ex = $record.Exception }
    while ($null -ne $ex -and $null -ne $ex.InnerException -and
           ($ex -is [System.Management.Automation.MethodInvocationException] -or
            $ex -is [System.Reflection.TargetInvocationException] -or
            $ex -is [System.Management.Automation.ActionPreferenceStopException])) {
        $ex = $ex.InnerException
    }
    return $ex
}

function Get-Param($r, [string]$name) {
    if ($null -eq $r.Params) { return $null }
    return $r.Params[$name]
}

function Get-PathParam($r, [string]$name, [bool]$required) {
    $v = Get-Param $r $name
    if ($null -eq $v -or -not ($v -is [string]) -or $v.Length -eq 0) {
        if ($required) { throw (New-Unsupported ('needs params.' + $name)) }
        return $null
    }
    return (Resolve-ProbePath $v)
}

function Get-IntParam($r, [string]$name, [long]$default, [long]$min, [long]$max) {
    $v = Get-Param $r $name
    if ($null -eq $v) { return $default }
    if (-not ($v -is [double]) -or [Math]::Floor($v) -ne $v -or $v -lt $min -or $v -gt $max) {
        throw (New-Unsupported ('params.' + $name + ' must be an integer from ' + $min + ' to ' + $max))
    }
    return [long]$v
}

# The bytes a publish recipe writes: the token, or with params.size the framed content
# (`conformance-publish <token> <size>\n`, size bytes of `<token>\n` repeated, the last
# copy cut, `end <token>\n`), as src/handoff.rs `framed` and session.mjs build them.
function Get-PublishContent($r) {
    if ($null -eq (Get-Param $r 'size')) {
        $plain = $script:Utf8.GetBytes($r.Token)
        return ,$plain
    }
    $n = [int](Get-IntParam $r 'size' 0 1 16777216)
    $head = $script:Utf8.GetBytes('conformance-publish ' + $r.Token + ' ' + $n.ToString($script:Invariant) + "`n")
    $line = $script:Utf8.GetBytes($r.Token + "`n")
    $tail = $script:Utf8.GetBytes('end ' + $r.Token + "`n")
    $out = New-Object byte[] ($head.Length + $n + $tail.Length)
    [Array]::Copy($head, 0, $out, 0, $head.Length)
    $pos = $head.Length
    $left = $n
    while ($left -gt 0) {
        $k = [Math]::Min($left, $line.Length)
        [Array]::Copy($line, 0, $out, $pos, $k)
        $pos += $k
        $left -= $k
    }
    [Array]::Copy($tail, 0, $out, $pos, $tail.Length)
    return ,$out
}

function Open-Stream([string]$path, $mode) {
    return (New-Object System.IO.FileStream -ArgumentList $path, $mode, ([System.IO.FileAccess]::Write), ([System.IO.FileShare]::Read), 1)
}

function Write-Chunks($fs, [byte[]]$data, [int]$chunkMs) {
    for ($off = 0; $off -lt $data.Length; $off += $script:Chunk) {
        if ($off -gt 0 -and $chunkMs -gt 0) { [System.Threading.Thread]::Sleep($chunkMs) }
        $fs.Write($data, $off, [Math]::Min($script:Chunk, $data.Length - $off))
    }
}

# Bytes as a string key (base64), for comparing reads with params.expect.
function Get-BytesKey([byte[]]$b) {
    return [Convert]::ToBase64String($b)
}

function Get-ExpectKeys($r, [bool]$required) {
    $e = Get-Param $r 'expect'
    if ($e -is [string]) { $e = @($e) }
    $keys = @{}
    if ($null -ne $e) {
        foreach ($s in $e) {
            if ($s -is [string]) { $keys[(Get-BytesKey $script:Utf8.GetBytes($s))] = $true }
        }
    }
    if ($required -and $keys.Count -eq 0) { throw (New-Unsupported 'needs params.expect (the complete contents)') }
    return $keys
}

# Loop recipes look for `stop` (or quit, or the end of stdin) without blocking: a pending
# ReadLineAsync of the protocol reader, checked for completion. Read-ProtocolLine takes a
# line that arrived that way, so the main loop never reads past it.
$script:PendingRead = $null
$script:StopSeen = $false
$script:QuitAfter = $false
$script:RunningId = $null

function Read-ProtocolLine {
    if ($null -ne $script:PendingRead) {
        $t = $script:PendingRead
        $script:PendingRead = $null
        return $t.GetAwaiter().GetResult()
    }
    return $script:StdIn.ReadLine()
}

function Test-StopRequested {
    if ($script:StopSeen) { return $true }
    if ($null -eq $script:PendingRead) { $script:PendingRead = $script:StdIn.ReadLineAsync() }
    if (-not $script:PendingRead.IsCompleted) { return $false }
    $line = Read-ProtocolLine
    if ($null -eq $line) { $script:StopSeen = $true; $script:QuitAfter = $true; return $true }
    if ($line.Trim().Length -eq 0) { return $false }
    $m = $null
    try {
        $m = ConvertFrom-ProtocolLine $line
    } catch {
        Write-Diag ('not JSON during a loop: ' + $line)
        exit 3
    }
    $t = $m['type']
    if ($t -eq 'quit') { $script:StopSeen = $true; $script:QuitAfter = $true; return $true }
    if ($t -eq 'stop') {
        if ((Format-Id $m['id']) -eq $script:RunningId) { $script:StopSeen = $true; return $true }
        return $false
    }
    Write-Diag ('message ' + [string]$t + ' while a loop runs')
    exit 3
}

function Get-NowMs { return $script:Clock.Elapsed.TotalMilliseconds }

# publish.direct: FileMode.Create on the target, 4 KiB writes, Dispose. Steps: open, write, close.
$script:Recipes['publish.direct'] = @{
    Prepare = { param($r) return @{ Target = $r.Target; Data = (Get-PublishContent $r) } }
    Run = { param($s)
        $fs = $null
        try { $fs = Open-Stream $s.Target ([System.IO.FileMode]::Create) } catch { return (New-RecipeResult $false (Get-RawError $_ $null) 'open' $null $null) }
        try { Write-Chunks $fs $s.Data 0 } catch {
            $e = Get-RawError $_ $null
            try { $fs.Dispose() } catch { }
            return (New-RecipeResult $false $e 'write' $null $null)
        }
        try { $fs.Dispose() } catch { return (New-RecipeResult $false (Get-RawError $_ $null) 'close' $null $null) }
        return (New-RecipeResult $true 'null' $null $null $null)
    }
}

# publish.temp-rename (and -cross-volume, whose params.temp the harness puts on another
# file system): FileMode.CreateNew on the temp name (params.temp, default
# <dir>/.<name>.<pid>.<id>.tmp), 4 KiB writes, Flush($true) if params.fsync, Dispose, then
# Move-Item -LiteralPath temp -Destination target -Force. After a failed step the temp
# file is removed ([IO.File]::Delete, best effort). Steps: open, write, fsync, close, rename.
$script:PublishTempRename = @{
    Prepare = { param($r)
        $temp = Get-PathParam $r 'temp' $false
        if ($null -eq $temp) {
            $leaf = Get-LeafName $r.Target
            $dir = $r.Target.Substring(0, $r.Target.Length - $leaf.Length)
            $temp = $dir + '.' + $leaf + '.' + $PID.ToString($script:Invariant) + '.' + $r.Id + '.tmp'
        }
        $fsync = (Get-Param $r 'fsync') -eq $true
        return @{ Target = $r.Target; Temp = $temp; Fsync = $fsync; Data = (Get-PublishContent $r) }
    }
    Run = { param($s)
        $fs = $null
        try { $fs = Open-Stream $s.Temp ([System.IO.FileMode]::CreateNew) } catch { return (New-RecipeResult $false (Get-RawError $_ $null) 'open' $null $null) }
        $step = 'write'
        try {
            Write-Chunks $fs $s.Data 0
            if ($s.Fsync) { $step = 'fsync'; $fs.Flush($true) }
            $step = 'close'
            $fs.Dispose()
            $step = 'rename'
            Move-Item -LiteralPath $s.Temp -Destination $s.Target -Force -ErrorAction Stop
        } catch {
            $e = Get-RawError $_ $null
            try { $fs.Dispose() } catch { }
            try { [System.IO.File]::Delete($s.Temp) } catch { }
            return (New-RecipeResult $false $e $step $null $null)
        }
        return (New-RecipeResult $true 'null' $null $null $null)
    }
}
$script:Recipes['publish.temp-rename'] = $script:PublishTempRename
$script:Recipes['publish.temp-rename-cross-volume'] = $script:PublishTempRename

# claim.rename: Move-Item -LiteralPath source -Destination target -Force (the prepared source
# onto the target, as publish.temp-rename's last step). Step: rename.
$script:Recipes['claim.rename'] = @{
    Prepare = { param($r)
        if ([string]::IsNullOrEmpty($r.Source)) { throw (New-Unsupported 'claim.rename needs a source') }
        return @{ Target = $r.Target; Source = $r.Source }
    }
    Run = { param($s)
        try {
            Move-Item -LiteralPath $s.Source -Destination $s.Target -Force -ErrorAction Stop
        } catch {
            return (New-RecipeResult $false (Get-RawError $_ $null) 'rename' $null $null)
        }
        return (New-RecipeResult $true 'null' $null $null $null)
    }
}

# read.poll: [IO.File]::ReadAllBytes(target) again and again until stop, then once more.
# counters: reads, complete (bytes equal one of params.expect), empty, torn, absent
# (FileNotFoundException, DirectoryNotFoundException), errors, changes.
$script:Recipes['read.poll'] = @{
    Prepare = { param($r) return @{ Target = $r.Target; Expect = (Get-ExpectKeys $r $true) } }
    Run = { param($s)
        $c = @{ reads = 0; complete = 0; empty = 0; torn = 0; absent = 0; errors = 0; changes = 0 }
        $sample = New-Object System.Collections.ArrayList
        $last = $null
        $final = $false
        while ($true) {
            if (-not $final -and (Test-StopRequested)) { $final = $true }
            $c.reads++
            $key = $null
            try {
                $b = [System.IO.File]::ReadAllBytes($s.Target)
                if ($b.Length -eq 0) { $c.empty++; $key = 'empty' }
                else {
                    $k = Get-BytesKey $b
                    if ($s.Expect.ContainsKey($k)) { $c.complete++ } else { $c.torn++ }
                    $key = 'b:' + $k
                }
            } catch {
                $ex = Get-InnerException $_
                if ($ex -is [System.IO.FileNotFoundException] -or $ex -is [System.IO.DirectoryNotFoundException]) {
                    $c.absent++
                    $key = 'absent'
                } else {
                    $c.errors++
                    $key = 'error'
                    if ($sample.Count -lt $script:ErrorsSampleMax) { [void]$sample.Add((Get-RawError $_ $null)) }
                }
            }
            if ($null -ne $last -and $key -ne $last) { $c.changes++ }
            $last = $key
            if ($final) { break }
        }
        $pairs = @(@('reads', $c.reads), @('complete', $c.complete), @('empty', $c.empty), @('torn', $c.torn),
                   @('absent', $c.absent), @('errors', $c.errors), @('changes', $c.changes))
        return (New-RecipeResult $true 'null' $null $pairs $sample)
    }
}

# The claim workers: list params.incoming ([IO.Directory]::GetFiles, `.claim` names skipped)
# until it is empty; per item claim it -- nothing (list-then-open) / Move-Item into
# params.processing (rename-claim) / [IO.File]::Open(item + '.claim', CreateNew) (exclusive-
# marker) -- then [IO.File]::ReadAllBytes, append content + "\n" to params.output (one Write
# to a FileMode.Append stream), [IO.File]::Delete. counters: rounds, listed, claimed,
# claim_failed, delete_failed, processed; a worker without progress for 100,000 rounds
# stops (step `stuck`).
$script:ClaimPrepare = { param($r)
    $in = Get-PathParam $r 'incoming' $true
    $out = Get-PathParam $r 'output' $true
    $proc = Get-PathParam $r 'processing' ($r.Method -eq 'rename')
    return @{ Incoming = $in; Output = $out; Processing = $proc; Method = $r.Method }
}

$script:ClaimRun = { param($s)
    $method = $s.Method
    $c = @{ rounds = 0; listed = 0; claimed = 0; claim_failed = 0; delete_failed = 0; processed = 0 }
    $sample = New-Object System.Collections.ArrayList
    $pairs = { @(@('rounds', $c.rounds), @('listed', $c.listed), @('claimed', $c.claimed), @('claim_failed', $c.claim_failed),
                 @('delete_failed', $c.delete_failed), @('processed', $c.processed)) }
    $out = $null
    try {
        $out = New-Object System.IO.FileStream -ArgumentList $s.Output, ([System.IO.FileMode]::Append), ([System.IO.FileAccess]::Write), ([System.IO.FileShare]::Read), 1
    } catch { return (New-RecipeResult $false (Get-RawError $_ $null) 'output' (& $pairs) $sample) }
    $nl = [byte[]]@(10)
    try {
        $idle = 0
        while ($true) {
            $c.rounds++
            $names = $null
            try { $names = @([System.IO.Directory]::GetFiles($s.Incoming) | Where-Object { -not $_.EndsWith('.claim') }) }
            catch { return (New-RecipeResult $false (Get-RawError $_ $null) 'list' (& $pairs) $sample) }
            if ($names.Count -eq 0) { break }
            $progress = $false
            foreach ($item in $names) {
                $c.listed++
                $at = $item
                $data = $null
                try {
                    if ($method -eq 'rename') {
                        $at = [System.IO.Path]::Combine($s.Processing, [System.IO.Path]::GetFileName($item))
                        Move-Item -LiteralPath $item -Destination $at -ErrorAction Stop
                    } elseif ($method -eq 'marker') {
                        $m = [System.IO.File]::Open($item + '.claim', [System.IO.FileMode]::CreateNew, [System.IO.FileAccess]::Write, [System.IO.FileShare]::Read)
                        $m.Dispose()
                    }
                    $data = [System.IO.File]::ReadAllBytes($at)
                    $c.claimed++
                } catch {
                    $c.claim_failed++
                    if ($sample.Count -lt $script:ErrorsSampleMax) { [void]$sample.Add((Get-RawError $_ $null)) }
                    continue
                }
                $line = New-Object byte[] ($data.Length + 1)
                [Array]::Copy($data, 0, $line, 0, $data.Length)
                $line[$data.Length] = $nl[0]
                $out.Write($line, 0, $line.Length)
                $c.processed++
                $progress = $true
                try { [System.IO.File]::Delete($at) } catch {
                    $c.delete_failed++
                    if ($sample.Count -lt $script:ErrorsSampleMax) { [void]$sample.Add((Get-RawError $_ $null)) }
                }
            }
            if ($progress) { $idle = 0 } else { $idle++ }
            if ($idle -ge $script:ClaimStuckRounds) { return (New-RecipeResult $false 'null' 'stuck' (& $pairs) $sample) }
        }
    } finally {
        $out.Dispose()
    }
    return (New-RecipeResult $true 'null' $null (& $pairs) $sample)
}

foreach ($pair in @(@('claim.list-then-open', 'list-then-open'), @('claim.rename-claim', 'rename'), @('claim.exclusive-marker', 'marker'))) {
    $script:Recipes[$pair[0]] = @{ Prepare = $script:ClaimPrepare; Run = $script:ClaimRun; Method = $pair[1] }
}

# The done-marker writers: the data file (FileMode.Create, 4 KiB writes params.chunk_ms
# apart, Dispose) and, by the method, a manifest at params.marker ([IO.File]::WriteAllBytes;
# JSON {name, size, records, idempotency_key}, non-ASCII as \u escapes) after the data,
# before it, or none. Steps: manifest, open, write, close.
$script:DonePrepare = { param($r)
        $data = Get-PublishContent $r
        $marker = Get-PathParam $r 'marker' $false
        if ($null -eq $marker -and $r.Method.StartsWith('marker')) { throw (New-Unsupported 'a marker method needs params.marker') }
        $chunkMs = [int](Get-IntParam $r 'chunk_ms' 0 0 1000)
        $records = 0
        foreach ($b in $data) { if ($b -eq 10) { $records++ } }
        $manifest = '{"name":' + (Format-JsonString (Get-LeafName $r.Target)) + ',"size":' + $data.Length.ToString($script:Invariant) +
                    ',"records":' + $records.ToString($script:Invariant) + ',"idempotency_key":' + (Format-JsonString $r.Token) + '}'
        return @{ Target = $r.Target; Data = $data; Marker = $marker; ChunkMs = $chunkMs; Manifest = $script:Utf8.GetBytes($manifest); Method = $r.Method }
}

$script:DoneRun = { param($s)
    try { if ($s.Method -eq 'marker-before-data') { [System.IO.File]::WriteAllBytes($s.Marker, $s.Manifest) } }
    catch { return (New-RecipeResult $false (Get-RawError $_ $null) 'manifest' $null $null) }
    $fs = $null
    try { $fs = Open-Stream $s.Target ([System.IO.FileMode]::Create) } catch { return (New-RecipeResult $false (Get-RawError $_ $null) 'open' $null $null) }
    try { Write-Chunks $fs $s.Data $s.ChunkMs } catch {
        $e = Get-RawError $_ $null
        try { $fs.Dispose() } catch { }
        return (New-RecipeResult $false $e 'write' $null $null)
    }
    try { $fs.Dispose() } catch { return (New-RecipeResult $false (Get-RawError $_ $null) 'close' $null $null) }
    try { if ($s.Method -eq 'marker-after-data') { [System.IO.File]::WriteAllBytes($s.Marker, $s.Manifest) } }
    catch { return (New-RecipeResult $false (Get-RawError $_ $null) 'manifest' $null $null) }
    return (New-RecipeResult $true 'null' $null $null $null)
}

foreach ($pair in @(@('done.marker-after-data', 'marker-after-data'), @('done.marker-before-data', 'marker-before-data'),
                    @('done.size-stable', 'size-stable'), @('done.mtime-stable', 'mtime-stable'))) {
    $script:Recipes[$pair[0]] = @{ Prepare = $script:DonePrepare; Run = $script:DoneRun; Method = $pair[1] }
}

# consume.poll: about once a millisecond, whether the target counts as complete by
# params.rule -- marker ([IO.File]::Exists(params.marker)), size-stable / mtime-stable (a
# new FileInfo(target): it exists, its Length is not 0, and its Length / LastWriteTimeUtc
# has not changed for params.stable_ms) -- then read it once ([IO.File]::ReadAllBytes) and
# compare with params.expect[0]: counters consumed (0/1), whole, partial, checks. Runs until
# stop; after the stop it keeps checking for up to 2 x stable_ms + 100 ms.
$script:Recipes['consume.poll'] = @{
    Prepare = { param($r)
        $rule = Get-Param $r 'rule'
        $marker = Get-PathParam $r 'marker' $false
        $sm = Get-Param $r 'stable_ms'
        $stableMs = 0.0
        if ($null -ne $sm) {
            if (-not ($sm -is [double])) { throw (New-Unsupported 'params.stable_ms must be a number of milliseconds') }
            $stableMs = [double]$sm
        }
        if (($rule -ne 'marker' -and $rule -ne 'size-stable' -and $rule -ne 'mtime-stable') -or ($rule -eq 'marker' -and $null -eq $marker)) {
            throw (New-Unsupported 'consume.poll needs params.rule (marker, size-stable, mtime-stable) and params.marker for marker')
        }
        # @(): a one-element array comes back from a function unrolled to its element, and
        # indexing a string gives a char
        $e = @(Get-Param $r 'expect')
        if ($e.Count -eq 0 -or -not ($e[0] -is [string])) { throw (New-Unsupported 'consume.poll needs params.expect') }
        return @{ Target = $r.Target; Rule = $rule; Marker = $marker; StableMs = $stableMs; Whole = (Get-BytesKey $script:Utf8.GetBytes($e[0])) }
    }
    Run = { param($s)
        $consumed = 0; $whole = 0; $partial = 0; $checks = 0
        $haveLast = $false; $last = 0; $since = 0.0
        $deadline = [double]::NaN
        while ($true) {
            $checks++
            $now = Get-NowMs
            $ready = $false
            try {
                if ($s.Rule -eq 'marker') {
                    $ready = [System.IO.File]::Exists($s.Marker)
                } else {
                    $fi = New-Object System.IO.FileInfo -ArgumentList $s.Target
                    if ($fi.Exists) {
                        $size = $fi.Length
                        if ($s.Rule -eq 'size-stable') { $key = $size } else { $key = $fi.LastWriteTimeUtc.Ticks }
                        if ($size -gt 0 -and $haveLast -and $key -eq $last) { $ready = ($now - $since) -ge $s.StableMs }
                        else { $last = $key; $haveLast = $true; $since = $now }
                    }
                }
            } catch { }
            if ($ready) {
                $consumed = 1
                $bytes = $null
                try { $bytes = [System.IO.File]::ReadAllBytes($s.Target) } catch { }
                if ($null -ne $bytes -and (Get-BytesKey $bytes) -eq $s.Whole) { $whole = 1 } else { $partial = 1 }
                break
            }
            if ([double]::IsNaN($deadline) -and (Test-StopRequested)) { $deadline = $now + 2 * $s.StableMs + 100 }
            if (-not [double]::IsNaN($deadline) -and $now -ge $deadline) { break }
            [System.Threading.Thread]::Sleep(1)
        }
        while ([double]::IsNaN($deadline) -and -not (Test-StopRequested)) { [System.Threading.Thread]::Sleep(1) }
        $pairs = @(@('consumed', $consumed), @('whole', $whole), @('partial', $partial), @('checks', $checks))
        return (New-RecipeResult $true 'null' $null $pairs (New-Object System.Collections.ArrayList))
    }
}

# The lease takers of ../shared/session.mjs (leaseTaker), with a PowerShell user's calls:
# Get-Item -LiteralPath (its LastWriteTimeUtc) for the mtime check, [IO.File]::ReadAllText
# and ConvertFrom-Json for the record, [IO.File]::Delete (which succeeds on a missing file),
# [IO.File]::Open(..., CreateNew) for the exclusive create, Move-Item (no -Force: it refuses
# an existing destination; on Linux .NET's File.Move underneath is lstat, then rename(2), so it
# can replace a lease made in between) to rename aside and to put a live lease back, and for the
# directory lock New-Item -ItemType Directory without -Force, which refuses a directory it sees
# but is stat, then mkdir(2), whose EEXIST .NET's CreateDirectory takes for success (so two
# takers can both "make" it), and [IO.Directory]::Delete (not recursive) to remove it. A taker that believes it took the lease writes its token to params.held
# (CreateNew) and keeps it. counters: acquired, fresh, unreadable, restore_failed. Steps:
# check, delete, rename, recheck, restore, breaker, unbreak, create, record, held.

# True for the .NET exception a create of an existing name throws (errno EEXIST 17 on Unix;
# ERROR_FILE_EXISTS 80 or ERROR_ALREADY_EXISTS 183 in the HResult's low word on Windows), or
# a cmdlet's error saying the item already exists (New-Item, Move-Item).
function Test-ExistsError($record) {
    if ($record -is [System.Management.Automation.ErrorRecord] -and $record.FullyQualifiedErrorId -match '^(DirectoryExist|FileExist|MoveItemIOError|NewItemIOError)') {
        $ex = Get-InnerException $record
        if ($ex -is [System.IO.IOException] -and -not ($ex -is [System.IO.FileNotFoundException])) { return $true }
        if ($record.FullyQualifiedErrorId -match '^(DirectoryExist|FileExist)') { return $true }
    }
    $ex = Get-InnerException $record
    if (-not ($ex -is [System.IO.IOException]) -or $ex -is [System.IO.FileNotFoundException] -or $ex -is [System.IO.DirectoryNotFoundException]) { return $false }
    $low = $ex.HResult -band 0xFFFF
    return ($ex.HResult -eq 17 -or $low -eq 80 -or $low -eq 183)
}

# The lease record at $path: @{ Absent; Unreadable; Owner; Expired }.
function Read-Lease([string]$path) {
    $text = $null
    try { $text = [System.IO.File]::ReadAllText($path) }
    catch {
        $ex = Get-InnerException $_
        if ($ex -is [System.IO.FileNotFoundException]) { return @{ Absent = $true } }
        throw
    }
    try { $rec = $text | ConvertFrom-Json -ErrorAction Stop } catch { return @{ Absent = $false; Unreadable = $true } }
    if ($null -eq $rec -or -not ($rec -is [System.Management.Automation.PSCustomObject])) { return @{ Absent = $false; Unreadable = $true } }
    $now = [DateTimeOffset]::UtcNow.ToUnixTimeMilliseconds()
    $expired = $false
    if ($null -ne $rec.expiresAt -and ($rec.expiresAt -is [long] -or $rec.expiresAt -is [int] -or $rec.expiresAt -is [double] -or $rec.expiresAt -is [decimal])) {
        $expired = ([double]$rec.expiresAt -le $now)
    }
    return @{ Absent = $false; Unreadable = $false; Owner = [string]$rec.ownerId; Expired = $expired }
}

$script:LeasePrepare = { param($r)
    $lease = Get-PathParam $r 'lease' $true
    $held = Get-PathParam $r 'held' $true
    $staleMs = Get-IntParam $r 'stale_ms' 0 1 86400000
    $ttlMs = Get-IntParam $r 'ttl_ms' 0 1 86400000
    if ($staleMs -eq 0 -or $ttlMs -eq 0) { throw (New-Unsupported 'a lease taker needs params.stale_ms and params.ttl_ms') }
    $stallUs = Get-IntParam $r 'stall_us' 0 0 1000000
    return @{ Lease = $lease; Held = $held; StaleMs = $staleMs; TtlMs = $ttlMs; StallUs = $stallUs; Token = $r.Token; Method = $r.Method }
}

# A slow taker (params.stall_us): it waits before each step after its check, as one descheduled
# between its steps would.
function Wait-Stall([long]$us) {
    if ($us -gt 0) { [System.Threading.Thread]::Sleep([TimeSpan]::FromTicks($us * 10)) }
}

$script:LeaseRun = { param($s)
    $c = @{ acquired = 0; fresh = 0; unreadable = 0; restore_failed = 0 }
    $pairs = { @(@('acquired', $c.acquired), @('fresh', $c.fresh), @('unreadable', $c.unreadable), @('restore_failed', $c.restore_failed)) }
    $step = 'check'
    $lease = $s.Lease
    $method = $s.Method
    $record = {
        $now = [DateTimeOffset]::UtcNow.ToUnixTimeMilliseconds()
        return ('{"ownerId":' + (Format-JsonString $s.Token) + ',"host":' + (Format-JsonString ([Environment]::MachineName)) +
            ',"pid":' + $PID + ',"acquiredAt":' + $now + ',"expiresAt":' + ($now + $s.TtlMs) + ',"heartbeatAt":' + $now + '}')
    }
    # the exclusive create of the lease file: $true when it was created, $false when it exists
    $create = {
        try { $fs = [System.IO.File]::Open($lease, [System.IO.FileMode]::CreateNew, [System.IO.FileAccess]::Write, [System.IO.FileShare]::Read) }
        catch { if (Test-ExistsError $_) { return $false }; throw }
        try { $b = $script:Utf8.GetBytes((& $record)); $fs.Write($b, 0, $b.Length) } finally { $fs.Dispose() }
        return $true
    }
    # Get-Item of the lock: $null when it is not there; any other error is the step's
    $getItem = {
        try { return (Get-Item -LiteralPath $lease -Force -ErrorAction Stop) }
        catch { if ((Get-InnerException $_) -is [System.Management.Automation.ItemNotFoundException]) { return $null }; throw }
    }
    $took = $false
    $held = $false
    # the marker is written as soon as the taker holds the lease (before a breaker is removed),
    # so a later failed step cannot hide a holder
    $markHeld = {
        $fs = [System.IO.File]::Open($s.Held, [System.IO.FileMode]::CreateNew, [System.IO.FileAccess]::Write, [System.IO.FileShare]::Read)
        try { $b = $script:Utf8.GetBytes($s.Token); $fs.Write($b, 0, $b.Length) } finally { $fs.Dispose() }
    }
    try {
        if ($method -eq 'dir-mtime') {
            $made = $false
            $step = 'create'
            try { $null = New-Item -ItemType Directory -Path $lease -ErrorAction Stop; $made = $true }
            catch { if (-not (Test-ExistsError $_)) { throw } }
            if (-not $made) {
                $step = 'check'
                $item = & $getItem
                if ($null -ne $item -and ([DateTime]::UtcNow - $item.LastWriteTimeUtc).TotalMilliseconds -lt $s.StaleMs) {
                    $c.fresh = 1
                } else {
                    Wait-Stall $s.StallUs; $step = 'delete'
                    # the owner file, then the directory if it is empty (Remove-Item asks before
                    # removing a directory that is not, and there is no one to answer): a
                    # directory or owner already gone is fine, a directory not empty means another
                    # taker made it again
                    try { [System.IO.File]::Delete([System.IO.Path]::Combine($lease, 'owner')) }
                    catch { if (-not ((Get-InnerException $_) -is [System.IO.DirectoryNotFoundException])) { throw } }
                    $gone = $true
                    try { [System.IO.Directory]::Delete($lease, $false) }
                    catch {
                        $ex = Get-InnerException $_
                        if ($ex -is [System.IO.DirectoryNotFoundException]) { }
                        elseif ($ex -is [System.IO.IOException] -and (Test-Path -LiteralPath ([System.IO.Path]::Combine($lease, 'owner')))) { $gone = $false }
                        else { throw }
                    }
                    if ($gone) {
                        Wait-Stall $s.StallUs; $step = 'create'
                        try { $null = New-Item -ItemType Directory -Path $lease -ErrorAction Stop; $made = $true }
                        catch { if (-not (Test-ExistsError $_)) { throw } }
                    }
                }
            }
            if ($made) {
                Wait-Stall $s.StallUs; $step = 'record'
                [System.IO.File]::WriteAllText([System.IO.Path]::Combine($lease, 'owner'), (& $record))
                $took = $true
            }
        } elseif ($method -eq 'mtime') {
            $item = & $getItem
            if ($null -ne $item -and ([DateTime]::UtcNow - $item.LastWriteTimeUtc).TotalMilliseconds -lt $s.StaleMs) { $c.fresh = 1 }
            else {
                Wait-Stall $s.StallUs; $step = 'delete'
                if ($null -ne $item) { [System.IO.File]::Delete($lease) }
                Wait-Stall $s.StallUs; $step = 'create'
                $took = & $create
            }
        } else {
            $seen = Read-Lease $lease
            if ($seen.Unreadable) { $c.unreadable = 1 }
            elseif ($seen.Absent) { Wait-Stall $s.StallUs; $step = 'create'; $took = & $create }
            elseif (-not $seen.Expired) { $c.fresh = 1 }
            elseif ($method -eq 'expires') {
                Wait-Stall $s.StallUs; $step = 'delete'
                [System.IO.File]::Delete($lease)
                Wait-Stall $s.StallUs; $step = 'create'
                $took = & $create
            } elseif ($method -eq 'rename-aside') {
                $aside = $lease + '.' + $s.Token + '.stale'
                Wait-Stall $s.StallUs; $step = 'rename'
                $moved = $true
                try { Move-Item -LiteralPath $lease -Destination $aside -ErrorAction Stop }
                catch {
                    # the lease already gone (another taker moved it): Move-Item says so with another
                    # exception by the moment it noticed -- PSInvalidOperationException ("Cannot
                    # move item because the item at '...' does not exist"), ItemNotFoundException
                    # ("Cannot find path"), PSArgumentException ("An object at the specified path
                    # ... does not exist"), FileNotFoundException from File.Move -- each not taken;
                    # any other failure is the step's
                    $ex = Get-InnerException $_
                    $gone = $ex -is [System.Management.Automation.PSInvalidOperationException] -or
                        $ex -is [System.Management.Automation.ItemNotFoundException] -or
                        $ex -is [System.Management.Automation.PSArgumentException] -or
                        $ex -is [System.IO.FileNotFoundException]
                    if ($gone) { $moved = $false } else { throw }
                }
                if ($moved) {
                    Wait-Stall $s.StallUs; $step = 'recheck'
                    $again = Read-Lease $aside
                    if (-not $again.Absent -and -not $again.Unreadable -and [string]::Equals($again.Owner, $seen.Owner)) {
                        Wait-Stall $s.StallUs; $step = 'delete'
                        [System.IO.File]::Delete($aside)
                        Wait-Stall $s.StallUs; $step = 'create'
                        $took = & $create
                    } else {
                        Wait-Stall $s.StallUs; $step = 'restore'
                        try { Move-Item -LiteralPath $aside -Destination $lease -ErrorAction Stop }
                        catch { if (-not (Test-ExistsError $_)) { throw }; $c.restore_failed = 1; [System.IO.File]::Delete($aside) }
                    }
                }
            } else {
                $breaker = $lease + '.takeover'
                Wait-Stall $s.StallUs; $step = 'breaker'
                $broke = $true
                try { ([System.IO.File]::Open($breaker, [System.IO.FileMode]::CreateNew, [System.IO.FileAccess]::Write, [System.IO.FileShare]::Read)).Dispose() }
                catch { if (Test-ExistsError $_) { $broke = $false } else { throw } }
                if ($broke) {
                    $failed = $null
                    try {
                        Wait-Stall $s.StallUs; $step = 'recheck'
                        $again = Read-Lease $lease
                        if (-not $again.Unreadable -and ($again.Absent -or [string]::Equals($again.Owner, $seen.Owner))) {
                            Wait-Stall $s.StallUs; $step = 'delete'
                            if (-not $again.Absent) { [System.IO.File]::Delete($lease) }
                            Wait-Stall $s.StallUs; $step = 'create'
                            $took = & $create
                            if ($took) { $step = 'held'; & $markHeld; $held = $true; $c.acquired = 1 }
                        }
                    } catch { $failed = $_ }
                    # the breaker goes whatever happened; a failed step before it is the one reported
                    try { [System.IO.File]::Delete($breaker) }
                    catch { if ($null -eq $failed) { $failed = $_; $step = 'unbreak' } }
                    if ($null -ne $failed) { throw $failed }
                }
            }
        }
        if ($took -and -not $held) {
            $step = 'held'
            & $markHeld
            $c.acquired = 1
        }
    } catch {
        return (New-RecipeResult $false (Get-RawError $_ $null) $step (& $pairs) $null)
    }
    return (New-RecipeResult $true 'null' $null (& $pairs) $null)
}

foreach ($pair in @(@('lease.mtime-delete-create', 'mtime'), @('lease.expires-delete-create', 'expires'), @('lease.rename-aside', 'rename-aside'),
                    @('lease.breaker', 'breaker'), @('lease.dir-mtime', 'dir-mtime'))) {
    $script:Recipes[$pair[0]] = @{ Prepare = $script:LeasePrepare; Run = $script:LeaseRun; Method = $pair[1] }
}

# The lease holders of ../shared/session.mjs (holderWorker), with a PowerShell user's calls:
# Start-Sleep -Milliseconds for the work, Read-Lease ([IO.File]::ReadAllText, ConvertFrom-Json)
# for the check, Set-Content -NoNewline to renew, [IO.File]::Open(..., CreateNew) for the effect,
# Remove-Item to release. counters: effect, renewed, released, lost. Steps: work, check, renew,
# effect, release.
$script:HolderPrepare = { param($r)
    $ttlMs = Get-IntParam $r 'ttl_ms' 0 1 86400000
    $workMs = Get-IntParam $r 'work_ms' 0 1 86400000
    if ($ttlMs -eq 0 -or $workMs -eq 0) { throw (New-Unsupported 'a lease holder needs params.ttl_ms and params.work_ms') }
    return @{ Lease = (Get-PathParam $r 'lease' $true); Effect = (Get-PathParam $r 'effect' $true); TtlMs = $ttlMs;
        WorkMs = $workMs; Token = $r.Token; Method = $r.Method }
}

$script:HolderRun = { param($s)
    $c = @{ effect = 0; renewed = 0; released = 0; lost = 0 }
    $pairs = { @(@('effect', $c.effect), @('renewed', $c.renewed), @('released', $c.released), @('lost', $c.lost)) }
    $step = 'work'
    $mine = {
        $seen = Read-Lease $s.Lease
        $ok = (-not $seen.Absent) -and (-not $seen.Unreadable) -and $seen.Owner -ceq $s.Token
        if (-not $ok) { $c.lost = 1 }
        return $ok
    }
    try {
        Start-Sleep -Milliseconds $s.WorkMs
        $step = 'check'
        if ($s.Method -eq 'check-owner' -and -not (& $mine)) { return (New-RecipeResult $true 'null' $null (& $pairs) $null) }
        if ($s.Method -ne 'no-check') {
            $step = 'renew'
            $now = [DateTimeOffset]::UtcNow.ToUnixTimeMilliseconds()
            $record = '{"ownerId":' + (Format-JsonString $s.Token) + ',"host":' + (Format-JsonString ([Environment]::MachineName)) +
                ',"pid":' + $PID + ',"acquiredAt":' + $now + ',"expiresAt":' + ($now + $s.TtlMs) + ',"heartbeatAt":' + $now + '}'
            Set-Content -LiteralPath $s.Lease -Value $record -NoNewline -ErrorAction Stop
            $c.renewed = 1
        }
        $step = 'check'
        if ($s.Method -eq 'check-owner' -and -not (& $mine)) { return (New-RecipeResult $true 'null' $null (& $pairs) $null) }
        $step = 'effect'
        $fs = [System.IO.File]::Open($s.Effect, [System.IO.FileMode]::CreateNew, [System.IO.FileAccess]::Write, [System.IO.FileShare]::Read)
        try { $b = $script:Utf8.GetBytes($s.Token); $fs.Write($b, 0, $b.Length) } finally { $fs.Dispose() }
        $c.effect = 1
        if ($s.Method -eq 'renew-blind') { return (New-RecipeResult $true 'null' $null (& $pairs) $null) }
        $step = 'check'
        if ($s.Method -eq 'check-owner' -and -not (& $mine)) { return (New-RecipeResult $true 'null' $null (& $pairs) $null) }
        $step = 'release'
        Remove-Item -LiteralPath $s.Lease -ErrorAction Stop
        $c.released = 1
    } catch {
        return (New-RecipeResult $false (Get-RawError $_ $null) $step (& $pairs) $null)
    }
    return (New-RecipeResult $true 'null' $null (& $pairs) $null)
}

foreach ($m in @('no-check', 'renew-blind', 'check-owner')) {
    $script:Recipes['holder.' + $m] = @{ Prepare = $script:HolderPrepare; Run = $script:HolderRun; Method = $m }
}

# The ledger workers of ../shared/session.mjs (ledgerWorker), with a PowerShell user's calls:
# [IO.File]::Open(..., CreateNew) for the key file and the effect file, Test-Path -LiteralPath
# for the check, Get-Content -Raw (absent: an empty list) and Add-Content for the processed
# list. counters: processed, skipped, record_refused. Steps: check, record, effect.
$script:LedgerPrepare = { param($r)
    $key = Get-Param $r 'key'
    if (-not ($key -is [string]) -or $key.Length -eq 0) { throw (New-Unsupported 'a ledger worker needs params.key') }
    $ledger = Get-PathParam $r 'ledger' $true
    return @{ Key = $key; KeyFile = [System.IO.Path]::Combine($ledger, $key); Effect = (Get-PathParam $r 'effect' $true);
        List = (Get-PathParam $r 'list' $true); Token = $r.Token; Method = $r.Method }
}

$script:LedgerRun = { param($s)
    $c = @{ processed = 0; skipped = 0; record_refused = 0 }
    $pairs = { @(@('processed', $c.processed), @('skipped', $c.skipped), @('record_refused', $c.record_refused)) }
    $step = 'check'
    # the exclusive create of $path holding the token: $true when made, $false when it exists
    $createNew = { param($path)
        try { $fs = [System.IO.File]::Open($path, [System.IO.FileMode]::CreateNew, [System.IO.FileAccess]::Write, [System.IO.FileShare]::Read) }
        catch { if (Test-ExistsError $_) { return $false }; throw }
        try { $b = $script:Utf8.GetBytes($s.Token); $fs.Write($b, 0, $b.Length) } finally { $fs.Dispose() }
        return $true
    }
    try {
        $process = $true
        if ($s.Method -eq 'key-first') {
            $step = 'record'
            $process = & $createNew $s.KeyFile
        } elseif ($s.Method -eq 'check-process-append') {
            $text = ''
            if (Test-Path -LiteralPath $s.List) { $text = [string](Get-Content -LiteralPath $s.List -Raw -ErrorAction Stop) }
            $process = -not (($text -split '\r?\n') -contains $s.Key)
        } else {
            $process = -not (Test-Path -LiteralPath $s.KeyFile)
        }
        if (-not $process) {
            $c.skipped = 1
        } else {
            $step = 'effect'
            if (-not (& $createNew $s.Effect)) { throw (New-Object System.IO.IOException ('the effect file exists: ' + $s.Effect)) }
            $c.processed = 1
            if ($s.Method -eq 'check-process-append') {
                $step = 'record'
                Add-Content -LiteralPath $s.List -Value $s.Key -ErrorAction Stop
            } elseif ($s.Method -eq 'check-process-create') {
                $step = 'record'
                if (-not (& $createNew $s.KeyFile)) { $c.record_refused = 1 }
            }
        }
    } catch {
        return (New-RecipeResult $false (Get-RawError $_ $null) $step (& $pairs) $null)
    }
    return (New-RecipeResult $true 'null' $null (& $pairs) $null)
}

foreach ($pair in @(@('ledger.key-first', 'key-first'), @('ledger.check-process-append', 'check-process-append'),
                    @('ledger.check-process-create', 'check-process-create'))) {
    $script:Recipes[$pair[0]] = @{ Prepare = $script:LedgerPrepare; Run = $script:LedgerRun; Method = $pair[1] }
}

# The update workers of ../shared/session.mjs (updateWorker), with a PowerShell user's calls:
# Get-Content -Raw and Set-Content -Value (n+1) (a line: the value and a newline) for the value,
# [IO.File]::Open(..., CreateNew) for the lock (retried: [Threading.Thread]::Sleep(0) between
# tries, 10 s at most) and the temp file, Move-Item -Force for the rename, Remove-Item to
# unlock, Add-Content -Value 1 for a line. counters: increments, unreadable_reads, lock_waits.
# Steps: lock, read, write, rename, unlock, append.
$script:UpdatePrepare = { param($r)
    $n = Get-IntParam $r 'increments' -1 0 1000000
    if ($n -lt 0) { throw (New-Unsupported 'an update worker needs params.increments') }
    return @{ Counter = (Get-PathParam $r 'counter' $true); Lock = (Get-PathParam $r 'lock' $true);
        Temp = (Get-PathParam $r 'temp' $true); Increments = $n; Method = $r.Method }
}

$script:UpdateRun = { param($s)
    $c = @{ increments = 0; unreadable_reads = 0; lock_waits = 0 }
    $pairs = { @(@('increments', $c.increments), @('unreadable_reads', $c.unreadable_reads), @('lock_waits', $c.lock_waits)) }
    $locked = $s.Method.StartsWith('locked-')
    $viaTemp = $s.Method.EndsWith('temp-rename')
    $step = 'read'
    try {
        for ($i = 0; $i -lt $s.Increments; $i++) {
            if ($s.Method -eq 'append-line') {
                $step = 'append'
                Add-Content -LiteralPath $s.Counter -Value '1' -ErrorAction Stop
                $c.increments++
                continue
            }
            if ($locked) {
                $step = 'lock'
                $wait = [System.Diagnostics.Stopwatch]::StartNew()
                while ($true) {
                    try {
                        [System.IO.File]::Open($s.Lock, [System.IO.FileMode]::CreateNew, [System.IO.FileAccess]::Write, [System.IO.FileShare]::Read).Dispose()
                        break
                    } catch { if (-not (Test-ExistsError $_)) { throw } }
                    $c.lock_waits++
                    if ($wait.ElapsedMilliseconds -gt 10000) { throw (New-Object System.IO.IOException 'the lock stayed taken for 10000 ms') }
                    [System.Threading.Thread]::Sleep(0)
                }
            }
            $value = $null
            for ($tries = 0; $null -eq $value; $tries++) {
                $step = 'read'
                # Get-Content -Raw of an empty file returns $null, which [string] keeps
                $raw = Get-Content -LiteralPath $s.Counter -Raw -ErrorAction Stop
                $text = if ($null -eq $raw) { '' } else { ([string]$raw).Trim() }
                if ($text -match '^[0-9]+$') { $value = [long]$text }
                else {
                    $c.unreadable_reads++
                    if ($tries -ge 1000) { throw (New-Object System.IO.IOException 'the counter held no whole number 1000 times in a row') }
                }
            }
            $next = $value + 1
            if ($viaTemp) {
                $step = 'write'
                $fs = [System.IO.File]::Open($s.Temp, [System.IO.FileMode]::CreateNew, [System.IO.FileAccess]::Write, [System.IO.FileShare]::Read)
                try { $b = $script:Utf8.GetBytes($next.ToString($script:Invariant) + "`n"); $fs.Write($b, 0, $b.Length) } finally { $fs.Dispose() }
                $step = 'rename'
                Move-Item -LiteralPath $s.Temp -Destination $s.Counter -Force -ErrorAction Stop
            } else {
                $step = 'write'
                Set-Content -LiteralPath $s.Counter -Value $next -ErrorAction Stop
            }
            $c.increments++
            if ($locked) {
                $step = 'unlock'
                Remove-Item -LiteralPath $s.Lock -ErrorAction Stop
            }
        }
    } catch {
        return (New-RecipeResult $false (Get-RawError $_ $null) $step (& $pairs) $null)
    }
    return (New-RecipeResult $true 'null' $null (& $pairs) $null)
}

foreach ($m in @('read-modify-write', 'locked-read-modify-write', 'temp-rename', 'locked-temp-rename', 'append-line')) {
    $script:Recipes['update.' + $m] = @{ Prepare = $script:UpdatePrepare; Run = $script:UpdateRun; Method = $m }
}

# The OS-lock holders and intruder of ../shared/session.mjs (osLockHolder, osLockIntruder; ../dotnet/
# Probe.cs has the same). The holder's kinds of lock, by recipe id, are the .NET calls a
# PowerShell user makes, as in the .NET probe (Lock-ProbeFile):
# - os-lock.none: [IO.File]::Open(path, Open, ReadWrite, ReadWrite -bor Delete), no lock (the
#   control); release: Dispose.
# - os-lock.fileshare-none: [IO.File]::Open(path, Open, ReadWrite, None); release: Dispose.
# - os-lock.filestream-lock: [IO.File]::Open(path, Open, ReadWrite, ReadWrite), then
#   .Lock(0, [Math]::Max(1, Length)); release: .Unlock of that range, then Dispose.
# None of them waits: a lock another process holds is refused with an exception, so the
# intruder's second try is the same call (params.relock_ms is checked but not needed).
$script:OsLockIds = @('os-lock.none', 'os-lock.fileshare-none', 'os-lock.filestream-lock')

# Opens $path and takes the lock of recipe $id on it: @{ Stream; Length (of the locked range,
# 0 for none) } for Unlock-ProbeFile, or throws.
function Lock-ProbeFile([string]$id, [string]$path) {
    $share = [System.IO.FileShare]::ReadWrite
    if ($id -eq 'os-lock.none') { $share = [System.IO.FileShare]::ReadWrite -bor [System.IO.FileShare]::Delete }
    elseif ($id -eq 'os-lock.fileshare-none') { $share = [System.IO.FileShare]::None }
    $fs = [System.IO.File]::Open($path, [System.IO.FileMode]::Open, [System.IO.FileAccess]::ReadWrite, $share)
    $length = [long]0
    if ($id -eq 'os-lock.filestream-lock') {
        try {
            $length = [Math]::Max([long]1, $fs.Length)
            $fs.Lock(0, $length)
        } catch {
            $fs.Dispose()
            throw
        }
    }
    return @{ Stream = $fs; Length = $length }
}

function Unlock-ProbeFile($held) {
    try {
        if ($held.Length -gt 0) { $held.Stream.Unlock(0, $held.Length) }
    } finally {
        $held.Stream.Dispose()
    }
}

# params.files: a table of paths (a name -> its file), each resolved as Get-PathParam does;
# $null when absent.
function Get-FilesParam($r) {
    $v = Get-Param $r 'files'
    if ($null -eq $v) { return $null }
    if (-not ($v -is [System.Collections.Hashtable])) { throw (New-Unsupported 'params.files must be an object of paths') }
    $files = New-Object System.Collections.Hashtable
    foreach ($k in $v.Keys) {
        $p = $v[$k]
        if (-not ($p -is [string]) -or $p.Length -eq 0) { throw (New-Unsupported ('params.files.' + $k + ' must be a non-empty string')) }
        $files[$k] = Resolve-ProbePath $p
    }
    return $files
}

# The holder: lock every file of params.files (Lock-ProbeFile), create params.locked
# ([IO.File]::Open(..., CreateNew)) once all are locked, hold them until `stop`
# (Test-StopRequested, [Threading.Thread]::Sleep(1) between looks), then release every one;
# after a failed step what was held is released and that step is reported. counters: locked
# (files locked), released. Steps: lock, mark, hold, release.
$script:OsLockHolderPrepare = { param($r)
    $files = Get-FilesParam $r
    $locked = Get-PathParam $r 'locked' $false
    if ($null -eq $files -or $null -eq $locked) { throw (New-Unsupported 'an OS-lock holder needs params.files and params.locked') }
    return @{ Files = $files; Locked = $locked; Lock = $r.Method }
}

$script:OsLockHolderRun = { param($s)
    $c = @{ locked = 0; released = 0 }
    $held = New-Object System.Collections.ArrayList
    $step = 'lock'
    $failed = $null
    $failedStep = $null
    try {
        foreach ($p in $s.Files.Values) {
            [void]$held.Add((Lock-ProbeFile $s.Lock $p))
            $c.locked++
        }
        $step = 'mark'
        [System.IO.File]::Open($s.Locked, [System.IO.FileMode]::CreateNew, [System.IO.FileAccess]::Write, [System.IO.FileShare]::Read).Dispose()
        $step = 'hold'
        while (-not (Test-StopRequested)) { [System.Threading.Thread]::Sleep(1) }
    } catch {
        $failed = $_
        $failedStep = $step
    }
    foreach ($h in $held) {
        try {
            Unlock-ProbeFile $h
            $c.released++
        } catch {
            if ($null -eq $failed) { $failed = $_; $failedStep = 'release' }
        }
    }
    $pairs = @(@('locked', $c.locked), @('released', $c.released))
    if ($null -ne $failed) { return (New-RecipeResult $false (Get-RawError $failed $null) $failedStep $pairs $null) }
    return (New-RecipeResult $true 'null' $null $pairs $null)
}

# The intruder: waits ([IO.File]::Exists, about once a millisecond, up to params.wait_ms) for
# the holder's params.locked, then goes at its own files of params.files without asking, each
# call on its own, with a PowerShell user's calls: write (Set-Content -NoNewline), append
# (Add-Content -NoNewline), rename (Move-Item to params.moved), delete (Remove-Item), a mapped
# write ([IO.MemoryMappedFiles.MemoryMappedFile]::CreateFromFile(ReadWrite), a view accessor,
# the token's UTF-8 bytes at offset 0 as far as the file reaches, Flush), then the holder's own
# kind of lock (params.lock, Lock-ProbeFile) on the relock file and, only while it holds it,
# params.relocked ([IO.File]::Open(..., CreateNew), its token). counters: write, append,
# rename, delete, relock (1 when the call returned without an error; what got through is the
# harness's to read from the files), mmap_tried (1 once CreateFromFile returned or failed with
# anything but NotSupportedException, PlatformNotSupportedException among them);
# errors_sample: the refusals. Step: wait.
$script:OsLockIntruderPrepare = { param($r)
    $files = Get-FilesParam $r
    $locked = Get-PathParam $r 'locked' $false
    $relocked = Get-PathParam $r 'relocked' $false
    $moved = Get-PathParam $r 'moved' $false
    $lock = Get-Param $r 'lock'
    if ($null -eq $files -or $null -eq $locked -or $null -eq $relocked -or $null -eq $moved -or -not ($lock -is [string]) -or $lock.Length -eq 0) {
        throw (New-Unsupported 'an OS-lock intruder needs params.files, params.locked, params.relocked, params.moved and params.lock')
    }
    foreach ($k in @('write', 'append', 'rename', 'delete', 'mmap', 'relock')) {
        if (-not $files.ContainsKey($k)) { throw (New-Unsupported ('an OS-lock intruder needs params.files.' + $k)) }
    }
    if ($script:OsLockIds -cnotcontains $lock) { throw (New-Unsupported ('no ' + $lock + ' here')) }
    $waitMs = Get-IntParam $r 'wait_ms' 0 1 600000
    $relockMs = Get-IntParam $r 'relock_ms' 0 1 600000
    if ($waitMs -eq 0 -or $relockMs -eq 0) { throw (New-Unsupported 'an OS-lock intruder needs params.wait_ms and params.relock_ms') }
    return @{ Files = $files; Locked = $locked; Relocked = $relocked; Moved = $moved; Lock = $lock; WaitMs = $waitMs; Token = $r.Token }
}

$script:OsLockIntruderRun = { param($s)
    $c = @{ write = 0; append = 0; rename = 0; delete = 0; mmap_tried = 0; relock = 0 }
    $pairs = { @(@('write', $c.write), @('append', $c.append), @('rename', $c.rename), @('delete', $c.delete),
                 @('mmap_tried', $c.mmap_tried), @('relock', $c.relock)) }
    $sample = New-Object System.Collections.ArrayList
    $refused = { param($e) if ($sample.Count -lt $script:ErrorsSampleMax) { [void]$sample.Add((Get-RawError $e $null)) } }
    $f = $s.Files
    $until = (Get-NowMs) + $s.WaitMs
    while (-not [System.IO.File]::Exists($s.Locked)) {
        if ((Get-NowMs) -gt $until) {
            $e = New-Object System.IO.IOException ('the holder had not locked its files after ' + $s.WaitMs + ' ms')
            return (New-RecipeResult $false (Get-RawError $e $null) 'wait' (& $pairs) $null)
        }
        [System.Threading.Thread]::Sleep(1)
    }
    try { Set-Content -LiteralPath $f['write'] -Value $s.Token -NoNewline -ErrorAction Stop; $c.write = 1 } catch { & $refused $_ }
    try { Add-Content -LiteralPath $f['append'] -Value $s.Token -NoNewline -ErrorAction Stop; $c.append = 1 } catch { & $refused $_ }
    try { Move-Item -LiteralPath $f['rename'] -Destination $s.Moved -ErrorAction Stop; $c.rename = 1 } catch { & $refused $_ }
    try { Remove-Item -LiteralPath $f['delete'] -ErrorAction Stop; $c.delete = 1 } catch { & $refused $_ }
    $map = $null
    try {
        # [NullString]::Value: a $null passed for a string parameter of a .NET method arrives as ''
        $map = [System.IO.MemoryMappedFiles.MemoryMappedFile]::CreateFromFile($f['mmap'], [System.IO.FileMode]::Open,
            [NullString]::Value, 0, [System.IO.MemoryMappedFiles.MemoryMappedFileAccess]::ReadWrite)
        $c.mmap_tried = 1
    } catch {
        # NotSupportedException covers PlatformNotSupportedException: no mapping here
        if (-not ((Get-InnerException $_) -is [System.NotSupportedException])) { $c.mmap_tried = 1 }
        & $refused $_
    }
    if ($null -ne $map) {
        try {
            $view = $map.CreateViewAccessor(0, 0, [System.IO.MemoryMappedFiles.MemoryMappedFileAccess]::ReadWrite)
            try {
                $bytes = $script:Utf8.GetBytes($s.Token)
                $room = [Math]::Min($view.Capacity, (New-Object System.IO.FileInfo $f['mmap']).Length)
                $n = [int][Math]::Min([long]$bytes.Length, $room)
                $view.WriteArray([long]0, $bytes, 0, $n)
                $view.Flush()
            } finally {
                $view.Dispose()
            }
        } catch {
            & $refused $_
        } finally {
            $map.Dispose()
        }
    }
    try {
        $h = Lock-ProbeFile $s.Lock $f['relock']
        try {
            $fs = [System.IO.File]::Open($s.Relocked, [System.IO.FileMode]::CreateNew, [System.IO.FileAccess]::Write, [System.IO.FileShare]::Read)
            try { $b = $script:Utf8.GetBytes($s.Token); $fs.Write($b, 0, $b.Length) } finally { $fs.Dispose() }
            $c.relock = 1
        } finally {
            Unlock-ProbeFile $h
        }
    } catch {
        & $refused $_
    }
    return (New-RecipeResult $true 'null' $null (& $pairs) $sample)
}

foreach ($id in $script:OsLockIds) {
    $script:Recipes[$id] = @{ Prepare = $script:OsLockHolderPrepare; Run = $script:OsLockHolderRun; Method = $id }
}
$script:Recipes['os-lock.intrude'] = @{ Prepare = $script:OsLockIntruderPrepare; Run = $script:OsLockIntruderRun; Method = 'intrude' }

# The folder-watch consumers of ../shared/session.mjs (watchConsumer; ../dotnet/Probe.cs has the
# same), by method: `events` (the watcher only), `events-and-rescan` (the watcher and a listing
# of params.dir every params.rescan_ms), `poll` (the listing only). The watcher is what a
# PowerShell user writes: New-Object IO.FileSystemWatcher with the default InternalBufferSize,
# NotifyFilter = FileName, Register-ObjectEvent -InputObject on its Created and Error events
# (each with a -SourceIdentifier of this attempt's, no -Action: the events wait in the session's
# event queue), EnableRaisingEvents = $true. The loop drains the queue (Get-Event
# -SourceIdentifier, then Remove-Event of those events), taking $e.SourceEventArgs.Name of each
# Created event and counting the Error events (overflows: the watcher's
# InternalBufferOverflowException; the first raw errors in errors_sample) -- an events-only
# consumer does not rescan on one, relying on events alone is the recipe. The listing is
# [IO.Directory]::EnumerateFiles(dir), by file name. Every name not recorded yet is appended as
# a line to params.record (a FileStream kept open, FileMode.Append, buffer size 1: one Write per
# name, which the harness reads as it grows); once it watches it creates params.watching
# ([IO.File]::Open(..., CreateNew)), then loops until `stop` (Test-StopRequested, list when due,
# drain the events, [Threading.Thread]::Sleep(1)). Then Unregister-Event, Remove-Event of what
# is left, Dispose of the watcher, and the record closed. counters: events (names the events
# gave), listings, recorded, overflows (Error events). Steps: watch, mark, list, record.
$script:WatchPrepare = { param($r)
    $dir = Get-PathParam $r 'dir' $false
    $record = Get-PathParam $r 'record' $false
    $watching = Get-PathParam $r 'watching' $false
    if ($null -eq $dir -or $null -eq $record -or $null -eq $watching) {
        throw (New-Unsupported 'a watch consumer needs params.dir, params.record and params.watching')
    }
    $rescanMs = Get-IntParam $r 'rescan_ms' 0 1 600000
    if ($rescanMs -eq 0) { throw (New-Unsupported 'params.rescan_ms must be an integer from 1 to 600000') }
    $tag = 'conformance.watch.' + $PID.ToString($script:Invariant) + '.' + $r.Id
    return @{ Dir = $dir; Record = $record; Watching = $watching; RescanMs = $rescanMs; Method = $r.Method;
              CreatedId = $tag + '.created'; ErrorId = $tag + '.error' }
}

$script:WatchRun = { param($s)
    $c = @{ events = 0; listings = 0; recorded = 0; overflows = 0 }
    $sample = New-Object System.Collections.ArrayList
    $seen = New-Object 'System.Collections.Generic.HashSet[string]' ([System.StringComparer]::Ordinal)
    $step = 'record'
    $failed = $null
    $failedStep = $null
    $rec = $null
    $fsw = $null
    $registered = New-Object System.Collections.ArrayList
    try {
        $rec = New-Object System.IO.FileStream -ArgumentList $s.Record, ([System.IO.FileMode]::Append), ([System.IO.FileAccess]::Write), ([System.IO.FileShare]::Read), 1
        if ($s.Method -ne 'poll') {
            $step = 'watch'
            $fsw = New-Object System.IO.FileSystemWatcher -ArgumentList $s.Dir
            $fsw.NotifyFilter = [System.IO.NotifyFilters]::FileName
            $null = Register-ObjectEvent -InputObject $fsw -EventName Created -SourceIdentifier $s.CreatedId -ErrorAction Stop
            [void]$registered.Add($s.CreatedId)
            $null = Register-ObjectEvent -InputObject $fsw -EventName Error -SourceIdentifier $s.ErrorId -ErrorAction Stop
            [void]$registered.Add($s.ErrorId)
            $fsw.EnableRaisingEvents = $true
        }
        $step = 'mark'
        [System.IO.File]::Open($s.Watching, [System.IO.FileMode]::CreateNew, [System.IO.FileAccess]::Write, [System.IO.FileShare]::Read).Dispose()
        $nextList = [double]::PositiveInfinity
        if ($s.Method -ne 'events') { $nextList = (Get-NowMs) + $s.RescanMs }
        while (-not (Test-StopRequested)) {
            if ((Get-NowMs) -ge $nextList) {
                $step = 'list'
                foreach ($p in [System.IO.Directory]::EnumerateFiles($s.Dir)) {
                    $name = [System.IO.Path]::GetFileName($p)
                    if ($seen.Add($name)) {
                        $b = $script:Utf8.GetBytes($name + "`n")
                        $rec.Write($b, 0, $b.Length)
                        $c.recorded++
                    }
                }
                $c.listings++
                $nextList = (Get-NowMs) + $s.RescanMs
            }
            if ($null -ne $fsw) {
                $step = 'record'
                $got = @(Get-Event -SourceIdentifier $s.CreatedId -ErrorAction Ignore)
                foreach ($e in $got) {
                    $c.events++
                    $name = [string]$e.SourceEventArgs.Name
                    if ($name.Length -gt 0 -and $seen.Add($name)) {
                        $b = $script:Utf8.GetBytes($name + "`n")
                        $rec.Write($b, 0, $b.Length)
                        $c.recorded++
                    }
                }
                if ($got.Count -gt 0) { $got | Remove-Event -ErrorAction Stop }
                $bad = @(Get-Event -SourceIdentifier $s.ErrorId -ErrorAction Ignore)
                foreach ($e in $bad) {
                    $c.overflows++
                    $x = $e.SourceEventArgs.GetException()
                    if ($null -ne $x -and $sample.Count -lt $script:ErrorsSampleMax) { [void]$sample.Add((Get-RawError $x $null)) }
                }
                if ($bad.Count -gt 0) { $bad | Remove-Event -ErrorAction Stop }
            }
            [System.Threading.Thread]::Sleep(1)
        }
    } catch {
        $failed = $_
        $failedStep = $step
    }
    if ($null -ne $fsw) {
        try {
            $fsw.EnableRaisingEvents = $false
            foreach ($id in $registered) {
                Unregister-Event -SourceIdentifier $id -ErrorAction Stop
                Remove-Event -SourceIdentifier $id -ErrorAction Ignore
            }
            $fsw.Dispose()
        } catch {
            if ($null -eq $failed) { $failed = $_; $failedStep = 'watch' }
        }
    }
    if ($null -ne $rec) {
        try { $rec.Dispose() } catch { if ($null -eq $failed) { $failed = $_; $failedStep = 'record' } }
    }
    $pairs = @(@('events', $c.events), @('listings', $c.listings), @('recorded', $c.recorded), @('overflows', $c.overflows))
    if ($null -ne $failed) { return (New-RecipeResult $false (Get-RawError $failed $null) $failedStep $pairs $sample) }
    return (New-RecipeResult $true 'null' $null $pairs $sample)
}

foreach ($m in @('events-only', 'events-and-rescan', 'poll')) {
    $method = $m
    if ($m -eq 'events-only') { $method = 'events' }
    $script:Recipes['watch.' + $m] = @{ Prepare = $script:WatchPrepare; Run = $script:WatchRun; Method = $method }
}

function Format-Counters($pairs) {
    if ($null -eq $pairs) { return '' }
    $parts = New-Object System.Collections.ArrayList
    foreach ($p in $pairs) { [void]$parts.Add((Format-JsonString $p[0]) + ':' + (Format-JsonInt $p[1])) }
    return ',"counters":{' + ($parts -join ',') + '}'
}

function Format-Sample($sample) {
    if ($null -eq $sample) { return '' }
    return ',"errors_sample":[' + (@($sample) -join ',') + ']'
}

# ---------------------------------------------------------------------------------
# Session

function Send-Unsupported([string]$idText, [string]$why) {
    Send-Line ('{"type":"ready","id":' + $idText + ',"supported":false,"reason":' + (Format-JsonString $why) + '}')
}

# A prepare naming a recipe (protocol 2): its Prepare block resolves everything ahead of go.
# A prepare's paths resolved (Target, Source, Mark, Leaf of Target). A race sends the same paths
# trial after trial, so the last resolution is kept and reused while the paths (and whether
# source and mark are null) stay the same.
function Get-PreparePaths($msg) {
    $key = [string]$msg['target'] + [char]0 + [string]$msg['source'] + [char]0 + [string]$msg['mark'] +
           [char]0 + [string]($null -eq $msg['source']) + [string]($null -eq $msg['mark'])
    if ($null -ne $script:LastPrepare -and [string]::Equals($script:LastPrepare.Key, $key)) { return $script:LastPrepare }
    $target = Resolve-ProbePath $msg['target']
    $leaf = $null
    if (-not [string]::IsNullOrEmpty($target)) { $leaf = Get-LeafName $target }
    $script:LastPrepare = @{ Key = $key; Target = $target; Source = (Resolve-ProbePath $msg['source']);
                             Mark = (Resolve-ProbePath $msg['mark']); Leaf = $leaf }
    return $script:LastPrepare
}

function Invoke-PrepareRecipe($msg, [string]$idText) {
    $name = [string]$msg['recipe']
    $def = $script:Recipes[$name]
    if ($null -eq $def) { Send-Unsupported $idText ('unknown recipe ' + $name); return }
    $paths = Get-PreparePaths $msg
    $target = $paths.Target
    $source = $paths.Source
    $markPath = $paths.Mark
    $leaf = $paths.Leaf
    if ([string]::IsNullOrEmpty($target)) { Send-Unsupported $idText 'no target'; return }
    $token = ''
    if ($null -ne $msg['token']) { $token = [string]$msg['token'] }
    $params = $msg['params']
    if ($null -ne $params -and -not ($params -is [System.Collections.Hashtable])) { Send-Unsupported $idText 'params must be an object'; return }
    $r = @{ Id = $idText; Target = $target; Source = $source; Token = $token; Params = $params; Method = $def['Method'] }
    $state = $null
    try {
        $state = & $def['Prepare'] $r
    } catch {
        $ex = Get-InnerException $_
        $why = $null
        if ($null -ne $ex -and $null -ne $ex.Data -and $ex.Data.Contains('unsupported')) { $why = [string]$ex.Data['unsupported'] }
        if ($null -eq $why) { $why = 'cannot prepare ' + $name + ': ' + $_.Exception.Message }
        Send-Unsupported $idText ($name + ' ' + $why)
        return
    }
    $script:Prepared = @{
        Id = $idText
        Recipe = $true
        Run = $def['Run']
        State = $state
        Mark = $markPath
        Token = $token
    }
    Send-Line ('{"type":"ready","id":' + $idText + ',"supported":true}')
}

function Invoke-Prepare($msg) {
    $idText = Format-Id $msg['id']
    $script:Prepared = $null
    if ($msg.ContainsKey('recipe') -and $null -ne $msg['recipe']) { Invoke-PrepareRecipe $msg $idText; return }
    $variant = [string]$msg['variant']
    $def = $script:Variants[$variant]
    if ($null -eq $def) {
        Send-Line ('{"type":"ready","id":' + $idText + ',"supported":false,"reason":' + (Format-JsonString ('unknown variant ' + $variant)) + '}')
        return
    }
    if ($def['NeedsNoNewline'] -and -not $script:HasNoNewline) {
        Send-Line ('{"type":"ready","id":' + $idText + ',"supported":false,"reason":' + (Format-JsonString ('-NoNewline needs PowerShell 5.0 or later; this is ' + $script:RuntimeVersion)) + '}')
        return
    }
    $paths = Get-PreparePaths $msg
    $target = $paths.Target
    $source = $paths.Source
    $markPath = $paths.Mark
    $leaf = $paths.Leaf
    if ([string]::IsNullOrEmpty($target)) {
        Send-Line ('{"type":"ready","id":' + $idText + ',"supported":false,"reason":"no target"}')
        return
    }
    if ($def['NeedsSource'] -and [string]::IsNullOrEmpty($source)) {
        Send-Line ('{"type":"ready","id":' + $idText + ',"supported":false,"reason":' + (Format-JsonString ($variant + ' needs a source')) + '}')
        return
    }
    $token = ''
    if ($null -ne $msg['token']) { $token = [string]$msg['token'] }
    $p = @{
        Target = $target
        Source = $source
        Token = $token
        Bytes = $null
        Leaf = $leaf
        Args = $null
    }
    $p.Bytes = $script:Utf8.GetBytes($token)
    $p.Args = New-VariantArgs $variant $p
    $script:Prepared = @{
        Id = $idText
        Run = $def['Run']
        P = $p
        Mark = $markPath
        Token = $token
    }
    Send-Line ('{"type":"ready","id":' + $idText + ',"supported":true}')
}

function Invoke-Go([string]$idText) {
    $prep = $script:Prepared
    $script:Prepared = $null
    if ($null -eq $prep -or $prep.Id -ne $idText) {
        Write-Diag ('go ' + $idText + ' without prepare')
        exit 3
    }
    $run = $prep.Run
    $p = $prep.P
    $ok = $true
    $errJson = 'null'
    $extra = ''
    if ($prep.Recipe) {
        $script:RunningId = $prep.Id
        $script:StopSeen = $false
        if ($script:Monotonic) { $t0 = [System.Diagnostics.Stopwatch]::GetTimestamp() } else { $t0 = [DateTime]::UtcNow.Ticks }
        $res = $null
        try {
            $res = & $run $prep.State
        } catch {
            $res = New-RecipeResult $false (Get-RawError $_ $null) 'run' $null $null
        }
        if ($script:Monotonic) { $t1 = [System.Diagnostics.Stopwatch]::GetTimestamp() } else { $t1 = [DateTime]::UtcNow.Ticks }
        $script:RunningId = $null
        $ok = [bool]$res.Ok
        $errJson = $res.Error
        $extra = ',"step":' + (Format-JsonString $res.Step) + (Format-Counters $res.Counters) + (Format-Sample $res.Sample)
    } else {
        if ($script:Monotonic) { $t0 = [System.Diagnostics.Stopwatch]::GetTimestamp() } else { $t0 = [DateTime]::UtcNow.Ticks }
        try {
            $null = & $run $p
        } catch {
            $ok = $false
            $errJson = Get-RawError $_ $null
        }
        if ($script:Monotonic) { $t1 = [System.Diagnostics.Stopwatch]::GetTimestamp() } else { $t1 = [DateTime]::UtcNow.Ticks }
    }
    if ($ok -and -not [string]::IsNullOrEmpty($prep.Mark)) {
        try {
            [System.IO.File]::WriteAllText($prep.Mark, $prep.Token, $script:Utf8)
        } catch {
            $ok = $false
            $errJson = Get-RawError $_ 'MarkError'
        }
    }
    $okText = 'false'
    if ($ok) { $okText = 'true' }
    # the stamps' formatting and Send-Line written out: a function call costs about 8 us here
    $script:StdOut.Write('{"type":"result","id":' + $prep.Id + ',"ok":' + $okText +
               ',"t0_us":' + ([decimal]($t0 - $script:StampOffset) * $script:StampScale).ToString($script:Invariant) +
               ',"t1_us":' + ([decimal]($t1 - $script:StampOffset) * $script:StampScale).ToString($script:Invariant) +
               ',"error":' + $errJson + $extra + "}`n")
}

$script:Prepared = $null
$script:LastPrepare = $null
$script:Repeat = $null

try {
    # Resolve the cmdlets once, before any attempt, so the first go does not pay for it.
    $null = Get-Command -Name @('New-Item', 'Move-Item', 'Rename-Item', 'Copy-Item', 'Set-Content', 'Out-File', 'Add-Content', 'Test-Path') -ErrorAction Stop
    foreach ($n in @('mkdir', 'md')) { try { $null = Get-MkdirCommand $n } catch { } }

    $variantIds = @($script:Variants.Keys | Sort-Object | ForEach-Object { Format-JsonString $_ }) -join ','
    $recipeIds = @($script:RecipeOrder | ForEach-Object { Format-JsonString $_ }) -join ','
    Send-Line ('{"protocol":2,"type":"hello","probe":"powershell","families":["pwsh"],"runtime":' +
               (Format-JsonString $script:Runtime) + ',"version":' + (Format-JsonString $script:RuntimeVersion) +
               ',"pid":' + $PID.ToString($script:Invariant) + ',"clock":"' + $script:ClockKind + '","variants":[' + $variantIds +
               '],"recipes":[' + $recipeIds + ']}')

    while ($true) {
        if ($script:QuitAfter) { break }
        $line = Read-ProtocolLine
        if ($null -eq $line) { break }
        if ($line.Trim().Length -eq 0) { continue }
        $go = $script:GoRx.Match($line)
        if ($go.Success) {
            $prep = $script:Prepared
            # a variant's go, as Invoke-Go makes it, written out here: the fewer steps between
            # reading go and the first stamp, the tighter the contenders' release
            if ($script:Monotonic -and $null -ne $prep -and -not $prep.Recipe -and $null -eq $prep.Mark -and [string]::Equals($prep.Id, $go.Groups[1].Value)) {
                $script:Prepared = $null
                $okText = 'true'
                $errJson = 'null'
                $t0 = [System.Diagnostics.Stopwatch]::GetTimestamp()
                try {
                    $null = & $prep.Run $prep.P
                } catch {
                    $okText = 'false'
                    $errJson = Get-RawError $_ $null
                }
                $t1 = [System.Diagnostics.Stopwatch]::GetTimestamp()
                $script:StdOut.Write('{"type":"result","id":' + $prep.Id + ',"ok":' + $okText +
                           ',"t0_us":' + ([decimal]$t0 * $script:StampScale).ToString($script:Invariant) +
                           ',"t1_us":' + ([decimal]$t1 * $script:StampScale).ToString($script:Invariant) +
                           ',"error":' + $errJson + "}`n")
                continue
            }
            $null = Invoke-Go $go.Groups[1].Value
            continue
        }
        $prepare = $script:PrepareRx.Match($line)
        if ($prepare.Success) {
            # A race sends a cell's prepare trial after trial with only the id and the token
            # changed: the line without them is the key, and a repeat reuses what the first
            # prepare resolved (0.2 ms less per trial and contender). Written out here, not in a
            # function: the main loop is the hot path.
            $g = $prepare.Groups
            $key = $line.Remove($g[5].Index, $g[5].Length).Remove($g[1].Index, $g[1].Length)
            $again = $script:Repeat
            if ($null -ne $again -and [string]::Equals($again.Key, $key)) {
                $p = $again.P.Clone()
                $p.Token = $g[5].Value
                $p.Bytes = $script:Utf8.GetBytes($p.Token)
                if ($again.HasArgs) { $p.Args = New-VariantArgs $again.Variant $p }
                $script:Prepared = @{ Id = $g[1].Value; Run = $again.Run; P = $p; Mark = $again.Mark; Token = $p.Token }
                $script:StdOut.Write('{"type":"ready","id":' + $g[1].Value + ',"supported":true}' + "`n")
                continue
            }
            $script:Repeat = $null
            $null = Invoke-Prepare (ConvertFrom-PrepareMatch $prepare)
            $first = $script:Prepared
            if ($null -ne $first -and -not $first.Recipe) {
                $script:Repeat = @{ Key = $key; P = $first.P; Run = $first.Run; Mark = $first.Mark;
                                    Variant = $g[2].Value; HasArgs = ($null -ne $first.P.Args) }
            }
            continue
        }
        $msg = $null
        try {
            $msg = ConvertFrom-ProtocolLine $line
        } catch {
            Write-Diag ('not JSON (' + $_.Exception.Message + '): ' + $line)
            exit 3
        }
        $type = $msg['type']
        if ($type -eq 'quit') { break }
        if ($type -eq 'prepare') { $null = Invoke-Prepare $msg; continue }
        if ($type -eq 'go') { $null = Invoke-Go (Format-Id $msg['id']); continue }
        # a stop when no loop runs (the recipe had already answered) is ignored
        if ($type -eq 'stop') { continue }
        Write-Diag ('unknown message type ' + [string]$type)
        exit 3
    }
} catch {
    Write-Diag ('fatal: ' + $_.Exception.ToString())
    exit 4
}
exit 0
