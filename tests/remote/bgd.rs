//! A real REAPI server for the tests: BuildGrid 0.4.4 from PyPI (runs on
//! Python 3.11; facts in TOOLCHAIN.md "The remote stack"), started on
//! 127.0.0.1 and a free port, stopped by its PID when dropped.
//!
//! The venv: `$HEADROOM_BGD`, else `~/.cache/headroom/bgd`; made with
//! `python3 -m venv` and `pip install buildgrid==0.4.4` when it has no
//! `bin/bgd`, reused when it has. The server's log stays in its temp
//! folder and is printed when it does not come up.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// BuildGrid's version on PyPI that runs on Python 3.11.
const VERSION: &str = "buildgrid==0.4.4";

/// Instances the server serves: results are stored per instance.
pub const INSTANCES: [&str; 2] = ["main", "other"];

/// One venv made at a time (tests run in parallel threads).
static VENV: Mutex<()> = Mutex::new(());

/// The venv with `bin/bgd`, made when missing.
pub fn venv() -> PathBuf {
    let dir = match std::env::var_os("HEADROOM_BGD") {
        Some(d) => PathBuf::from(d),
        None => {
            let home = std::env::var_os("HOME").expect("HOME or HEADROOM_BGD must be set");
            PathBuf::from(home).join(".cache/headroom/bgd")
        }
    };
    let _one = VENV.lock().unwrap_or_else(|p| p.into_inner());
    if dir.join("bin/bgd").is_file() {
        return dir;
    }
    run(Command::new("python3").arg("-m").arg("venv").arg(&dir));
    run(Command::new(dir.join("bin/pip")).args(["install", "--quiet", VERSION]));
    assert!(
        dir.join("bin/bgd").is_file(),
        "pip installed no bin/bgd in {}",
        dir.display()
    );
    dir
}

/// Runs a setup command; panics with its output when it fails.
pub fn run(cmd: &mut Command) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A port nothing listens on now (bound, then released).
pub fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().expect("local addr").port()
}

/// A port of 127.0.0.1 that refuses connections while this lives: a
/// socket bound to it and not listening. A port [`free_port`] gave back
/// may be taken meanwhile by another test's server (tests run in
/// parallel) and answer with a reset; this one cannot be.
pub struct ClosedPort {
    _socket: rustix::fd::OwnedFd,
    /// The port.
    pub port: u16,
}

/// A [`ClosedPort`].
pub fn closed_port() -> ClosedPort {
    use rustix::net::{AddressFamily, SocketType, bind, getsockname, socket};
    use std::net::{Ipv4Addr, SocketAddrV4};
    let s = socket(AddressFamily::INET, SocketType::STREAM, None).expect("socket");
    bind(&s, &SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0)).expect("bind 127.0.0.1:0");
    let addr = getsockname(&s).expect("getsockname");
    let port = SocketAddrV4::try_from(addr)
        .expect("an IPv4 address")
        .port();
    ClosedPort { _socket: s, port }
}

/// A fresh temp folder.
pub fn temp_dir(tag: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!("headroom-{tag}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// A running BuildGrid.
pub struct Bgd {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Its temp folder (config, log, certificates).
    pub dir: PathBuf,
}

/// TLS files of the server: its key and certificate, and the CA whose
/// client certificates it requires (mTLS), if any.
pub struct ServerTls {
    /// PEM private key.
    pub key: PathBuf,
    /// PEM certificate (signed by a test CA).
    pub cert: PathBuf,
    /// PEM CA(s) a client's certificate must be signed by
    /// (`tls-client-certs`: gRPC's `require_client_auth`); `None`: no
    /// client certificate asked for.
    pub client_ca: Option<PathBuf>,
}

/// No authorization: every call is let through.
pub const NO_AUTH: &str = "authorization:\n  method: none\n";

/// The YAML config: an LRU CAS, [`INSTANCES`] each with its own LRU action
/// cache that accepts updates (and failed actions), a CAS and a bytestream;
/// `authorization` is its `authorization:` section.
fn config(port: u16, tls: Option<&ServerTls>, authorization: &str) -> String {
    let channel = match tls {
        None => "    insecure-mode: true\n".to_string(),
        Some(t) => format!(
            "    insecure-mode: false\n    credentials:\n      tls-server-key: {}\n      tls-server-cert: {}\n{}",
            t.key.display(),
            t.cert.display(),
            t.client_ca
                .as_ref()
                .map(|ca| format!("      tls-client-certs: {}\n", ca.display()))
                .unwrap_or_default()
        ),
    };
    let mut s = format!(
        "server:\n  - !channel\n    address: \"127.0.0.1:{port}\"\n{channel}{authorization}\
         storages:\n  - !lru-storage &cas\n    size: 256M\n\
         caches:\n"
    );
    // One action cache per instance: an instance shares nothing.
    for name in INSTANCES {
        s.push_str(&format!(
            "  - !lru-action-cache &ac-{name}\n    storage: *cas\n    max-cached-refs: 200000\n    \
             allow-updates: true\n    cache-failed-actions: true\n"
        ));
    }
    s.push_str("instances:\n");
    for name in INSTANCES {
        s.push_str(&format!(
            "  - name: {name}\n    services:\n      - !action-cache\n        cache: *ac-{name}\n      \
             - !cas\n        storage: *cas\n      - !bytestream\n        storage: *cas\n"
        ));
    }
    s
}

impl Bgd {
    /// Starts BuildGrid in `dir` (plaintext, or TLS with `tls`) and waits
    /// until its port accepts.
    pub fn start(dir: &Path, tls: Option<&ServerTls>) -> Bgd {
        Bgd::start_with(dir, tls, NO_AUTH)
    }

    /// [`Bgd::start`] with `authorization` as the config's
    /// `authorization:` section (BuildGrid 0.4.4's `schema.yml`: `method`
    /// none, `jwt` with a `secret` file, or `headers`).
    pub fn start_with(dir: &Path, tls: Option<&ServerTls>, authorization: &str) -> Bgd {
        let venv = venv();
        let port = free_port();
        let cfg = dir.join("bgd.yml");
        std::fs::write(&cfg, config(port, tls, authorization)).expect("write config");
        let log = std::fs::File::create(dir.join("bgd.log")).expect("log file");
        let err = log.try_clone().expect("log file");
        let child = Command::new(venv.join("bin/bgd"))
            .args(["server", "start"])
            .arg(&cfg)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .spawn()
            .expect("start bgd");
        let mut bgd = Bgd {
            child,
            port,
            dir: dir.to_path_buf(),
        };
        bgd.wait_for_port();
        bgd
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("bgd.log")).unwrap_or_default()
    }

    fn wait_for_port(&mut self) {
        let start = Instant::now();
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "bgd exited ({status}) before opening its port:\n{}",
                    self.log()
                );
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "bgd did not open port {} in 60 s:\n{}",
                self.port,
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Bgd {
    fn drop(&mut self) {
        // This server's own PID, never a name.
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("--- bgd log ({}) ---\n{}", self.dir.display(), self.log());
        }
    }
}

/// A CA and a server certificate it signed for IP 127.0.0.1, made with
/// openssl in `dir` (rustls refuses a self-signed leaf used as its own
/// CA: `CaUsedAsEndEntity`). Returns the CA's PEM and the server's files.
pub fn make_certificates(dir: &Path) -> (PathBuf, ServerTls) {
    make_ca(dir, "ca");
    let (cert, key) = make_leaf(
        dir,
        "ca",
        "server",
        &["rsa:2048"],
        "/CN=127.0.0.1",
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    );
    (
        dir.join("ca.pem"),
        ServerTls {
            key,
            cert,
            client_ca: None,
        },
    )
}

/// A CA made with openssl in `dir`: `NAME.key` and `NAME.pem`, returned.
/// Its key is P-256 (made in milliseconds where RSA 2048 takes ~0.5 s).
pub fn make_ca(dir: &Path, name: &str) -> PathBuf {
    let (key, pem) = (format!("{name}.key"), format!("{name}.pem"));
    run(Command::new("openssl").current_dir(dir).args([
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        &key,
        "-out",
        &pem,
        "-days",
        "2",
        "-subj",
        &format!("/CN=headroom test {name}"),
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    ]));
    dir.join(pem)
}

/// A client certificate (`clientAuth`, a P-256 key) signed by the CA `ca`
/// of [`make_ca`], made with openssl in `dir`: `NAME.pem` and its key
/// `NAME.key`, returned in that order.
#[allow(dead_code)] // tests/remote_cli.rs only
pub fn make_client_certificate(dir: &Path, ca: &str, name: &str) -> (PathBuf, PathBuf) {
    make_leaf(
        dir,
        ca,
        name,
        &["ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"],
        &format!("/CN={name}"),
        "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n",
    )
}

/// A certificate for `subject` with the extensions `ext` (openssl's
/// extfile lines), its key made by `req -newkey NEWKEY...`, signed by the
/// CA `ca` of [`make_ca`], made with openssl in `dir`: `NAME.pem` and
/// `NAME.key`, returned in that order.
fn make_leaf(
    dir: &Path,
    ca: &str,
    name: &str,
    newkey: &[&str],
    subject: &str,
    ext: &str,
) -> (PathBuf, PathBuf) {
    let (key, csr, pem, cnf) = (
        format!("{name}.key"),
        format!("{name}.csr"),
        format!("{name}.pem"),
        format!("{name}.cnf"),
    );
    let openssl = || {
        let mut c = Command::new("openssl");
        c.current_dir(dir);
        c
    };
    run(openssl()
        .args(["req", "-newkey"])
        .args(newkey)
        .args(["-nodes", "-keyout", &key, "-out", &csr, "-subj", subject]));
    std::fs::write(dir.join(&cnf), ext).expect("extfile");
    run(openssl().args([
        "x509",
        "-req",
        "-in",
        &csr,
        "-CA",
        &format!("{ca}.pem"),
        "-CAkey",
        &format!("{ca}.key"),
        "-CAcreateserial",
        "-out",
        &pem,
        "-days",
        "2",
        "-extfile",
        &cnf,
    ]));
    (dir.join(pem), dir.join(key))
}
