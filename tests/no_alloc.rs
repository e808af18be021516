//! After start-up, ticks of the recording loop allocate nothing: a counting
//! global allocator watches N ticks of the sampler, the row formatting, the
//! CSV write, the summary, the `--prom` file, `--jobserver`'s governor and
//! its glances between rows, and the choice of the active log in a
//! `--stage-log-dir`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

use headroom::followed::compilers::CompilerList;
use headroom::govern::jobserver::driver::{Driver, Governor, TICK_MS};
use headroom::govern::jobserver::handout::Handout;
use headroom::govern::jobserver::notes::{Note, Tell};
use headroom::govern::jobserver::pausing::Pausing;
use headroom::govern::jobserver::token_fifo::TokenFifo;
use headroom::govern::recording::{
    CsvOut, Interval, Loop, LoopSettings, StopFlag, Watch, WriteState, run,
};
use headroom::kernel::root::Root;
use headroom::report::prom::{Labels, PromFile};
use headroom::report::summary::Summary;
use headroom::tick::row::Row;
use headroom::tick::sampler::{Buffers, Options, Sampler, Source, StageLog, Warn};
use rustix::fd::AsFd;

struct NoWarn;
impl Warn for NoWarn {
    fn warn(&mut self, _: Source, _: &'static str) {}
    fn note(&mut self, _: Source, _: &'static str) {}
}
impl Tell for NoWarn {
    fn tell(&mut self, _: &Note<'_>) {}
}
struct Never;
impl StopFlag for Never {
    fn signal(&self) -> Option<i32> {
        None
    }
}

#[test]
fn ticks_after_start_up_allocate_nothing() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-alloc");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("build.log");
    std::fs::write(&log, "[stage compile]\n[ 10%] Building C object a.o\n").unwrap();
    let log = log.to_str().unwrap().to_string();
    let dir_s = dir.to_str().unwrap().to_string();

    // Start-up: everything that may allocate happens here.
    let root = Root::open("/").unwrap();
    let compilers = CompilerList::default_list();
    let mut bufs = Box::new(Buffers::new());
    let opts = Options {
        disk_path: &dir_s,
        tmp_path: "/tmp",
        stage_log: StageLog::File(&log),
        label: None,
        compilers: &compilers,
        log_since: None,
    };
    let mut sampler = Sampler::new(&root, opts, &mut bufs);
    let out = rustix::fs::open(
        dir_s.as_str(),
        rustix::fs::OFlags::RDONLY,
        rustix::fs::Mode::empty(),
    )
    .unwrap();
    let mut csv = CsvOut::create(
        out.as_fd(),
        "resources-a.csv",
        headroom::tick::row::columns::HEADER_JOBS,
    )
    .unwrap();
    // run --jobserver's tick: the governor, its FIFO and its pausing (this
    // test's own jobs scanned from /proc).
    let fifo = TokenFifo::create(out.as_fd()).unwrap();
    let handout = Handout::new(
        4,
        headroom::govern::jobserver::handout::CapFrom::Cores,
        500,
        headroom::report::jobserver_block::Source::PeakMb,
    );
    let mut gov = Box::new(Governor::new(handout, fifo, false));
    let me = std::process::id();
    let mut pausing = Box::new(Pausing::follow(&root, me, false, None, TICK_MS).unwrap());
    let mut prom = Box::new(PromFile::create(out.as_fd(), "headroom.prom").unwrap());
    let labels = Labels {
        run_id: "a",
        disk_path: &dir_s,
    };
    let mut summary = Box::new(Summary::new(None, None));
    let mut warn = NoWarn;
    let mut rows = 0u64;
    let settings = LoopSettings {
        interval: Interval::Fixed(0),
        count: Some(1),
        compat: false,
    };
    // One warm-up tick (first-use paths), then count.
    run(Loop {
        sampler: &mut sampler,
        bufs: &mut bufs,
        csv: &mut csv,
        summary: &mut summary,
        settings,
        watch: &Watch::None,
        stop: &Never,
        stop_fd: None,
        warn: &mut warn,
        governor: Some(Driver {
            gov: &mut gov,
            pool: None,
            pausing: Some(&mut pausing),
        }),
        hooks: &mut |row: &Row, _: WriteState, summary: &Summary| {
            prom.update(row, summary, labels, true).unwrap()
        },
    });

    let before = ALLOCS.load(Ordering::SeqCst);
    let settings = LoopSettings {
        interval: Interval::Fixed(0),
        count: Some(50),
        compat: false,
    };
    run(Loop {
        sampler: &mut sampler,
        bufs: &mut bufs,
        csv: &mut csv,
        summary: &mut summary,
        settings,
        watch: &Watch::None,
        stop: &Never,
        stop_fd: None,
        warn: &mut warn,
        governor: Some(Driver {
            gov: &mut gov,
            pool: None,
            pausing: Some(&mut pausing),
        }),
        hooks: &mut |row: &Row, _: WriteState, summary: &Summary| {
            prom.update(row, summary, labels, true).unwrap();
            rows += 1;
            assert!(row.context.contains("Building C object a.o"));
            assert!(row.jobs.is_some());
            assert!(row.pauses.is_some());
        },
    });
    let after = ALLOCS.load(Ordering::SeqCst);
    assert_eq!(rows, 50);
    assert_eq!(
        after - before,
        0,
        "{} allocations in 50 ticks",
        after - before
    );
    assert_eq!(summary.samples(), 51);

    // run --jobserver's pace: glances for the governor between rows
    // (this process's tree as the build) allocate nothing either.
    let _ = sampler.follow(headroom::tick::sampler::Build::Tree(me));
    let mut own_summary = Box::new(Summary::new(None, None));
    let ticks = gov.handout.ticks();
    // A client holds a token (a second job runs), so the governor is not
    // idle and glances between rows (an idle one only checks the FIFO).
    let mut token = [0u8; 1];
    assert_eq!(rustix::io::read(gov.fifo.client_fd(), &mut token), Ok(1));
    let before = ALLOCS.load(Ordering::SeqCst);
    // Rows 250 ms apart at a 10 ms pace: room for glances between rows
    // even when the shared machine makes a row's own work slow (at 40 ms
    // apart a loaded host left none, and `glances > 0` failed).
    let settings = LoopSettings {
        interval: Interval::Fixed(250),
        count: Some(5),
        compat: false,
    };
    gov.pace_ms = 10;
    run(Loop {
        sampler: &mut sampler,
        bufs: &mut bufs,
        csv: &mut csv,
        summary: &mut own_summary,
        settings,
        watch: &Watch::None,
        stop: &Never,
        stop_fd: None,
        warn: &mut warn,
        governor: Some(Driver {
            gov: &mut gov,
            pool: None,
            pausing: Some(&mut pausing),
        }),
        hooks: &mut |_: &Row, _: WriteState, _: &Summary| {},
    });
    let glances = gov.handout.ticks() - ticks - 5;
    let after = ALLOCS.load(Ordering::SeqCst);
    assert!(glances > 0);
    assert_eq!(
        after - before,
        0,
        "{} allocations with glances",
        after - before
    );

    // --stage-log-dir: choosing the active log (the `.log.run` marker
    // looked up beside each candidate) allocates nothing either.
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::write(
        logs.join("step.log"),
        "[stage media]\nCompiling foo v0.1.0\n",
    )
    .unwrap();
    std::fs::write(logs.join("step.log.run"), "").unwrap();
    std::fs::write(logs.join("run.log"), "level=error msg=x\n").unwrap();
    let logs_s = logs.to_str().unwrap().to_string();
    let mut dir_sampler = Sampler::new(
        &root,
        Options {
            stage_log: StageLog::Dir(&logs_s),
            ..opts
        },
        &mut bufs,
    );
    let _ = dir_sampler.tick(1, &mut bufs, &mut warn);
    let before = ALLOCS.load(Ordering::SeqCst);
    for epoch in 2..52 {
        let row = dir_sampler.tick(epoch, &mut bufs, &mut warn);
        assert_eq!(row.stage.as_str(), "media");
        assert!(row.context.contains("Compiling foo v0.1.0"));
    }
    let after = ALLOCS.load(Ordering::SeqCst);
    assert_eq!(
        after - before,
        0,
        "{} allocations in 50 --stage-log-dir ticks",
        after - before
    );

    prom.finish(&summary, labels).unwrap();
    let text = std::fs::read_to_string(dir.join("headroom.prom")).unwrap();
    assert!(
        text.contains("headroom_samples_total{run_id=\"a\"} 51\n"),
        "{text}"
    );
}
