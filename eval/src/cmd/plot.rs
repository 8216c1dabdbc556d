//! `amber-eval plot`: recall@k curves (PNG) from LongMemEval reports.

use std::path::PathBuf;

use amber_eval::metrics;
use anyhow::{Context, bail};
use clap::Args;
use serde_json::Value;

/// Arguments of `amber-eval plot`.
#[derive(Args, Debug)]
pub(crate) struct PlotArgs {
    /// Report files written by `amber-eval longmemeval --out`.
    #[arg(required = true)]
    reports: Vec<PathBuf>,
    /// The metric to draw at each k: recall_all, recall_any or ndcg_any.
    #[arg(long, default_value = "recall_all")]
    metric: String,
    /// Which averaging: metrics (official) or metrics_strict.
    #[arg(long, default_value = "metrics")]
    averaging: String,
    /// The PNG to write.
    #[arg(long)]
    out: PathBuf,
}

/// Runs `amber-eval plot`.
pub(crate) fn run(a: PlotArgs) -> anyhow::Result<()> {
    use plotters::prelude::*;
    crate::cmd::font::register()?;
    let mut series = Vec::new();
    for path in &a.reports {
        let r: Value = serde_json::from_slice(
            &std::fs::read(path).with_context(|| format!("reading {}", path.display()))?,
        )
        .with_context(|| format!("{} is not a report", path.display()))?;
        let label = format!(
            "{} {} {}",
            r["mode"].as_str().unwrap_or("?"),
            r["granularity"].as_str().unwrap_or("?"),
            r["config"]["corpus_roles"].as_str().unwrap_or("")
        );
        let points: Vec<(f64, f64)> = metrics::KS
            .iter()
            .enumerate()
            .filter_map(|(i, k)| r[&a.averaging][format!("{}@{k}", a.metric)].as_f64().map(|v| (i as f64, v)))
            .collect();
        if points.is_empty() {
            bail!("{} has no {} {}@k", path.display(), a.averaging, a.metric);
        }
        series.push((label, points));
    }
    let lo = series.iter().flat_map(|(_, p)| p.iter().map(|x| x.1)).fold(1.0f64, f64::min);
    let y0 = ((lo - 0.05) * 10.0).floor() / 10.0;
    let root = BitMapBackend::new(&a.out, (900, 560)).into_drawing_area();
    let err = |e: &dyn std::fmt::Display| anyhow::anyhow!("drawing {}: {e}", a.out.display());
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let caption = format!("LongMemEval dev: {}@k ({})", a.metric, a.averaging);
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 24))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(-0.2f64..(metrics::KS.len() as f64 - 0.8), y0.max(0.0)..1.0f64)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("k")
        .y_desc(a.metric.as_str())
        .x_labels(metrics::KS.len())
        .x_label_formatter(&|x| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 {
                metrics::KS.get(i as usize).map(|k| k.to_string()).unwrap_or_default()
            } else {
                String::new()
            }
        })
        .draw()
        .map_err(|e| err(&e))?;
    for (i, (label, points)) in series.iter().enumerate() {
        let color = [RED, BLUE, GREEN, MAGENTA, CYAN, BLACK][i % 6].to_rgba();
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series(points.iter().map(|p| Circle::new(*p, 3, color.filled()))).map_err(|e| err(&e))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    eprintln!("wrote {}", a.out.display());
    Ok(())
}
