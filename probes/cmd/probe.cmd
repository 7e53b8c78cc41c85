@echo off
rem conformance probe for cmd.exe (protocol 1, ONE-SHOT mode; see ../PROTOCOL.md).
rem One process per attempt. Data arrives only in environment variables:
rem   CONFORMANCE_VARIANT CONFORMANCE_TARGET CONFORMANCE_SOURCE CONFORMANCE_TOKEN CONFORMANCE_MARK
rem and is read only through delayed expansion (!VAR!): cmd.exe on Windows does not
rem re-parse & % ^ ( ) ! inside an expanded value. No %CONFORMANCE_...% expansion feeds a
rem command; the only ones are the Wine-only checks under :rescan_checks.
rem Stdout carries exactly two protocol lines (ready, result); the command's own
rem stdout and stderr both go to stderr (1>&2), so prompts and "1 file(s) moved."
rem land in the harness's raw message, never on the protocol stream.
rem Wine 8 deviations this file works around are listed in README.md.
setlocal EnableExtensions DisableDelayedExpansion
set "_w=!_x!"
setlocal EnableDelayedExpansion
rem A preset COPYCMD=/Y or /-Y would change the defaults of move and copy.
set "COPYCMD="
set "V=!CONFORMANCE_VARIANT!"
set "T=!CONFORMANCE_TARGET!"
set "S=!CONFORMANCE_SOURCE!"
set "TOK=!CONFORMANCE_TOKEN!"
set "M=!CONFORMANCE_MARK!"

rem Feature checks (behaviour, not "is this Wine"):
rem  ORBROKEN: `a || b` runs b even when a succeeded (Wine up to 9.x executes both sides
rem            of && and || unconditionally). Then only errorlevel tells failure apart.
rem  SUBST:    !VAR:*x=y! substitution works in delayed expansion (Windows; not Wine 8).
rem  RESCAN:   delayed expansion re-expands !...! found inside an inserted value (Wine 8;
rem            Windows expands once). _w holds the literal text !_x! (set while
rem            delayed expansion is still off); one expansion gives that text, a rescan
rem            gives the value of _x.
set "ORBROKEN="
(call ) || set "ORBROKEN=1"
set "SUBST="
set "_p=a\b"
if "!_p:*\=!"=="b" set "SUBST=1"
set "_p="
set "RESCAN="
set "_x=1"
set "_y=!_w!"
if "!_y!"=="1" set "RESCAN=1"
set "_x=" & set "_y=" & set "_w="
rem A recipe (protocol 2) instead of a variant: see :recipe at the end.
set "RCP=!CONFORMANCE_RECIPE!"
if defined RCP goto recipe

rem Variant table: label to run, whether it needs a source, whether it writes the token.
set "L="
set "NEEDS="
set "NEEDTOK="
if "!V!"=="cmd.mkdir" set "L=mkdir"
if "!V!"=="cmd.ren" set "L=ren"
if "!V!"=="cmd.move" set "L=move"
if "!V!"=="cmd.move.Y" set "L=moveY"
if "!V!"=="cmd.move.-Y" set "L=moveNY"
if "!V!"=="cmd.copy" set "L=copy"
if "!V!"=="cmd.copy.-Y" set "L=copyNY"
if "!V!"=="cmd.redirect" set "L=redirect"
if "!V!"=="cmd.if-not-exist+redirect" set "L=ifnotexist"
if "!V!"=="cmd.if-not-exist+move" set "L=ifnotexistmove"
if not defined L goto unsupported_variant
if "!L!"=="ren" set "NEEDS=1"
if "!L!"=="move" set "NEEDS=1"
if "!L!"=="moveY" set "NEEDS=1"
if "!L!"=="moveNY" set "NEEDS=1"
if "!L!"=="copy" set "NEEDS=1"
if "!L!"=="copyNY" set "NEEDS=1"
if "!L!"=="ifnotexistmove" set "NEEDS=1"
if "!L!"=="redirect" set "NEEDTOK=1"
if "!L!"=="ifnotexist" set "NEEDTOK=1"
if defined M set "NEEDTOK=1"
if not defined T goto unsupported_target
if defined NEEDS if not defined S goto unsupported_source
if defined NEEDTOK if not defined TOK goto unsupported_token
if defined RESCAN goto rescan_checks
:rescan_checked
if defined RCP goto recipe_ready
if "!L!"=="ren" goto basename
goto ready

rem Only where delayed expansion re-expands the VALUE it inserted (RESCAN, Wine up to
rem 9.x): a '!' inside a value is eaten there (the copies T, S, TOK, M above are
rem already damaged) and the call would touch another path; %-expansion there
rem re-expands too, so no expansion at all passes every value through intact. In RESCAN
rem mode only, and only to look, never to run anything, the raw variables are read
rem with %-expansion (the one exception to "never %CONFORMANCE_...%" in this file), and
rem a value is refused unless both tests show it holds neither '!' nor '%':
rem  1. "%x%%x%" equals "!x!!x!" (delayed expansion on): fails for a % (two copies, so
rem     even a single % pairs up) and for most '!'.
rem  2. "%x:!=%" equals "%x%" (delayed expansion off): fails for any '!'. A test line
rem     that cmd cannot parse leaves the value refused.
:rescan_checks
set "UNSAFE="
if not "%CONFORMANCE_TARGET%%CONFORMANCE_TARGET%"=="!CONFORMANCE_TARGET!!CONFORMANCE_TARGET!" set "UNSAFE=1"
if not "%CONFORMANCE_SOURCE%%CONFORMANCE_SOURCE%"=="!CONFORMANCE_SOURCE!!CONFORMANCE_SOURCE!" set "UNSAFE=1"
if not "%CONFORMANCE_TOKEN%%CONFORMANCE_TOKEN%"=="!CONFORMANCE_TOKEN!!CONFORMANCE_TOKEN!" set "UNSAFE=1"
if not "%CONFORMANCE_MARK%%CONFORMANCE_MARK%"=="!CONFORMANCE_MARK!!CONFORMANCE_MARK!" set "UNSAFE=1"
if defined UNSAFE goto unsupported_rescan
setlocal DisableDelayedExpansion
set "_u="
if not defined CONFORMANCE_TARGET goto rescan_s
set "_u=1"
if "%CONFORMANCE_TARGET:!=%"=="%CONFORMANCE_TARGET%" set "_u="
if defined _u goto rescan_end
:rescan_s
if not defined CONFORMANCE_SOURCE goto rescan_tok
set "_u=1"
if "%CONFORMANCE_SOURCE:!=%"=="%CONFORMANCE_SOURCE%" set "_u="
if defined _u goto rescan_end
:rescan_tok
if not defined CONFORMANCE_TOKEN goto rescan_m
set "_u=1"
if "%CONFORMANCE_TOKEN:!=%"=="%CONFORMANCE_TOKEN%" set "_u="
if defined _u goto rescan_end
:rescan_m
if not defined CONFORMANCE_MARK goto rescan_end
set "_u=1"
if "%CONFORMANCE_MARK:!=%"=="%CONFORMANCE_MARK%" set "_u="
:rescan_end
endlocal & set "UNSAFE=%_u%"
if defined UNSAFE goto unsupported_rescan
goto rescan_checked

rem ren takes a bare new name: the target's last path component (the harness puts
rem source and target in the same folder). Pure string work, no file-system lookup.
:basename
set "TNAME=!T!"
if not defined SUBST goto basename_percent
:basename_delayed
if not "!TNAME:*\=!"=="!TNAME!" (set "TNAME=!TNAME:*\=!" & goto basename_delayed)
if not "!TNAME:*/=!"=="!TNAME!" (set "TNAME=!TNAME:*/=!" & goto basename_delayed)
goto basename_done
:basename_percent
rem Fallback for cmd.exe builds without delayed substitution (Wine 8), where
rem :rescan_checks has already refused any target holding '%' or '!', so %-expansion
rem of this copy is lossless there.
if not "%TNAME:*\=%"=="%TNAME%" (set "TNAME=%TNAME:*\=%" & goto basename_percent)
if not "%TNAME:*/=%"=="%TNAME%" (set "TNAME=%TNAME:*/=%" & goto basename_percent)
:basename_done
if not defined TNAME goto unsupported_target
goto ready

:unsupported_variant
>&2 echo probe: unknown variant [!V!]
echo {"protocol":1,"type":"ready","supported":false,"reason":"unknown variant"}
exit /b 0
:unsupported_target
>&2 echo probe: CONFORMANCE_TARGET is empty or has no file name
echo {"protocol":1,"type":"ready","supported":false,"reason":"CONFORMANCE_TARGET is empty or has no file name"}
exit /b 0
:unsupported_source
>&2 echo probe: variant !V! needs CONFORMANCE_SOURCE
echo {"protocol":1,"type":"ready","supported":false,"reason":"CONFORMANCE_SOURCE is empty"}
exit /b 0
:unsupported_rescan
>&2 echo probe: a value holds an exclamation mark or a percent sign, which this cmd.exe re-expands inside variables
echo {"protocol":1,"type":"ready","supported":false,"reason":"a path or token holds an exclamation mark or a percent sign, which this cmd.exe (Wine) re-expands inside variable values"}
exit /b 0
:unsupported_token
>&2 echo probe: variant !V! needs CONFORMANCE_TOKEN
echo {"protocol":1,"type":"ready","supported":false,"reason":"CONFORMANCE_TOKEN is empty"}
exit /b 0

:ready
echo {"protocol":1,"type":"ready","supported":true}
rem The release: exactly one line from stdin. set /p reads nothing more, so later input
rem (an answer to a confirmation prompt) is left for the command itself. End of input
rem or an empty line leaves REL undefined: then no call is made.
set "REL="
set /p "REL="
if not defined REL (
  >&2 echo probe: no release line, end of input or empty line; call not made
  exit /b 3
)
set "F="
set "MARKERR="
(call )
goto v_!L!

rem Each variant: T0, the call with `|| set "F=!errorlevel!"` (F = errorlevel at the
rem failure, captured before `set` itself clears it), T1, then :judge.
rem The token is written with `>"file" echo !TOK!`: redirection first, so a token
rem ending in a digit cannot form a 2> redirection and no space is written after the
rem token. Bytes written: the token, then CR LF.

:v_mkdir
set "T0=!TIME!"
mkdir "!T!" 1>&2 || set "F=!errorlevel!"
set "EL=!errorlevel!"
set "T1=!TIME!"
goto judge

:v_ren
set "T0=!TIME!"
ren "!S!" "!TNAME!" 1>&2 || set "F=!errorlevel!"
set "EL=!errorlevel!"
set "T1=!TIME!"
goto judge

:v_move
set "T0=!TIME!"
move "!S!" "!T!" 1>&2 || set "F=!errorlevel!"
set "EL=!errorlevel!"
set "T1=!TIME!"
goto judge

:v_moveY
set "T0=!TIME!"
move /Y "!S!" "!T!" 1>&2 || set "F=!errorlevel!"
set "EL=!errorlevel!"
set "T1=!TIME!"
goto judge

:v_moveNY
set "T0=!TIME!"
move /-Y "!S!" "!T!" 1>&2 || set "F=!errorlevel!"
set "EL=!errorlevel!"
set "T1=!TIME!"
goto judge

:v_copy
set "T0=!TIME!"
copy "!S!" "!T!" 1>&2 || set "F=!errorlevel!"
set "EL=!errorlevel!"
set "T1=!TIME!"
goto judge

:v_copyNY
set "T0=!TIME!"
copy /-Y "!S!" "!T!" 1>&2 || set "F=!errorlevel!"
set "EL=!errorlevel!"
set "T1=!TIME!"
goto judge

:v_redirect
set "T0=!TIME!"
>"!T!" echo !TOK!|| set "F=!errorlevel!"
set "EL=!errorlevel!"
set "T1=!TIME!"
goto judge

rem Anti-pattern: check, then create (nothing holds the name between the two).
:v_ifnotexist
set "T0=!TIME!"
if exist "!T!" goto ifnotexist_exists
>"!T!" echo !TOK!|| set "F=!errorlevel!"
set "EL=!errorlevel!"
set "T1=!TIME!"
goto judge
rem Anti-pattern: check, then move over (move /Y replaces what appeared in between).
:v_ifnotexistmove
set "T0=!TIME!"
if exist "!T!" goto ifnotexist_exists
move /Y "!S!" "!T!" 1>&2 || set "F=!errorlevel!"
set "EL=!errorlevel!"
set "T1=!TIME!"
goto judge
:ifnotexist_exists
set "T1=!TIME!"
>&2 echo probe: target exists, checked with if exist
set "F=1"
set "EL=1"
goto judge

rem ok/errorlevel from what cmd itself reports. Where || works, F marks the failure and
rem holds the errorlevel at that moment. Where it does not (ORBROKEN), F always holds the
rem command's errorlevel, and 0 means success.
:judge
if defined ORBROKEN (
  set "EL=!F!"
  set "F="
  if not "!EL!"=="0" set "F=1"
)
if defined F (
  set "OK=false"
  if not defined ORBROKEN set "EL=!F!"
) else (
  set "OK=true"
)
if "!OK!"=="true" if defined M goto mark
goto result

rem After a successful call: write the token into the mark file (same bytes as above).
rem A failure makes ok false and adds a protocol error object of type MarkError (its
rem errorlevel is the mark write's; its message is left empty: the text is on stderr).
:mark
set "MF="
(call )
>"!M!" echo !TOK!|| set "MF=!errorlevel!"
set "MEL=!errorlevel!"
if defined ORBROKEN (
  set "MEL=!MF!"
  set "MF="
  if not "!MEL!"=="0" set "MF=1"
) else (
  if defined MF set "MEL=!MF!"
)
rem Wine 8 reports neither errorlevel nor || for a failed redirection: look for the file.
if not exist "!M!" set "MF=1"
if defined MF (
  >&2 echo probe: MarkError: could not write the mark file
  set "OK=false"
  set "MARKERR=1"
)
goto result

:result
if defined MARKERR (
  echo {"type":"result","ok":!OK!,"errorlevel":!EL!,"t0":"!T0!","t1":"!T1!","error":{"type":"MarkError","code":null,"errno":null,"hresult":null,"errorlevel":!MEL!,"message":""}}
) else (
  echo {"type":"result","ok":!OK!,"errorlevel":!EL!,"t0":"!T0!","t1":"!T1!"}
)
exit /b 0

rem ---------------------------------------------------------------------------------
rem A recipe (protocol 2; ../PROTOCOL.md, "Recipes in one-shot mode"): the steps are those
rem of recipes.cmd, called as loop.cmd calls it. The environment adds CONFORMANCE_RECIPE,
rem CONFORMANCE_RECIPE_DIR (the harness's folder: the content to publish, a reader's
rem copies in reads\, the stop file), CONFORMANCE_RECIPES (recipes.cmd), CONFORMANCE_TEMP,
rem CONFORMANCE_INCOMING, CONFORMANCE_PROCESSING, CONFORMANCE_OUTPUT. Under RESCAN the
rem target's full checks run (every recipe path lies beside it, in the same scratch
rem folder) and the other values get the first of the two tests.
:recipe
set "Q=!CONFORMANCE_RECIPE_DIR!"
set "RCMD=!CONFORMANCE_RECIPES!"
set "RTMP=!CONFORMANCE_TEMP!"
set "RIN=!CONFORMANCE_INCOMING!"
set "RPROC=!CONFORMANCE_PROCESSING!"
set "ROUT=!CONFORMANCE_OUTPUT!"
set "RL="
set "RM="
set "WHY="
if "!RCP!"=="publish.direct" set "RL=pub_direct"
if "!RCP!"=="publish.temp-rename" set "RL=pub_temp"
if "!RCP!"=="publish.temp-rename-cross-volume" set "RL=pub_temp"
if "!RCP!"=="read.poll" set "RL=read_poll"
if "!RCP!"=="claim.list-then-open" set "RM=list"
if "!RCP!"=="claim.rename-claim" set "RM=rename"
if "!RCP!"=="claim.exclusive-marker" set "RM=marker"
if defined RM set "RL=claim"
set "_d=cmd cannot write a file in timed 4 KiB writes (copy and type write it in one go, in 64 KiB buffers under Wine) and has no clock finer than a second for the consumer (TIME has no seconds under Wine), so the done-marker recipes have no faithful cmd form"
if "!RCP!"=="done.marker-after-data" set "WHY=!_d!"
if "!RCP!"=="done.marker-before-data" set "WHY=!_d!"
if "!RCP!"=="done.size-stable" set "WHY=!_d!"
if "!RCP!"=="done.mtime-stable" set "WHY=!_d!"
if "!RCP!"=="consume.poll" set "WHY=!_d!"
set "_d="
if defined WHY goto recipe_unsupported
if not defined RL set "WHY=unknown recipe"
if defined WHY goto recipe_unsupported
if not defined T set "WHY=CONFORMANCE_TARGET is empty or has no file name"
if defined WHY goto recipe_unsupported
if not defined Q set "WHY=this probe was started without a recipe folder (CONFORMANCE_RECIPE_DIR is empty)"
if defined WHY goto recipe_unsupported
if not defined RCMD set "WHY=this probe was started without recipes.cmd (CONFORMANCE_RECIPES is empty)"
if defined WHY goto recipe_unsupported
if not exist "!RCMD!" set "WHY=recipes.cmd is missing beside probe.cmd"
if defined WHY goto recipe_unsupported
if "!RL!"=="pub_direct" if not exist "!Q!\content" set "WHY=the harness gave no content file"
if "!RL!"=="pub_temp" if not exist "!Q!\content" set "WHY=the harness gave no content file"
if "!RL!"=="pub_temp" if not defined RTMP set "WHY=publish.temp-rename needs params.temp"
if "!RL!"=="read_poll" if not exist "!Q!\reads\" set "WHY=the harness made no reads folder"
if "!RL!"=="claim" if not defined RIN set "WHY=claim workers need params.incoming and params.output"
if "!RL!"=="claim" if not defined ROUT set "WHY=claim workers need params.incoming and params.output"
if "!RM!"=="rename" if not defined RPROC set "WHY=claim.rename-claim needs params.processing"
if defined WHY goto recipe_unsupported
if not defined RESCAN goto recipe_ready
set "UNSAFE="
if not "%CONFORMANCE_RECIPE_DIR%%CONFORMANCE_RECIPE_DIR%"=="!CONFORMANCE_RECIPE_DIR!!CONFORMANCE_RECIPE_DIR!" set "UNSAFE=1"
if not "%CONFORMANCE_RECIPES%%CONFORMANCE_RECIPES%"=="!CONFORMANCE_RECIPES!!CONFORMANCE_RECIPES!" set "UNSAFE=1"
if not "%CONFORMANCE_TEMP%%CONFORMANCE_TEMP%"=="!CONFORMANCE_TEMP!!CONFORMANCE_TEMP!" set "UNSAFE=1"
if not "%CONFORMANCE_INCOMING%%CONFORMANCE_INCOMING%"=="!CONFORMANCE_INCOMING!!CONFORMANCE_INCOMING!" set "UNSAFE=1"
if not "%CONFORMANCE_PROCESSING%%CONFORMANCE_PROCESSING%"=="!CONFORMANCE_PROCESSING!!CONFORMANCE_PROCESSING!" set "UNSAFE=1"
if not "%CONFORMANCE_OUTPUT%%CONFORMANCE_OUTPUT%"=="!CONFORMANCE_OUTPUT!!CONFORMANCE_OUTPUT!" set "UNSAFE=1"
if defined UNSAFE goto unsupported_rescan
goto rescan_checks

:recipe_unsupported
>&2 echo probe: unsupported: !WHY!
echo {"protocol":2,"type":"ready","supported":false,"reason":"!WHY!"}
exit /b 0

:recipe_ready
echo {"protocol":2,"type":"ready","supported":true}
set "REL="
set /p "REL="
if not defined REL (
  >&2 echo probe: no release line, end of input or empty line; recipe not run
  exit /b 3
)
set "STEP="
set "CJ="
set "EL=0"
set "T0=!TIME!"
call "!RCMD!" !RL!
set "T1=!TIME!"
set "OK=true"
if defined STEP set "OK=false"
set "SJ=null"
if defined STEP set "SJ="!STEP!""
echo {"type":"result","ok":!OK!,"errorlevel":!EL!,"t0":"!T0!","t1":"!T1!","step":!SJ!,"counters":{!CJ!}}
exit /b 0
