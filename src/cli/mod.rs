//! The binary's modules: one per command or concern, over the library.
//!
//! Lowest first: `messages` (Fail and exit codes, one-line messages,
//! warnings), `options` (the argh structs), `shell` (quoting words),
//! `suggest` (the nearest word) and `pause` (the build's jobs stopped and
//! continued); then the arguments before argh, environment defaults,
//! opening files and signals; the child process, the shared memory pool,
//! `actions --remote` and the status line; the action row, the
//! jobserver's FIFO and MAKEFLAGS, the report commands and status's pool
//! block; the planning commands; `record` and `run`. A module uses only
//! those of the groups above its own (`tests/layout.rs`), and none uses
//! `main.rs`.

pub mod messages; // Fail and exit codes, one-line messages, warnings on stderr, stdout
pub mod options; // the argh structs: options and their --help texts
pub mod pause; // run --jobserver: jobs paused (SIGSTOP) and continued (SIGCONT)
pub mod shell; // a command's words quoted as sh(1) reads them
pub mod suggest; // the nearest known word to a mistyped one

pub mod argv; // --version, --opt=value, unknown commands and options
pub mod defaults; // environment defaults: non-empty variables, the disk path, HEADROOM_NO_MLOCK
pub mod files; // opening --root, output directories, regular input files; fds 0-2 kept open
pub mod signals; // the stop-signal flags and self-pipe, SIGXFSZ, signal(2)

pub mod child; // run's CMD: spawn, terminal, signals passed on, wait4 rusage
pub mod pool; // run --jobserver --pool: this governor's side of a shared budget
pub mod remote; // actions --remote: endpoint, logs, lookups, report (feature remote)
pub mod status_line; // the live status line on a terminal

pub mod action_row; // the row `run --actions FILE` appends
pub mod jobserver; // run --jobserver: the FIFO, the governor's tick, MAKEFLAGS
pub mod report_cmd; // summarize, actions, plot, and writing a summary
pub mod status_pool; // status --pool: the pool's leases read once, as a block or JSON

pub mod plan; // jobs, advise, status, and the advice after a recording

pub mod record; // record and run: options checked, files, the loop, the end
