//! The `WORKERS` block of `actions --remote --prometheus URL`, and its
//! `--json` keys (`workers`, `prometheus`): each worker container's peak
//! memory working set, peak cores and OOM events over the build's window
//! ([`super::prometheus`]), the busiest first, beside the worker request
//! (`--worker-cores`, `--worker-mem`) when given; joined with the stored
//! results that name the pod as their worker; and the OOM kills the
//! action cache cannot show (a pod's OOM events while actions have no
//! stored result: a killed action is never cached).
//!
//! # References
//! SPEC.md "Per-action usage from a remote action cache" (per worker);
//! REAPI v2 `ExecutedActionMetadata.worker`; Buildbarn's worker ID (a JSON
//! object of labels, e.g. `{"pod":"...","thread":"3"}`).

use std::string::String;
use std::vec::Vec;

use serde_json::{Value, json};

use super::prometheus::{Bound, CPU_STEP_S, Container, NameLabel, Window, iso};
use super::report_rows::{Figures, WORKER_CELL, cell, num, shown_centi};
use super::sizing::Worker;
use crate::followed::figures::{div_round, gib_centi_of_bytes};

/// What the Prometheus said of the worker containers.
#[derive(Clone, Debug, PartialEq)]
pub struct Workers {
    /// The `--prometheus` URL.
    pub url: String,
    /// The matchers asked (`--prometheus-selector`, without braces).
    pub selector: String,
    /// The build's window.
    pub window: Window,
    /// The containers, busiest first.
    pub containers: Vec<Container>,
}

/// True when an action's `ExecutedActionMetadata.worker` names `pod`: the
/// same text, or a JSON object with `pod` as one of its string values
/// (Buildbarn's worker ID).
pub fn names_pod(worker: &str, pod: &str) -> bool {
    if worker == pod {
        return true;
    }
    if !worker.trim_start().starts_with('{') {
        return false;
    }
    serde_json::from_str::<Value>(worker)
        .ok()
        .as_ref()
        .and_then(Value::as_object)
        .is_some_and(|o| o.values().any(|v| v.as_str() == Some(pod)))
}

/// The stored results naming `c` as their worker; `None` when no stored
/// result names a worker at all (nothing to join on).
fn actions_on(c: &Container, figs: &[Figures<'_>]) -> Option<usize> {
    let mut named = figs.iter().filter_map(Figures::worker).peekable();
    named.peek()?;
    Some(named.filter(|w| names_pod(w, &c.name)).count())
}

/// Bytes as the text shows memory: `N MiB` under 1 GiB, else `N.NN GiB`.
fn memory(b: u64) -> String {
    if b < 1 << 30 {
        std::format!("{} MiB", div_round(u128::from(b), 1 << 20))
    } else {
        std::format!("{} GiB", shown_centi(gib_centi_of_bytes(b)))
    }
}

/// `part` as a whole percentage of `whole`; `-` when either is unknown.
fn pct(part: Option<u64>, whole: u64) -> String {
    match part {
        Some(p) if whole > 0 => {
            std::format!("{} %", div_round(u128::from(p) * 100, u128::from(whole)))
        }
        _ => String::from("-"),
    }
}

/// Where a bound came from, as the text says it.
fn from(b: Bound) -> &'static str {
    match b {
        Bound::Results => "the results",
        Bound::Option => "the option",
        Bound::Now => "now",
    }
}

impl Workers {
    /// The text block; `figs` are the report's actions (the join, and the
    /// actions with no stored result), `worker` the request when given.
    pub fn render(&self, figs: &[Figures<'_>], worker: Option<Worker>, out: &mut String) {
        let w = &self.window;
        out.push_str(&std::format!(
            "\nWORKERS: {{{}}} from the Prometheus at {}, {} to {} ({} s; start from {}, end from {}); busiest (peak memory) first:\n",
            self.selector,
            self.url,
            iso(w.start_s),
            iso(w.end_s),
            w.seconds(),
            from(w.start_from),
            from(w.end_from),
        ));
        if self.containers.is_empty() {
            out.push_str("  no container matched in the window: check --prometheus-selector, and that cAdvisor's container_* metrics are scraped\n");
            return;
        }
        if let Some(r) = worker {
            out.push_str(&std::format!(
                "  request (--worker-cores, --worker-mem): {} cores, {}\n",
                r.cores.max(1),
                memory(r.mem_bytes)
            ));
        }
        self.table(figs, worker, out);
        self.notes(figs, out);
    }

    /// The table: one row a container.
    fn table(&self, figs: &[Figures<'_>], worker: Option<Worker>, out: &mut String) {
        let dash = || String::from("-");
        let mut head = std::vec!["pod", "peak memory", "peak cores", "OOM events", "actions"];
        if worker.is_some() {
            head.extend(["memory of request", "cores of request"]);
        }
        let rows: Vec<Vec<String>> = self
            .containers
            .iter()
            .map(|c| {
                let mut r = std::vec![
                    cell(&c.name, WORKER_CELL),
                    c.peak_memory_bytes.map_or_else(dash, memory),
                    c.peak_cores_centi.map_or_else(dash, shown_centi),
                    c.oom_events.map_or_else(dash, |n| std::format!("{n}")),
                    actions_on(c, figs).map_or_else(dash, |n| std::format!("{n}")),
                ];
                if let Some(req) = worker {
                    r.push(pct(c.peak_memory_bytes, req.mem_bytes));
                    r.push(pct(c.peak_cores_centi, u64::from(req.cores.max(1)) * 100));
                }
                r
            })
            .collect();
        let mut widths: Vec<usize> = head.iter().map(|h| h.len()).collect();
        for r in &rows {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        let mut line = |cells: &[&str]| {
            let mut s = String::from(" ");
            for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
                let pad = " ".repeat(w.saturating_sub(c.chars().count()));
                match i {
                    0 => s.push_str(&std::format!(" {c}{pad}")),
                    _ => s.push_str(&std::format!("  {pad}{c}")),
                }
            }
            out.push_str(s.trim_end());
            out.push('\n');
        };
        line(&head);
        for r in &rows {
            line(&r.iter().map(String::as_str).collect::<Vec<_>>());
        }
    }

    /// What the table cannot say: the names that are not pods, a CPU
    /// figure missing everywhere, and each pod's OOM events.
    fn notes(&self, figs: &[Figures<'_>], out: &mut String) {
        if let Some(c) = self.containers.iter().find(|c| c.label != NameLabel::Pod) {
            out.push_str(&std::format!(
                "  {} has no pod label: named by its {} label\n",
                cell(&c.name, WORKER_CELL),
                c.label.label()
            ));
        }
        if self.containers.iter().all(|c| c.peak_cores_centi.is_none()) {
            out.push_str("  peak cores unknown: a 1-minute rate needs two samples a minute (a scrape interval of 30 s or less)\n");
        }
        let no_result = figs.iter().filter(|f| f.stored.is_none()).count();
        for c in self.containers.iter().filter(|c| c.oom_events > Some(0)) {
            let n = c.oom_events.unwrap_or(0);
            let events = std::format!(
                "  pod {}: {n} OOM event{} in the window",
                cell(&c.name, WORKER_CELL),
                if n == 1 { "" } else { "s" }
            );
            out.push_str(&events);
            if no_result > 0 {
                out.push_str(&std::format!(
                    "; {no_result} action{} no stored result: a kill the action cache cannot show\n",
                    if no_result == 1 { " has" } else { "s have" }
                ));
            } else {
                out.push_str("; every action looked up has a stored result: the killed one was retried, or was not an action\n");
            }
        }
    }

    /// `--json`'s `workers` array: `pod`, `label` (the label that named
    /// it), `peak_memory_bytes`, `peak_cores`, `oom_events`, `actions`
    /// (stored results naming it); null where unknown.
    pub fn to_json(&self, figs: &[Figures<'_>]) -> Value {
        Value::Array(
            self.containers
                .iter()
                .map(|c| {
                    json!({
                        "pod": c.name,
                        "label": c.label.label(),
                        "peak_memory_bytes": c.peak_memory_bytes,
                        "peak_cores": c.peak_cores_centi.map(|v| num(v, 2)),
                        "oom_events": c.oom_events,
                        "actions": actions_on(c, figs),
                    })
                })
                .collect(),
        )
    }

    /// `--json`'s `prometheus` object: where and over what it asked.
    pub fn query_json(&self) -> Value {
        let w = &self.window;
        let bound = |b: Bound| match b {
            Bound::Results => "results",
            Bound::Option => "option",
            Bound::Now => "now",
        };
        json!({
            "url": self.url,
            "selector": self.selector,
            "start": iso(w.start_s),
            "end": iso(w.end_s),
            "window_s": w.seconds(),
            "start_from": bound(w.start_from),
            "end_from": bound(w.end_from),
            "cpu_step_s": CPU_STEP_S,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remote::action::{Digest, Lookup, Named, Origin, Stored, Times};
    use std::boxed::Box;

    fn named(id: &str) -> Named {
        Named {
            id: id.into(),
            category: String::new(),
            digest: Digest {
                hash: "ab".repeat(32),
                size_bytes: 1,
            },
            origin: Origin::Hand,
        }
    }

    fn stored(worker: &str) -> Lookup {
        Lookup::Stored(Box::new(Stored {
            exit_code: 0,
            worker: worker.into(),
            times: Times::default(),
            usage: None,
            skipped_any: 0,
        }))
    }

    fn container(name: &str, mem: u64, cores: u64, oom: Option<u64>) -> Container {
        Container {
            name: name.into(),
            label: NameLabel::Pod,
            peak_memory_bytes: Some(mem),
            peak_cores_centi: Some(cores),
            oom_events: oom,
        }
    }

    fn workers(containers: Vec<Container>) -> Workers {
        Workers {
            url: "http://p:9090".into(),
            selector: r#"a="b""#.into(),
            window: Window {
                start_s: 1_749_988_800,
                end_s: 1_749_989_400,
                start_from: Bound::Results,
                end_from: Bound::Results,
            },
            containers,
        }
    }

    #[test]
    fn a_worker_names_a_pod_as_itself_or_in_buildbarns_json() {
        assert!(names_pod("runner-0", "runner-0"));
        assert!(names_pod(r#"{"pod":"runner-0","thread":"3"}"#, "runner-0"));
        assert!(!names_pod(r#"{"pod":"runner-01"}"#, "runner-0"));
        assert!(!names_pod("runner-01", "runner-0"));
        assert!(!names_pod("{not json", "runner-0"));
    }

    #[test]
    fn the_block_joins_pods_and_says_the_kill_the_cache_cannot_show() {
        let a = std::vec![
            (named("x"), stored(r#"{"pod":"busy","thread":"1"}"#)),
            (named("y"), stored("busy")),
            (named("z"), Lookup::NotFound),
        ];
        let figs = crate::remote::report_rows::figures(&a);
        let w = workers(std::vec![
            container("busy", 3 << 30, 395, Some(0)),
            container("oom", 600 << 20, 50, Some(1)),
        ]);
        let mut out = String::new();
        w.render(
            &figs,
            Some(Worker {
                cores: 4,
                mem_bytes: 4 << 30,
            }),
            &mut out,
        );
        assert!(out.contains("WORKERS: {a=\"b\"} from the Prometheus at http://p:9090, 2025-06-15T12:00:00Z to 2025-06-15T12:10:00Z (600 s; start from the results, end from the results)"), "{out}");
        assert!(
            out.contains("  request (--worker-cores, --worker-mem): 4 cores, 4.00 GiB\n"),
            "{out}"
        );
        let rows: Vec<Vec<&str>> = out
            .lines()
            .filter(|l| l.starts_with("  busy") || l.starts_with("  oom"))
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(
            rows,
            [
                [
                    "busy", "3.00", "GiB", "3.95", "0", "2", "75", "%", "99", "%"
                ],
                ["oom", "600", "MiB", "0.50", "1", "0", "15", "%", "13", "%"]
            ],
            "{out}"
        );
        assert!(out.contains("  pod oom: 1 OOM event in the window; 1 action has no stored result: a kill the action cache cannot show\n"), "{out}");
        let v = w.to_json(&figs);
        assert_eq!(v[0]["pod"], "busy");
        assert_eq!(v[0]["peak_memory_bytes"], 3u64 << 30);
        assert_eq!(v[0]["peak_cores"], 3.95);
        assert_eq!(
            (v[1]["oom_events"].clone(), v[0]["actions"].clone()),
            (json!(1), json!(2))
        );
    }

    #[test]
    fn unknowns_are_dashes_and_null_and_no_match_is_said() {
        let a = std::vec![(named("x"), stored(""))];
        let figs = crate::remote::report_rows::figures(&a);
        let mut c = container("n1", 1 << 20, 0, None);
        c.label = NameLabel::Name;
        c.peak_cores_centi = None;
        let w = workers(std::vec![c]);
        let mut out = String::new();
        w.render(&figs, None, &mut out);
        let row: Vec<&str> = out
            .lines()
            .find(|l| l.starts_with("  n1"))
            .expect("row")
            .split_whitespace()
            .collect();
        assert_eq!(row, ["n1", "1", "MiB", "-", "-", "-"], "{out}");
        assert!(
            out.contains("  n1 has no pod label: named by its name label\n"),
            "{out}"
        );
        assert!(out.contains("peak cores unknown"), "{out}");
        let v = w.to_json(&figs);
        assert!(
            v[0]["peak_cores"].is_null()
                && v[0]["oom_events"].is_null()
                && v[0]["actions"].is_null()
        );
        let mut out = String::new();
        workers(Vec::new()).render(&figs, None, &mut out);
        assert!(out.contains("no container matched in the window"), "{out}");
    }
}
