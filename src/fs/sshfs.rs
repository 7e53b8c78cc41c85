//! sshfs: an `sshd` started for the run on 127.0.0.1 (a port the kernel picks, keys made for
//! the run, the SFTP server built into sshd), and two `sshfs` mounts of the same exported
//! folder — two clients of one share, as two machines on a shared folder. The run measures
//! through the first; the second is [`Mounted::second_client`]. The daemons run in the
//! foreground as the harness's children, each killed if the harness dies (`PR_SET_PDEATHSIG`,
//! `prctl(2)`), and with the private mount namespace gone their mounts are too.

use std::path::Path;
use std::process::{Child, Command, Stdio};

use super::{kernel_has, tool, version_line, wait_for_mount, FsKind, Mounted, Undo};

/// sshd's privilege-separation folder (Debian's build: `/run/sshd`), which sshd refuses to
/// start without; a service manager normally makes it.
const PRIVSEP_DIR: &str = "/run/sshd";

/// Starts the sshd and mounts the share twice under `dir`. Errors: a tool missing (with its
/// Debian package), no FUSE, sshd or sshfs failing (with what they printed).
pub fn prepare(dir: &Path) -> Result<Mounted, String> {
    let sshd = which::which("sshd")
        .or_else(|_| which::which("/usr/sbin/sshd"))
        .map_err(|_| "sshd is not installed (Debian: apt-get install openssh-server)".to_string())?;
    which::which("ssh-keygen").map_err(|_| "ssh-keygen is not installed (Debian: apt-get install openssh-client)")?;
    which::which("sshfs").map_err(|_| "sshfs is not installed (Debian: apt-get install sshfs)")?;
    if !kernel_has("fuse") || !Path::new("/dev/fuse").exists() {
        return Err("no FUSE here: the kernel lists no fuse in /proc/filesystems, or /dev/fuse is missing".into());
    }
    let keys = dir.join("ssh");
    let export = dir.join("export");
    let (mnt1, mnt2) = (dir.join("client1"), dir.join("client2"));
    for d in [&keys, &export, &mnt1, &mnt2] {
        std::fs::create_dir_all(d).map_err(|e| format!("cannot make {}: {e}", d.display()))?;
    }
    // sshd_config and sshfs -o take the paths as text: a comma, quote or space would split them
    if [&keys, &export, &mnt1].iter().any(|p| p.to_string_lossy().contains([',', '"', ' ', '\n'])) {
        return Err(format!(
            "the work folder {} holds a comma, quote or space, which sshd_config and sshfs -o cannot carry",
            dir.display()
        ));
    }
    let host_key = keys.join("host_ed25519");
    let client_key = keys.join("client_ed25519");
    for k in [&host_key, &client_key] {
        tool(
            "ssh-keygen",
            &[
                "-q".as_ref(),
                "-t".as_ref(),
                "ed25519".as_ref(),
                "-N".as_ref(),
                "".as_ref(),
                "-f".as_ref(),
                k.as_os_str(),
            ],
            "openssh-client",
        )?;
    }
    let public = std::fs::read_to_string(client_key.with_extension("pub")).map_err(|e| e.to_string())?;
    let authorized = keys.join("authorized_keys");
    std::fs::write(&authorized, public).map_err(|e| e.to_string())?;
    let port = free_port()?;
    let config = keys.join("sshd_config");
    std::fs::write(
        &config,
        format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey \"{}\"\nAuthorizedKeysFile \"{}\"\nPidFile none\n\
             PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             UsePAM no\nStrictModes no\nSubsystem sftp internal-sftp\nLogLevel ERROR\n",
            host_key.display(),
            authorized.display()
        ),
    )
    .map_err(|e| e.to_string())?;
    let mut m = Mounted::new(FsKind::Sshfs, mnt1.clone(), String::new());
    if !Path::new(PRIVSEP_DIR).is_dir() {
        // a tmpfs over /run in the harness's own mount namespace holds it: nothing is made
        // on the machine's /run
        super::mount(&mut m, "tmpfs", "size=1m,mode=755", Path::new("tmpfs"), Path::new("/run"))?;
        std::fs::create_dir_all(PRIVSEP_DIR).map_err(|e| format!("cannot make {PRIVSEP_DIR}: {e}"))?;
    }
    let log = keys.join("sshd.log");
    let child = spawn_daemon(Command::new(&sshd).arg("-D").arg("-e").arg("-f").arg(&config), &log)?;
    m.undo.push(Undo::KillAfterChildren(child));
    wait_for_port(port, &log)?;
    let user = std::env::var("USER").ok().filter(|u| !u.is_empty()).unwrap_or_else(|| "root".into());
    for (i, mnt) in [&mnt1, &mnt2].into_iter().enumerate() {
        let options = format!(
            "port={port},IdentityFile={},StrictHostKeyChecking=no,UserKnownHostsFile=/dev/null,BatchMode=yes,LogLevel=ERROR",
            client_key.display()
        );
        let log = keys.join(format!("sshfs{}.log", i + 1));
        let remote = format!("{user}@127.0.0.1:{}", export.display());
        let child = spawn_daemon(Command::new("sshfs").arg("-f").arg("-o").arg(options).arg(remote).arg(mnt), &log)?;
        m.undo.push(Undo::Kill(child));
        m.undo.push(Undo::Unmount(mnt.clone()));
        wait_for_mount(mnt, 15).map_err(|e| format!("{e}; sshfs said: {}", first_line_of(&log)))?;
    }
    m.second_client = Some(mnt2);
    m.how = format!(
        "sshfs mounts (two clients) of {} exported by an sshd on 127.0.0.1:{port} (internal-sftp)",
        export.display()
    );
    m.daemon =
        Some(format!("{}; {}", super::version_with("sshfs", &["-V"], "SSHFS version"), version_line("ssh", &["-V"])));
    Ok(m)
}

/// A TCP port on 127.0.0.1 that was free a moment ago (the kernel's pick for port 0).
fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("cannot find a free port: {e}"))?;
    l.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

/// Starts `cmd` in the foreground with stdout and stderr in `log`, killed with SIGKILL if the
/// harness dies (`PR_SET_PDEATHSIG`, as the probes are: [`crate::exec::process::die_with_parent`]).
/// Errors: it cannot start.
fn spawn_daemon(cmd: &mut Command, log: &Path) -> Result<Child, String> {
    let out = std::fs::File::create(log).map_err(|e| e.to_string())?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    cmd.stdin(Stdio::null()).stdout(out).stderr(err);
    crate::exec::process::die_with_parent(cmd);
    cmd.spawn().map_err(|e| format!("cannot start {:?}: {e}", cmd.get_program()))
}

/// Waits up to 10 s for the sshd to accept connections on `port`. Errors: the time ran out,
/// with the first line of its log.
fn wait_for_port(port: u16, log: &Path) -> Result<(), String> {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::time::Instant::now() < until {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Err(format!("sshd did not listen on 127.0.0.1:{port} within 10 s: {}", first_line_of(log)))
}

/// The first non-empty line of a daemon's log, or `no output`.
fn first_line_of(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("no output").to_string()
}
