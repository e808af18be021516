//! The build being followed: its process tree or its own cgroup, its
//! compilers, what its log says, what it used.
//!
//! Above the kernel files; below the tick.

pub mod buildcg; // the build's own memory cgroup: made, joined, read, removed
pub mod cmdline; // compiler and linker command lines in a build log, made short
pub mod compilers; // which processes are compilers; the per-tick /proc scan
pub mod figures; // how every report writes a number: fixed point, seconds, durations, GiB, a stage
pub mod jobkey; // the work a job does, named from its command line: the key of its remembered peak
pub mod jobtree; // the build's jobs: children of its build tool, their RSS, CPU and start
pub mod logtail; // the stage and context columns from the build log's tail
pub mod makeshell; // make's $(shell …) commands told apart from its jobs: their output is a pipe make reads
pub mod oom_victims; // the build's OOM kills without its own cgroup: victims /dev/kmsg names, placed in its tree
pub mod outlived; // which of the build's processes really outlived the command
pub mod rusage; // what one command used, as `/usr/bin/time -v` reports it
pub mod text; // hostile log bytes made short and CSV-safe
