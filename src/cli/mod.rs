//! The binary's modules: one per command or concern, over the library.
//!
//! Lowest first: `messages` (Fail and exit codes, one-line messages,
//! warnings), `options` (the argh structs), `shell` (quoting words),
//! `suggest` (the nearest word), `jobs_flag` (a -j of CMD's own); then the
//! arguments before argh, environment defaults, opening files and
//! signals; the child process, a
//! memory pool's messages, `actions --remote` and the status line; the
//! governor's notes, the action row, the report commands and status's
//! pool block; the jobserver's setup (its options, MAKEFLAGS) and the
//! planning commands; `record` and `run`. A module uses only those of the
//! groups above its own (`tests/layout.rs`), and none uses `main.rs`.

pub mod jobs_flag; // a -j of make's or ninja's own in CMD: found, taken out, or seen in sh -c
pub mod messages; // Fail and exit codes, one-line messages, warnings on stderr, stdout
pub mod options; // the argh structs: options and their --help texts
pub mod shell; // a command's words quoted as sh(1) reads them
pub mod suggest; // the nearest known word to a mistyped one

pub mod argv; // --version, --opt=value, unknown commands and options
pub mod defaults; // environment defaults: non-empty variables, the disk path, HEADROOM_NO_MLOCK
pub mod files; // opening --root, output directories, regular input files; fds 0-2 kept open
pub mod signals; // the stop-signal flags and self-pipe, SIGXFSZ, signal(2)

pub mod child; // run's CMD: spawn, terminal, signals passed on, wait4 rusage
pub mod pool; // a memory pool in words: its errors, the remembered peak's warnings, its leases peeked at
pub mod remote; // actions --remote: endpoint, logs, lookups, report (feature remote)
pub mod status_line; // the live status line on a terminal

pub mod action_row; // the row `run --actions FILE` appends
pub mod jobserver_notes; // the governor's notes worded: --explain's lines, the pool's warnings
pub mod report_cmd; // summarize, actions, plot, and writing a summary
pub mod status_pool; // status --pool: the pool's leases read once, as a block or JSON

pub mod jobserver_setup; // run --jobserver: options checked, the governor's parts started, MAKEFLAGS
pub mod plan; // jobs, advise, status, and the advice after a recording

pub mod record; // record and run: options checked, files, the loop, the end
