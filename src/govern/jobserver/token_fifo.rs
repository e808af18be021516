//! The jobserver's FIFO: the bytes in it are the free job slots (tokens).
//! headroom writes tokens in when memory allows more jobs, counts those
//! sitting there (FIONREAD), and reads tokens back when it allows fewer;
//! clients (make, cargo, ninja) read a token before a job beyond their
//! first and write it back when the job ends.
//!
//! # References
//! GNU make manual, "Sharing Job Slots with GNU make"; fifo(7), mkfifo(3);
//! ioctl FIONREAD in tty_ioctl(4)/pipe(7).

use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

/// The jobserver's FIFO: a named FIFO made private (mode 0600) in a
/// directory headroom writes to. headroom reads and writes it through its
/// own non-blocking open file description, so a read-back never waits and
/// never changes the blocking mode clients see on theirs.
pub struct TokenFifo {
    ours: OwnedFd,
    client: OwnedFd,
    client_w: OwnedFd,
    dir: OwnedFd,
    name: heapless::String<64>,
    linked: bool,
}

impl TokenFifo {
    /// Makes the FIFO `.headroom-jobserver-<pid>-<n>` in `dir` (the first
    /// free `n`) and opens it.
    /// The client's descriptor is blocking and inherited across exec (it
    /// is the `R,W` of the pipe style).
    ///
    /// # Errors
    /// The errno of mkfifoat(2) or openat(2) (EACCES, EROFS, ENOSPC;
    /// EEXIST after 64 names taken).
    pub fn create(dir: BorrowedFd<'_>) -> Result<TokenFifo, Errno> {
        let pid = rustix::process::getpid().as_raw_nonzero().get();
        // A name left by a headroom that was killed (in a container,
        // often pid 1 again) is passed over, not taken for ours.
        let mut name: heapless::String<64> = heapless::String::new();
        let mut made = Err(Errno::EXIST);
        for n in 0..64u32 {
            name.clear();
            ufmt::uwrite!(name, ".headroom-jobserver-{}-{}", pid, n)
                .map_err(|_| Errno::NAMETOOLONG)?;
            made = rustix::fs::mkfifoat(dir, name.as_str(), Mode::from_raw_mode(0o600));
            if made != Err(Errno::EXIST) {
                break;
            }
        }
        made?;
        let open = |flags| rustix::fs::openat(dir, name.as_str(), flags, Mode::empty());
        let opened = open(OFlags::RDWR | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOFOLLOW)
            .and_then(|ours| Ok((ours, open(OFlags::RDWR | OFlags::NOFOLLOW)?)));
        let (ours, client) = match opened {
            Ok(fds) => fds,
            Err(e) => {
                let _ = rustix::fs::unlinkat(dir, name.as_str(), rustix::fs::AtFlags::empty());
                return Err(e);
            }
        };
        Ok(TokenFifo {
            client_w: rustix::io::dup(&client)?,
            ours,
            client,
            dir: rustix::io::fcntl_dupfd_cloexec(dir, 0)?,
            name,
            linked: true,
        })
    }

    /// The FIFO's name in its directory (for `fifo:PATH`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The clients' read descriptor (the `R` of `R,W`): blocking, not
    /// close-on-exec.
    pub fn client_fd(&self) -> BorrowedFd<'_> {
        self.client.as_fd()
    }

    /// The clients' write descriptor (the `W`): a duplicate of
    /// [`TokenFifo::client_fd`], so that a client closing both closes two.
    pub fn client_fd_w(&self) -> BorrowedFd<'_> {
        self.client_w.as_fd()
    }

    /// Bytes sitting in the FIFO.
    ///
    /// # Errors
    /// The errno of ioctl(FIONREAD).
    pub fn in_pipe(&self) -> Result<u32, Errno> {
        let n = rustix::io::ioctl_fionread(&self.ours)?;
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }

    /// Writes `n` tokens (`+`); returns how many went in.
    pub fn put(&self, n: u32) -> u32 {
        const PLUS: [u8; 64] = [b'+'; 64];
        let mut done = 0;
        while done < n {
            let chunk = (n - done).min(64) as usize;
            match rustix::io::write(&self.ours, &PLUS[..chunk]) {
                Ok(k) if k > 0 => done += k as u32,
                Err(Errno::INTR) => {}
                _ => break,
            }
        }
        done
    }

    /// headroom's own descriptor of the FIFO (non-blocking), to poll for
    /// tokens coming back.
    pub fn own_fd(&self) -> BorrowedFd<'_> {
        self.ours.as_fd()
    }

    /// Reads back up to `n` tokens without waiting (whatever bytes they
    /// are); returns how many it got.
    pub fn take(&self, n: u32) -> u32 {
        let mut buf = [0u8; 64];
        let mut got = 0;
        while got < n {
            let chunk = (n - got).min(64) as usize;
            match rustix::io::read(&self.ours, &mut buf[..chunk]) {
                Ok(k) if k > 0 => got += k as u32,
                Err(Errno::INTR) => {}
                _ => break,
            }
        }
        got
    }

    /// Removes the FIFO's name (the pipe style needs no name once the
    /// descriptors are open; the FIFO style removes it at the end).
    pub fn unlink(&mut self) {
        if self.linked {
            let _ =
                rustix::fs::unlinkat(&self.dir, self.name.as_str(), rustix::fs::AtFlags::empty());
            self.linked = false;
        }
    }
}

impl Drop for TokenFifo {
    fn drop(&mut self) {
        self.unlink();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fifo_counts_takes_and_gives_tokens() {
        extern crate std;
        let d = std::env::temp_dir().join(std::format!("headroom-js-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let dir = rustix::fs::open(d.to_str().unwrap(), OFlags::RDONLY, Mode::empty()).unwrap();
        let mut p = TokenFifo::create(dir.as_fd()).unwrap();
        assert!(d.join(p.name()).exists());
        assert_eq!(p.put(3), 3);
        assert_eq!(p.in_pipe(), Ok(3));
        // A client takes one through its own descriptor.
        let mut b = [0u8; 1];
        assert_eq!(rustix::io::read(p.client_fd(), &mut b), Ok(1));
        assert_eq!(p.in_pipe(), Ok(2));
        // Taking back more than is there does not wait.
        assert_eq!(p.take(5), 2);
        assert_eq!(p.in_pipe(), Ok(0));
        p.unlink();
        assert!(!d.join(".headroom-jobserver").exists());
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0);
        let _ = std::fs::remove_dir_all(&d);
    }
}
