//! The SVG of a [`Plot`]: [`Plot::render`] and the pieces it writes, in
//! the layout of [`super`]'s module documentation.

use ufmt::{uWrite, uwrite};

use super::{
    Axis, BANDS, COUNT_SERIES, CPU, DISK, IO, IO_SERIES, MEM, MEM_SERIES, MEM_USE, OOM_MARKS, PW,
    Plot, Series, W, X0, X1, escape, run_id, time_step,
};
use crate::followed::figures::{duration, stage_str};
use crate::report::summary::Threshold;

impl Plot {
    /// Writes the SVG to `w`. `name` is the CSV's file name, shown in the
    /// title (escaped). The output is one `<svg>` document, UTF-8, with no
    /// external reference; its size is bounded by
    /// [`BUCKETS`](super::BUCKETS), [`BANDS`] and [`OOM_MARKS`] (under 1 MiB).
    ///
    /// # Errors
    /// Only those of `w`.
    pub fn render<W: uWrite>(&self, name: &str, w: &mut W) -> Result<(), W::Error> {
        let mem_axis = self.mem_axis();
        let entries = self.legend_entries(mem_axis);
        // Legend rows past the two the layout leaves room for push the
        // panels down.
        let shift = legend_rows(&entries).saturating_sub(2) * LEGEND_ROW;
        prolog(w, self.height() + shift)?;
        self.title(name, w)?;
        legend(w, &entries)?;
        if shift > 0 {
            uwrite!(w, "<g transform=\"translate(0 {})\">\n", shift)?;
        }
        self.draw_bands(name, w)?;
        self.panel(w, MEM, mem_axis, "memory (MiB)")?;
        let (disk_axis, disk_title) = self.disk_axis();
        self.panel(w, DISK, disk_axis, disk_title)?;
        let cpu_axis = Axis::new(self.peak(Series::Cpu).unwrap_or(0).max(100), 1);
        let comp_axis = self.cpu_panel(w, cpu_axis)?;
        let io_axes = self.io_panel(w)?;
        self.time_axis(w)?;

        for s in MEM_SERIES {
            self.series(w, s, mem_axis, MEM)?;
        }
        let total_note = self.mem_total_mark(w, mem_axis)?;
        self.series(w, Series::DiskFree, disk_axis, DISK)?;
        self.series(w, Series::Cpu, cpu_axis, CPU)?;
        for s in COUNT_SERIES {
            self.series(w, s, comp_axis, CPU)?;
        }
        if let Some((rate, temp)) = io_axes {
            for s in IO_SERIES {
                let axis = if s == Series::CpuTemp { temp } else { rate };
                self.series(w, s, axis, IO)?;
            }
        }
        self.near_oom_line(w, mem_axis, total_note)?;
        self.low_disk_line(w, disk_axis)?;
        self.draw_marks(w)?;
        self.notes(w)?;
        if shift > 0 {
            w.write_str("</g>\n")?;
        }
        w.write_str("</svg>\n")
    }

    /// The disk panel's axis and title: in GiB from 10 GiB up (the larger
    /// of the free space's peak and the low-disk threshold), else in MiB.
    fn disk_axis(&self) -> (Axis, &'static str) {
        let disk_max = self
            .peak(Series::DiskFree)
            .unwrap_or(0)
            .max(self.low_disk.value());
        let (disk_div, disk_title) = if disk_max >= 10 * 1024 {
            (1024, "disk available (GiB)")
        } else {
            (1, "disk available (MiB)")
        };
        (Axis::new(disk_max, disk_div), disk_title)
    }

    /// The near-OOM threshold on the memory panel, when RAM available is
    /// drawn and the threshold is on the axis: a dashed line with its rule
    /// as a tooltip, and its label at the right, below the MemTotal note
    /// (`total_note`) when there is one.
    fn near_oom_line<W: uWrite>(
        &self,
        w: &mut W,
        mem_axis: Axis,
        total_note: bool,
    ) -> Result<(), W::Error> {
        if !self.present[Series::MemAvail.index()] || self.near_oom.value() > mem_axis.max {
            return Ok(());
        }
        let y = mem_axis.y(self.near_oom.value(), MEM);
        uwrite!(
            w,
            "<line class=\"thr\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"><title>",
            X0,
            y,
            X1,
            y
        )?;
        let what = if self.cg_binds {
            "near-OOM: available memory (the cgroup's where it binds) below "
        } else {
            "near-OOM: MemAvailable below "
        };
        threshold_text(w, what, self.near_oom, "MB", "RAM")?;
        uwrite!(
            w,
            "</title></line>\n<text class=\"small\" x=\"{}\" y=\"{}\" text-anchor=\"end\">near-OOM &lt; {} MiB</text>\n",
            X1 - 4,
            // Below the MemTotal note at the top, when there is one.
            y.saturating_sub(4)
                .max(MEM.0 + if total_note { 27 } else { 12 }),
            self.near_oom.value()
        )
    }

    /// The low-disk threshold on the disk panel, when free space was
    /// recorded: a dashed line with its rule as a tooltip, and its label
    /// at the right.
    fn low_disk_line<W: uWrite>(&self, w: &mut W, disk_axis: Axis) -> Result<(), W::Error> {
        if self.peak(Series::DiskFree).is_none() {
            return Ok(());
        }
        let low_mb = self.low_disk.value();
        let y = disk_axis.y(low_mb, DISK);
        uwrite!(
            w,
            "<line class=\"thr\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"><title>",
            X0,
            y,
            X1,
            y
        )?;
        threshold_text(w, "low disk: free below ", self.low_disk, "MB", "disk")?;
        uwrite!(
            w,
            "</title></line>\n<text class=\"small\" x=\"{}\" y=\"{}\" text-anchor=\"end\">low disk &lt; ",
            X1 - 4,
            y.saturating_sub(4).max(DISK.0 + 12),
        )?;
        // Whole GiB as before (the default, --low-disk-gb); a threshold
        // scaled to a small disk in MiB.
        match low_mb % 1024 {
            0 => uwrite!(w, "{} GiB</text>\n", low_mb / 1024),
            _ => uwrite!(w, "{} MiB</text>\n", low_mb),
        }
    }

    /// The CPU panel's frame and CPU % axis, and the counts' right-hand
    /// axis (compilers, and the jobserver's jobs) when one of them is
    /// drawn; returns the counts' axis.
    fn cpu_panel<W: uWrite>(&self, w: &mut W, cpu_axis: Axis) -> Result<Axis, W::Error> {
        let drawn = COUNT_SERIES.map(|s| self.drawn[s.index()]);
        let peak = COUNT_SERIES
            .iter()
            .zip(drawn)
            .filter(|&(_, d)| d)
            .filter_map(|(&s, _)| self.peak(s))
            .max()
            .unwrap_or(0);
        let axis = Axis::new(peak.max(1), 1);
        let jobs = drawn[1..].iter().any(|&d| d);
        self.panel(
            w,
            CPU,
            cpu_axis,
            if jobs {
                "CPU % / compilers, jobs"
            } else {
                "CPU % / compilers"
            },
        )?;
        let (s, title) = match (drawn[0], jobs) {
            (true, false) => (Series::Compilers, "compilers"),
            (true, true) => (Series::Compilers, "compilers, jobs"),
            (false, true) => (Series::JobsRunning, "jobs"),
            (false, false) => return Ok(axis),
        };
        self.right_axis(w, CPU, axis, s, title)?;
        Ok(axis)
    }

    /// The fourth panel's frame and axes, when it is drawn: MiB/s on the
    /// left (the rates are in hundredths), °C on the right (tenths).
    fn io_panel<W: uWrite>(&self, w: &mut W) -> Result<Option<(Axis, Axis)>, W::Error> {
        if !self.io {
            return Ok(None);
        }
        let rates = IO_SERIES
            .iter()
            .filter(|&&s| s != Series::CpuTemp && self.drawn[s.index()])
            .filter_map(|&s| self.peak(s))
            .max()
            .unwrap_or(0);
        let rate = Axis::new(rates, 100);
        self.panel(w, IO, rate, "I/O (MiB/s)")?;
        let temp = Axis::new(self.peak(Series::CpuTemp).unwrap_or(0), 10);
        if self.drawn[Series::CpuTemp.index()] {
            self.right_axis(w, IO, temp, Series::CpuTemp, "temperature (°C)")?;
        }
        Ok(Some((rate, temp)))
    }

    /// The memory axis: to a round top at or above the largest of
    /// [`MEM_USE`] drawn (RAM available's peak when none is) and 5 % over
    /// it, so that the peak is not drawn on the frame. RAM available
    /// is on it wherever it is below half of MemTotal (RAM used is then
    /// above half), so always where it is near OOM.
    fn mem_axis(&self) -> Axis {
        let peak = MEM_USE
            .iter()
            .filter(|s| self.drawn[s.index()])
            .filter_map(|&s| self.peak(s))
            .max()
            .or_else(|| self.peak(Series::MemAvail))
            .unwrap_or(0);
        Axis::new(peak.saturating_add(peak / 20), 1)
    }

    /// MemTotal on the memory panel: a dotted line when it is on the axis;
    /// when above it, a note at the panel's top right naming MemTotal, the
    /// near-OOM threshold when it is above too, and where RAM available is
    /// not drawn. Returns whether the note was written.
    fn mem_total_mark<W: uWrite>(&self, w: &mut W, axis: Axis) -> Result<bool, W::Error> {
        if self.mem_total == 0 || !self.drawn[Series::MemAvail.index()] {
            return Ok(false);
        }
        if self.mem_total <= axis.max {
            let y = axis.y(self.mem_total, MEM);
            uwrite!(
                w,
                "<line class=\"total\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"><title>MemTotal {} MiB</title></line>\n<text class=\"small\" x=\"{}\" y=\"{}\" text-anchor=\"end\">MemTotal {} MiB</text>\n",
                X0,
                y,
                X1,
                y,
                self.mem_total,
                // Right, as the near-OOM label (at most 1/8 of MemTotal, so
                // far below): the stage labels are on the left.
                X1 - 4,
                y.saturating_sub(4).max(MEM.0 + 12),
                self.mem_total
            )?;
            return Ok(false);
        }
        uwrite!(
            w,
            "<text class=\"small mem-total\" x=\"{}\" y=\"{}\" text-anchor=\"end\">above the chart: MemTotal {} MiB",
            X1 - 4,
            MEM.0 + 13,
            self.mem_total
        )?;
        if self.near_oom.value() > axis.max {
            uwrite!(w, ", near-OOM &lt; {} MiB", self.near_oom.value())?;
        }
        if self.peak(Series::MemAvail).is_some_and(|p| p > axis.max) {
            uwrite!(
                w,
                "; RAM available (MemTotal − RAM used) drawn only below {} MiB",
                axis.max
            )?;
        }
        w.write_str("</text>\n")?;
        Ok(true)
    }

    fn title<W: uWrite>(&self, name: &str, w: &mut W) -> Result<(), W::Error> {
        uwrite!(w, "<title>headroom plot: ")?;
        escape(w, name)?;
        uwrite!(w, "</title>\n<text class=\"t\" x=\"{}\" y=\"26\">", X0)?;
        escape(w, name)?;
        uwrite!(
            w,
            "</text>\n<text x=\"{}\" y=\"46\">{} samples, duration ",
            X0,
            self.seen
        )?;
        duration(w, self.span)?;
        uwrite!(
            w,
            ", {} to {}",
            self.iso_first.as_str(),
            self.iso_last.as_str()
        )?;
        match self.oom_kills() {
            Some(0) => uwrite!(w, ", no OOM kill")?,
            Some(k) => uwrite!(w, ", {} OOM kill(s) on the host", k)?,
            None => {}
        }
        uwrite!(w, "</text>\n")
    }

    /// The legend's entries: each series drawn (RAM or the cgroup's
    /// available not when it is above the memory axis throughout), then
    /// the thresholds, OOM kills, stages.
    fn legend_entries(&self, mem_axis: Axis) -> Legend {
        let mut out = Legend::new();
        let off = |s: Series| {
            matches!(s, Series::MemAvail | Series::CgAvail)
                && self.low(s).is_some_and(|v| v > mem_axis.max)
        };
        // Capacity: every series and three more; a failed push cannot happen.
        for &s in self.listed() {
            if self.drawn[s.index()] && !off(s) {
                let swatch = if s.dashed() {
                    Swatch::Dashed(s.color())
                } else {
                    Swatch::Line(s.color())
                };
                let _ = out.push((s.label(), swatch));
            }
        }
        let _ = out.push(("near-OOM / low-disk threshold", Swatch::Threshold));
        if self.oom_counter {
            let _ = out.push(("OOM kill", Swatch::Oom));
        }
        if !self.bands.is_empty() {
            let _ = out.push(("stage (hover for details)", Swatch::Band));
        }
        out
    }

    /// The stage bands; a run without stages (every row's stage empty) is
    /// one band labelled with its run id ([`run_id`] of `name`), not `?`.
    fn draw_bands<W: uWrite>(&self, name: &str, w: &mut W) -> Result<(), W::Error> {
        // Empty when recorded, `?` when read back from the CSV.
        let stageless = self.bands.iter().all(|b| stage_str(&b.stage) == "?");
        w.write_str("<g class=\"bands\">\n")?;
        for (i, b) in self.bands.iter().enumerate() {
            let label = if stageless {
                run_id(name)
            } else {
                stage_str(&b.stage)
            };
            // A band reaches to where the next one starts; the last to its end.
            let end = match self.bands.get(i + 1) {
                Some(n) => n.t_start,
                None => b.t_end,
            };
            let (mut xa, mut xb) = (self.x(b.t_start), self.x(end));
            if self.span == 0 {
                (xa, xb) = (X0, X1);
            }
            if xb < xa {
                core::mem::swap(&mut xa, &mut xb);
            }
            let width = (xb - xa).max(1);
            uwrite!(
                w,
                "<rect class=\"band{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}",
                i % 2,
                xa,
                MEM.0,
                width,
                self.bottom() - MEM.0,
                if stageless { "run " } else { "stage " }
            )?;
            escape(w, label)?;
            if stageless {
                uwrite!(w, " (no stage in its log)")?;
            }
            if b.runs > 1 {
                uwrite!(w, " and {} other stage runs merged", b.runs - 1)?;
            }
            uwrite!(w, ": ")?;
            duration(w, b.t_start.saturating_sub(self.t0))?;
            uwrite!(w, " to ")?;
            duration(w, end.max(b.t_end).saturating_sub(self.t0))?;
            uwrite!(w, " after the start, {} rows</title></rect>\n", b.rows)?;
            let chars = label.chars().count() as u64 + if b.runs > 1 { 4 } else { 0 };
            if width >= 7 * chars + 6 {
                uwrite!(
                    w,
                    "<text class=\"small\" x=\"{}\" y=\"{}\">",
                    xa + 3,
                    MEM.0 + 13
                )?;
                escape(w, label)?;
                if b.runs > 1 {
                    uwrite!(w, " +{}", b.runs - 1)?;
                }
                uwrite!(w, "</text>\n")?;
            }
        }
        w.write_str("</g>\n")
    }

    fn panel<W: uWrite>(
        &self,
        w: &mut W,
        (top, bottom): (u64, u64),
        axis: Axis,
        title: &str,
    ) -> Result<(), W::Error> {
        uwrite!(
            w,
            "<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n",
            X0,
            top,
            PW,
            bottom - top
        )?;
        for v in axis.ticks() {
            let y = axis.y(v, (top, bottom));
            uwrite!(
                w,
                "<line class=\"grid\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
                X0,
                y,
                X1,
                y,
                X0 - 6,
                y + 4,
                v / axis.div
            )?;
        }
        let mid = (top + bottom) / 2;
        uwrite!(
            w,
            "<text x=\"18\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {})\">",
            mid,
            mid
        )?;
        escape(w, title)?;
        uwrite!(w, "</text>\n")
    }

    /// A right-hand axis for series `s`, its ticks in `s`'s colour.
    fn right_axis<W: uWrite>(
        &self,
        w: &mut W,
        (top, bottom): (u64, u64),
        axis: Axis,
        s: Series,
        title: &str,
    ) -> Result<(), W::Error> {
        for v in axis.ticks() {
            let y = axis.y(v, (top, bottom));
            uwrite!(
                w,
                "<text x=\"{}\" y=\"{}\" fill=\"{}\">{}</text>\n",
                X1 + 6,
                y + 4,
                s.color(),
                v / axis.div
            )?;
        }
        let mid = (top + bottom) / 2;
        uwrite!(
            w,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(90 {} {})\">{}</text>\n",
            X1 + 40,
            mid,
            X1 + 40,
            mid,
            title
        )
    }

    fn time_axis<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        let step = time_step(self.span);
        let mut t = 0;
        w.write_str("<g class=\"time\">\n")?;
        while t <= self.span {
            let x = self.x(self.t0.saturating_add(t));
            uwrite!(
                w,
                "<line class=\"grid\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/><text x=\"{}\" y=\"{}\" text-anchor=\"middle\">",
                x,
                MEM.0,
                x,
                self.bottom() + 4,
                x,
                self.bottom() + 18
            )?;
            duration(w, t)?;
            uwrite!(w, "</text>\n")?;
            t = match t.checked_add(step) {
                Some(n) => n,
                None => break,
            };
        }
        uwrite!(
            w,
            "<text class=\"small\" x=\"{}\" y=\"{}\">elapsed since {}</text>\n</g>\n",
            X0,
            self.bottom() + 36,
            self.iso_first.as_str()
        )
    }

    /// The polylines of one series: one per stretch of buckets where the
    /// series has values on the axis (a bucket with rows but no value, or
    /// only values above the axis, breaks the line; a bucket with no rows
    /// at all does not).
    fn series<W: uWrite>(
        &self,
        w: &mut W,
        s: Series,
        axis: Axis,
        panel: (u64, u64),
    ) -> Result<(), W::Error> {
        if !self.drawn[s.index()] {
            return Ok(());
        }
        let mut open = false;
        let mut prev: Option<(u64, u64)> = None;
        for (t, cells) in self.times[..self.nb].iter().zip(&self.cells[..self.nb]) {
            if t.rows == 0 {
                continue;
            }
            let c = cells[s.index()];
            // Wholly above the axis (RAM available on a large host): a gap.
            if c.is_empty() || u64::from(c.min) > axis.max {
                if open {
                    self.end_line(w, s)?;
                    open = false;
                    prev = None;
                }
                continue;
            }
            if !open {
                uwrite!(
                    w,
                    "<polyline class=\"series\" data-series=\"{}\" stroke=\"{}\" ",
                    s.column(),
                    s.color()
                )?;
                if s.dashed() {
                    uwrite!(w, "stroke-dasharray=\"8 4\" ")?;
                }
                uwrite!(w, "points=\"")?;
                open = true;
            }
            let (xa, xm, xb) = self.xs(t);
            for (x, v) in [(xa, c.first), (xm, c.min), (xm, c.max), (xb, c.last)] {
                let p = (x, axis.y(u64::from(v), panel));
                if prev != Some(p) {
                    uwrite!(w, "{},{} ", p.0, p.1)?;
                    prev = Some(p);
                }
            }
        }
        if open {
            self.end_line(w, s)?;
        }
        Ok(())
    }

    fn end_line<W: uWrite>(&self, w: &mut W, s: Series) -> Result<(), W::Error> {
        uwrite!(w, "\"><title>{}", s.label())?;
        if let Some(p) = self.peak(s) {
            uwrite!(w, ", peak ")?;
            s.write_peak(w, p)?;
        }
        uwrite!(w, "</title></polyline>\n")
    }

    fn draw_marks<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        for m in &self.marks {
            let x = if self.span == 0 {
                (X0 + X1) / 2
            } else {
                self.x(m.epoch)
            };
            uwrite!(w, "<g class=\"oom-kill\"><title>OOM kill")?;
            if m.kills > 1 {
                uwrite!(w, " x{}", m.kills)?;
            }
            uwrite!(w, " at {} (", m.iso.as_str())?;
            duration(w, m.epoch.saturating_sub(self.t0))?;
            uwrite!(w, " after the start), stage=")?;
            escape(w, stage_str(&m.stage))?;
            uwrite!(w, ", context=")?;
            escape(w, m.context.as_str())?;
            uwrite!(
                w,
                "</title><line class=\"oom\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/><path d=\"M{} {} l-6 -10 h12 z\" fill=\"#c00000\"/></g>\n",
                x,
                MEM.0,
                x,
                self.bottom(),
                x,
                MEM.0
            )?;
        }
        Ok(())
    }

    fn notes<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        let mut y = self.bottom() + 56;
        let mut note = |w: &mut W, f: &dyn Fn(&mut W) -> Result<(), W::Error>| {
            uwrite!(w, "<text class=\"small note\" x=\"{}\" y=\"{}\">", X0, y)?;
            f(w)?;
            y += 15;
            uwrite!(w, "</text>\n")
        };
        let listed = self.listed();
        let absent = |s: &Series| self.named(*s) && !self.present[s.index()];
        if listed.iter().any(absent) {
            note(w, &|w: &mut W| {
                uwrite!(w, "not in this CSV (omitted):")?;
                let mut first = true;
                for s in listed {
                    if absent(s) {
                        uwrite!(w, "{} {}", if first { "" } else { "," }, s.label())?;
                        first = false;
                    }
                }
                Ok(())
            })?;
        }
        let zero = |s: &Series| self.named(*s) && self.present[s.index()] && !self.drawn[s.index()];
        if listed.iter().any(zero) {
            note(w, &|w: &mut W| {
                uwrite!(w, "0 throughout (not drawn):")?;
                let mut first = true;
                for s in listed {
                    if zero(s) {
                        uwrite!(w, "{} {}", if first { "" } else { "," }, s.label())?;
                        first = false;
                    }
                }
                Ok(())
            })?;
        }
        if !self.oom_counter {
            note(w, &|w: &mut W| {
                uwrite!(
                    w,
                    "OOM kills: unknown (no oom_kills column: a 14-column CSV, or a kernel before 4.13)"
                )
            })?;
        }
        if self.stage_runs > self.bands.len() as u64 {
            note(w, &|w: &mut W| {
                uwrite!(
                    w,
                    "{} stage changes merged into {} bands (at most {}): a label \"name +N\" covers N more stage runs",
                    self.stage_runs,
                    self.bands.len(),
                    BANDS
                )
            })?;
        }
        if self.marks_more > 0 {
            note(w, &|w: &mut W| {
                uwrite!(
                    w,
                    "{} more OOM-kill rows not marked (at most {})",
                    self.marks_more,
                    OOM_MARKS
                )
            })?;
        }
        if self.skipped > 0 {
            note(w, &|w: &mut W| {
                uwrite!(w, "skipped {} malformed rows", self.skipped)
            })?;
        }
        Ok(())
    }
}

/// The document's start: the XML declaration, the `<svg>` element
/// `height` pixels high, its style sheet and white background.
fn prolog<W: uWrite>(w: &mut W, height: u64) -> Result<(), W::Error> {
    uwrite!(
        w,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\">\n",
        W,
        height,
        W,
        height
    )?;
    w.write_str(
        "<style>text{font-family:DejaVu Sans,Arial,sans-serif;font-size:12px;fill:#222}\
         .t{font-size:16px;font-weight:bold}.small{font-size:11px;fill:#555}\
         .grid{stroke:#ddd;stroke-width:1}.frame{fill:none;stroke:#888}\
         .series{fill:none;stroke-width:1.5;stroke-linejoin:round}\
         .band0{fill:#f4f4f4}.band1{fill:#e4e8ee}\
         .oom{stroke:#c00000;stroke-width:2}.thr{stroke:#e31a1c;stroke-width:1.2;stroke-dasharray:6 4}\
         .total{stroke:#888;stroke-width:1;stroke-dasharray:2 3}</style>\n",
    )?;
    w.write_str("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n")
}

/// The legend's entries: label and swatch.
type Legend = heapless::Vec<(&'static str, Swatch), { super::SERIES_N + 3 }>;

/// The first legend row's y; the rows below follow [`LEGEND_ROW`] apart.
const LEGEND_Y: u64 = 70;
/// Distance between legend rows, px. Two rows fit above the memory panel;
/// each row more moves the panels down by as much.
const LEGEND_ROW: u64 = 18;

/// Writes the legend.
fn legend<W: uWrite>(w: &mut W, entries: &Legend) -> Result<(), W::Error> {
    let mut at = (X0, LEGEND_Y);
    w.write_str("<g class=\"legend\">\n")?;
    for &(label, swatch) in entries {
        legend_entry(w, &mut at, label, swatch)?;
    }
    w.write_str("</g>\n")
}

/// The rows the legend takes.
fn legend_rows(entries: &Legend) -> u64 {
    let mut at = (X0, LEGEND_Y);
    for &(label, _) in entries {
        place(&mut at, label);
    }
    if entries.is_empty() {
        0
    } else {
        (at.1 - LEGEND_Y) / LEGEND_ROW + 1
    }
}

/// Where a legend entry goes: at `at` (x, y), or at the start of the next
/// row when it would not fit; `at` moves past it.
fn place(at: &mut (u64, u64), label: &str) -> (u64, u64) {
    let width = 34 + 8 * label.chars().count() as u64;
    if at.0 + width > W - 20 {
        *at = (X0, at.1 + LEGEND_ROW);
    }
    let xy = *at;
    at.0 += width;
    xy
}

/// What a legend entry shows before its label.
#[derive(Clone, Copy)]
enum Swatch {
    Line(&'static str),
    /// A limit: the line dashed as in the plot.
    Dashed(&'static str),
    Threshold,
    Oom,
    Band,
}

/// One legend entry at `at` (x, y), which moves right, or to the next row
/// when the entry would not fit ([`place`]).
fn legend_entry<W: uWrite>(
    w: &mut W,
    at: &mut (u64, u64),
    label: &str,
    swatch: Swatch,
) -> Result<(), W::Error> {
    let (x, y) = place(at, label);
    match swatch {
        Swatch::Line(color) => uwrite!(
            w,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"3\"/>",
            x,
            y,
            x + 18,
            y,
            color
        )?,
        Swatch::Dashed(color) => uwrite!(
            w,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"3\" stroke-dasharray=\"6 3\"/>",
            x,
            y,
            x + 18,
            y,
            color
        )?,
        Swatch::Threshold => uwrite!(
            w,
            "<line class=\"thr\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>",
            x,
            y,
            x + 18,
            y
        )?,
        Swatch::Oom => uwrite!(
            w,
            "<line class=\"oom\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>",
            x + 9,
            y - 7,
            x + 9,
            y + 7
        )?,
        Swatch::Band => uwrite!(
            w,
            "<rect class=\"band1\" x=\"{}\" y=\"{}\" width=\"18\" height=\"12\" stroke=\"#aaa\"/>",
            x,
            y - 6
        )?,
    }
    uwrite!(w, "<text x=\"{}\" y=\"{}\">", x + 24, y + 4)?;
    escape(w, label)?;
    uwrite!(w, "</text>\n")
}

/// A threshold for a hover text: value, unit and where it came from.
fn threshold_text<W: uWrite>(
    w: &mut W,
    what: &str,
    t: Threshold,
    unit: &str,
    host: &str,
) -> Result<(), W::Error> {
    uwrite!(w, "{}{} {} ({}", what, t.value(), unit, t.source())?;
    if let Some(from) = t.scaled_from() {
        uwrite!(w, " from {} {} {}", from, unit, host)?;
    }
    if let Some(limit) = t.scaled_from_cgroup() {
        uwrite!(w, " from the {} {} cgroup limit", limit, unit)?;
    }
    uwrite!(w, ")")
}
