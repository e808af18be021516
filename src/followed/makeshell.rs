//! make's `$(shell …)` commands, told apart from its jobs.
//!
//! GNU make starts a child for two reasons: a recipe, which is a job and
//! holds a job slot ("Sharing Job Slots with GNU make": make takes a
//! token before it starts a job beyond its first), and the command of a
//! `$(shell …)` function (or a `!=` assignment), which it runs while it
//! expands a makefile or a recipe, for its output ("The shell Function":
//! the function "expands to the output of the command"). The second
//! holds no slot and is no job: `N := $(shell seq 1 4)` is not a build
//! step, and remembering it as a job named `4` is noise.
//!
//! The rule, from how make runs them (`func_shell_base` in make's
//! `src/function.c`, the same since make 3.81; seen with make 4.3): for
//! a `$(shell …)` make makes a pipe, gives the command its write end as
//! standard output, keeps the read end and reads it until the command
//! ends. A recipe's standard output is make's own (or, with
//! `--output-sync`, a temporary file). So a child of make whose fd 1 is a
//! pipe that make holds at a descriptor other than its own 1 and 2 runs
//! a `$(shell …)` ([`runs_shell_function`]). Make's environment is no
//! sign: up to 4.3 a `$(shell …)` gets make's own (no MAKEFLAGS or
//! MAKELEVEL of a recipe's), since 4.4 the recipes' (`target_environment`),
//! MAKELEVEL raised as for a recipe. ninja and cargo read every job's
//! output through a pipe: the rule is for make's children only.
//!
//! # References
//! GNU make manual, "The shell Function", "Sharing Job Slots with GNU
//! make"; proc(5) (`/proc/PID/fd/`: each a symbolic link, `pipe:[INODE]`
//! for a pipe).

use core::ffi::CStr;
use core::mem::MaybeUninit;

use rustix::fd::{AsFd, BorrowedFd};
use rustix::fs::{Mode, OFlags};

use crate::followed::compilers::pid_path;
use crate::kernel::parse::parse_u64;
use crate::kernel::root::for_each_entry;

/// Bytes of a descriptor's link read: `pipe:[4026531840]` is 17; a path
/// longer than this is cut, and a cut link is no pipe.
const LINK_LEN: usize = 64;

/// The inode of a pipe from the link of a descriptor in `/proc/PID/fd/`
/// (`pipe:[INODE]`, proc(5)); `None` for anything else (a file, a tty,
/// a socket, a cut link).
pub fn pipe_inode(link: &[u8]) -> Option<u64> {
    parse_u64(link.strip_prefix(b"pipe:[")?.strip_suffix(b"]")?)
}

/// True when `pid`, a child of GNU make `make`, runs a `$(shell …)`
/// (see the module documentation): its fd 1 is a pipe that `make` holds
/// at a descriptor other than its own 1 and 2. Read in the live `proc/`
/// directory `proc_dir`, make's descriptors listed through `scratch`
/// (getdents64(2)). False when a file cannot be read (the process gone,
/// another user's): then it is taken for a job, as before this rule.
pub fn runs_shell_function(
    proc_dir: BorrowedFd<'_>,
    pid: u32,
    make: u32,
    scratch: &mut [MaybeUninit<u8>],
) -> bool {
    let Some(out) = fd_pipe(proc_dir, pid, "fd/1") else {
        return false;
    };
    // A recipe writes to make's own output, a pipe when make's is.
    if ["fd/1", "fd/2"]
        .iter()
        .any(|f| fd_pipe(proc_dir, make, f) == Some(out))
    {
        return false;
    }
    let mut path = [0u8; 64];
    let Some(p) = pid_path(&mut path, make, "fd") else {
        return false;
    };
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let Ok(dir) = rustix::fs::openat(proc_dir, p, flags, Mode::empty()) else {
        return false;
    };
    let mut held = false;
    let listed = for_each_entry(dir.as_fd(), scratch, |name, _| {
        if matches!(name, b"0" | b"1" | b"2") {
            return true;
        }
        let mut z = [0u8; 24];
        let Some(n) = z.get_mut(..name.len()) else {
            return true;
        };
        n.copy_from_slice(name);
        if let Ok(c) = CStr::from_bytes_until_nul(&z) {
            held = link_pipe(dir.as_fd(), c) == Some(out);
        }
        !held
    });
    listed.is_ok() && held
}

/// The pipe inode `/proc/PID/FILE` links to, if a pipe.
fn fd_pipe(proc_dir: BorrowedFd<'_>, pid: u32, file: &str) -> Option<u64> {
    let mut path = [0u8; 64];
    link_pipe(proc_dir, pid_path(&mut path, pid, file)?)
}

/// The pipe inode the symbolic link `path` (relative to `dir`) names.
fn link_pipe(dir: BorrowedFd<'_>, path: &CStr) -> Option<u64> {
    let mut buf = [MaybeUninit::<u8>::uninit(); LINK_LEN];
    let (got, _) = rustix::fs::readlinkat_raw(dir, path, &mut buf).ok()?;
    pipe_inode(got)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    #[test]
    fn a_pipe_s_link_gives_its_inode_and_nothing_else_does() {
        assert_eq!(pipe_inode(b"pipe:[641659]"), Some(641_659));
        assert_eq!(pipe_inode(b"pipe:[0]"), Some(0));
        for other in [
            &b"/dev/null"[..],
            b"socket:[641659]",
            b"pipe:[641659",
            b"pipe:641659]",
            b"pipe:[]",
            b"pipe:[12x]",
            b"apipe:[1]",
            b"pipe:[99999999999999999999999]",
            b"/tmp/pipe:[1]",
            b"",
        ] {
            assert_eq!(pipe_inode(other), None, "{other:?}");
        }
    }

    /// This test's own process as "make": a child whose fd 1 is a pipe
    /// whose read end this process holds is a `$(shell …)`; one that
    /// writes to this process's own fd 1 (or to a file) is not.
    #[test]
    fn a_child_writing_into_a_pipe_its_parent_reads_runs_a_shell_function() {
        use std::process::{Command, Stdio};
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let proc_dir = rustix::fs::open("/proc", flags, Mode::empty()).unwrap();
        let me = std::process::id();
        let mut scratch = [MaybeUninit::<u8>::uninit(); 4096];
        let mut shell = Command::new("sleep")
            .arg("5")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut recipe = Command::new("sleep")
            .arg("5")
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let fd = proc_dir.as_fd();
        let said = (
            runs_shell_function(fd, shell.id(), me, &mut scratch),
            runs_shell_function(fd, recipe.id(), me, &mut scratch),
            runs_shell_function(fd, u32::MAX, me, &mut scratch),
        );
        // The pipe's read end closed: this process no longer holds it.
        drop(shell.stdout.take());
        let after = runs_shell_function(fd, shell.id(), me, &mut scratch);
        for c in [&mut shell, &mut recipe] {
            let _ = c.kill();
            let _ = c.wait();
        }
        assert_eq!(said, (true, false, false));
        assert!(!after);
    }
}
