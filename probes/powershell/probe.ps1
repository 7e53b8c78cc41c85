# conformance probe for PowerShell cmdlets and .NET calls made from PowerShell
# (protocol 1, session mode; see ../PROTOCOL.md). Runs unchanged on PowerShell 7.x
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
# - JSON is read with a small parser of its own: ConvertFrom-Json differs between 5.1
#   and 7 (7 turns date-like strings into DateTime) and would have to be trusted with
#   paths. JSON is written with a small escaper of its own for the same reason.

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

function Format-JsonString($value) {
    if ($null -eq $value) { return 'null' }
    $s = [string]$value
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

# Microseconds since the Unix epoch from DateTime ticks (100 ns). Decimal arithmetic
# keeps every digit (a double would not: the tick count is above 2^53).
function Format-TicksAsUs([long]$ticks) {
    $us = [decimal]($ticks - 621355968000000000) / [decimal]10
    return $us.ToString($script:Invariant)
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

function ConvertFrom-ProtocolLine([string]$text) {
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
    if ($variant -eq 'pwsh.Set-Content') {
        if ($script:IsCore) {
            return @{ LiteralPath = $p.Target; Value = $p.Token; NoNewline = $true; Encoding = 'utf8NoBOM'; ErrorAction = 'Stop' }
        }
        return @{ LiteralPath = $p.Target; Value = $p.Bytes; Encoding = 'Byte'; ErrorAction = 'Stop' }
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
    return '{"type":' + (Format-JsonString $type) +
           ',"code":' + (Format-JsonString $code) +
           ',"errno":null,"hresult":' + (Format-JsonInt $hresult) +
           ',"message":' + (Format-JsonString $message) + '}'
}

# ---------------------------------------------------------------------------------
# Session

function Invoke-Prepare($msg) {
    $idText = Format-Id $msg['id']
    $variant = [string]$msg['variant']
    $script:Prepared = $null
    $def = $script:Variants[$variant]
    if ($null -eq $def) {
        Send-Line ('{"type":"ready","id":' + $idText + ',"supported":false,"reason":' + (Format-JsonString ('unknown variant ' + $variant)) + '}')
        return
    }
    if ($def['NeedsNoNewline'] -and -not $script:HasNoNewline) {
        Send-Line ('{"type":"ready","id":' + $idText + ',"supported":false,"reason":' + (Format-JsonString ('-NoNewline needs PowerShell 5.0 or later; this is ' + $script:RuntimeVersion)) + '}')
        return
    }
    $target = Resolve-ProbePath $msg['target']
    if ([string]::IsNullOrEmpty($target)) {
        Send-Line ('{"type":"ready","id":' + $idText + ',"supported":false,"reason":"no target"}')
        return
    }
    $source = Resolve-ProbePath $msg['source']
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
        Leaf = (Get-LeafName $target)
        Args = $null
    }
    $p.Bytes = $script:Utf8.GetBytes($token)
    $p.Args = New-VariantArgs $variant $p
    $script:Prepared = @{
        Id = $idText
        Run = $def['Run']
        P = $p
        Mark = (Resolve-ProbePath $msg['mark'])
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
    $t0 = [DateTime]::UtcNow.Ticks
    try {
        $null = & $run $p
    } catch {
        $ok = $false
        $errJson = Get-RawError $_ $null
    }
    $t1 = [DateTime]::UtcNow.Ticks
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
    Send-Line ('{"type":"result","id":' + $prep.Id + ',"ok":' + $okText +
               ',"t0_us":' + (Format-TicksAsUs $t0) + ',"t1_us":' + (Format-TicksAsUs $t1) +
               ',"error":' + $errJson + '}')
}

$script:Prepared = $null

try {
    # Resolve the cmdlets once, before any attempt, so the first go does not pay for it.
    $null = Get-Command -Name @('New-Item', 'Move-Item', 'Rename-Item', 'Copy-Item', 'Set-Content', 'Out-File', 'Test-Path') -ErrorAction Stop

    Send-Line ('{"protocol":1,"type":"hello","probe":"powershell","families":["pwsh"],"runtime":' +
               (Format-JsonString $script:Runtime) + ',"version":' + (Format-JsonString $script:RuntimeVersion) +
               ',"pid":' + $PID.ToString($script:Invariant) + '}')

    while ($true) {
        $line = $script:StdIn.ReadLine()
        if ($null -eq $line) { break }
        if ($line.Trim().Length -eq 0) { continue }
        $go = $script:GoRx.Match($line)
        if ($go.Success) {
            $null = Invoke-Go $go.Groups[1].Value
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
        Write-Diag ('unknown message type ' + [string]$type)
        exit 3
    }
} catch {
    Write-Diag ('fatal: ' + $_.Exception.ToString())
    exit 4
}
exit 0
