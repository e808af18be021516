//! The command line: the top-level options and one argh struct per
//! subcommand. Their doc comments are the `--help` texts (and
//! `tests/manpage.rs` holds the man page to them).

use argh::{ArgsInfo, FromArgs};

/// Defines two argh subcommands that share options, from one list: each
/// shared option is written once (`[attributes of both] [the first's own
/// doc] [the second's own doc] name: Type`), so an option is added in one
/// place. argh cannot flatten one struct into another, and a shared struct
/// parsed from both would change `--help`; generated fields keep each
/// command's option order and text exactly.
///
/// The second command's options are the shared ones, `second_mid` (after
/// `first_only`'s place) and `second_end`; the first's are the shared ones
/// and `first_only`, between the two shared groups. `$Second::split` gives
/// the first's struct (its own options at their defaults) and `$SecondOnly`
/// with the rest.
macro_rules! twin_args {
    (
        $(#[$($first:tt)*])* struct $First:ident;
        $(#[$($second:tt)*])* struct $Second:ident, $SecondOnly:ident;
        shared {
            $( [$($a:tt)*] [$($fa:tt)*] [$($sa:tt)*] $na:ident: $ta:ident $(<$ga:ident>)?, )*
        }
        first_only { $( [$($fo:tt)*] $nfo:ident: $tfo:ident $(<$gfo:ident>)?, )* }
        second_mid { $( [$($sm:tt)*] $nsm:ident: $tsm:ident $(<$gsm:ident>)?, )* }
        shared {
            $( [$($b:tt)*] [$($fb:tt)*] [$($sb:tt)*] $nb:ident: $tb:ident $(<$gb:ident>)?, )*
        }
        second_end { $( [$($se:tt)*] $nse:ident: $tse:ident $(<$gse:ident>)?, )* }
    ) => {
        $(#[$($first)*])*
        pub struct $First {
            $( $($a)* $($fa)* pub $na: $ta $(<$ga>)?, )*
            $( $($fo)* pub $nfo: $tfo $(<$gfo>)?, )*
            $( $($b)* $($fb)* pub $nb: $tb $(<$gb>)?, )*
        }

        $(#[$($second)*])*
        pub struct $Second {
            $( $($a)* $($sa)* pub $na: $ta $(<$ga>)?, )*
            $( $($sm)* pub $nsm: $tsm $(<$gsm>)?, )*
            $( $($b)* $($sb)* pub $nb: $tb $(<$gb>)?, )*
            $( $($se)* pub $nse: $tse $(<$gse>)?, )*
        }

        /// The options of the second command that the first has not.
        pub struct $SecondOnly {
            $( pub $nsm: $tsm $(<$gsm>)?, )*
            $( pub $nse: $tse $(<$gse>)?, )*
        }

        impl $Second {
            /// The shared options as the first command's (its own at their
            /// defaults), and this command's own.
            pub fn split(self) -> ($First, $SecondOnly) {
                (
                    $First {
                        $( $na: self.$na, )*
                        $( $nfo: Default::default(), )*
                        $( $nb: self.$nb, )*
                    },
                    $SecondOnly {
                        $( $nsm: self.$nsm, )*
                        $( $nse: self.$nse, )*
                    },
                )
            }
        }
    };
}

/// headroom: what a build did to RAM, swap, zram, /tmp, disk and CPU on a
/// small Linux host.
#[derive(FromArgs, ArgsInfo)]
pub struct Cli {
    /// read proc/ and sys/ under DIR instead of / (before the subcommand:
    /// `headroom --root boards/x record ...`)
    #[argh(option)]
    pub root: Option<String>,
    /// print the version and the target (headroom 0.1.0
    /// (aarch64-unknown-linux-musl)) and exit
    #[argh(switch, short = 'V')]
    pub version: bool,
    #[argh(subcommand)]
    pub cmd: Cmd,
}

#[derive(FromArgs, ArgsInfo)]
#[argh(subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once at start-up
pub enum Cmd {
    Record(RecordArgs),
    Run(RunArgs),
    Summarize(SummarizeArgs),
    Actions(ActionsArgs),
    Jobs(JobsArgs),
    Advise(AdviseArgs),
    Status(StatusArgs),
    Plot(PlotArgs),
}

twin_args! {
    /// Sample the host every --interval seconds into resources-<run-id>.csv and
    /// write the summary when stopped (--count, --watch-pid exit, SIGINT,
    /// SIGTERM, SIGHUP).
    #[derive(FromArgs, ArgsInfo)]
    #[argh(subcommand, name = "record")]
    #[argh(example = "make -j4 >build.log 2>&1 & {command_name} --stage-log build.log --watch-pid $!")]
    #[argh(example = "{command_name} --out-dir ~/build-logs --run-id pi-build --interval 5")]
    #[argh(example = "{command_name} --count 20 --interval 1 --compat")]
    struct RecordArgs;

    /// Run CMD while recording, then print the summary and what CMD used
    /// (as time -v: wall, CPU, average cores, ru_maxrss, page faults, context
    /// switches, file system inputs and outputs, signal) on stderr and exit with
    /// CMD's status. On a terminal CMD shares headroom's job (Ctrl-C, Ctrl-Z and
    /// fg act on both); SIGTERM and SIGHUP sent to headroom are passed on to CMD,
    /// and without a terminal SIGINT too, to CMD's whole process group. A run
    /// stopped so (Ctrl-C too) says in its RUN block that it was interrupted
    /// and that CPU and max RSS cover only the processes that were reaped;
    /// its ADVICE, and jobs --from its CSV, say they sized from an interrupted
    /// build. With
    /// --actions and none of --out-dir, --run-id or --prom, nothing is
    /// recorded or printed: one row is appended to the actions file (for
    /// wrapping every compile: make CC="headroom run --actions a.csv -- gcc").
    #[derive(FromArgs, ArgsInfo)]
    #[argh(subcommand, name = "run")]
    #[argh(example = "{command_name} --out-dir ~/build-logs --run-id pi-build -- make -j4")]
    #[argh(example = "make CC=\"{command_name} --actions $PWD/actions.csv -- gcc\" -j4")]
    #[argh(example = "{command_name} --jobserver --profile heavy -- make")]
    struct RunArgs, RunOnly;

    shared {
        [
            /// output directory (default: $LOG_DIR, else .)
            #[argh(option)]
        ] [] []
        out_dir: Option<String>,
        [
            /// run id: the CSV is resources-<ID>.csv (default: $CROSS_RUN_ID, else run)
            #[argh(option)]
        ] [] []
        run_id: Option<String>,
        [
            #[argh(option, from_str_fn(parse_interval))]
        ] [
            /// seconds between rows, e.g. 15, 0.5 or 0 (default 15)
        ] [
            /// seconds between rows, e.g. 15, 0.5 or 0 (default: 1 for the
            /// first 2 minutes, then 5 until 30 minutes, then 15; the
            /// --jobserver governor ticks every 0.25 s between them)
        ]
        interval: Option<u64>,
        [
            #[argh(option)]
        ] [
            /// stop after N rows
        ] [
            /// stop recording after N rows (CMD still runs to its end)
        ]
        count: Option<u64>,
        [
            /// directory whose filesystem is the build disk (default:
            /// $BUILDKIT_CACHE_DIR, else $HOME, else /)
            #[argh(option)]
        ] [] []
        disk_path: Option<String>,
        [
            /// build log to take stage and context from
            #[argh(option)]
        ] [] []
        stage_log: Option<String>,
        [
            /// directory whose active log (the newest *.log with a NAME.log.run
            /// marker, else the newest *.log) gives stage and context
            #[argh(option)]
        ] [] []
        stage_log_dir: Option<String>,
        [
            #[argh(option)]
        ] [
            /// stage when the log names none
        ] [
            /// stage when the log names none; also the id in --actions
        ]
        label: Option<String>,
    }
    first_only {
        [
            /// stop when this process exits
            #[argh(option)]
        ]
        watch_pid: Option<i32>,
    }
    second_mid {}
    shared {
        [
            /// near-OOM threshold in MiB available (MemAvailable, or a tighter
            /// cgroup's; default 4096, scaled to small hosts and cgroups)
            #[argh(option)]
        ] [] []
        near_oom_mb: Option<u64>,
        [
            /// low-disk threshold in GiB available (default 20, scaled on small disks)
            #[argh(option)]
        ] [] []
        low_disk_gb: Option<u64>,
        [
            /// write only the 14 toolchain-compatible columns
            #[argh(switch)]
        ] [] []
        compat: bool,
        [
            #[argh(option)]
        ] [
            /// comma-separated process names that count as compilers (replaces the
            /// default list; a trailing * matches a prefix)
        ] [
            /// comma-separated process names that count as compilers
        ]
        compilers: Option<String>,
        [
            /// rewrite FILE after every row with the latest figures in the
            /// Prometheus text format, for node_exporter's textfile collector
            /// (FILE's directory must exist; name it *.prom)
            #[argh(option)]
        ] [] []
        prom: Option<String>,
        [
            /// read proc/ and sys/ under DIR instead of / (default /)
            #[argh(option)]
        ] [] []
        root: Option<String>,
    }
    second_end {
        [
            /// append one row (id, start, wall, CPU, max RSS, signal, exit, page
            /// faults, context switches, file system blocks) to FILE
            #[argh(option)]
        ]
        actions: Option<String>,
        [
            /// be CMD's GNU make jobserver (MAKEFLAGS, CARGO_MAKEFLAGS), handing
            /// out job slots only while memory allows, every 0.25 s
            #[argh(switch)]
        ]
        jobserver: bool,
        [
            /// with --jobserver: most jobs at once, paused ones included
            /// (default: CMD's own -j N when make or ninja has one, taken out
            /// of its command line; else the usable cores)
            #[argh(option)]
        ]
        max_jobs: Option<u32>,
        [
            /// with --jobserver: the memory a job may grow to, MiB, until the
            /// build's jobs are measured (default: the profile's, a guess)
            #[argh(option)]
        ]
        peak_mb: Option<u64>,
        [
            /// with --jobserver: start the peak per job from the largest
            /// compiler a recorded run of this build measured (its CSV, read
            /// as jobs --from reads it), plus 10 %
            #[argh(option)]
        ]
        from: Option<String>,
        [
            /// with --jobserver: generic, rust or heavy, as for `jobs` (default
            /// generic)
            #[argh(option)]
        ]
        profile: Option<String>,
        [
            /// with --jobserver: pipe (inherited descriptors R,W: make 4.3 and
            /// later, cargo) or fifo (a named FIFO: make 4.4, ninja 1.13, cargo)
            /// (default: fifo when CMD is ninja, meson compile or cmake --build
            /// of a Ninja tree, else pipe)
            #[argh(option)]
        ]
        jobserver_style: Option<String>,
        [
            /// with --jobserver: share one memory budget with every run
            /// --jobserver that names the same DIR, each counting the others'
            /// reservations; DIR also remembers each run id's measured peak per
            /// job, and each job's own, for its next run (default: $HEADROOM_POOL)
            #[argh(option)]
        ]
        pool: Option<String>,
        [
            /// with --jobserver: say on stderr each time the slots change, and why,
            /// and where the peak per job started and each time it moves
            #[argh(switch)]
        ]
        explain: bool,
        [
            /// with --jobserver: never pause a job (SIGSTOP) whose growth would
            /// outrun the memory left; by default the job started last is
            /// paused, never the last one running, and continued when room
            /// returns
            #[argh(switch)]
        ]
        no_pause: bool,
        [
            /// make no memory cgroup for CMD: the build is CMD's process tree
            /// (default: a cgroup of its own where permitted: root on cgroup v1,
            /// a delegated cgroup on v2)
            #[argh(switch)]
        ]
        no_cgroup: bool,
        [
            /// the command and its arguments, after --
            #[argh(positional, greedy)]
        ]
        cmd: Vec<String>,
    }
}

/// Summarize a recorded CSV (headroom's or the bash toolchain's) to stdout
/// and to <csv minus .csv>.summary.txt.
#[derive(FromArgs, ArgsInfo)]
#[argh(subcommand, name = "summarize")]
#[argh(example = "{command_name} ~/build-logs/resources-pi-build.csv")]
#[argh(example = "{command_name} --json resources-run.csv | jq .min_mem_avail")]
#[argh(example = "{command_name} --near-oom-mb 512 --low-disk-gb 2 resources-run.csv")]
pub struct SummarizeArgs {
    /// the CSV file
    #[argh(positional)]
    pub file: String,
    /// near-OOM threshold in MiB available (MemAvailable, or a tighter
    /// cgroup's; default 4096, scaled to small hosts and cgroups)
    #[argh(option)]
    pub near_oom_mb: Option<u64>,
    /// low-disk threshold in GiB available (default 20, scaled on small disks)
    #[argh(option)]
    pub low_disk_gb: Option<u64>,
    /// print the summary as JSON on stdout (the .summary.txt file stays text)
    #[argh(switch)]
    pub json: bool,
}

/// Summarize an actions file written by `run --actions`, or (--remote) what
/// each action of a Buck2 or Bazel build used on a remote execution
/// cluster, read from its action cache: a table by wall-time bucket, the
/// actions that ended on a signal, the longest ones.
#[derive(FromArgs, ArgsInfo)]
#[argh(subcommand, name = "actions")]
#[argh(example = "{command_name} --top 20 --min-wall 30 actions.csv")]
#[argh(example = "{command_name} --json-rows actions.csv | jq '.[] | select(.cores > 2)'")]
#[argh(
    example = "{command_name} --remote grpc://127.0.0.1:8980 --instance main --log buck-out/v2/log/*_events.pb.zst"
)]
pub struct ActionsArgs {
    /// the actions CSV; after --log, more logs (a shell glob's other
    /// files: --log buck-out/v2/log/*_events.pb.zst)
    #[argh(positional)]
    pub files: Vec<String>,
    /// how many of the longest actions to list (default 10, at most 100)
    #[argh(option, default = "10")]
    pub top: usize,
    /// list only actions with at least this many seconds of wall time
    #[argh(option, from_str_fn(parse_interval))]
    pub min_wall: Option<u64>,
    /// print JSON instead of the table
    #[argh(switch)]
    pub json: bool,
    /// print one JSON object per action (an array) instead of the table
    #[argh(switch)]
    pub json_rows: bool,
    /// the REAPI action cache: grpc://HOST:PORT or grpcs://HOST:PORT
    /// (http:// and https:// alike); default: [buck2_re_client] of
    /// .buckconfig (read by headroom-remote, which the amd64 and arm64
    /// packages install)
    #[argh(option)]
    pub remote: Option<String>,
    /// the REAPI instance name results are stored under (Buck2:
    /// instance_name; Bazel: --remote_instance_name)
    #[argh(option)]
    pub instance: Option<String>,
    /// a Buck2 event log (*_events.pb.zst, or buck2 log show output; - is
    /// stdin) or a Bazel execution log (JSON, binary or compact); repeatable
    #[argh(option)]
    pub log: Vec<String>,
    /// one action digest, HASH/SIZE or HASH:SIZE; repeatable
    #[argh(option)]
    pub digest: Vec<String>,
    /// CA certificates (PEM) for grpcs://, instead of the Mozilla roots built in (webpki-roots)
    #[argh(option)]
    pub tls_ca: Option<String>,
    /// client certificate (PEM) for mutual TLS; with --tls-key
    #[argh(option)]
    pub tls_cert: Option<String>,
    /// the client certificate's private key (PEM); with --tls-cert
    #[argh(option)]
    pub tls_key: Option<String>,
    /// a header sent with every call, 'NAME: VALUE' (e.g.
    /// 'x-buildbuddy-api-key: KEY'); repeatable
    #[argh(option)]
    pub header: Vec<String>,
    /// size a worker with this many cores (with --worker-mem)
    #[argh(option)]
    pub worker_cores: Option<u32>,
    /// size a worker with this much memory: 16G, 512M, 1.5T (binary units:
    /// G = GiB; a unit is required)
    #[argh(option, from_str_fn(parse_size))]
    pub worker_mem: Option<u64>,
    /// the cluster's Prometheus (http:// or https://HOST:PORT[/PREFIX]):
    /// add each worker container's peak memory, peak cores and OOM events
    /// over the build's window (--tls-* apply, --header does not)
    #[argh(option)]
    pub prometheus: Option<String>,
    /// the worker containers' series for --prometheus (default
    /// namespace="buildbarn",container="runner")
    #[argh(option)]
    pub prometheus_selector: Option<String>,
    /// a header sent to the Prometheus, 'NAME: VALUE' (e.g.
    /// 'Authorization: Bearer TOKEN'); repeatable
    #[argh(option)]
    pub prometheus_header: Vec<String>,
    /// the window's start for --prometheus: a time ago (2h, 90m) or RFC
    /// 3339 (default: the first timestamp of the stored results)
    #[argh(option)]
    pub since: Option<String>,
    /// the window's end for --prometheus, as --since (default: the last
    /// timestamp of the stored results, else now)
    #[argh(option)]
    pub until: Option<String>,
}

twin_args! {
    /// How many parallel compile jobs this host takes: prints the bare number
    /// (make -j"$(headroom jobs --profile heavy)"). Environment: PARALLEL_JOBS,
    /// BUILD_MEM_DIVISOR, AGGRESSIVE_PARALLELISM, DEFAULT_MB_PER_JOB,
    /// RUST_MB_PER_JOB, CPP_HEAVY_MB_PER_JOB.
    #[derive(FromArgs, ArgsInfo)]
    #[argh(subcommand, name = "jobs")]
    #[argh(example = "make -j\"$({command_name} --profile heavy)\"")]
    #[argh(example = "{command_name} --explain")]
    #[argh(example = "{command_name} --from ~/build-logs/resources-pi-build.csv --explain")]
    struct JobsArgs;

    /// The safe -j with a command per build tool and, when one job does not
    /// fit, the swap to add and how (zram, dphys-swapfile or a swapfile).
    #[derive(FromArgs, ArgsInfo)]
    #[argh(subcommand, name = "advise")]
    #[argh(example = "{command_name} --profile heavy")]
    #[argh(example = "{command_name} --from ~/build-logs/resources-pi-build.csv")]
    #[argh(example = "{command_name} --cores 4 --avail-mb 900 --peak-mb 1500")]
    struct AdviseArgs, AdviseOnly;

    shared {
        [
            #[argh(option, default = "String::from(\"generic\")")]
        ] [
            /// generic (2000 MB per job, 800 aggressive), rust (2500/1200) or heavy (4096)
        ] [
            /// generic, rust or heavy
        ]
        profile: String,
        [
            /// peak MB one job needs (overrides the profile)
            #[argh(option)]
        ] [] []
        peak_mb: Option<u64>,
        [
            #[argh(option)]
        ] [
            /// a recorded CSV: print, as a bare number on stdout, the -j at
            /// which its build's largest compiler (build_peak_rss_mb; without a
            /// build, peak_rss_mb) plus 10 % headroom fits here now; --explain
            /// says how; a warning on stderr when its summary says the run was
            /// interrupted (the peak is then a lower bound)
        ] [
            /// a recorded CSV: plan from its build's largest compiler
            /// (build_peak_rss_mb; without a build, peak_rss_mb); said, and
            /// warned on stderr, when its run was interrupted
        ]
        from: Option<String>,
        [
            #[argh(option)]
        ] [
            /// the job count you would like; capped by what fits
        ] [
            /// the job count you would like
        ]
        requested: Option<u64>,
        [
            #[argh(option)]
        ] [
            /// plan for this many cores instead of this host's
        ] [
            /// plan for this many cores
        ]
        cores: Option<u64>,
        [
            #[argh(option)]
        ] [
            /// plan for this much usable memory (MB) instead of this host's
        ] [
            /// plan for this much usable memory (MB)
        ]
        avail_mb: Option<u64>,
    }
    first_only {
        [
            /// print each input, its value and where it came from
            #[argh(switch)]
        ]
        explain: bool,
    }
    second_mid {
        [
            /// directory on the build disk (default: $BUILDKIT_CACHE_DIR, else
            /// $HOME, else /; / for a --root tree)
            #[argh(option)]
        ]
        disk_path: Option<String>,
    }
    shared {
        [
            /// read proc/ and sys/ under DIR instead of / (a board tree)
            #[argh(option)]
        ] [] []
        root: Option<String>,
    }
    second_end {}
}

/// One screen to read before a build: memory (the host's, a limiting
/// cgroup's available memory, and which binds), swap, zram, /tmp and the
/// build disk with its block device, cgroup limits, cores, memory pressure,
/// OOM kills, CPU temperature and clock, a Raspberry Pi's throttling.
#[derive(FromArgs, ArgsInfo)]
#[argh(subcommand, name = "status")]
#[argh(example = "{command_name} --disk-path ~/src")]
#[argh(example = "{command_name} --root boards/rpi4-4g-zram   # a board in the source tree")]
#[argh(example = "{command_name} --json | jq .mem_available_mib")]
pub struct StatusArgs {
    /// directory on the build disk (default: $BUILDKIT_CACHE_DIR, else
    /// $HOME, else /; / for a --root tree)
    #[argh(option)]
    pub disk_path: Option<String>,
    /// read proc/ and sys/ under DIR instead of / (a board tree)
    #[argh(option)]
    pub root: Option<String>,
    /// also show the builds sharing the memory pool DIR (run --jobserver
    /// --pool; default on this host: $HEADROOM_POOL)
    #[argh(option)]
    pub pool: Option<String>,
    /// set the budget of the pool DIR first: the most memory its builds
    /// may use together, MiB, for a limit none of them can see (written in
    /// DIR, off any cache key); none removes it
    #[argh(option, from_str_fn(parse_budget))]
    pub set_budget: Option<Budget>,
    /// print every figure of the screen as one JSON object instead (units
    /// in the key names, null where the screen says not available; the
    /// pool's builds under "pool")
    #[argh(switch)]
    pub json: bool,
}

/// Draw a recorded CSV (headroom's or the toolchain's) as one self-contained
/// SVG: RAM used and available, swap, zram, disk available, CPU % and compilers
/// over time, stage bands, the near-OOM line and a marker at each OOM kill.
/// Prints the SVG's path on stdout (nothing else with -o -).
#[derive(FromArgs, ArgsInfo)]
#[argh(
    subcommand,
    name = "plot",
    example = "{command_name} ~/build-logs/resources-pi-build.csv   # writes resources-pi-build.svg beside it",
    example = "{command_name} resources-run.csv -o /var/www/html/build.svg",
    example = "{command_name} resources-run.csv -o - | gzip >build.svgz"
)]
pub struct PlotArgs {
    /// the CSV file
    #[argh(positional)]
    pub file: String,
    /// the SVG to write (default: the CSV's path with .csv replaced by
    /// .svg); - writes it to stdout
    #[argh(option, short = 'o')]
    pub out: Option<String>,
}

/// A pool budget given to `status --set-budget`: MiB, or none (remove it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget(pub Option<u64>);

/// Parses `status --set-budget`: a whole number of MiB from 1 to
/// `budget_file::BUDGET_MAX_MB`, or `none`.
pub fn parse_budget(s: &str) -> Result<Budget, String> {
    use headroom::govern::jobserver::budget_file::BUDGET_MAX_MB;
    if s == "none" {
        return Ok(Budget(None));
    }
    match s.parse::<u64>() {
        Ok(mb @ 1..=BUDGET_MAX_MB) => Ok(Budget(Some(mb))),
        _ => Err(format!(
            "bad budget '{s}': expected MiB from 1 to {BUDGET_MAX_MB}, or none"
        )),
    }
}

/// Parses seconds with up to three decimals into milliseconds.
pub fn parse_interval(s: &str) -> Result<u64, String> {
    let bad = || format!("bad interval '{s}': expected seconds such as 15, 0.5 or 0");
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    let all_digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && frac.is_empty())
        || frac.len() > 3
        || !all_digits(whole)
        || !all_digits(frac)
    {
        return Err(bad());
    }
    let w: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| bad())?
    };
    let f: u64 = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<3}").parse().map_err(|_| bad())?
    };
    w.checked_mul(1000)
        .and_then(|ms| ms.checked_add(f))
        .ok_or_else(bad)
}

/// Parses a memory size for `--worker-mem`: a number (decimals allowed)
/// and a unit `K`, `M`, `G` or `T`, optionally followed by `i`, `iB` or
/// `B` and in either case; every unit is binary (`G`, `GB` and `GiB` all
/// mean 2^30 bytes, as `free -g` counts). A bare number is refused: `16`
/// is far more likely to mean 16 GiB than 16 bytes. Returns bytes.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let bad = || format!("bad size '{s}': expected a number and a unit such as 16G, 512M or 1.5T");
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| format!("bad size '{s}': give a unit (K, M, G, T; binary: 16G = 16 GiB)"))?;
    let (num, unit) = t.split_at(split);
    let shift = match unit.to_ascii_uppercase().as_str() {
        "K" | "KB" | "KI" | "KIB" => 10,
        "M" | "MB" | "MI" | "MIB" => 20,
        "G" | "GB" | "GI" | "GIB" => 30,
        "T" | "TB" | "TI" | "TIB" => 40,
        _ => return Err(bad()),
    };
    let (whole, frac) = num.split_once('.').unwrap_or((num, ""));
    let digits = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(frac) || frac.len() > 6 || num.ends_with('.') {
        return Err(bad());
    }
    let unit_bytes: u128 = 1 << shift;
    let whole: u128 = whole.parse().map_err(|_| bad())?;
    let frac_val: u128 = if frac.is_empty() {
        0
    } else {
        frac.parse().map_err(|_| bad())?
    };
    let scale = 10u128.pow(u32::try_from(frac.len()).map_err(|_| bad())?);
    let bytes = whole
        .checked_mul(unit_bytes)
        .and_then(|b| b.checked_add(frac_val * unit_bytes / scale))
        .ok_or_else(bad)?;
    match u64::try_from(bytes) {
        Ok(0) => Err(format!("bad size '{s}': must be more than 0")),
        Ok(b) => Ok(b),
        Err(_) => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_parsing() {
        assert_eq!(parse_interval("15"), Ok(15_000));
        assert_eq!(parse_interval("0"), Ok(0));
        assert_eq!(parse_interval("0.5"), Ok(500));
        assert_eq!(parse_interval("1.25"), Ok(1250));
        assert!(parse_interval("1.2345").is_err());
        assert!(parse_interval("-1").is_err());
        assert_eq!(parse_interval(".5"), Ok(500));
        assert!(parse_interval(".").is_err());
        assert!(parse_interval("+1").is_err());
        assert!(parse_interval("x").is_err());
        assert!(parse_interval("99999999999999999999").is_err());
    }

    /// `--worker-mem`: binary units whatever the spelling; decimals; a
    /// unit required; no overflow past u64.
    #[test]
    fn size_parsing() {
        assert_eq!(parse_size("16G"), Ok(16 << 30));
        assert_eq!(parse_size("16GiB"), Ok(16 << 30));
        assert_eq!(parse_size("16gb"), Ok(16 << 30));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("1.5T"), Ok(3 << 39));
        assert_eq!(parse_size("0.5K"), Ok(512));
        assert!(parse_size("16").unwrap_err().contains("give a unit"));
        for bad in [
            "",
            "G",
            "1.G",
            ".5G",
            "1..5G",
            "-1G",
            "16Q",
            "0G",
            "16 G",
            "99999999999T",
        ] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }
}
