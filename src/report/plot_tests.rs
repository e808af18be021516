//! Unit tests of `report::plot` (src/report/plot.rs).

extern crate std;
use super::*;
use std::boxed::Box;
use std::string::String;
use std::vec::Vec;

struct Out(String);

impl uWrite for Out {
    type Error = core::convert::Infallible;
    fn write_str(&mut self, s: &str) -> Result<(), Self::Error> {
        self.0.push_str(s);
        Ok(())
    }
}

fn esc(s: &str) -> String {
    let mut o = Out(String::new());
    let _ = escape(&mut o, s);
    o.0
}

/// Both passes over `rows`, then the SVG.
fn plot_of(rows: &[Row]) -> (Box<Plot>, String) {
    let mut scan = Scan::new(None);
    rows.iter().for_each(|r| scan.observe(r));
    let mut plot = Box::new(Plot::new(&scan));
    rows.iter().for_each(|r| plot.observe(r));
    let mut o = Out(String::new());
    let _ = plot.render("t.csv", &mut o);
    (plot, o.0)
}

fn row(epoch: u64, stage: &str) -> Row {
    let mut r = Row::empty(epoch);
    r.mem_used_mb = 1000;
    r.mem_avail_mb = 3000;
    r.disk_avail_gb = 50;
    r.cpu_pct = 50;
    r.compilers = 2;
    let _ = r.stage.push_str(stage);
    r
}

fn count(hay: &str, needle: &str) -> usize {
    hay.matches(needle).count()
}

#[test]
fn escape_makes_any_text_safe_for_xml() {
    assert_eq!(esc("plain"), "plain");
    assert_eq!(esc("a&b<c>d\"e'f"), "a&amp;b&lt;c&gt;d&quot;e&apos;f");
    assert_eq!(esc("\u{0}\t\r\n\u{1b}[31m\u{7f}\u{85}x"), "[31mx");
    assert_eq!(esc("\u{fffe}\u{ffff}\u{fffd}"), "\u{fffd}");
    assert_eq!(esc("é€😀"), "é€😀");
    assert_eq!(esc("&&"), "&amp;&amp;");
    assert_eq!(esc(""), "");
}

#[test]
fn nice_steps_and_axes() {
    assert_eq!(nice(0), 1);
    assert_eq!(nice(1), 1);
    assert_eq!(nice(3), 5);
    assert_eq!(nice(11), 20);
    assert_eq!(nice(4739), 5000);
    assert_eq!(nice(u64::MAX), u64::MAX);
    let a = Axis::new(23691, 1);
    assert_eq!((a.max, a.step), (25000, 5000));
    let a = Axis::new(0, 1);
    assert!(a.max >= 1 && a.step >= 1);
    // GiB: 77,900 MiB is 77 GiB → ticks of 20 GiB up to 80 GiB.
    let g = Axis::new(77_900, 1024);
    assert_eq!((g.max, g.step), (80 * 1024, 20 * 1024));
    // y: 0 at the bottom, the top value at the top, beyond it clamped.
    assert_eq!(a.y(0, (100, 200)), 200);
    let a = Axis::new(100, 1);
    assert_eq!(a.y(100, (100, 200)), 100);
    assert_eq!(a.y(50, (100, 200)), 150);
    assert_eq!(a.y(u64::MAX, (100, 200)), 100);
    let huge = Axis::new(u64::MAX, 1024);
    assert!(huge.y(u64::MAX / 2, (0, 10)) <= 10);
}

#[test]
fn bucket_math() {
    let mut scan = Scan::new(None);
    scan.observe(&row(1000, "a"));
    scan.observe(&row(1017, "a"));
    let p = Plot::new(&scan);
    // 18 seconds: one bucket per second.
    assert_eq!(p.nb, 18);
    assert_eq!(p.bucket(1000), 0);
    assert_eq!(p.bucket(1009), 9);
    assert_eq!(p.bucket(1017), 17);
    assert_eq!(p.x(1000), X0);
    assert_eq!(p.x(1017), X1);
    // A long run: BUCKETS buckets, the ends in the first and last.
    let mut scan = Scan::new(None);
    scan.observe(&row(5, "a"));
    scan.observe(&row(5 + 1_000_000, "a"));
    let p = Plot::new(&scan);
    assert_eq!(p.nb, BUCKETS);
    assert_eq!(p.bucket(5), 0);
    assert_eq!(p.bucket(5 + 999), 0);
    assert_eq!(p.bucket(5 + 1001), 1);
    assert_eq!(p.bucket(5 + 1_000_000), BUCKETS - 1);
    // Out of range (a file rewritten between the passes): clamped.
    assert_eq!(p.bucket(0), 0);
    assert_eq!(p.bucket(u64::MAX), BUCKETS - 1);
    // The whole u64 range does not overflow.
    let mut scan = Scan::new(None);
    scan.observe(&row(0, "a"));
    scan.observe(&row(u64::MAX, "a"));
    let p = Plot::new(&scan);
    assert_eq!(p.bucket(u64::MAX), BUCKETS - 1);
    assert_eq!(p.x(u64::MAX), X1);
    // One row: one bucket, drawn across the whole width.
    let (p, svg) = plot_of(&[row(7, "a")]);
    assert_eq!(p.nb, 1);
    assert!(svg.contains(&std::format!("points=\"{},", X0)), "{svg}");
    assert!(svg.contains(&std::format!(" {},", X1)));
}

#[test]
fn buckets_keep_min_max_and_last() {
    let mut rows = Vec::new();
    for (i, used) in [10u64, 900, 5, 40].iter().enumerate() {
        let mut r = row(i as u64, "a");
        r.mem_used_mb = *used;
        rows.push(r);
    }
    // 4 rows over 3 s but squeezed into one bucket each second: check a
    // long run where several rows share a bucket.
    for i in 0..3000u64 {
        let mut r = row(10 + i, "a");
        r.mem_used_mb = if i == 1234 { 99_999 } else { 100 };
        rows.push(r);
    }
    let (p, svg) = plot_of(&rows);
    assert_eq!(p.peak(Series::MemUsed), Some(99_999));
    let c = p.cells[0][Series::MemUsed.index()];
    assert_eq!((c.first, c.min, c.max), (10, 5, 900));
    let rows_in_buckets: u32 = p.times[..p.nb].iter().map(|t| t.rows).sum();
    assert_eq!(rows_in_buckets as usize, rows.len());
    // Bounded: at most 4 points per bucket per series.
    let pts = svg.matches(',').count();
    assert!(pts <= 4 * BUCKETS * SERIES_N + 200, "{pts}");
}

#[test]
fn time_backwards_and_duplicate_epochs_do_not_break() {
    let rows: Vec<Row> = [50u64, 40, 40, 60, 10, 10, 10, 70]
        .iter()
        .map(|&e| row(e, "s"))
        .collect();
    let (p, svg) = plot_of(&rows);
    assert_eq!((p.t0, p.span), (10, 60));
    let n: u32 = p.times[..p.nb].iter().map(|t| t.rows).sum();
    assert_eq!(n, 8);
    assert_eq!(p.bands(), 1);
    assert!(svg.ends_with("</svg>\n"));
    // All epochs equal.
    let rows: Vec<Row> = (0..5).map(|_| row(99, "s")).collect();
    let (p, svg) = plot_of(&rows);
    assert_eq!((p.span, p.nb), (0, 1));
    assert!(svg.contains("data-series=\"mem_used_mb\""));
}

#[test]
fn stage_bands_one_per_run_with_hover_titles() {
    let mut rows = Vec::new();
    for (i, s) in [
        "fetch", "fetch", "compile", "compile", "compile", "<link&>", "",
    ]
    .iter()
    .enumerate()
    {
        rows.push(row(100 + 10 * i as u64, s));
    }
    let (p, svg) = plot_of(&rows);
    assert_eq!(p.bands(), 4);
    assert_eq!(count(&svg, " rows</title></rect>"), 4);
    assert!(svg.contains("<title>stage fetch: 0s to 20s after the start, 2 rows</title>"));
    assert!(svg.contains("<title>stage compile: 20s to 50s after the start, 3 rows</title>"));
    assert!(svg.contains("stage &lt;link&amp;&gt;:"));
    assert!(svg.contains("<title>stage ?: "));
    assert!(svg.contains("class=\"band0\"") && svg.contains("class=\"band1\""));
    assert!(!svg.contains("merged"));
}

#[test]
fn too_many_stages_merge_into_a_bounded_number_of_bands() {
    let rows: Vec<Row> = (0..1000u64)
        .map(|i| row(i, if i % 2 == 0 { "even" } else { "odd" }))
        .collect();
    let (p, svg) = plot_of(&rows);
    assert!(
        p.bands() <= BANDS && p.bands() >= BANDS / 2,
        "{}",
        p.bands()
    );
    assert_eq!(p.bands.iter().map(|b| b.rows).sum::<u64>(), 1000);
    assert_eq!(p.bands.iter().map(|b| b.runs).sum::<u64>(), 1000);
    assert!(svg.contains("1000 stage changes merged into"), "{svg}");
    assert!(svg.contains("other stage runs merged"));
    // Bands stay in time order and cover the run.
    assert_eq!(p.bands[0].t_start, 0);
    // Merged evenly: every band but the last (still filling) holds as
    // many runs as the first.
    let n = p.bands();
    assert!(
        p.bands[..n - 1].iter().all(|b| b.runs == p.bands[0].runs),
        "{:?}",
        p.bands.iter().map(|b| b.runs).collect::<Vec<_>>()
    );
    assert!(p.bands[n - 1].runs <= p.bands[0].runs);
    assert_eq!(p.bands[p.bands() - 1].t_end, 999);
    assert!(p.bands.windows(2).all(|w| w[0].t_end < w[1].t_start));
}

#[test]
fn oom_markers_where_the_counter_rises() {
    let mut rows = Vec::new();
    for (i, k) in [0u64, 0, 1, 1, 3, 3].iter().enumerate() {
        let mut r = row(1000 + i as u64, "link");
        r.ext.oom_kills = Some(*k);
        let _ = r.context.push_str("ld <&> 'x'");
        rows.push(r);
    }
    let (p, svg) = plot_of(&rows);
    assert_eq!(p.oom_kills(), Some(3));
    assert_eq!(count(&svg, "<g class=\"oom-kill\">"), 2);
    assert!(svg.contains(
        "<title>OOM kill at 1970-01-01T00:16:42Z (2s after the start), stage=link, context=ld &lt;&amp;&gt; &apos;x&apos;</title>"
    ), "{svg}");
    assert!(svg.contains("<title>OOM kill x2 at 1970-01-01T00:16:44Z"));
    assert!(svg.contains("3 OOM kill(s)"));
    // A counter that starts above zero: the first row is a rise, as in
    // the summary.
    let mut r = row(5, "a");
    r.ext.oom_kills = Some(2);
    let (p, _) = plot_of(&[r]);
    assert_eq!(p.oom_kills(), Some(2));
    // No column: unknown, and said so.
    let (p, svg) = plot_of(&[row(5, "a")]);
    assert_eq!(p.oom_kills(), None);
    assert!(svg.contains("OOM kills: unknown"));
    assert_eq!(count(&svg, "oom-kill"), 0);
}

#[test]
fn more_oom_rows_than_markers_are_counted() {
    let rows: Vec<Row> = (0..(OOM_MARKS as u64 + 10))
        .map(|i| {
            let mut r = row(i, "a");
            r.ext.oom_kills = Some(i + 1);
            r
        })
        .collect();
    let (p, svg) = plot_of(&rows);
    assert_eq!(p.marks.len(), OOM_MARKS);
    assert!(svg.contains("10 more OOM-kill rows not marked"));
}

#[test]
fn the_near_oom_line_is_the_summarys_threshold() {
    // 2 GiB host: the summary scales 4096 MB down to 1/8 of RAM.
    let mut r = row(1, "a");
    r.mem_used_mb = 1500;
    r.mem_avail_mb = 548;
    let (p, svg) = plot_of(&[r.clone()]);
    let mut s = Summary::new(None, None);
    s.observe(&r);
    assert_eq!(p.near_oom, s.near_oom());
    assert_eq!(p.near_oom, Threshold::Scaled(256, 2048));
    assert!(svg.contains("near-OOM &lt; 256 MiB"));
    assert!(svg.contains("near-OOM: MemAvailable below 256 MB (scaled from 2048 MB RAM)"));
    // Given on the command line.
    let mut scan = Scan::new(Some(777));
    scan.observe(&r);
    assert_eq!(Plot::new(&scan).near_oom, Threshold::Given(777));
}

/// Issue 12: a sub-GiB build disk's low-disk line is the summary's
/// scaled threshold in MiB, not a 20 GiB default.
#[test]
fn the_low_disk_line_is_the_summarys_threshold_in_mib() {
    let mut r = row(1, "a");
    r.disk_known = true;
    r.disk_avail_gb = 0;
    r.disk_pct = 10;
    r.ext.disk_avail_mb = Some(460);
    let (p, svg) = plot_of(&[r.clone()]);
    let mut s = Summary::new(None, None);
    s.observe(&r);
    assert_eq!(p.low_disk, s.low_disk());
    assert_eq!(p.low_disk, Threshold::Scaled(51, 511));
    assert!(svg.contains("low disk &lt; 51 MiB"), "{svg}");
    assert!(svg.contains("low disk: free below 51 MB (scaled from 511 MB disk)"));
    // A large disk: the default, in whole GiB as before.
    r.ext.disk_avail_mb = Some(50 * 1024);
    r.disk_avail_gb = 50;
    let (_, svg) = plot_of(&[r]);
    assert!(svg.contains("low disk &lt; 20 GiB"), "{svg}");
}

#[test]
fn toolchain_14_column_csv_omits_the_absent_series() {
    let data = include_bytes!("../../tests/data/toolchain-cargo-build.csv");
    let mut scan = Scan::new(None);
    let mut rd = crate::report::csvread::CsvRows::new();
    rd.feed(data, &mut |r| scan.observe(r)).unwrap();
    rd.feed(&[], &mut |r| scan.observe(r)).unwrap();
    assert_eq!(scan.rows(), 18);
    let mut plot = Box::new(Plot::new(&scan));
    let mut rd = crate::report::csvread::CsvRows::new();
    rd.feed(data, &mut |r| plot.observe(r)).unwrap();
    rd.feed(&[], &mut |r| plot.observe(r)).unwrap();
    let mut o = Out(String::new());
    let _ = plot.render("toolchain-cargo-build.csv", &mut o);
    let svg = o.0;
    // zram: no columns; swap: 0 throughout; RAM available: ~23,500 MiB on a
    // 24 GiB host, above the axis the build's ~700 MiB sets.
    for s in SERIES {
        let line = std::format!("data-series=\"{}\"", s.column());
        let gone = matches!(
            s,
            Series::ZramStored | Series::ZramRam | Series::SwapUsed | Series::MemAvail
        ) || s.of_cgroup()
            || s.of_jobserver();
        assert_eq!(svg.contains(&line), !gone, "{line}");
    }
    assert!(svg.contains("not in this CSV (omitted): zram stored (MiB), zram RAM (MiB)"));
    assert!(
        svg.contains("0 throughout (not drawn): swap used (MiB)"),
        "{svg}"
    );
    assert!(svg.contains("18 samples, duration 18s"));
    assert!(svg.contains("<title>stage build: 0s to 18s after the start, 18 rows</title>"));
    assert!(svg.contains("disk available (GiB)"));
}

#[test]
fn no_rows_still_renders_without_panicking() {
    let (p, svg) = plot_of(&[]);
    assert_eq!((p.nb, p.bands()), (1, 0));
    assert!(svg.starts_with("<?xml") && svg.ends_with("</svg>\n"));
    assert!(!svg.contains("<polyline"));
}

#[test]
fn rows_appended_between_the_passes_are_ignored() {
    let mut scan = Scan::new(None);
    scan.observe(&row(10, "a"));
    scan.observe(&row(20, "a"));
    let mut p = Plot::new(&scan);
    for e in [10, 20, 30, 40] {
        p.observe(&row(e, "b"));
    }
    assert_eq!(p.seen, 2);
    assert_eq!(p.bands[0].t_end, 20);
}

#[test]
fn missing_memory_figures_break_the_line() {
    let mut rows: Vec<Row> = (0..10).map(|i| row(i, "a")).collect();
    rows[5].mem_known = false;
    let (_, svg) = plot_of(&rows);
    assert_eq!(count(&svg, "data-series=\"mem_used_mb\""), 2);
    assert_eq!(count(&svg, "data-series=\"cpu_pct\""), 1);
}

/// Durations are written by `followed::figures::duration` (tested there).
#[test]
fn time_steps() {
    assert_eq!(time_step(18), 5);
    assert_eq!(time_step(0), 1);
    assert_eq!(time_step(9000), 1800);
    assert!(time_step(u64::MAX) >= 86400);
}

/// Legend entries (the text after each swatch).
fn legend_labels(svg: &str) -> Vec<&str> {
    let start = svg.find("<g class=\"legend\">").unwrap();
    let end = start + svg[start..].find("</g>").unwrap();
    svg[start..end]
        .split("<text ")
        .skip(1)
        .filter_map(|t| t.split_once('>').and_then(|(_, r)| r.split_once('<')))
        .map(|(label, _)| label)
        .collect()
}

/// The memory axis's top tick.
fn mem_top(svg: &str) -> u64 {
    let y = std::format!("y=\"{}\" text-anchor=\"end\">", MEM.0 + 4);
    let at = svg.find(&y).unwrap() + y.len();
    svg[at..].split('<').next().unwrap().parse().unwrap()
}

#[test]
fn the_memory_axis_fits_the_builds_use_and_marks_memtotal_above_it() {
    // A 24 GiB host: RAM used 400 to 2,900 MiB, RAM available the rest.
    let rows: Vec<Row> = (0..20)
        .map(|i| {
            let mut r = row(i, "a");
            r.mem_used_mb = 400 + 125 * i;
            r.mem_avail_mb = 24_000 - r.mem_used_mb;
            r
        })
        .collect();
    let (p, svg) = plot_of(&rows);
    assert_eq!(p.mem_total, 24_000);
    assert_eq!(mem_top(&svg), 3_000, "{svg}");
    assert!(svg.contains(">above the chart: MemTotal 24000 MiB, near-OOM &lt; 4096 MiB; RAM available (MemTotal − RAM used) drawn only below 3000 MiB</text>"), "{svg}");
    assert!(!svg.contains("data-series=\"mem_avail_mb\""));
    assert!(!legend_labels(&svg).contains(&"RAM available (MiB)"));
    // The near-OOM line is above the axis: not drawn at its top.
    assert!(!svg.contains("near-OOM: MemAvailable below"), "{svg}");

    // The build takes the host: RAM available falls onto the axis, and is
    // drawn only where it is on it; MemTotal is still above.
    let rows: Vec<Row> = (0..19)
        .map(|i| {
            let mut r = row(i, "a");
            r.mem_used_mb = 1_000 * (i + 1);
            r.mem_avail_mb = 24_000 - r.mem_used_mb;
            r
        })
        .collect();
    let (_, svg) = plot_of(&rows);
    assert_eq!(mem_top(&svg), 20_000);
    assert_eq!(count(&svg, "data-series=\"mem_avail_mb\""), 1);
    assert!(legend_labels(&svg).contains(&"RAM available (MiB)"));
    assert!(
        svg.contains("near-OOM: MemAvailable below 4096 MB"),
        "{svg}"
    );
    assert!(
        svg.contains("above the chart: MemTotal 24000 MiB; RAM available"),
        "{svg}"
    );

    // A small host near OOM: MemTotal on the axis, a dotted line.
    let rows: Vec<Row> = (0..5)
        .map(|i| {
            let mut r = row(i, "a");
            r.mem_used_mb = 3_000 + 100 * i;
            r.mem_avail_mb = 3_794 - r.mem_used_mb;
            r
        })
        .collect();
    let (_, svg) = plot_of(&rows);
    assert_eq!(mem_top(&svg), 4_000);
    assert!(
        svg.contains("<title>MemTotal 3794 MiB</title></line>"),
        "{svg}"
    );
    assert!(!svg.contains("above the chart"));
}

#[test]
fn series_that_are_zero_throughout_leave_the_legend_and_the_plot() {
    let rows: Vec<Row> = (0..5)
        .map(|i| {
            let mut r = row(i, "a");
            r.compilers = 0;
            r.swap_used_mb = 0;
            r.ext.zram_stored_mb = Some(0);
            r.ext.zram_ram_mb = Some(0);
            r.disk_avail_gb = 0; // a full disk is news: still drawn
            r
        })
        .collect();
    let (_, svg) = plot_of(&rows);
    let legend = legend_labels(&svg);
    for gone in [
        Series::Compilers,
        Series::SwapUsed,
        Series::ZramStored,
        Series::ZramRam,
    ] {
        assert!(!legend.contains(&gone.label()), "{gone:?}: {legend:?}");
        let line = std::format!("data-series=\"{}\"", gone.column());
        assert!(!svg.contains(&line), "{line}");
    }
    for kept in [Series::MemUsed, Series::DiskFree, Series::Cpu] {
        assert!(legend.contains(&kept.label()), "{kept:?}: {legend:?}");
    }
    assert!(svg.contains(
        "0 throughout (not drawn): swap used (MiB), zram stored (MiB), zram RAM (MiB), compilers (count)"
    ), "{svg}");
    // No compilers: no right-hand compilers axis.
    assert!(!svg.contains(">compilers</text>"));
    // One non-zero value puts a series back.
    let mut rows = rows;
    rows[2].compilers = 1;
    let (_, svg) = plot_of(&rows);
    assert!(legend_labels(&svg).contains(&"compilers (count)"));
}

#[test]
fn a_run_without_stages_is_labelled_by_its_run_id() {
    assert_eq!(run_id("resources-pi-build.csv"), "pi-build");
    assert_eq!(run_id("resources-run.csv"), "run");
    assert_eq!(run_id("build.csv"), "build");
    assert_eq!(run_id("resources-.csv"), "resources-");
    assert_eq!(run_id("log"), "log");
    // No stage: empty when recorded, `?` when read back from a CSV.
    for none in ["", "?"] {
        let rows: Vec<Row> = (0..30).map(|i| row(i, none)).collect();
        let mut scan = Scan::new(None);
        rows.iter().for_each(|r| scan.observe(r));
        let mut plot = Box::new(Plot::new(&scan));
        rows.iter().for_each(|r| plot.observe(r));
        let mut o = Out(String::new());
        let _ = plot.render("resources-pi-build.csv", &mut o);
        let svg = o.0;
        assert!(
            svg.contains("<title>run pi-build (no stage in its log): 0s to 29s"),
            "{svg}"
        );
        assert!(svg.contains(">pi-build</text>"), "{svg}");
        assert!(
            !svg.contains(">?</text>") && !svg.contains("stage ?"),
            "{svg}"
        );
    }
    let rows: Vec<Row> = (0..30).map(|i| row(i, "?")).collect();
    // With a stage somewhere, an unnamed stretch stays `?`.
    let mut rows = rows;
    rows[20].stage.clear();
    let _ = rows[20].stage.push_str("link");
    let (_, svg) = plot_of(&rows);
    assert!(svg.contains("<title>stage ?: "), "{svg}");
    assert!(svg.contains("<title>stage link: "), "{svg}");
}

/// [`row`] with the fourth panel's columns.
fn io_row(epoch: u64, stage: &str, write_centi: u64, temp_tenths: i32) -> Row {
    let mut r = row(epoch, stage);
    r.ext.disk_read_mibps = Some(crate::tick::row::Decimal::from_centi(50));
    r.ext.disk_write_mibps = Some(crate::tick::row::Decimal::from_centi(write_centi));
    r.ext.swap_in_mibps = Some(crate::tick::row::Decimal::from_centi(0));
    r.ext.swap_out_mibps = Some(crate::tick::row::Decimal::from_centi(125));
    r.ext.cpu_temp_c = Some(crate::tick::row::Tenths(temp_tenths));
    r
}

#[test]
fn the_fourth_panel_draws_io_and_temperature() {
    let rows: Vec<Row> = (0..20)
        .map(|i| io_row(1000 + i * 15, "build", 100 * i, 600 + 10 * i as i32))
        .collect();
    let (_, svg) = plot_of(&rows);
    assert!(
        svg.contains("height=\"1060\" viewBox=\"0 0 1200 1060\""),
        "{svg}"
    );
    for s in [
        Series::DiskRead,
        Series::DiskWrite,
        Series::SwapOut,
        Series::CpuTemp,
    ] {
        let line = std::format!("data-series=\"{}\"", s.column());
        assert!(svg.contains(&line), "{line}");
        assert!(legend_labels(&svg).contains(&s.label()), "{s:?}");
    }
    // Swap-in is 0 throughout: left out, and said so.
    assert!(!svg.contains("data-series=\"swap_in_mibps\""));
    assert!(
        svg.contains("0 throughout (not drawn): swap used (MiB), swap-in (MiB/s)"),
        "{svg}"
    );
    assert!(svg.contains("<title>disk write (MiB/s), peak 19.00 MiB/s</title>"));
    assert!(svg.contains("<title>CPU temperature (°C), peak 79.0 °C</title>"));
    assert!(svg.contains(">I/O (MiB/s)</text>") && svg.contains(">temperature (°C)</text>"));
    // The write axis tops at 20 MiB/s, the temperature's at 80 °C.
    assert!(svg.contains(&std::format!(
        "y=\"{}\" text-anchor=\"end\">20</text>",
        IO.0 + 4
    )));
    assert!(svg.contains(&std::format!(
        "y=\"{}\" fill=\"#d95f02\">80</text>",
        IO.0 + 4
    )));
    // The time axis and the stage bands reach below the fourth panel.
    assert!(svg.contains(&std::format!(
        "height=\"{}\"><title>stage build",
        IO.1 - MEM.0
    )));
    assert!(svg.contains(&std::format!("y=\"{}\">elapsed since", IO.1 + 36)));
}

#[test]
fn without_the_columns_the_plot_is_the_three_panels_as_before() {
    let rows: Vec<Row> = (0..20).map(|i| row(1000 + i * 15, "build")).collect();
    let (_, svg) = plot_of(&rows);
    assert!(svg.contains("height=\"900\" viewBox=\"0 0 1200 900\""));
    assert!(!svg.contains("I/O"));
    for s in IO_SERIES {
        assert!(!svg.contains(s.column()), "{s:?}");
        assert!(!svg.contains(s.label()), "{s:?}");
    }
    // A 27-column CSV and a 37-column one whose new fields are empty plot
    // alike, byte for byte.
    let header = crate::tick::row::header_27();
    let mut old = std::format!("{}\n", header.as_str());
    let mut new = std::string::String::from(crate::tick::row::HEADER_FULL);
    for r in &rows {
        let mut out = heapless::Vec::new();
        r.format(false, &mut out).unwrap();
        let line = std::str::from_utf8(&out).unwrap();
        new.push_str(line);
        let cut: Vec<&str> = line.trim_end().split(',').take(27).collect();
        old.push_str(&cut.join(","));
        old.push('\n');
    }
    let svg_of = |data: &str| {
        let mut scan = Box::new(Scan::new(None));
        let mut rd = crate::report::csvread::CsvRows::new();
        rd.feed(data.as_bytes(), &mut |r| scan.observe(r)).unwrap();
        rd.feed(&[], &mut |r| scan.observe(r)).unwrap();
        let mut plot = Box::new(Plot::new(&scan));
        let mut rd = crate::report::csvread::CsvRows::new();
        rd.feed(data.as_bytes(), &mut |r| plot.observe(r)).unwrap();
        rd.feed(&[], &mut |r| plot.observe(r)).unwrap();
        let mut o = Out(String::new());
        let _ = plot.render("t.csv", &mut o);
        o.0
    };
    let (a, b) = (svg_of(&old), svg_of(&new));
    assert_eq!(a, b);
    assert!(a.contains("height=\"900\""));
}

/// [`row`] on a 22 GiB host inside a memory cgroup of `limit` MiB whose
/// use is `cg_used` (`None` limit: a CSV before `cg_mem_limit_mb`).
fn cg_row(epoch: u64, cg_used: u64, limit: Option<u64>) -> Row {
    let mut r = row(epoch, "build");
    r.mem_used_mb = 2_000 + cg_used;
    r.mem_avail_mb = 22_000 - r.mem_used_mb;
    r.ext.cg_mem_avail_mb = Some(1024 - cg_used);
    r.ext.cg_mem_limit_mb = limit;
    r
}

/// The polyline of a series: its opening tag, up to `points=`.
fn polyline_of(svg: &str, s: Series) -> Option<&str> {
    let at = svg.find(&std::format!("data-series=\"{}\"", s.column()))?;
    let start = svg[..at].rfind('<')?;
    Some(&svg[start..start + svg[start..].find("points=")?])
}

/// Issue 25: in a 1 GiB cgroup on a 22 GiB host, the memory panel draws
/// the cgroup's limit (dashed), its use and its available memory, and the
/// legend names them; the axis reaches the limit.
#[test]
fn a_binding_cgroup_draws_its_limit_and_use() {
    let rows: Vec<Row> = (0..20)
        .map(|i| cg_row(i, 300 + 30 * i, Some(1024)))
        .collect();
    let (p, svg) = plot_of(&rows);
    assert!(p.cg_binds);
    let limit = polyline_of(&svg, Series::CgLimit).expect("the limit line");
    assert!(limit.contains("stroke-dasharray=\"8 4\""), "{limit}");
    assert!(polyline_of(&svg, Series::CgUsed).is_some(), "{svg}");
    assert!(polyline_of(&svg, Series::CgAvail).is_some(), "{svg}");
    assert!(
        !polyline_of(&svg, Series::CgUsed)
            .unwrap()
            .contains("dasharray")
    );
    assert_eq!(p.peak(Series::CgUsed), Some(300 + 30 * 19));
    assert_eq!(p.low(Series::CgAvail), Some(1024 - 870));
    let legend = legend_labels(&svg);
    for s in [Series::CgLimit, Series::CgUsed, Series::CgAvail] {
        assert!(legend.contains(&s.label()), "{s:?}: {legend:?}");
    }
    // The limit's swatch is dashed too.
    assert!(svg.contains("stroke=\"#393b79\" stroke-width=\"3\" stroke-dasharray=\"6 3\"/>"));
    // The axis: host RAM used peaks at 2870 MiB: 3000; the limit is on it.
    assert_eq!(mem_top(&svg), 4_000, "{svg}");
    assert!(svg.contains("<title>cgroup limit (MiB), peak 1024</title>"));
    // The near-OOM line is the cgroup's, scaled to its limit, and says so.
    assert_eq!(p.near_oom, Threshold::ScaledToCgroup(128, 1024));
    assert!(svg.contains("<title>near-OOM: available memory (the cgroup's where it binds) below 128 MB (scaled from the 1024 MB cgroup limit)</title>"), "{svg}");
    assert!(
        svg.contains("0 throughout (not drawn): swap used (MiB)<"),
        "{svg}"
    );

    // A CSV written before cg_mem_limit_mb: the cgroup's available memory
    // alone (its use and limit are unknown), and nothing said of them.
    let old: Vec<Row> = (0..20).map(|i| cg_row(i, 300 + 30 * i, None)).collect();
    let (_, svg) = plot_of(&old);
    assert!(polyline_of(&svg, Series::CgAvail).is_some());
    assert!(polyline_of(&svg, Series::CgLimit).is_none());
    assert!(polyline_of(&svg, Series::CgUsed).is_none());
    assert!(!svg.contains("cgroup limit"), "{svg}");
    assert!(!svg.contains("cgroup used"), "{svg}");
}

/// A cgroup that never has less room than MemAvailable, or none at all:
/// nothing of the cgroup is drawn or named, the plot is as before.
#[test]
fn without_a_binding_cgroup_nothing_of_it_is_drawn() {
    let loose: Vec<Row> = (0..20)
        .map(|i| {
            let mut r = row(i, "build");
            r.ext.cg_mem_avail_mb = Some(r.mem_avail_mb + 500);
            r.ext.cg_mem_limit_mb = Some(8192);
            r
        })
        .collect();
    let (p, with_cg) = plot_of(&loose);
    assert!(!p.cg_binds);
    for s in [Series::CgLimit, Series::CgUsed, Series::CgAvail] {
        assert!(polyline_of(&with_cg, s).is_none(), "{s:?}");
        assert!(!with_cg.contains(s.label()), "{s:?}");
    }
    assert!(!with_cg.contains("cgroup"), "{with_cg}");
    // Byte for byte the plot of the same rows without cgroup figures.
    let bare: Vec<Row> = (0..20).map(|i| row(i, "build")).collect();
    let (_, without) = plot_of(&bare);
    assert_eq!(with_cg, without);
}

/// Issue 25: series used to share colours (disk read with disk free, disk
/// write with RAM used, swap-in with swap used, the temperature with zram
/// stored). Each has its own now, and none is a marker's or a threshold's.
#[test]
fn every_series_has_its_own_colour() {
    let mut colours: Vec<&str> = ALL.iter().map(|s| s.color()).collect();
    colours.sort_unstable();
    colours.dedup();
    assert_eq!(colours.len(), SERIES_N, "{colours:?}");
    for taken in ["#e31a1c", "#c00000", "#888", "#ffffff"] {
        assert!(!colours.contains(&taken), "{taken}");
    }
    // In a rendered plot with every series, each polyline's stroke is its own.
    let rows: Vec<Row> = (0..20)
        .map(|i| {
            let mut r = io_row(i, "build", 100 * i, 600);
            // RAM available on the memory axis, so that it is drawn.
            (r.mem_used_mb, r.mem_avail_mb) = (3000, 500 + i);
            r.ext.swap_in_mibps = Some(crate::tick::row::Decimal::from_centi(30));
            r.swap_used_mb = 10 + i;
            r.ext.zram_stored_mb = Some(20 + i);
            r.ext.zram_ram_mb = Some(5 + i);
            r.ext.cg_mem_avail_mb = Some(400 - i);
            r.ext.cg_mem_limit_mb = Some(1024);
            r.jobs = Some((2, 3, u32::from(i % 3 == 0)));
            r
        })
        .collect();
    let (_, svg) = plot_of(&rows);
    let mut strokes: Vec<(&str, &str)> = Vec::new();
    for s in ALL {
        let tag = polyline_of(&svg, s).unwrap_or_else(|| panic!("{s:?} not drawn"));
        let stroke = tag
            .split("stroke=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        assert_eq!(stroke, s.color(), "{s:?}");
        strokes.push((s.column(), stroke));
    }
    let mut only: Vec<&str> = strokes.iter().map(|(_, c)| *c).collect();
    only.sort_unstable();
    only.dedup();
    assert_eq!(only.len(), SERIES_N, "{strokes:?}");
}

/// Issue 25: the jobs a `run --jobserver` paused are drawn, with the jobs
/// running and allowed, on the CPU panel's count axis.
#[test]
fn paused_jobs_are_drawn() {
    let rows: Vec<Row> = (0..30)
        .map(|i| {
            let mut r = row(i, "build");
            let paused = if (10..15).contains(&i) { 2 } else { 0 };
            r.jobs = Some((4 - paused, 4, paused));
            r
        })
        .collect();
    let (p, svg) = plot_of(&rows);
    assert_eq!(p.peak(Series::JobsPaused), Some(2));
    for s in [Series::JobsRunning, Series::JobsAllowed, Series::JobsPaused] {
        assert!(polyline_of(&svg, s).is_some(), "{s:?}");
        assert!(legend_labels(&svg).contains(&s.label()), "{s:?}");
    }
    assert!(svg.contains("<title>jobs paused (count), peak 2</title>"));
    // The count axis reaches the 4 jobs allowed; its title names the jobs.
    assert!(svg.contains(">compilers, jobs</text>"), "{svg}");
    assert!(svg.contains(">CPU % / compilers, jobs</text>"), "{svg}");
    // Never paused: said so, not drawn.
    let calm: Vec<Row> = (0..30)
        .map(|i| {
            let mut r = row(i, "build");
            r.jobs = Some((2, 2, 0));
            r
        })
        .collect();
    let (_, svg) = plot_of(&calm);
    assert!(polyline_of(&svg, Series::JobsPaused).is_none());
    assert!(
        svg.contains("0 throughout (not drawn): swap used (MiB), jobs paused (count)<"),
        "{svg}"
    );
    // Without the jobserver's columns: no word of jobs.
    let (_, svg) = plot_of(&[row(1, "a"), row(2, "a")]);
    assert!(!svg.contains("jobs"), "{svg}");
}

/// A legend of more than two rows moves the panels down rather than onto
/// them; two rows or fewer leave the layout as it was.
#[test]
fn a_long_legend_moves_the_panels_down() {
    let rows: Vec<Row> = (0..20)
        .map(|i| {
            let mut r = io_row(i, "build", 100 * i, 600);
            r.jobs = Some((2, 3, u32::from(i % 3 == 0)));
            r.swap_used_mb = 10 + i;
            r
        })
        .collect();
    let (_, svg) = plot_of(&rows);
    // Three rows: 18 px more, everything below the legend in one group.
    assert!(
        svg.contains("height=\"1078\" viewBox=\"0 0 1200 1078\""),
        "{svg}"
    );
    let g = "<g transform=\"translate(0 18)\">\n";
    let at = svg.find(g).expect("the shifted group");
    assert!(at > svg.find("<g class=\"legend\">").unwrap());
    assert!(at < svg.find("<g class=\"bands\">").unwrap());
    assert!(svg.ends_with("</g>\n</svg>\n"));
    assert_eq!(count(&svg, "<g"), count(&svg, "</g>"));
    // The legend's third row is at 70 + 2 × 18.
    let legend = &svg[svg.find("<g class=\"legend\">").unwrap()..at];
    assert!(
        legend.contains("x1=\"80\" y1=\"106\" x2=\"98\" y2=\"106\""),
        "{legend}"
    );
    assert!(!legend.contains("y1=\"124\""), "{legend}");
    // Two rows: no group, the height as before.
    let (_, svg) = plot_of(&[row(1, "a"), row(2, "a")]);
    assert!(!svg.contains("transform=\"translate"));
    assert!(svg.contains("height=\"900\""));
}
