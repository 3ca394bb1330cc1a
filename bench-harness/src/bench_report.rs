//! The `--report-dir` output: a sweep over index sizes (offset index), a Markdown report
//! (`report.md`) and SVG plots drawn with `plotters`' SVG backend (text is written as SVG
//! `<text>` elements, so no font library is involved):
//!
//! * `pages-per-lookup.svg`: mean distinct pages per lookup versus index size, per
//!   strategy, for hot-tail (solid) and uniform (dashed) lookups;
//! * `page-faults.svg`: simulated LRU faults per 1000 lookups (mixed workload) and real
//!   page-ins per 1000 hot-tail lookups (growing index, readahead off) versus index size;
//! * `latency.svg`: ns per lookup versus index size, per strategy and for the in-memory
//!   `partition_point` limit;
//! * `warm-section.svg` (when the main job ran the warm section sweep,
//!   [`crate::warm_sweep`]): the share of lookups served by the warm section, pages per
//!   lookup and real page-ins versus the warm section size (4 to 64 KiB, Kafka's 8 KiB
//!   marked), one line per consumer-lag distribution, the page directory as a reference.
//!
//! `sweep.json` holds the sweep's numbers (and the warm section sweep's, under
//! `warm_section`). If `<report dir>/../criterion` exists (criterion
//! results under `target/`), `report.md` also lists their mean times.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use plotters::prelude::*;
use serde::Serialize;

use crate::cli::{Cli, ProgressFn, RunOutcome};
use crate::latency::{self, IN_MEMORY};
use crate::real_faults::{self, Phase, Readahead};
use crate::replay::{self, compared_strategies, IndexKind, ReplayConfig};
use crate::report;
use crate::warm_sweep::{self, WarmSweepOutcome, WarmSweepPoint};
use crate::workload::Workload;
use crate::BenchError;

/// File name of the warm section plot in the report directory.
pub const WARM_SECTION_SVG: &str = "warm-section.svg";

/// File name of the memory-pressure plot in the report directory.
pub const POLLUTION_SVG: &str = "pollution.svg";

/// Lookups per workload of each sweep replay (lookups).
pub const SWEEP_LOOKUPS: usize = 20_000;
/// Hot-tail lookups of each growing-phase real-fault run in the sweep (lookups).
pub const SWEEP_FAULT_LOOKUPS: usize = 20_000;
/// Lookups per timed loop of the sweep's latency measurement (lookups).
pub const SWEEP_LATENCY_LOOKUPS: usize = 100_000;

/// The sweep's figures for one index size and strategy (offset index).
#[derive(Clone, Debug, Serialize)]
pub struct SweepPoint {
    /// Index file size in bytes.
    pub index_bytes: usize,
    /// Entries when full.
    pub entries: usize,
    /// Strategy name.
    pub strategy: String,
    /// Mean distinct pages per hot-tail lookup (pages).
    pub hot_tail_mean_pages: f64,
    /// Mean distinct pages per uniform lookup (pages).
    pub uniform_mean_pages: f64,
    /// Simulated LRU faults per 1000 mixed lookups (faults).
    pub mixed_lru_faults_per_1000: f64,
    /// Real page-ins per 1000 hot-tail lookups, growing index, readahead off (pages).
    pub growing_page_ins_per_1000: Option<f64>,
    /// The same with the kernel's readahead (pages).
    pub growing_page_ins_per_1000_readahead: Option<f64>,
    /// Real page-ins of the first 1000 hot-tail lookups on the evicted full index,
    /// readahead off (pages).
    pub static_page_ins: Option<u64>,
    /// ns per hot-tail lookup (ns).
    pub hot_tail_ns: Option<f64>,
    /// ns per uniform lookup (ns).
    pub uniform_ns: Option<f64>,
}

/// The whole sweep.
#[derive(Clone, Debug, Serialize)]
pub struct Sweep {
    /// One point per size and strategy.
    pub points: Vec<SweepPoint>,
    /// The in-memory limit per size: `(index bytes, hot-tail ns, uniform ns)`.
    pub in_memory: Vec<(usize, f64, f64)>,
    /// Why real page-ins are missing, if they are.
    pub real_faults_note: Option<String>,
    /// The main job's warm section sweep, if it ran (its points are not re-measured for
    /// the report).
    pub warm_section: Option<WarmSweepOutcome>,
}

/// Runs the sweep over `cli.report_sizes` (offset index only).
///
/// # Errors
/// Index or I/O errors.
pub fn sweep(
    cli: &Cli,
    scratch: &Path,
    progress: &mut ProgressFn<'_>,
) -> Result<Sweep, BenchError> {
    let strategies = compared_strategies(cli.warm_section_bytes, cli.page_size);
    let mut points = Vec::new();
    let mut in_memory = Vec::new();
    let mut note = None;
    let total = cli.report_sizes.len() as u64;
    for (i, &bytes) in cli.report_sizes.iter().enumerate() {
        progress("report sweep", i as u64, total);
        let cfg = ReplayConfig {
            index_bytes: bytes,
            lookups: SWEEP_LOOKUPS,
            workloads: vec![Workload::HotTail, Workload::Uniform, Workload::Mixed],
            ..cli.replay_config()
        };
        let o = replay::replay_synthetic(IndexKind::Offset, &cfg, scratch, &mut |_, _| {})?;
        let faults = if cli.skip_real_faults {
            note = Some("skipped (--skip-real-faults)".to_string());
            None
        } else {
            let fc = real_faults::RealFaultConfig {
                growing_lookups: SWEEP_FAULT_LOOKUPS,
                kinds: vec![IndexKind::Offset],
                ..cli.real_fault_config(bytes)
            };
            match real_faults::measure(&fc, &mut |_, _| {})? {
                Ok(f) => {
                    if !f.unmeasured.is_empty() {
                        note = Some(f.unmeasured.join("; "));
                    }
                    Some(f)
                }
                Err(rejected) => {
                    note = Some(format!(
                        "no directory evicts: {}",
                        real_faults::describe_rejected(&rejected)
                    ));
                    None
                }
            }
        };
        let lat = latency::measure(
            &latency::LatencyConfig {
                lookups: SWEEP_LATENCY_LOOKUPS,
                kinds: vec![IndexKind::Offset],
                ..cli.latency_config(bytes)
            },
            scratch,
        )?;
        let ns = |strategy: &str, workload: &str| {
            lat.iter()
                .find(|r| r.strategy == strategy && r.workload == workload)
                .map(|r| r.ns_per_lookup)
        };
        if let (Some(h), Some(u)) = (ns(IN_MEMORY, "hot-tail"), ns(IN_MEMORY, "uniform")) {
            in_memory.push((bytes, h, u));
        }
        for s in &strategies {
            let stat = |w: Workload| o.workload(w).and_then(|ws| ws.get(*s));
            let mean = |w: Workload| stat(w).map_or(0.0, |st| st.mean_pages());
            let mixed = stat(Workload::Mixed).map_or(0.0, |st| {
                1000.0 * st.lru_faults as f64 / st.lookups.max(1) as f64
            });
            let fault = |phase: Phase, ra: Readahead| {
                faults
                    .as_ref()
                    .and_then(|f| f.get(IndexKind::Offset, phase, ra, s.name()))
            };
            points.push(SweepPoint {
                index_bytes: bytes,
                entries: o.entries,
                strategy: s.name().to_string(),
                hot_tail_mean_pages: mean(Workload::HotTail),
                uniform_mean_pages: mean(Workload::Uniform),
                mixed_lru_faults_per_1000: mixed,
                growing_page_ins_per_1000: fault(Phase::Growing, Readahead::Off)
                    .map(|r| r.page_ins_per_1000()),
                growing_page_ins_per_1000_readahead: fault(Phase::Growing, Readahead::Kernel)
                    .map(|r| r.page_ins_per_1000()),
                static_page_ins: fault(Phase::Static, Readahead::Off).map(|r| r.page_ins),
                hot_tail_ns: ns(s.name(), "hot-tail"),
                uniform_ns: ns(s.name(), "uniform"),
            });
        }
    }
    progress("report sweep", total, total);
    Ok(Sweep {
        points,
        in_memory,
        real_faults_note: note,
        warm_section: None,
    })
}

/// `16 KiB`, `1 MiB`, `10 MiB`, ...
pub fn human_bytes(b: f64) -> String {
    if b >= 1024.0 * 1024.0 {
        format!("{} MiB", trim(b / (1024.0 * 1024.0)))
    } else if b >= 1024.0 {
        format!("{} KiB", trim(b / 1024.0))
    } else {
        format!("{} B", trim(b))
    }
}

fn trim(x: f64) -> String {
    let s = format!("{x:.1}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

fn color(strategy: &str) -> RGBColor {
    match strategy {
        "binary" => RGBColor(214, 39, 40),
        "warm-cold" => RGBColor(31, 119, 180),
        "page-directory" => RGBColor(44, 160, 44),
        _ => RGBColor(0, 0, 0),
    }
}

type Series = (String, RGBColor, bool, Vec<(f64, f64)>);

fn plot_err<E: std::fmt::Display>(path: &Path) -> impl FnOnce(E) -> BenchError + '_ {
    move |e| BenchError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(e.to_string()),
    }
}

/// The x axis of the charts: `log2(bytes)`, linear in that coordinate, with its key points
/// (ticks, labels, grid lines) at exactly the plotted sizes.
struct SizeAxis {
    range: std::ops::Range<f64>,
    keys: Vec<f64>,
}

impl plotters::coord::ranged1d::Ranged for SizeAxis {
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let (a, b) = (self.range.start, self.range.end);
        let t = if b > a { (value - a) / (b - a) } else { 0.0 };
        limit.0 + (t * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<H: plotters::coord::ranged1d::KeyPointHint>(&self, _hint: H) -> Vec<f64> {
        self.keys.clone()
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.range.clone()
    }
}

/// How [`draw_chart_with`] draws a chart.
struct ChartSpec<'a> {
    /// Caption.
    title: &'a str,
    /// Description of the x axis.
    x_desc: &'a str,
    /// Description of the y axis.
    y_desc: &'a str,
    /// A dashed vertical marker at this x (bytes) with this label.
    mark_x: Option<(f64, &'a str)>,
    /// Whether to draw the series legend (upper left); the warm section plot has its own.
    legend: bool,
    /// Put the legend in the upper right corner instead (lines that rise to the left).
    legend_right: bool,
}

/// Draws one line chart with a logarithmic x axis (index size) into `area`. The x
/// coordinate is `log2(bytes)`; the x axis is labelled at exactly the plotted sizes (16
/// KiB, 64 KiB, ..., 10 MiB), so the labels cover the whole plotted range.
fn draw_chart<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    y_label: &str,
    series: &[Series],
) -> Result<(), String> {
    let spec = ChartSpec {
        title,
        x_desc: "index size (bytes, log scale)",
        y_desc: y_label,
        mark_x: None,
        legend: true,
        legend_right: false,
    };
    draw_chart_with(area, &spec, series)
}

/// Draws one line chart with a logarithmic x axis (bytes) into `area`, as `spec` says:
/// the x coordinate is `log2(bytes)`, labelled at exactly the plotted x values.
fn draw_chart_with<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    spec: &ChartSpec<'_>,
    series: &[Series],
) -> Result<(), String> {
    let xs = series.iter().flat_map(|s| s.3.iter().map(|p| p.0.log2()));
    let (xmin, xmax) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    let ymax = series
        .iter()
        .flat_map(|s| s.3.iter().map(|p| p.1))
        .fold(0.0f64, f64::max);
    let (xmin, xmax) = if xmin <= xmax {
        (xmin - 0.4, xmax + 0.4)
    } else {
        (10.0, 20.0)
    };
    let mut sizes: Vec<f64> = series
        .iter()
        .flat_map(|s| s.3.iter().map(|p| p.0.log2()))
        .collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    let ticks = sizes.len();
    let ytop = (ymax * 1.12).max(1.0);
    let mut chart = ChartBuilder::on(area)
        .caption(spec.title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(
            SizeAxis {
                range: xmin..xmax,
                keys: sizes,
            },
            0.0..ytop,
        )
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc(spec.x_desc)
        .y_desc(spec.y_desc)
        .x_labels(ticks.max(2))
        .x_label_formatter(&|x| human_bytes(x.exp2()))
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 15))
        .draw()
        .map_err(|e| e.to_string())?;
    if let Some((x, label)) = spec.mark_x {
        let x = x.log2();
        let grey = RGBColor(110, 110, 110);
        chart
            .draw_series(DashedLineSeries::new(
                [(x, 0.0), (x, ytop)],
                5,
                5,
                grey.stroke_width(1),
            ))
            .map_err(|e| e.to_string())?;
        chart
            .draw_series(std::iter::once(Text::new(
                label.to_string(),
                (x + 0.06, ytop * 0.97),
                ("sans-serif", 13).into_font().color(&grey),
            )))
            .map_err(|e| e.to_string())?;
    }
    for (name, c, dashed, pts) in series {
        let style = ShapeStyle {
            color: c.to_rgba(),
            filled: false,
            stroke_width: 2,
        };
        let c = *c;
        if *dashed {
            chart
                .draw_series(DashedLineSeries::new(
                    pts.iter().map(|&(x, y)| (x.log2(), y)),
                    6,
                    4,
                    style,
                ))
                .map_err(|e| e.to_string())?
                .label(name.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 8, y)], c.stroke_width(2))
                });
        } else {
            chart
                .draw_series(LineSeries::new(
                    pts.iter().map(|&(x, y)| (x.log2(), y)),
                    style,
                ))
                .map_err(|e| e.to_string())?
                .label(name.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                });
        }
        chart
            .draw_series(
                pts.iter()
                    .map(|&(x, y)| Circle::new((x.log2(), y), 3, c.filled())),
            )
            .map_err(|e| e.to_string())?;
    }
    if spec.legend {
        chart
            .configure_series_labels()
            .position(if spec.legend_right {
                SeriesLabelPosition::UpperRight
            } else {
                SeriesLabelPosition::UpperLeft
            })
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .draw()
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn points_of(
    sweep: &Sweep,
    strategy: &str,
    f: impl Fn(&SweepPoint) -> Option<f64>,
) -> Vec<(f64, f64)> {
    sweep
        .points
        .iter()
        .filter(|p| p.strategy == strategy)
        .filter_map(|p| f(p).map(|y| (p.index_bytes as f64, y)))
        .collect()
}

/// Writes the three SVG plots into `dir`; returns their paths.
///
/// # Errors
/// Drawing or writing errors.
pub fn write_plots(sweep: &Sweep, dir: &Path) -> Result<Vec<PathBuf>, BenchError> {
    let names = ["binary", "warm-cold", "page-directory"];
    let mut files = Vec::new();

    let path = dir.join("pages-per-lookup.svg");
    {
        let mut series: Vec<Series> = Vec::new();
        for n in names {
            series.push((
                format!("{n}, hot-tail"),
                color(n),
                false,
                points_of(sweep, n, |p| Some(p.hot_tail_mean_pages)),
            ));
            series.push((
                format!("{n}, uniform"),
                color(n),
                true,
                points_of(sweep, n, |p| Some(p.uniform_mean_pages)),
            ));
        }
        let root = SVGBackend::new(&path, (900, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err(&path))?;
        draw_chart(
            &root,
            "Distinct index pages per lookup (offset index)",
            "pages per lookup (4 KiB pages)",
            &series,
        )
        .map_err(plot_err(&path))?;
        root.present().map_err(plot_err(&path))?;
    }
    files.push(path);

    let path = dir.join("page-faults.svg");
    {
        let root = SVGBackend::new(&path, (1300, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err(&path))?;
        let (left, right) = root.split_horizontally(650);
        let lru: Vec<Series> = names
            .iter()
            .map(|&n| {
                (
                    format!("{n}, mixed"),
                    color(n),
                    false,
                    points_of(sweep, n, |p| Some(p.mixed_lru_faults_per_1000)),
                )
            })
            .collect();
        draw_chart(
            &left,
            "Simulated LRU faults (32-page cache)",
            "faults per 1000 lookups",
            &lru,
        )
        .map_err(plot_err(&path))?;
        let mut real: Vec<Series> = Vec::new();
        for n in names {
            real.push((
                format!("{n}, no readahead"),
                color(n),
                false,
                points_of(sweep, n, |p| p.growing_page_ins_per_1000),
            ));
            real.push((
                format!("{n}, kernel readahead"),
                color(n),
                true,
                points_of(sweep, n, |p| p.growing_page_ins_per_1000_readahead),
            ));
        }
        let title = if real.iter().all(|s| s.3.is_empty()) {
            "Real page-ins: not measured (see report.md)"
        } else {
            "Real page-ins, hot tail, growing index"
        };
        draw_chart(&right, title, "page-ins per 1000 lookups", &real).map_err(plot_err(&path))?;
        root.present().map_err(plot_err(&path))?;
    }
    files.push(path);

    let path = dir.join("latency.svg");
    {
        let mut series: Vec<Series> = Vec::new();
        for n in names {
            series.push((
                format!("{n}, hot-tail"),
                color(n),
                false,
                points_of(sweep, n, |p| p.hot_tail_ns),
            ));
            series.push((
                format!("{n}, uniform"),
                color(n),
                true,
                points_of(sweep, n, |p| p.uniform_ns),
            ));
        }
        let mem = |f: fn(&(usize, f64, f64)) -> f64| -> Vec<(f64, f64)> {
            sweep.in_memory.iter().map(|t| (t.0 as f64, f(t))).collect()
        };
        series.push((
            "in-memory partition_point, hot-tail".to_string(),
            color(IN_MEMORY),
            false,
            mem(|t| t.1),
        ));
        series.push((
            "in-memory partition_point, uniform".to_string(),
            color(IN_MEMORY),
            true,
            mem(|t| t.2),
        ));
        let root = SVGBackend::new(&path, (900, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err(&path))?;
        draw_chart(
            &root,
            "Lookup latency (offset index, pages resident)",
            "ns per lookup",
            &series,
        )
        .map_err(plot_err(&path))?;
        root.present().map_err(plot_err(&path))?;
    }
    files.push(path);
    Ok(files)
}

/// The color of the `i`-th lag distribution in `warm-section.svg`.
fn lag_color(i: usize) -> RGBColor {
    const PALETTE: [RGBColor; 6] = [
        RGBColor(44, 160, 44),
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(255, 127, 14),
        RGBColor(140, 86, 75),
    ];
    PALETTE[i % PALETTE.len()]
}

/// The page directory's figure `f` at every warm section size of `kind` (a horizontal
/// reference line per distribution), or one black line for every distribution when they
/// all agree to two decimals.
fn page_directory_refs(
    o: &WarmSweepOutcome,
    kind: IndexKind,
    what: &str,
    f: impl Fn(&WarmSweepPoint) -> Option<f64>,
) -> Vec<Series> {
    let xs: Vec<f64> = o.warm_sizes.iter().map(|&w| w as f64).collect();
    let line = |y: f64| xs.iter().map(|&x| (x, y)).collect::<Vec<_>>();
    let values: Vec<(usize, &str, f64)> = o
        .distributions
        .iter()
        .enumerate()
        .filter_map(|(i, d)| Some((i, d.name.as_str(), f(o.page_directory(kind, &d.name)?)?)))
        .collect();
    let same = values
        .windows(2)
        .all(|w| (w[0].2 * 100.0).round() == (w[1].2 * 100.0).round());
    match values.first() {
        Some(&(_, _, y)) if same => vec![(
            format!("page-directory, every lag: {y:.2} {what}"),
            RGBColor(0, 0, 0),
            true,
            line(y),
        )],
        _ => values
            .iter()
            .map(|&(i, name, y)| {
                (
                    format!("page-directory, {name}: {y:.2} {what}"),
                    lag_color(i),
                    true,
                    line(y),
                )
            })
            .collect(),
    }
}

/// Writes `warm-section.svg`: per index kind (rows), against the warm section size (x,
/// log2 axis): the share of lookups served by the warm section, the mean distinct pages
/// per lookup, and the real page-ins, one solid line per lag distribution, Kafka's 8 KiB
/// marked; the page directory (which has no warm section) as dashed horizontal
/// references in the pages and page-ins panels.
///
/// # Errors
/// Drawing or writing errors.
pub fn write_warm_section_plot(o: &WarmSweepOutcome, path: &Path) -> Result<(), BenchError> {
    let kinds: Vec<IndexKind> = o.indexes.iter().map(|i| i.kind).collect();
    let rows = kinds.len().max(1);
    let head_px = 96;
    let root = SVGBackend::new(path, (1650, head_px + 470 * rows as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err(path))?;
    let (head, body) = root.split_vertically(head_px);
    let font = ("sans-serif", 14);
    head.draw(&Text::new(
        format!(
            "Why 8192: warm section size vs consumer lag in bytes of log (index.interval.bytes {}, {} lookups per point, \
             lookups while a {} segment grows from half full to full)",
            o.index_interval_bytes,
            o.lookups,
            warm_sweep::bytes_text(o.segment_bytes)
        ),
        (16, 10),
        ("sans-serif", 19),
    ))
    .map_err(plot_err(path))?;
    let mut x = 16;
    for (i, d) in o.distributions.iter().enumerate() {
        let c = lag_color(i);
        head.draw(&PathElement::new(
            vec![(x, 50), (x + 28, 50)],
            c.stroke_width(3),
        ))
        .map_err(plot_err(path))?;
        let label = format!("{} {}", d.name, d.describe());
        head.draw(&Text::new(label.clone(), (x + 34, 43), font))
            .map_err(plot_err(path))?;
        x += 48 + 7 * label.chars().count() as i32;
    }
    head.draw(&Text::new(
        "solid: warm/cold with that warm section; dashed: the page directory at the same lag (no warm section; \
         black: equal for every lag); grey line: Kafka's 8 KiB",
        (16, 70),
        font,
    ))
    .map_err(plot_err(path))?;
    let panels = body.split_evenly((rows, 3));
    let x_desc = "warm section (bytes of index, log scale)";
    let mark = (warm_sweep::KAFKA_WARM_SECTION_BYTES as f64, "Kafka: 8 KiB");
    for (r, &kind) in kinds.iter().enumerate() {
        let warm_series = |f: &dyn Fn(&WarmSweepPoint) -> Option<f64>| -> Vec<Series> {
            o.distributions
                .iter()
                .enumerate()
                .map(|(i, d)| {
                    let pts = o
                        .warm_sizes
                        .iter()
                        .filter_map(|&w| {
                            let p = o.warm(kind, &d.name, w)?;
                            Some((w as f64, f(p)?))
                        })
                        .collect();
                    (d.name.clone(), lag_color(i), false, pts)
                })
                .collect()
        };
        let share = warm_series(&|p| p.warm_share.map(|s| 100.0 * s));
        let mean_pages = |p: &WarmSweepPoint| Some(p.mean_pages);
        let mut pages = warm_series(&mean_pages);
        pages.extend(page_directory_refs(o, kind, "pages", mean_pages));
        let page_ins = |p: &WarmSweepPoint| p.page_ins.map(|n| n as f64);
        let mut ins = warm_series(&page_ins);
        ins.extend(page_directory_refs(o, kind, "page-ins", page_ins));
        let ins_title = if ins.iter().any(|s| !s.3.is_empty()) {
            "real page-ins, evicted, growing"
        } else {
            "real page-ins not measured"
        };
        // The row's three panels, left to right: title after the index kind, y axis, series.
        let row = [
            (
                "lookups served by the warm section",
                "% of lookups".to_string(),
                share,
            ),
            (
                "distinct pages per lookup (mean)",
                format!("pages per lookup ({} B pages)", o.page_size),
                pages,
            ),
            (
                ins_title,
                format!("page-ins per {} lookups (readahead off)", o.lookups),
                ins,
            ),
        ];
        for (c, (what, y_desc, series)) in row.iter().enumerate() {
            let title = format!("{} index: {what}", kind.name());
            let spec = ChartSpec {
                title: &title,
                x_desc,
                y_desc,
                mark_x: Some(mark),
                legend: false,
                legend_right: false,
            };
            draw_chart_with(&panels[r * 3 + c], &spec, series).map_err(plot_err(path))?;
        }
    }
    root.present().map_err(plot_err(path))?;
    Ok(())
}

/// Writes `pollution.svg` ([`crate::pollution`]): against the cgroup's memory limit (x,
/// log scale), the in-sync consumers' index page-ins per 1000 lookups (left) and their
/// major faults per 1000 lookups (right), one line per strategy, solid without the
/// mitigation, dashed with it. OOM-killed or failed arms have no point.
///
/// # Errors
/// Drawing or writing errors; [`BenchError::Config`] if no arm was measured.
pub fn write_pollution_plot(
    p: &crate::pollution::PollutionOutcome,
    path: &Path,
) -> Result<(), BenchError> {
    use crate::pollution::ArmOutcome;
    let mut strategies: Vec<&str> = Vec::new();
    for a in &p.arms {
        if !strategies.contains(&a.strategy.as_str()) {
            strategies.push(&a.strategy);
        }
    }
    let series = |f: &dyn Fn(&crate::pollution::ArmResult) -> f64| -> Vec<Series> {
        let mut out = Vec::new();
        for &st in &strategies {
            for mitigation in [false, true] {
                let pts: Vec<(f64, f64)> = p
                    .arms
                    .iter()
                    .filter(|a| a.strategy == st && a.mitigation == mitigation)
                    .filter_map(|a| match &a.outcome {
                        ArmOutcome::Measured(r) => Some(((a.limit_mib << 20) as f64, f(r))),
                        _ => None,
                    })
                    .collect();
                if pts.is_empty() {
                    continue;
                }
                let name = if mitigation {
                    format!("{st} + fadvise")
                } else {
                    st.to_string()
                };
                out.push((name, color(st), mitigation, pts));
            }
        }
        out
    };
    let ins = series(&|r| r.page_ins_per_1000());
    if ins.is_empty() {
        return Err(BenchError::Config(
            "the memory-pressure workload measured no arm to plot".to_string(),
        ));
    }
    let majflt = series(&|r| r.major_faults_per_1000());
    let root = SVGBackend::new(path, (1300, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err(path))?;
    let (head, body) = root.split_vertically(50);
    head.draw(&Text::new(
        format!(
            "Under memory pressure: a lagging consumer scans {} of older segments while {} in-sync consumers read the tail \
             ({}; dashed: POSIX_FADV_DONTNEED behind the scan)",
            warm_sweep::bytes_text(p.scale.old_segment_bytes * p.scale.old_segments as u64),
            p.scale.consumers,
            p.cgroup
        ),
        (16, 14),
        ("sans-serif", 17),
    ))
    .map_err(plot_err(path))?;
    let panels = body.split_evenly((1, 2));
    let x_desc = "memory limit of the cgroup (log scale)";
    for (i, (title, y, series)) in [
        (
            "in-sync index page-ins (mincore)",
            "page-ins per 1000 in-sync lookups",
            &ins,
        ),
        (
            "in-sync major faults (getrusage RUSAGE_THREAD)",
            "major faults per 1000 in-sync lookups",
            &majflt,
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let spec = ChartSpec {
            title,
            x_desc,
            y_desc: y,
            mark_x: None,
            legend: true,
            legend_right: true,
        };
        draw_chart_with(&panels[i], &spec, series).map_err(plot_err(path))?;
    }
    root.present().map_err(plot_err(path))?;
    Ok(())
}

/// Criterion mean estimates found under `dir` (`<group>/<bench>/new/estimates.json`):
/// `(benchmark id, mean ns)`, sorted by id.
pub fn criterion_estimates(dir: &Path) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n == "report") {
                    continue;
                }
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "estimates.json")
                && p.parent()
                    .and_then(|q| q.file_name())
                    .is_some_and(|n| n == "new")
            {
                let Ok(text) = std::fs::read_to_string(&p) else {
                    continue;
                };
                let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
                    continue;
                };
                let Some(mean) = v.pointer("/mean/point_estimate").and_then(|x| x.as_f64()) else {
                    continue;
                };
                let id = p
                    .parent()
                    .and_then(Path::parent)
                    .and_then(|q| q.strip_prefix(dir).ok())
                    .map(|q| q.to_string_lossy().into_owned())
                    .unwrap_or_default();
                out.push((id, mean));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn opt(x: Option<f64>, digits: usize) -> String {
    x.map_or("-".to_string(), |v| format!("{v:.digits$}"))
}

/// The `report.md` section of the warm section sweep: the plot, the measured answer
/// and the table behind it.
pub fn warm_section_markdown(o: &WarmSweepOutcome) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "## Why 8192: the warm section size\n\n![warm section size vs consumer lag]({WARM_SECTION_SVG})\n"
    );
    let per_entry: Vec<String> = o
        .indexes
        .iter()
        .map(|i| {
            format!(
                "{} index: {:.0} bytes of log per entry, {} to {} entries",
                i.kind.name(),
                i.log_bytes_per_entry,
                i.entries_before,
                i.entries_after
            )
        })
        .collect();
    let lags: Vec<String> = o
        .distributions
        .iter()
        .map(|d| format!("`{}` {}", d.name, d.describe()))
        .collect();
    let _ = writeln!(
        md,
        "Kafka picked a warm section of 8192 bytes for two reasons: small enough that a warm lookup \
         touches at most 3 pages, large enough that in-sync lookups land in it. The main job measures both sides: \
         warm/cold with warm sections of {} against consumer lag in bytes of log behind the log end ({}), at \
         Kafka's default index.interval.bytes {} ({}), {} lookups per point while a {} segment grows from half \
         full to full, seed {}. The page directory, which has no warm section, is the reference. Page-ins are \
         real: {}.\n",
        o.warm_sizes
            .iter()
            .map(|&w| warm_sweep::warm_size_text(w))
            .collect::<Vec<_>>()
            .join(", "),
        lags.join("; "),
        o.index_interval_bytes,
        per_entry.join("; "),
        o.lookups,
        warm_sweep::bytes_text(o.segment_bytes),
        o.seed,
        match &o.page_ins.absent {
            Some(why) => format!("not measured ({why})"),
            None => format!(
                "OS pages written before the run and read back from disk while the evicted index grows \
                 (readahead off), minus an appends-only baseline ({})",
                o.page_ins.baselines_text()
            ),
        }
    );
    let _ = writeln!(md, "**The measured answer.**\n");
    for line in warm_sweep::answer(o) {
        let _ = writeln!(md, "* {line}");
    }
    md.push('\n');
    let mut header = "| index | lag | figure |".to_string();
    let mut rule = "|---|---|---|".to_string();
    for &w in &o.warm_sizes {
        let mut h = warm_sweep::warm_size_text(w);
        if w == warm_sweep::KAFKA_WARM_SECTION_BYTES {
            h = format!("**{h}** (Kafka)");
        }
        let _ = write!(header, " {h} |");
        rule.push_str("---:|");
    }
    header.push_str(" page-directory |");
    rule.push_str("---:|");
    let _ = writeln!(md, "{header}\n{rule}");
    for i in &o.indexes {
        for d in &o.distributions {
            for (k, (label, cells)) in o.table_lines(i.kind, &d.name).into_iter().enumerate() {
                let lead = if k == 0 {
                    format!("| {} | {} |", i.kind.name(), d.name)
                } else {
                    "| | |".to_string()
                };
                let _ = writeln!(md, "{lead} {label} | {} |", cells.join(" | "));
            }
        }
    }
    md.push('\n');
    md
}

/// Renders `report.md`.
pub fn render_markdown(cli: &Cli, run: &RunOutcome, sweep: &Sweep, criterion_dir: &Path) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# Kafka index search strategies: bench report\n");
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".to_string());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let _ = writeln!(
        md,
        "Written by `bench-harness --report-dir` (seed {}, {}-byte pages, {}-byte warm section; \
         Linux {kernel}, {cores} cores). Strategies: `binary` (textbook binary search, Kafka before 2.1), \
         `warm-cold` (Kafka 2.1+, KAFKA-6432), `page-directory` (fence pointers and block keys: one key per page and one per cache line of it, in memory).\n",
        cli.seed, cli.page_size, cli.warm_section_bytes
    );
    let _ = writeln!(
        md,
        "## Pages per lookup\n\n![pages per lookup](pages-per-lookup.svg)\n"
    );
    let _ = writeln!(md, "## Page faults\n\n![page faults](page-faults.svg)\n");
    if let Some(n) = &sweep.real_faults_note {
        let _ = writeln!(md, "Real page-ins: {n}\n");
    }
    let _ = writeln!(md, "## Latency\n\n![latency](latency.svg)\n");
    match (&sweep.warm_section, &run.warm_sweep_skipped) {
        (Some(w), _) => md.push_str(&warm_section_markdown(w)),
        (None, Some(why)) => {
            let _ = writeln!(
                md,
                "## Why 8192: the warm section size\n\nNot measured: {why}.\n"
            );
        }
        (None, None) => {}
    }
    let _ = writeln!(
        md,
        "## Size sweep (offset index)\n\n{SWEEP_LOOKUPS} lookups per workload; LRU cache of {} pages; real page-ins: \
         growing index (half to full), {SWEEP_FAULT_LOOKUPS} hot-tail lookups, baseline subtracted; static: first 1000 \
         lookups on the evicted full index; latency: medians of {} interleaved rounds of {SWEEP_LATENCY_LOOKUPS} lookups.\n",
        cli.cache_pages,
        crate::cli::LATENCY_REPEATS
    );
    let _ = writeln!(
        md,
        "| size | entries | strategy | hot-tail pages/lookup | uniform pages/lookup | mixed LRU faults/1k | \
         real page-ins/1k (growing, no RA) | (growing, kernel RA) | static page-ins (no RA) | hot-tail ns | uniform ns | hot-tail ns vs in-memory |"
    );
    let _ = writeln!(
        md,
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for p in &sweep.points {
        let limit = sweep
            .in_memory
            .iter()
            .find(|t| t.0 == p.index_bytes)
            .map(|t| t.1);
        let ratio = match (p.hot_tail_ns, limit) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
            _ => "-".to_string(),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {:.2} | {:.2} | {:.1} | {} | {} | {} | {} | {} | {ratio} |",
            human_bytes(p.index_bytes as f64),
            p.entries,
            p.strategy,
            p.hot_tail_mean_pages,
            p.uniform_mean_pages,
            p.mixed_lru_faults_per_1000,
            opt(p.growing_page_ins_per_1000, 2),
            opt(p.growing_page_ins_per_1000_readahead, 2),
            p.static_page_ins.map_or("-".to_string(), |v| v.to_string()),
            opt(p.hot_tail_ns, 1),
            opt(p.uniform_ns, 1),
        );
    }
    for (bytes, h, u) in &sweep.in_memory {
        let _ = writeln!(
            md,
            "| {} | | {IN_MEMORY} | | | | | | | {h:.1} | {u:.1} | 1.00x |",
            human_bytes(*bytes as f64)
        );
    }
    md.push('\n');
    if let Some(p) = &run.pollution {
        let _ = writeln!(md, "## Under memory pressure\n");
        if p.skipped.is_none() {
            let _ = writeln!(md, "![in-sync page-ins vs memory limit]({POLLUTION_SVG})\n");
        }
        let _ = writeln!(md, "```text\n{}```\n", report::render_pollution(p));
    }
    let crit = criterion_estimates(criterion_dir);
    let _ = writeln!(md, "## Criterion\n");
    if crit.is_empty() {
        let _ = writeln!(
            md,
            "No criterion results under `{}` (run `cargo bench` or `cargo xtask bench --criterion` first).\n",
            criterion_dir.display()
        );
    } else {
        let fastest = crit.iter().map(|c| c.1).fold(f64::INFINITY, f64::min);
        let _ = writeln!(
            md,
            "Mean time per iteration from `{}`.\n",
            criterion_dir.display()
        );
        let _ = writeln!(md, "| benchmark | mean | vs fastest |\n|---|---:|---:|");
        for (id, ns) in &crit {
            let _ = writeln!(md, "| `{id}` | {ns:.1} ns | {:.2}x |", ns / fastest);
        }
        md.push('\n');
    }
    let _ = writeln!(
        md,
        "## Main run ({}-byte indexes)\n\n```text\n{}\n{}```",
        cli.index_bytes,
        run.render_summary(cli),
        run.render_details(cli)
    );
    md
}

/// Runs the sweep and writes `report.md`, `sweep.json` and the SVG plots into `dir`
/// (created if missing). Returns the files written.
///
/// # Errors
/// I/O, drawing, index errors.
pub fn write_report(
    cli: &Cli,
    run: &RunOutcome,
    dir: &Path,
    progress: &mut ProgressFn<'_>,
) -> Result<Vec<PathBuf>, BenchError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |e| BenchError::Io { path, source: e }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let scratch = tempfile::tempdir().map_err(io(&std::env::temp_dir()))?;
    let mut sweep = sweep(cli, scratch.path(), progress)?;
    sweep.warm_section = run.warm_sweep.clone();
    let mut files = write_plots(&sweep, dir)?;
    if let Some(w) = &sweep.warm_section {
        let path = dir.join(WARM_SECTION_SVG);
        write_warm_section_plot(w, &path)?;
        files.push(path);
    }
    if let Some(p) = run.pollution.as_ref().filter(|p| p.skipped.is_none()) {
        let path = dir.join(POLLUTION_SVG);
        if write_pollution_plot(p, &path).is_ok() {
            files.push(path);
        }
    }
    let json = dir.join("sweep.json");
    let text = serde_json::to_string_pretty(&sweep).map_err(std::io::Error::other);
    text.and_then(|t| std::fs::write(&json, t + "\n"))
        .map_err(io(&json))?;
    files.push(json);
    let md = dir.join("report.md");
    let criterion_dir = cli
        .criterion_dir
        .clone()
        .unwrap_or_else(|| dir.parent().unwrap_or(dir).join("criterion"));
    std::fs::write(&md, render_markdown(cli, run, &sweep, &criterion_dir)).map_err(io(&md))?;
    files.push(md);
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The x labels are the plotted sizes, up to the largest (10 MiB), not powers of two.
    #[test]
    fn x_axis_labels_cover_the_plotted_sizes() {
        let sizes: [f64; 6] = [16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0, 10485760.0];
        let series: Vec<Series> = vec![(
            "binary".to_string(),
            color("binary"),
            false,
            sizes.iter().map(|&b| (b, 1.0 + b.log2())).collect(),
        )];
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (640, 400)).into_drawing_area();
            draw_chart(&root, "t", "y", &series).unwrap();
            root.present().unwrap();
        }
        for label in ["16 KiB", "64 KiB", "256 KiB", "1 MiB", "4 MiB", "10 MiB"] {
            assert!(
                svg.contains(&format!(">\n{label}\n<")),
                "no x label {label}"
            );
        }
        assert!(
            !svg.contains(">\n8 MiB\n<"),
            "a label outside the plotted sizes"
        );
    }
}
