//! Opening what commands read and write: `--root`, an output file's
//! directory, a regular input file streamed in chunks, and fds 0-2 kept
//! open.

use rustix::fd::{BorrowedFd, OwnedFd};

use headroom::kernel::root::Root;

use super::messages::{Fail, errtext};

/// Opens `--root` (default `/`); `live` is true for the real machine.
pub fn open_root(root: &Option<String>) -> Result<(Root, bool), Fail> {
    let path = root.as_deref().unwrap_or("/");
    let r = Root::open(path).map_err(|e| Fail(format!("--root {path}: {}", errtext(e))))?;
    let live = r.is_live();
    Ok((r, live))
}

/// Opens the directory of `path` (which must exist) and returns it with
/// the file name; `what` names the path in messages (`--prom`, `-o`).
pub fn open_parent(path: &str, what: &str) -> Result<(OwnedFd, String), Fail> {
    let p = std::path::Path::new(path);
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| Fail(format!("{what} {path}: not a file path")))?;
    let parent = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_string_lossy().into_owned(),
        _ => ".".into(),
    };
    let dir = rustix::fs::open(
        parent.as_str(),
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| {
        Fail(format!(
            "cannot write {what} {path}: {parent}: {}",
            errtext(e)
        ))
    })?;
    Ok((dir, name))
}

/// True when `a` and `b` are the same file (device and inode).
pub fn same_file(a: BorrowedFd<'_>, b: BorrowedFd<'_>) -> bool {
    match (rustix::fs::fstat(a), rustix::fs::fstat(b)) {
        (Ok(x), Ok(y)) => x.st_dev == y.st_dev && x.st_ino == y.st_ino,
        _ => false,
    }
}

/// Opens `path` for reading, refusing anything but a regular file (a FIFO
/// would block, /dev/zero never ends).
pub fn open_regular(path: &str) -> Result<OwnedFd, Fail> {
    let fd = rustix::fs::open(
        path,
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC | rustix::fs::OFlags::NONBLOCK,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| Fail(format!("{path}: {}", errtext(e))))?;
    let st = rustix::fs::fstat(&fd).map_err(|e| Fail(format!("{path}: {}", errtext(e))))?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
        return Err(Fail(format!("{path}: not a regular file")));
    }
    Ok(fd)
}

/// Feeds the whole of `fd` to `feed` in 64 KiB chunks, then an empty chunk
/// for end of file.
pub fn stream<E>(
    fd: &OwnedFd,
    path: &str,
    mut feed: impl FnMut(&[u8]) -> Result<(), E>,
    on_err: impl Fn(E) -> Fail,
) -> Result<(), Fail> {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match rustix::io::read(fd, &mut buf[..]) {
            Ok(n) => n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(Fail(format!("{path}: {}", errtext(e)))),
        };
        feed(&buf[..n]).map_err(&on_err)?;
        if n == 0 {
            return Ok(());
        }
    }
}

/// Makes sure fds 0, 1 and 2 are open (on /dev/null if closed), so that a
/// file headroom opens can never become "stdout" and receive the summary.
pub fn guard_std_fds() {
    for fd in 0..3 {
        // SAFETY: only queried with fcntl(F_GETFD), never closed or used for I/O.
        let probe = unsafe { BorrowedFd::borrow_raw(fd) };
        if rustix::io::fcntl_getfd(probe) == Err(rustix::io::Errno::BADF) {
            // open(2) returns the lowest free descriptor: this one.
            if let Ok(null) = rustix::fs::open(
                "/dev/null",
                rustix::fs::OFlags::RDWR,
                rustix::fs::Mode::empty(),
            ) {
                std::mem::forget(null);
            }
        }
    }
}
