//! Issue 35's acceptance, end to end: each job its own weight. A build of
//! two heavy compiles and forty light ones in a 600 MiB memory cgroup
//! whose swap is capped (`docker run -m 600m --memory-swap 600m`), on 2
//! cores: run twice by `headroom run --jobserver --pool P`, the second
//! run must remember each compile's own peak, keep the two heavy ones
//! apart and run light ones beside them.
//!
//! The tree, written into a scratch directory:
//! - `h1.c`, `h2.c`: copies of SQLite's `sqlite3.c` (`common::sqlite`),
//!   each `cc -O2 -g -c hN.c -o hN.o`: cc1 peaks at ~360 MiB and takes
//!   ~42-47 s alone. Two at once exceed 600 MiB: `make -j2` is OOM-killed.
//! - `l01.c`..`l40.c`, generated (deterministic): [`LIGHT_FUNCTIONS`]
//!   functions each, a 6×6×6 matrix product fully unrolled by
//!   `#pragma GCC unroll`, compiled with [`LIGHT_GC`] (gcc's collector
//!   otherwise keeps garbage up to a heap size set from the host's RAM,
//!   so cc1's peak would follow the garbage, not the work: without it 20
//!   such functions peak at ~80 MiB). Measured here with `/usr/bin/time
//!   -v cc -O2 -g LIGHT_GC -c l01.c`: 2.10-2.30 s user, 3.4-3.5 s wall on
//!   the shared machine (load 2.4-2.9), maximum resident set 60.6 MiB
//!   (the light file: 59 MiB, 2.2 s).
//! - `Makefile.heavy-first` (`all: h1.o h2.o l01.o ...`),
//!   `Makefile.light-first` (the heavy ones last), `Makefile.timed` (as
//!   heavy-first, each recipe writing its start and end to `times.log`),
//!   `build.ninja` (a `cc` rule, the same commands). Every compile is a
//!   plain `cc -O2 -g [LIGHT_GC] -c X.c -o X.o`: the governor keys a
//!   compile by its source or output file.
//!
//! Configurations, each from a clean tree (objects removed), each printed
//! as `FIGURE weights_<name>_s` (wall) and `FIGURE weights_<name>_oom_kills`:
//! 1. `j1`: `make -j1 -f Makefile.timed`, no headroom: the heavy
//!    compiles' time alone (`weights_heavy_alone_s`, the two summed), and
//!    the schedule that never runs two heavy jobs at once
//!    (`weights_never_two_heavy_s` = max(heavy alone, j1 / 2)).
//! 2. `first`: `headroom run --jobserver --pool P --run-id mixed --explain
//!    -- make -f Makefile.heavy-first`, P fresh (no `-j`: headroom's
//!    jobserver is the cap, the cores).
//! 3. `second`: the same again, P remembering the first.
//! 4. `lightfirst`: `Makefile.light-first`, same pool and run id.
//! 5. `ninja`: `ninja` (≥ 1.13, a jobserver client; said skipped when
//!    absent), same pool and run id.
//!
//! With `HEADROOM_WEIGHTS_FULL=1` (ci/bench) all five run (819 s with
//! today's governor, one job at a time); otherwise (ci/test) 2, 3 and 5
//! only, the structural checks being on 3 (646 s today, on a machine
//! loaded by other builds; ~7 minutes once the second run and ninja take
//! the never-two-heavy schedule's ~95 s). Measured here by `make -j1`:
//! the heavy compiles 47.4 and 44.1 s, the light ones 2.5 s on average.
//! With the full set the ratios are printed too
//! (`weights_second_over_never_two_heavy`, `weights_j1_over_second`,
//! `weights_first_over_j1`, the same for `lightfirst` and `ninja`); the
//! issue's bounds on them (≤ 1.15, ≥ 1.3, ≤ 1) are judged by ci/bench,
//! not here: the machine is shared, a wall time would make the test flaky.
//!
//! Asserted, in a [`Checks`] list (all said, the test fails at the end):
//! - every configuration under headroom: exit 0, all 42 objects, no OOM
//!   kill in the test's cgroup or below it (its counter and the kernel
//!   log's `oom-kill:` lines naming it, as tests/container.rs counts);
//! - the second run, from a sampler thread reading the test's own cgroup
//!   and those below every [`SAMPLE_EVERY`] (each `cc1`'s
//!   `/proc/PID/stat` state and RSS, its `/proc/PID/cmdline` naming
//!   `h1.c`, `h2.c` or `lNN.c`): (a) the two heavy cc1 were never both
//!   running (state not `T`) with more than [`HEAVY_RSS_MIB`] each at
//!   one sample; (b) in at least [`LIGHT_BESIDE_MIN_PCT`] % of the samples
//!   where a heavy cc1 runs, a light one runs too. A perfect schedule
//!   runs the heavy compiles back to back (~90 s) with the forty light
//!   ones (~88 s of CPU) on the other core: ~98 % of those samples; one
//!   job at a time, as today's governor does after the first run, 0 %;
//!   (c) `--explain` names `h2.` as `paused` on one line (the governor
//!   pauses a known-heavy job at its start); (d) the summary's JOBSERVER
//!   block speaks of jobs with a `remembered peak`.
//!
//! On today's binary (before issue 35's governor) (b), (c) and (d) fail
//! on the second run, as the issue reports: that is expected until the
//! feature lands.
//!
//! Needs root, a writable memory controller with swap accounting, 2
//! cores, gcc and GNU make: `#[ignore]`d in a plain `cargo test`, run
//! alone by `ci/test` (its `container` stage).

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::sqlite::sqlite_source;
use common::{Cgroup, KernelLog, SCRUBBED_ENV, cgroup_oom_kills, scratch};

/// The cgroup's memory limit (and its memsw limit), bytes: `-m 600m`.
const LIMIT_BYTES: u64 = 600 << 20;
/// The heavy compiles' names (`h1.c` → `h1.o`).
const HEAVY: [&str; 2] = ["h1", "h2"];
/// How many light compiles (`l01.c`..).
const LIGHTS: usize = 40;
/// Functions in each light file: ~2.2 s of cc1 at ~59 MiB.
const LIGHT_FUNCTIONS: usize = 20;
/// The light compiles' extra flags: gcc's collector runs once its heap
/// passes 24 MiB (and grows by 20 %), so cc1's peak is the work's.
const LIGHT_GC: &str = "--param ggc-min-heapsize=24576 --param ggc-min-expand=20";
/// The pool's run id, the same for every run under headroom.
const RUN_ID: &str = "mixed";
/// The longest one build may take before the test gives up on it, s.
const BUILD_DEADLINE_S: u64 = 900;
/// How often the sampler reads the cgroup's processes.
const SAMPLE_EVERY: Duration = Duration::from_millis(100);
/// A heavy cc1 above this is well into its growth (it peaks at ~360):
/// two such at once is what the second run must never do, MiB.
const HEAVY_RSS_MIB: u64 = 100;
/// Of the samples where a heavy cc1 runs, the share where a light one
/// runs too, at least, %: about half of a perfect schedule's ~98 %.
const LIGHT_BESIDE_MIN_PCT: usize = 50;
/// The switch for all five configurations (ci/bench).
const FULL_ENV: &str = "HEADROOM_WEIGHTS_FULL";

/// Every object the build makes, heavy ones first.
fn objects() -> Vec<String> {
    HEAVY
        .iter()
        .map(|h| format!("{h}.o"))
        .chain((1..=LIGHTS).map(|i| format!("l{i:02}.o")))
        .collect()
}

/// The light file `lNN.c`: [`LIGHT_FUNCTIONS`] functions, each a fully
/// unrolled 6×6×6 integer matrix product (constants varied by `i`).
fn light_source(i: usize) -> String {
    let mut c = format!("/* light compile {i} */\nint A{i}[8][8], B{i}[8][8], C{i}[8][8];\n");
    for f in 0..LIGHT_FUNCTIONS {
        c.push_str(&format!(
            "int f{f}(int k) {{\n  int s = {};\n\
             #pragma GCC unroll 6\n  for (int i = 0; i < 6; i++)\n\
             #pragma GCC unroll 6\n    for (int j = 0; j < 6; j++) {{\n      int t = 0;\n\
             #pragma GCC unroll 6\n      for (int m = 0; m < 6; m++) t += A{i}[i][m] * B{i}[m][j] + (k ^ {f});\n\
             \x20     C{i}[i][j] = t;\n      s += t >> {};\n    }}\n  return s;\n}}\n",
            f + i,
            f % 5 + 1
        ));
    }
    c
}

/// A Makefile building [`objects`] in `order` (`all:`'s prerequisites),
/// each by `cc -O2 -g [LIGHT_GC] -c X.c -o X.o`; `timed` wraps each
/// recipe to append `X.o START END` (date +%s.%N) to `times.log`.
fn makefile(order: &[String], timed: bool) -> String {
    let lights: Vec<String> = objects().into_iter().skip(HEAVY.len()).collect();
    let cc = "cc -O2 -g $(GC) -c $< -o $@";
    let recipe = if timed {
        format!("@s=$$(date +%s.%N) && {cc} && echo \"$@ $$s $$(date +%s.%N)\" >> times.log")
    } else {
        cc.to_string()
    };
    format!(
        "all: {}\n{}: GC = {LIGHT_GC}\n%.o: %.c\n\t{recipe}\n",
        order.join(" "),
        lights.join(" ")
    )
}

/// `build.ninja`: the same compiles as the Makefiles, heavy ones first.
fn ninja_file() -> String {
    let mut n = String::from("rule cc\n  command = cc -O2 -g $gc -c $in -o $out\n");
    for o in objects() {
        let light = !HEAVY.iter().any(|h| o.starts_with(h));
        n.push_str(&format!("build {o}: cc {}\n", o.replace(".o", ".c")));
        if light {
            n.push_str(&format!("  gc = {LIGHT_GC}\n"));
        }
    }
    n.push_str(&format!(
        "build all: phony {}\ndefault all\n",
        objects().join(" ")
    ));
    n
}

/// The 600 MiB cgroup, the tree in a scratch directory, the pool, and
/// the kernel log opened before anything ran in the cgroup.
struct Mixed {
    cg: Cgroup,
    dir: PathBuf,
    pool: PathBuf,
    /// The two CPUs every command is bound to (taskset), when this
    /// process may use more.
    cpus: Option<String>,
    log: KernelLog,
    /// The cgroup's own OOM-kill counter as last read.
    kills_counted: u64,
}

impl Mixed {
    /// Creates the cgroup (swap capped) and writes the tree.
    fn new(cpus: Option<String>) -> Mixed {
        let cg = Cgroup::create("weights", LIMIT_BYTES)
            .unwrap_or_else(|why| panic!("cannot run: {why}"));
        cg.swap_capped()
            .unwrap_or_else(|why| panic!("cannot run: swap not capped: {why}"));
        let log = KernelLog::open().unwrap_or_else(|why| panic!("cannot run: {why}"));
        let dir = scratch("weights");
        let pool = dir.join("pool");
        fs::create_dir(&pool).unwrap();
        let src = sqlite_source();
        for h in HEAVY {
            fs::copy(&src, dir.join(format!("{h}.c"))).unwrap();
        }
        for i in 1..=LIGHTS {
            fs::write(dir.join(format!("l{i:02}.c")), light_source(i)).unwrap();
        }
        let heavy_first = objects();
        let mut light_first = heavy_first.clone();
        light_first.rotate_left(HEAVY.len());
        for (name, text) in [
            ("Makefile.heavy-first", makefile(&heavy_first, false)),
            ("Makefile.light-first", makefile(&light_first, false)),
            ("Makefile.timed", makefile(&heavy_first, true)),
            ("build.ninja", ninja_file()),
        ] {
            fs::write(dir.join(name), text).unwrap();
        }
        Mixed {
            cg,
            dir,
            pool,
            cpus,
            log,
            kills_counted: 0,
        }
    }

    /// `argv` started from inside the cgroup (a shell joins it, then execs
    /// `argv`, bound to [`Mixed::cpus`]), in the tree, with
    /// [`SCRUBBED_ENV`] removed.
    fn command(&self, argv: &[String]) -> Command {
        let bind = self
            .cpus
            .as_ref()
            .map_or(String::new(), |c| format!("taskset -c {c} "));
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!(
                "echo $$ > {} && exec {bind}\"$@\"",
                self.cg.dir.join("cgroup.procs").display()
            ))
            .arg("sh")
            .args(argv)
            .current_dir(&self.dir);
        for k in SCRUBBED_ENV {
            cmd.env_remove(k);
        }
        cmd
    }

    /// `headroom run --jobserver --pool P --run-id mixed --explain -- BUILD`
    /// (or `$HEADROOM_BIN`), its CSV in `out/`.
    fn governed(&self, build: &[&str]) -> Vec<String> {
        let h = common::headroom();
        let mut argv: Vec<String> = vec![h.get_program().to_string_lossy().into_owned()];
        argv.extend(h.get_args().map(|a| a.to_string_lossy().into_owned()));
        let pool = self.pool.to_string_lossy().into_owned();
        let out = self.dir.join("out").to_string_lossy().into_owned();
        argv.extend(
            [
                "run",
                "--jobserver",
                "--pool",
                &pool,
                "--run-id",
                RUN_ID,
                "--explain",
                "--out-dir",
                &out,
                "--",
            ]
            .iter()
            .chain(build)
            .map(|a| a.to_string()),
        );
        argv
    }

    /// Removes the objects, make's and ninja's leftovers of a build.
    fn clean(&self) {
        for o in objects() {
            let _ = fs::remove_file(self.dir.join(o));
        }
        for f in ["times.log", ".ninja_log", ".ninja_deps"] {
            let _ = fs::remove_file(self.dir.join(f));
        }
    }

    /// How many of the objects exist.
    fn built(&self) -> usize {
        objects()
            .iter()
            .filter(|o| self.dir.join(o).exists())
            .count()
    }

    /// OOM kills of processes in the cgroup or below since the previous
    /// call: the larger of the kernel log's count and the cgroup's own
    /// counter's (both printed; on v1 a kill in headroom's build cgroup
    /// shows only in the log).
    fn new_oom_kills(&mut self, what: &str) -> u64 {
        let logged = self.log.oom_kills_below(&self.cg);
        let now = cgroup_oom_kills(&self.cg);
        let counted = now - self.kills_counted;
        println!(
            "{what}: OOM kills in the test's cgroup or below: kernel log {logged}, cgroup counter {counted}"
        );
        self.kills_counted = now;
        logged.max(counted)
    }

    /// One configuration from a clean tree, with the sampler watching:
    /// its wall time, OOM kills, objects, output and schedule, printed
    /// (FIGURE lines) and its stderr kept in `stderr-NAME.txt`.
    fn build(&mut self, name: &str, argv: &[String]) -> Build {
        self.clean();
        let sampler = Sampler::start(&self.cg.dir);
        let began = Instant::now();
        let out = common::output_within(&mut self.command(argv), BUILD_DEADLINE_S);
        let wall_s = began.elapsed().as_secs_f64();
        let schedule = Schedule::of(&sampler.stop());
        let kills = self.new_oom_kills(name);
        let built = self.built();
        let kept = self.dir.join(format!("stderr-{name}.txt"));
        let _ = fs::write(&kept, &out.stderr);
        println!(
            "{name}: {wall_s:.1} s, exit {:?}, {built} of {} objects; {schedule:?}; stderr in {}",
            out.status.code(),
            objects().len(),
            kept.display()
        );
        println!("FIGURE weights_{name}_s {wall_s:.1}");
        println!("FIGURE weights_{name}_oom_kills {kills}");
        println!(
            "FIGURE weights_{name}_light_beside_pct {}",
            schedule.light_beside_pct()
        );
        println!(
            "FIGURE weights_{name}_two_heavy_samples {}",
            schedule.two_heavy
        );
        Build {
            wall_s,
            kills,
            built,
            out,
            schedule,
        }
    }

    /// Each compile's seconds in `make -j1 -f Makefile.timed`, from
    /// `times.log` (`X.o START END`).
    fn compile_times(&self) -> BTreeMap<String, f64> {
        fs::read_to_string(self.dir.join("times.log"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                let (s, e): (f64, f64) = (w.get(1)?.parse().ok()?, w.get(2)?.parse().ok()?);
                Some((w[0].to_string(), e - s))
            })
            .collect()
    }
}

/// One configuration's build.
struct Build {
    wall_s: f64,
    kills: u64,
    built: usize,
    out: Output,
    schedule: Schedule,
}

impl Build {
    /// Whether it built every object, exit 0, with no OOM kill.
    fn whole(&self) -> bool {
        self.out.status.success() && self.built == objects().len() && self.kills == 0
    }

    fn seen(&self) -> String {
        format!(
            "exit {:?}, {} of {} objects, {} OOM kills; stderr:\n{}",
            self.out.status.code(),
            self.built,
            objects().len(),
            self.kills,
            tail(&text(&self.out.stderr), 40)
        )
    }
}

/// Which compile a cc1 is, from the source file on its command line.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Job {
    /// `h1.c` (0) or `h2.c` (1).
    Heavy(usize),
    /// `lNN.c`.
    Light,
}

/// One cc1 at one sample.
#[derive(Clone, Copy, Debug)]
struct Cc1 {
    job: Job,
    /// Its state was not `T`/`t` (stopped: paused by the governor).
    running: bool,
    rss_mib: u64,
}

/// A thread reading the cc1 processes of a cgroup and the cgroups below
/// it every [`SAMPLE_EVERY`] until stopped: one `Vec<Cc1>` per sample.
struct Sampler {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Vec<Vec<Cc1>>>,
}

impl Sampler {
    fn start(dir: &Path) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let (dir, flag) = (dir.to_path_buf(), stop.clone());
        let thread = std::thread::spawn(move || {
            let mut samples = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                let mut now = Vec::new();
                cc1_below(&dir, &mut now);
                samples.push(now);
                std::thread::sleep(SAMPLE_EVERY);
            }
            samples
        });
        Sampler { stop, thread }
    }

    fn stop(self) -> Vec<Vec<Cc1>> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap_or_default()
    }
}

/// Appends the cc1 processes of cgroup `dir` and those below it to `out`.
fn cc1_below(dir: &Path, out: &mut Vec<Cc1>) {
    let procs = fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
    out.extend(procs.lines().filter_map(|pid| cc1(pid.trim())));
    for sub in fs::read_dir(dir).into_iter().flatten().flatten() {
        if sub.file_type().is_ok_and(|t| t.is_dir()) {
            cc1_below(&sub.path(), out);
        }
    }
}

/// Process `pid` when it is a cc1 of one of the tree's files: its job,
/// state and RSS (`/proc/PID/stat` fields 3 and 24, after the comm's
/// last `)`), `None` when it is not or is gone.
fn cc1(pid: &str) -> Option<Cc1> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (head, rest) = stat.rsplit_once(')')?;
    if !head.ends_with("(cc1") {
        return None;
    }
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = *fields.first()?;
    let rss_pages: u64 = fields.get(21)?.parse().ok()?;
    let cmdline = fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let job = cmdline.split(|b| *b == 0).find_map(job_of)?;
    Some(Cc1 {
        job,
        running: state != "T" && state != "t",
        rss_mib: (rss_pages * rustix::param::page_size() as u64) >> 20,
    })
}

/// The job a cc1 argument names: `h1.c`, `h2.c` or `lNN.c` (any
/// directory before it).
fn job_of(arg: &[u8]) -> Option<Job> {
    let arg = String::from_utf8_lossy(arg);
    let file = arg.rsplit('/').next()?;
    let stem = file.strip_suffix(".c")?;
    if let Some(i) = HEAVY.iter().position(|h| *h == stem) {
        return Some(Job::Heavy(i));
    }
    let n = stem.strip_prefix('l')?;
    (n.len() == 2 && n.bytes().all(|b| b.is_ascii_digit())).then_some(Job::Light)
}

/// What the samples of one build show of its schedule (counts of
/// samples).
#[derive(Debug, Default)]
struct Schedule {
    samples: usize,
    /// Samples with each heavy cc1 seen (running or not).
    heavy_seen: [usize; 2],
    /// Samples with a light cc1 seen.
    light_seen: usize,
    /// Samples with a heavy cc1 running.
    heavy_running: usize,
    /// Of those, samples with a light cc1 running too.
    light_beside: usize,
    /// Samples with both heavy cc1 running above [`HEAVY_RSS_MIB`].
    two_heavy: usize,
    /// Samples with a cc1 stopped (paused).
    paused: usize,
    /// The most cc1 running at one sample.
    most_running: usize,
}

impl Schedule {
    fn of(samples: &[Vec<Cc1>]) -> Schedule {
        let mut s = Schedule {
            samples: samples.len(),
            ..Schedule::default()
        };
        for now in samples {
            let heavy_big = |i| {
                now.iter()
                    .any(|c| c.job == Job::Heavy(i) && c.running && c.rss_mib > HEAVY_RSS_MIB)
            };
            for (i, seen) in s.heavy_seen.iter_mut().enumerate() {
                *seen += usize::from(now.iter().any(|c| c.job == Job::Heavy(i)));
            }
            s.light_seen += usize::from(now.iter().any(|c| c.job == Job::Light));
            let heavy = now
                .iter()
                .any(|c| matches!(c.job, Job::Heavy(_)) && c.running);
            let light = now.iter().any(|c| c.job == Job::Light && c.running);
            s.heavy_running += usize::from(heavy);
            s.light_beside += usize::from(heavy && light);
            s.two_heavy += usize::from(heavy_big(0) && heavy_big(1));
            s.paused += usize::from(now.iter().any(|c| !c.running));
            s.most_running = s.most_running.max(now.iter().filter(|c| c.running).count());
        }
        s
    }

    /// Of the samples where a heavy cc1 runs, the share where a light one
    /// runs too, % (0 when no heavy one was seen running).
    fn light_beside_pct(&self) -> usize {
        (self.light_beside * 100)
            .checked_div(self.heavy_running)
            .unwrap_or(0)
    }

    /// Whether the sampler saw both heavy cc1 and a light one: without
    /// that the other figures say nothing.
    fn saw_the_build(&self) -> bool {
        self.heavy_seen.iter().all(|n| *n > 0) && self.light_seen > 0
    }
}

/// The acceptance checks of one test: each is said (ok or FAILED, with
/// what was seen), all are run, and the test fails at the end if any did.
#[derive(Default)]
struct Checks(Vec<(String, bool, String)>);

impl Checks {
    fn check(&mut self, what: &str, ok: bool, seen: impl Into<String>) {
        self.0.push((what.to_string(), ok, seen.into()));
    }

    fn finish(self) {
        let mut failed = Vec::new();
        for (what, ok, seen) in &self.0 {
            println!("{} {what}", if *ok { "ok    " } else { "FAILED" });
            if !ok {
                println!("       seen: {seen}");
                failed.push(what.as_str());
            }
        }
        assert!(failed.is_empty(), "acceptance not met: {failed:?}");
    }
}

/// The first two CPUs of this process's affinity mask (`taskset -c`'s
/// list), when it has more than two; `Err` when it has fewer.
fn two_cpus() -> Result<Option<String>, usize> {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap_or("")
        .trim()
        .to_string();
    let mut cpus = Vec::new();
    for part in list.split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        if let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) {
            cpus.extend(a..=b);
        }
    }
    let usable = std::thread::available_parallelism().map_or(1, |n| n.get());
    match (cpus.len(), usable) {
        (_, u) if u < 2 => Err(u),
        (n, _) if n < 2 => Err(n),
        (2, 2) => Ok(None),
        _ => Ok(Some(format!("{},{}", cpus[0], cpus[1]))),
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The last `n` lines of `s`.
fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The JOBSERVER block of a summary on stderr (to the next blank line),
/// empty when there is none.
fn jobserver_block(stderr: &str) -> String {
    stderr
        .lines()
        .skip_while(|l| !l.starts_with("JOBSERVER:"))
        .take_while(|l| !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `a / b` to two places, for a FIGURE line.
fn ratio(a: f64, b: f64) -> String {
    if b > 0.0 {
        format!("{:.2}", a / b)
    } else {
        "-".into()
    }
}

#[test]
#[ignore = "needs root, a writable memory cgroup, 2 cores, gcc and make; ci/test runs it"]
fn the_second_run_never_runs_two_heavy_compiles_and_runs_light_ones_beside_them() {
    let cpus = match two_cpus() {
        Ok(c) => c,
        Err(n) => {
            println!("skipped: {n} core(s) usable, the mixed build needs 2");
            return;
        }
    };
    let full = std::env::var_os(FULL_ENV).is_some_and(|v| v == "1");
    let mut m = Mixed::new(cpus);
    let mut checks = Checks::default();
    let ninja = common::ninja();

    // 1. make -j1, no headroom (ci/bench only): each compile's time.
    let mut j1 = None;
    if full {
        let b = m.build(
            "j1",
            &[
                "make".into(),
                "-j1".into(),
                "-f".into(),
                "Makefile.timed".into(),
            ],
        );
        let times = m.compile_times();
        let heavy: Vec<f64> = HEAVY
            .iter()
            .filter_map(|h| times.get(&format!("{h}.o")).copied())
            .collect();
        checks.check(
            "make -j1 builds all 42 objects with no OOM kill, each compile timed",
            b.whole() && heavy.len() == HEAVY.len() && times.len() == objects().len(),
            format!("{} timed: {times:?}; {}", times.len(), b.seen()),
        );
        let heavy_alone: f64 = heavy.iter().sum();
        let lights: Vec<f64> = times
            .iter()
            .filter(|(o, _)| o.starts_with('l'))
            .map(|(_, s)| *s)
            .collect();
        let never_two_heavy = heavy_alone.max(b.wall_s / 2.0);
        println!(
            "make -j1: heavy compiles {heavy:.1?} s, light ones {:.1} s on average ({:.1} s in all)",
            lights.iter().sum::<f64>() / lights.len().max(1) as f64,
            lights.iter().sum::<f64>()
        );
        println!("FIGURE weights_heavy_alone_s {heavy_alone:.1}");
        println!("FIGURE weights_never_two_heavy_s {never_two_heavy:.1}");
        j1 = Some((b.wall_s, never_two_heavy));
    } else {
        println!("make -j1: not built ({FULL_ENV}=1 builds it, for ci/bench's figures)");
    }

    // 2. and 3. The first run (the pool empty), then the second.
    let heavy_first = m.governed(&["make", "-f", "Makefile.heavy-first"]);
    let first = m.build("first", &heavy_first);
    checks.check(
        "first run (nothing remembered): exit 0, all 42 objects, no OOM kill",
        first.whole(),
        first.seen(),
    );
    let second = m.build("second", &heavy_first);
    checks.check(
        "second run: exit 0, all 42 objects, no OOM kill",
        second.whole(),
        second.seen(),
    );
    second_run_checks(&mut checks, &second);

    // 4. Light ones first in make's order (ci/bench only).
    let mut lightfirst = None;
    if full {
        let argv = m.governed(&["make", "-f", "Makefile.light-first"]);
        let b = m.build("lightfirst", &argv);
        checks.check(
            "light ones first, second-run history: exit 0, all 42 objects, no OOM kill",
            b.whole(),
            b.seen(),
        );
        lightfirst = Some(b.wall_s);
    }

    // 5. ninja as the build tool.
    let mut ninja_s = None;
    match &ninja {
        Some(n) => {
            let argv = m.governed(&[n.as_str()]);
            let b = m.build("ninja", &argv);
            checks.check(
                "ninja, second-run history: exit 0, all 42 objects, no OOM kill",
                b.whole(),
                b.seen(),
            );
            ninja_s = Some(b.wall_s);
        }
        None => println!("ninja: skipped (no ninja >= 1.13)"),
    }

    if let Some((j1_s, never)) = j1 {
        println!("FIGURE weights_first_over_j1 {}", ratio(first.wall_s, j1_s));
        for (name, wall) in [
            ("second", Some(second.wall_s)),
            ("lightfirst", lightfirst),
            ("ninja", ninja_s),
        ] {
            let Some(s) = wall else { continue };
            println!(
                "FIGURE weights_{name}_over_never_two_heavy {}",
                ratio(s, never)
            );
            println!("FIGURE weights_j1_over_{name} {}", ratio(j1_s, s));
        }
    }
    checks.finish();
}

/// The second run's structural checks: (a)-(d) of the module's doc.
fn second_run_checks(checks: &mut Checks, second: &Build) {
    let s = &second.schedule;
    let stderr = text(&second.out.stderr);
    checks.check(
        "second run: the sampler saw h1.c's and h2.c's cc1 and light ones in the test's cgroup",
        s.saw_the_build(),
        format!("{s:?}"),
    );
    checks.check(
        &format!(
            "second run (a): the two heavy cc1 never both running above {HEAVY_RSS_MIB} MiB at one sample"
        ),
        s.saw_the_build() && s.two_heavy == 0,
        format!("{} of {} samples: {s:?}", s.two_heavy, s.samples),
    );
    checks.check(
        &format!(
            "second run (b): a light cc1 runs beside a running heavy one in >= {LIGHT_BESIDE_MIN_PCT} % of the heavy one's samples"
        ),
        s.heavy_running > 0 && s.light_beside_pct() >= LIGHT_BESIDE_MIN_PCT,
        format!(
            "{} % ({} of {} samples): {s:?}",
            s.light_beside_pct(),
            s.light_beside,
            s.heavy_running
        ),
    );
    let paused: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("h2.") && l.to_ascii_lowercase().contains("paused"))
        .collect();
    checks.check(
        "second run (c): --explain names h2 as paused (a line with `h2.` and `paused`)",
        !paused.is_empty(),
        stderr
            .lines()
            .filter(|l| l.to_ascii_lowercase().contains("pause"))
            .take(20)
            .collect::<Vec<_>>()
            .join("\n"),
    );
    let block = jobserver_block(&stderr);
    checks.check(
        "second run (d): the JOBSERVER block speaks of jobs with a remembered peak",
        block.to_ascii_lowercase().contains("remembered peak"),
        block.clone(),
    );
}

/// The tree's build files without root: `make -n` of each Makefile and
/// `ninja -n` print plain `cc -O2 -g [LIGHT_GC] -c X.c -o X.o` commands in
/// the order asked, a light file is valid C, and a cc1 command line is
/// told apart by its source file.
#[test]
fn the_build_files_run_plain_cc_commands_heavy_or_light_first() {
    let d = scratch("weights-files");
    for o in objects() {
        fs::write(d.join(o.replace(".o", ".c")), "").unwrap();
    }
    fs::write(d.join("l01.c"), light_source(1)).unwrap();
    assert_eq!(light_source(1), light_source(1));
    let heavy_first = objects();
    let mut light_first = heavy_first.clone();
    light_first.rotate_left(HEAVY.len());
    for (order, first) in [(&heavy_first, "h1.o"), (&light_first, "l01.o")] {
        fs::write(d.join("Makefile"), makefile(order, false)).unwrap();
        let out = Command::new("make")
            .args(["-n", "-B"])
            .current_dir(&d)
            .env_remove("MAKEFLAGS")
            .output()
            .expect("make");
        let cmds = text(&out.stdout);
        let lines: Vec<&str> = cmds.lines().collect();
        assert_eq!(lines.len(), 42, "{cmds}");
        assert!(
            lines[0].ends_with(&format!("-c {} -o {first}", first.replace(".o", ".c"))),
            "{cmds}"
        );
        assert!(cmds.contains("cc -O2 -g  -c h2.c -o h2.o\n"), "{cmds}");
        assert!(
            cmds.contains(&format!("cc -O2 -g {LIGHT_GC} -c l40.c -o l40.o\n")),
            "{cmds}"
        );
    }
    fs::write(d.join("build.ninja"), ninja_file()).unwrap();
    if let Some(ninja) = common::ninja() {
        let out = Command::new(ninja)
            .args(["-n", "-v"])
            .current_dir(&d)
            .output()
            .unwrap();
        let cmds = text(&out.stdout);
        assert!(
            cmds.contains(&format!("cc -O2 -g {LIGHT_GC} -c l07.c -o l07.o\n")),
            "{cmds}"
        );
        assert!(cmds.contains("cc -O2 -g  -c h1.c -o h1.o\n"), "{cmds}");
    }
    let cc = Command::new("cc")
        .args(["-O2", "-fsyntax-only", "-Wall", "-Werror", "l01.c"])
        .current_dir(&d)
        .output()
        .expect("cc");
    assert!(cc.status.success(), "{cc:?}");
    let job = |a: &str| job_of(a.as_bytes());
    assert_eq!(job("h1.c"), Some(Job::Heavy(0)));
    assert_eq!(job("/x/h2.c"), Some(Job::Heavy(1)));
    assert_eq!(job("l40.c"), Some(Job::Light));
    for other in [
        "h3.c",
        "l1.c",
        "l001.c",
        "lab.c",
        "h1.o",
        "-dumpbase",
        "h1.c.c",
    ] {
        assert_eq!(job(other), None, "{other}");
    }
}
