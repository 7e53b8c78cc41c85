//! One-line reproductions of a measured cell, for `conformance diff`: a command the user can
//! paste into a POSIX shell to see the call's behaviour again.
//!
//! A second-comer cell of Node, Bun or Deno whose call (the matrix's `call`) is a JavaScript
//! statement becomes `node -e …` / `bun -e …` / `deno eval …`: it makes a fresh temporary
//! folder, puts the target state (and the variant's source) there, makes the call, and prints
//! `succeeded` or `failed CODE message`, then what stands at the name. PowerShell calls become
//! `pwsh -NoProfile -c …` and cmd.exe calls `cmd /c …` the same way; cmd under Wine reads quoted
//! names on a command line differently (`echo x> "name"` is an invalid name there), so its cells
//! get the harness line, `conformance run -r cmd …`.
//! Everything else — races (one process cannot race itself), .NET (C# has no one-liner; the
//! line runs the C# probe, `probes/dotnet/Probe.cs`), calls written as a sequence (`open +
//! write + close`) — is reproduced by the harness itself: `conformance run -r NAME=PATH -v ID
//! --scenario … --target …`. Every path and script is one shell word, quoted with the `shlex`
//! crate.

use crate::matrix::{Form, SourceKind};
use crate::report::model::{Cell, Scenario, TargetState};

/// What a reproduction needs to know of the cell's runtime and variant beyond the cell.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The runtime's executable as the run recorded it (for cmd under Wine: the Wine loader);
    /// `None` when the results file does not say.
    pub exe: Option<&'a str>,
    /// What the harness prepares as the variant's source (the matrix's `source`); `None` when
    /// the variant is not in the matrices (then a call naming `src` is not made directly).
    pub source: Option<SourceKind>,
}

/// The one-line reproduction of `cell` (see the module documentation). Never fails: a cell
/// that cannot be made directly gets the `conformance run` line.
pub fn line(cell: &Cell, ctx: Context<'_>) -> String {
    let exe = ctx.exe.unwrap_or(match cell.runtime_name.as_str() {
        "coreclr" => "dotnet",
        "powershell" => "powershell.exe",
        n => n,
    });
    if cell.scenario == Scenario::SecondComer {
        if let Some(source) = ctx.source {
            let direct = match cell.runtime_name.as_str() {
                "node" | "bun" | "deno" => js(cell, source).map(|script| {
                    let eval = if cell.runtime_name == "deno" { "eval" } else { "-e" };
                    join(&[exe, eval, &script])
                }),
                "pwsh" | "powershell" => pwsh(cell, source).map(|s| join(&[exe, "-NoProfile", "-c", &s])),
                // under Wine the recorded path is the Wine loader, and Wine's cmd reads quoted
                // names in a command line differently from cmd.exe (`echo x> "name"` is an
                // invalid name there): the harness's cmd probe reproduces those
                "cmd" if exe.ends_with("cmd") || exe.ends_with("cmd.exe") => {
                    cmd(cell, source).map(|s| join(&[exe, "/c", &s]))
                }
                "cmd" => return harness(cell, "cmd"),
                _ => None,
            };
            if let Some(d) = direct {
                return d;
            }
        }
    }
    harness(cell, exe)
}

/// `conformance run -r NAME=PATH -v ID --scenario S [--target T]`: the harness measures the
/// one cell again with the same probe. `runtime` is the executable, or the selector itself when
/// it is the runtime's name (`cmd`, found by discovery). A recipe that raced a library names
/// its version too (`-r proper-lockfile@4.1.1`).
pub fn harness(cell: &Cell, runtime: &str) -> String {
    let selector =
        if runtime == cell.runtime_name { runtime.to_string() } else { format!("{}={runtime}", cell.runtime_name) };
    harness_as(cell, &selector)
}

/// [`harness`] with the `-r` selector given as it is (`coreclr@8.0.34`).
pub fn harness_as(cell: &Cell, selector: &str) -> String {
    let mut words = vec!["conformance", "run", "-r", selector];
    if let Some(lib) = &cell.library {
        words.extend(["-r", lib]);
    }
    words.extend(["-v", &cell.variant, "--scenario"]);
    words.push(cell.scenario.as_str());
    if cell.scenario == Scenario::SecondComer {
        words.extend(["--target", cell.target.as_str()]);
    }
    join(&words)
}

/// The words joined into one command line, each quoted for a POSIX shell where it needs it.
fn join(words: &[&str]) -> String {
    words
        .iter()
        .map(|w| match shlex::try_quote(w) {
            Ok(q) => q.into_owned(),
            // a NUL cannot be passed in an argument at all; show it escaped, not silently cut
            Err(_) => shlex::try_quote(&w.replace('\0', "\\0")).map(|q| q.into_owned()).unwrap_or_default(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Calls that are not a statement of their language as written (a sequence of steps, a
/// placeholder): made by the harness instead.
fn descriptive(call: &str) -> bool {
    call.contains(" + ") || call.contains('<') || call.contains(", until") || call.contains("(leaf of")
}

/// The JavaScript of a second comer in Node, Bun or Deno (`None` when the call is not a
/// statement). It prints `ok` or the error's code and message, then what the name holds (its
/// text, or the code of reading it: `EISDIR`, `ENOENT`).
fn js(cell: &Cell, source: SourceKind) -> Option<String> {
    if descriptive(&cell.call) || cell.form == Form::Stream {
        return None;
    }
    let call = &cell.call;
    // Deno evaluates a module (top-level await, no require); Node and Bun a script
    let mut s = if cell.runtime_name == "deno" {
        String::from("const fs=await import('node:fs'),d=Deno.makeTempDirSync()")
    } else {
        String::from("const fs=require('fs'),d=fs.mkdtempSync(require('os').tmpdir()+'/c-')")
    };
    s.push_str(",src=d+'/src',text='second'");
    // Deno's own calls take bytes; node:fs and Bun.write take strings
    s.push_str(if cell.family == "deno" { ",data=new TextEncoder().encode(text)" } else { ",data=text" });
    if call.contains("fsp.") {
        s.push_str(",fsp=fs.promises");
    }
    if call.contains("COPYFILE_EXCL") {
        s.push_str(",{COPYFILE_EXCL}=fs.constants");
    }
    s.push_str(";let p=d+'/name';");
    match source {
        SourceKind::None => {}
        SourceKind::File => s.push_str("fs.writeFileSync(src,text);"),
        SourceKind::EmptyDir => s.push_str("fs.mkdirSync(src);"),
        SourceKind::Dir => s.push_str("fs.mkdirSync(src);fs.writeFileSync(src+'/owner.second','');"),
        SourceKind::Tree => s.push_str(
            "fs.mkdirSync(src+'/sub/deeper',{recursive:true});fs.writeFileSync(src+'/owner.second','');fs.writeFileSync(src+'/sub/deeper/data',text);",
        ),
    }
    s.push_str(match cell.target {
        TargetState::Absent => "",
        TargetState::File => "fs.writeFileSync(p,'first');",
        TargetState::EmptyDir => "fs.mkdirSync(p);",
        TargetState::Dir => "fs.mkdirSync(p);fs.writeFileSync(p+'/owner.first','');",
        TargetState::SelfSame => "p=src;",
        TargetState::SelfHardlink => "fs.linkSync(src,p);",
        TargetState::SelfSymlink => "fs.symlinkSync(src,p);",
        TargetState::SymlinkToFile => "fs.writeFileSync(p+'.to','first');fs.symlinkSync(p+'.to',p);",
        TargetState::SymlinkToDir => "fs.mkdirSync(p+'.to');fs.symlinkSync(p+'.to',p);",
        TargetState::DanglingSymlink => "fs.symlinkSync(p+'.missing',p);",
    });
    s.push_str("(async()=>{try{");
    if cell.form == Form::Callback {
        s.push_str("await new Promise((res,rej)=>{const cb=e=>e?rej(e):res();");
        s.push_str(call);
        s.push_str("});");
    } else {
        s.push_str(call);
        s.push(';');
    }
    // no `??` or optional chaining: Node 12 runs this too
    s.push_str("console.log('ok')}catch(e){console.log(e.code||e.name,e.message)}let r;try{r=fs.readFileSync(p,'utf8')}catch(e){r=e.code}console.log('name:',r)})()");
    Some(s)
}

/// The PowerShell of a second comer (`None` when the call is not a statement or the target
/// state has no set-up here). The call's `p`, `src` and `token` become `$p`, `$src` and
/// `'second'`.
fn pwsh(cell: &Cell, source: SourceKind) -> Option<String> {
    if descriptive(&cell.call) {
        return None;
    }
    let call = replace_words(&cell.call, &[("p", "$p"), ("src", "$src"), ("token", "'second'")]);
    let mut s = String::from("$ErrorActionPreference='Stop';$d=Join-Path ([IO.Path]::GetTempPath()) ('conformance-'+[guid]::NewGuid());New-Item -ItemType Directory $d|Out-Null;$p=Join-Path $d 'name';$src=Join-Path $d 'src';");
    match source {
        SourceKind::None => {}
        SourceKind::File => s.push_str("Set-Content -LiteralPath $src -Value second -NoNewline;"),
        SourceKind::EmptyDir => s.push_str("New-Item -ItemType Directory $src|Out-Null;"),
        SourceKind::Dir => s.push_str("New-Item -ItemType Directory $src|Out-Null;New-Item -ItemType File (Join-Path $src 'owner.second')|Out-Null;"),
        SourceKind::Tree => s.push_str("New-Item -ItemType Directory (Join-Path $src 'sub/deeper')|Out-Null;New-Item -ItemType File (Join-Path $src 'owner.second')|Out-Null;Set-Content -LiteralPath (Join-Path $src 'sub/deeper/data') -Value second -NoNewline;"),
    }
    s.push_str(match cell.target {
        TargetState::Absent => "",
        TargetState::File => "Set-Content -LiteralPath $p -Value first -NoNewline;",
        TargetState::EmptyDir => "New-Item -ItemType Directory $p|Out-Null;",
        TargetState::Dir => {
            "New-Item -ItemType Directory $p|Out-Null;New-Item -ItemType File (Join-Path $p 'owner.first')|Out-Null;"
        }
        _ => return None,
    });
    s.push_str("try{");
    s.push_str(&call);
    s.push_str("|Out-Null;'succeeded'}catch{'failed '+$_.Exception.GetType().FullName+': '+$_.Exception.Message};Get-Item -Force -LiteralPath $p -ErrorAction SilentlyContinue|Select-Object Mode,Name,Length");
    Some(s)
}

/// The cmd line of a second comer (`None` when the target state has no set-up here): in a
/// fresh folder under `%TEMP%`, where the call's `"name"` and `"src"` are.
fn cmd(cell: &Cell, source: SourceKind) -> Option<String> {
    let mut s = String::from(
        "cd /d %TEMP% && (rd /s /q conformance-repro 2>nul & mkdir conformance-repro) && cd conformance-repro",
    );
    match source {
        SourceKind::None => {}
        SourceKind::File => s.push_str(" && (echo second> \"src\")"),
        SourceKind::EmptyDir => s.push_str(" && mkdir \"src\""),
        SourceKind::Dir => s.push_str(" && mkdir \"src\" && (echo.> \"src\\owner.second\")"),
        SourceKind::Tree => s.push_str(
            " && mkdir \"src\\sub\\deeper\" && (echo.> \"src\\owner.second\") && (echo second> \"src\\sub\\deeper\\data\")",
        ),
    }
    s.push_str(match cell.target {
        TargetState::Absent => "",
        TargetState::File => " && (echo first> \"name\")",
        TargetState::EmptyDir => " && mkdir \"name\"",
        TargetState::Dir => " && mkdir \"name\" && (echo.> \"name\\owner.first\")",
        _ => return None,
    });
    s.push_str(" && (");
    s.push_str(&cell.call);
    s.push_str(" && echo succeeded || echo failed) & dir /b /s");
    Some(s)
}

/// `text` with each whole identifier-like word found in `map` replaced (`p` but not `ps` or
/// `$p`); quoted strings are left alone.
fn replace_words(text: &str, map: &[(&str, &str)]) -> String {
    let mut out = String::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut prev: Option<char> = None;
    let flush = |word: &mut String, out: &mut String, prev: Option<char>| {
        let standalone = !matches!(prev, Some('$' | '-' | '.' | '[' | ':'));
        match map.iter().find(|(w, _)| *w == word.as_str()) {
            Some((_, r)) if standalone => out.push_str(r),
            _ => out.push_str(word),
        }
        word.clear();
    };
    let mut before_word = None;
    for ch in text.chars() {
        if let Some(q) = quote {
            out.push(ch);
            if ch == q {
                quote = None;
            }
        } else if ch.is_alphanumeric() || ch == '_' {
            if word.is_empty() {
                before_word = prev;
            }
            word.push(ch);
        } else {
            flush(&mut word, &mut out, before_word);
            if ch == '\'' || ch == '"' {
                quote = Some(ch);
            }
            out.push(ch);
        }
        prev = Some(ch);
    }
    flush(&mut word, &mut out, before_word);
    out
}

#[cfg(test)]
mod tests {
    use super::{line, replace_words, Cell, Context, Form, Scenario, SourceKind, TargetState};

    fn cell(runtime: &str, family: &str, call: &str, target: TargetState) -> Cell {
        let mut c = crate::report::fixture("base.json")
            .cells
            .into_iter()
            .find(|c| c.scenario == Scenario::SecondComer)
            .expect("a second-comer cell");
        c.runtime_name = runtime.into();
        c.family = family.into();
        c.call = call.into();
        c.target = target;
        c.form = Form::Sync;
        c
    }

    /// A library recipe's repro races the same version of the library.
    #[test]
    fn a_library_recipe_names_its_version() {
        let mut c = crate::report::fixture("base.json").cells.remove(0);
        c.variant = "mutex.lockfile".into();
        c.scenario = Scenario::Mutex;
        c.library = Some("lockfile@1.0.3".into());
        assert_eq!(
            super::harness(&c, "/usr/bin/node"),
            "conformance run -r 'node=/usr/bin/node' -r lockfile@1.0.3 -v mutex.lockfile --scenario mutex"
        );
    }

    #[test]
    fn js_reproductions_are_one_quoted_word_per_argument() {
        let c = cell("node", "node", "fs.writeFileSync(p, data, {flag:'wx'})", TargetState::File);
        let exe = "/opt/my node's/bin/node";
        let l = line(&c, Context { exe: Some(exe), source: Some(SourceKind::None) });
        let words = shlex::split(&l).expect("a shell line");
        assert_eq!(words.len(), 3, "{l}");
        assert_eq!(words[0], exe);
        assert_eq!(words[1], "-e");
        assert!(
            words[2].contains("fs.writeFileSync(p,'first');(async()=>{try{fs.writeFileSync(p, data, {flag:'wx'});"),
            "{l}"
        );
        // deno evaluates, with node:fs imported
        let mut d = c.clone();
        d.runtime_name = "deno".into();
        let l = line(&d, Context { exe: None, source: Some(SourceKind::None) });
        let words = shlex::split(&l).unwrap();
        assert_eq!(&words[..2], ["deno", "eval"]);
        assert!(words[2].contains("await import('node:fs')"), "{l}");
    }

    #[test]
    fn callbacks_wait_and_sequences_go_to_the_harness() {
        let mut c = cell("bun", "node", "fs.writeFile(p, data, {flag:'wx'}, cb)", TargetState::Absent);
        c.form = Form::Callback;
        let l = line(&c, Context { exe: Some("bun"), source: Some(SourceKind::None) });
        assert!(l.contains("await new Promise((res,rej)=>{const cb=e=>e?rej(e):res();fs.writeFile("), "{l}");
        let seq = cell("node", "node", "fs.openSync(p, 'wx') + writeSync + closeSync", TargetState::Dir);
        let l = line(&seq, Context { exe: Some("/usr/bin/node"), source: Some(SourceKind::None) });
        assert_eq!(
            l,
            "conformance run -r 'node=/usr/bin/node' -v node.writeFileSync.wx --scenario second-comer --target dir"
        );
    }

    #[test]
    fn dotnet_and_races_run_the_probe() {
        let c = cell("coreclr", "dotnet", "File.Move(src, p)", TargetState::File);
        let l = line(&c, Context { exe: Some("/x y/dotnet"), source: Some(SourceKind::File) });
        assert_eq!(
            shlex::split(&l).unwrap(),
            [
                "conformance",
                "run",
                "-r",
                "coreclr=/x y/dotnet",
                "-v",
                "node.writeFileSync.wx",
                "--scenario",
                "second-comer",
                "--target",
                "file"
            ]
        );
        let mut r = cell("node", "node", "fs.mkdirSync(p)", TargetState::Absent);
        r.scenario = Scenario::Race;
        assert!(line(&r, Context { exe: Some("node"), source: Some(SourceKind::None) }).ends_with("--scenario race"));
    }

    #[test]
    fn pwsh_and_cmd_bind_the_names() {
        let c = cell("pwsh", "pwsh", "Move-Item -LiteralPath src -Destination p -Force", TargetState::File);
        let l = line(&c, Context { exe: Some("pwsh"), source: Some(SourceKind::File) });
        let w = shlex::split(&l).unwrap();
        assert_eq!(&w[..3], ["pwsh", "-NoProfile", "-c"]);
        assert!(w[3].contains("try{Move-Item -LiteralPath $src -Destination $p -Force|Out-Null;"), "{l}");
        let c = cell("cmd", "cmd", "ren \"src\" \"name\"", TargetState::EmptyDir);
        let l = line(&c, Context { exe: Some("C:\\Windows\\System32\\cmd.exe"), source: Some(SourceKind::File) });
        let w = shlex::split(&l).unwrap();
        assert_eq!(&w[1..3], ["/c", "cd /d %TEMP% && (rd /s /q conformance-repro 2>nul & mkdir conformance-repro) && cd conformance-repro && (echo second> \"src\") && mkdir \"name\" && (ren \"src\" \"name\" && echo succeeded || echo failed) & dir /b /s"]);
        // under Wine (the recorded path is the loader) the harness's probe reproduces it
        let l = line(&c, Context { exe: Some("/usr/lib/wine/wine64"), source: Some(SourceKind::File) });
        assert_eq!(l, "conformance run -r cmd -v node.writeFileSync.wx --scenario second-comer --target empty-dir");
        assert_eq!(
            replace_words("Test-Path p -x $p 'p' src.p", &[("p", "$p"), ("src", "$src")]),
            "Test-Path $p -x $p 'p' $src.p"
        );
    }
}
