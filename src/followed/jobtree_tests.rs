extern crate std;
use super::*;
use crate::kernel::root::ReadError;
use std::format;
use std::string::String;
use std::vec::Vec;

/// Processes as `stat` lines: (pid, comm, state, ppid, utime, start, rss
/// pages).
struct Fake(Vec<(u32, String)>);

impl Fake {
    fn new(procs: &[(u32, &str, char, u32, u64, u64, u64)]) -> Fake {
        Fake(
            procs
                .iter()
                .map(|&(pid, comm, state, ppid, ut, start, rss)| {
                    (
                        pid,
                        format!(
                            "{pid} ({comm}) {state} {ppid} 1 1 0 -1 4194560 0 0 0 0 {ut} 1 0 0 20 0 1 0 {start} 0 {rss}\n"
                        ),
                    )
                })
                .collect(),
        )
    }

    fn pids(&self) -> Vec<u32> {
        self.0.iter().map(|p| p.0).collect()
    }
}

impl PidFiles for Fake {
    fn read<'b>(&mut self, pid: u32, file: &str, buf: &'b mut [u8]) -> Result<&'b [u8], ReadError> {
        assert_eq!(file, "stat");
        let (_, text) = self
            .0
            .iter()
            .find(|p| p.0 == pid)
            .ok_or(ReadError::Open(Errno::NOENT))?;
        let n = text.len();
        buf[..n].copy_from_slice(text.as_bytes());
        Ok(&buf[..n])
    }
}

fn scanned(f: &mut Fake, cmd: (u32, u64)) -> JobTree {
    let mut t = JobTree::new();
    let mut buf = [0u8; 512];
    let pids = f.pids();
    t.fill(pids, cmd, 4, f, &mut buf);
    t
}

#[test]
fn make_s_children_are_the_jobs_with_their_descendants_summed() {
    // headroom 100 → make 200 → sh 210 → cc1plus 230; make → sh 220 →
    // python3 240; a zombie job 250; an older sshd and its child.
    let mut f = Fake::new(&[
        (1, "init", 'S', 0, 5, 1, 100),
        (100, "headroom", 'S', 1, 1, 900, 50),
        (200, "make", 'S', 100, 2, 1000, 500),
        (210, "sh", 'S', 200, 1, 1010, 100),
        (220, "sh", 'S', 200, 1, 1012, 100),
        (230, "cc1plus", 'R', 210, 40, 1011, 25_600),
        (240, "python3", 'R', 220, 7, 1013, 2_560),
        (250, "sh", 'Z', 200, 0, 1005, 0),
        (50, "sshd", 'S', 1, 0, 10, 400),
        (1500, "bash", 'S', 50, 0, 1020, 300),
    ]);
    let t = scanned(&mut f, (200, 1000));
    assert_eq!(t.tool, 200);
    assert!(!t.truncated);
    let jobs: Vec<_> = t
        .jobs()
        .iter()
        .map(|j| (j.pid, j.start_ticks, j.rss_kib, j.cpu_ticks, j.procs))
        .collect();
    assert_eq!(
        jobs,
        [
            (210, 1010, 4 * 25_700, 1 + 1 + 40 + 1, 2),
            (220, 1012, 4 * 2_660, 1 + 1 + 7 + 1, 2)
        ]
    );
    let mut of_first: Vec<u32> = t.processes_of(0).collect();
    of_first.sort_unstable();
    assert_eq!(of_first, [210, 230]);
    assert_eq!(t.processes_of(5).count(), 0);
    let mut all: Vec<u32> = t.processes().collect();
    all.sort_unstable();
    assert_eq!(all, [200, 210, 220, 230, 240]);
}

#[test]
fn the_tool_is_the_make_under_a_shell_cmd_and_pids_that_wrapped_still_link() {
    // CMD is `sh -c "make"`: sh 9000 → make 40 (pid wrapped) → jobs.
    let mut f = Fake::new(&[
        (9000, "sh", 'S', 100, 0, 500, 100),
        (40, "make", 'S', 9000, 0, 501, 500),
        (41, "sh", 'S', 40, 0, 502, 100),
        (9100, "ld", 'R', 41, 3, 503, 1000),
        (42, "make", 'S', 40, 0, 504, 400),
        (43, "cc1", 'R', 42, 9, 505, 2000),
    ]);
    let t = scanned(&mut f, (9000, 500));
    assert_eq!(t.tool, 40);
    let jobs: Vec<_> = t.jobs().iter().map(|j| (j.pid, j.rss_kib / 4)).collect();
    // The recursive make is no job: what it runs is.
    assert_eq!(jobs, [(41, 1100), (43, 2000)]);
}

#[test]
fn a_recursive_make_s_jobs_are_its_sub_makes_jobs_never_the_sub_makes() {
    // make 10 → sh 11 → make 12 (a, b); make 10 → make 13 (c); make 10 →
    // sh 14 → cc1 15 (its own job). A Makefile of `$(MAKE) -C sub` alone
    // has one child: pausing it would be pausing the whole build.
    let mut f = Fake::new(&[
        (10, "make", 'S', 1, 0, 100, 500),
        (11, "sh", 'S', 10, 0, 101, 100),
        (12, "make", 'S', 11, 0, 102, 500),
        (20, "sh", 'S', 12, 0, 103, 100),
        (21, "cc1", 'R', 20, 5, 104, 9000),
        (22, "sh", 'S', 12, 0, 105, 100),
        (13, "make", 'S', 10, 0, 106, 500),
        (30, "cc1plus", 'R', 13, 5, 107, 7000),
        (14, "sh", 'S', 10, 0, 108, 100),
        (15, "cc1", 'R', 14, 5, 109, 3000),
    ]);
    let t = scanned(&mut f, (10, 100));
    assert_eq!(t.tool, 10);
    let jobs: Vec<_> = t.jobs().iter().map(|j| (j.pid, j.rss_kib / 4)).collect();
    assert_eq!(jobs, [(14, 3100), (20, 9100), (22, 100), (30, 7000)]);
}

#[test]
fn without_a_tool_cmd_s_children_are_the_jobs_and_a_missing_cmd_gives_none() {
    let mut f = Fake::new(&[
        (300, "build.sh", 'S', 1, 0, 70, 100),
        (301, "cc", 'S', 300, 0, 71, 100),
    ]);
    let t = scanned(&mut f, (300, 70));
    assert_eq!((t.tool, t.jobs().len()), (300, 1));
    let t = scanned(&mut f, (299, 70));
    assert_eq!((t.tool, t.jobs().len()), (0, 0));
}

#[test]
fn processes_older_than_the_build_are_not_kept_and_a_full_table_says_so() {
    let mut procs: Vec<(u32, &str, char, u32, u64, u64, u64)> = (0..2000u32)
        .map(|i| (10_000 + i, "worker", 'S', 1, 0, 5, 1))
        .collect();
    procs.push((200, "make", 'S', 1, 0, 100, 1));
    procs.push((201, "cc1", 'R', 200, 0, 101, 1));
    let mut f = Fake::new(&procs);
    let t = scanned(&mut f, (200, 100));
    assert!(!t.truncated);
    assert_eq!(t.jobs().len(), 1);
    for p in procs.iter_mut() {
        p.5 = 150;
    }
    let mut f = Fake::new(&procs);
    let t = scanned(&mut f, (200, 100));
    assert!(t.truncated);
}

#[test]
fn hostile_stat_lines_are_skipped() {
    let mut f = Fake(std::vec![
        (
            200,
            String::from("200 (make) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 100 0 5\n")
        ),
        (201, String::from("201 (cc1) R 200 garbage\n")),
        (
            202,
            String::from(
                "202 (cc1) R 200 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99999999999999999999 0 5\n"
            )
        ),
        (
            203,
            String::from("203 (kworker) I 200 1 1 0 -1 2097152 0 0 0 0 0 0 0 0 20 0 1 0 101 0 0\n")
        ),
    ]);
    let t = scanned(&mut f, (200, 100));
    assert_eq!(t.jobs().len(), 0);
}
