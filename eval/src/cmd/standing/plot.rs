//! The figure of `amber-eval standing --plot`: recall@5 of the fed and held-apart halves
//! over the rounds (left) and their wrong-recall rate (right), one colour per strength.

use std::path::Path;

use super::learn::{Round, Run, Scores};

/// A panel: its title and the metric it draws.
type Panel = (&'static str, fn(&Scores) -> f64);

/// Draws the curves of every run; the headline strength's lines are thicker.
pub(super) fn plot(runs: &[Run], headline: f32, negative: &str, out: &Path) -> anyhow::Result<()> {
    use plotters::prelude::*;
    crate::cmd::font::register()?;
    let err = |e: &dyn std::fmt::Display| anyhow::anyhow!("drawing {}: {e}", out.display());
    let root = BitMapBackend::new(out, (1400, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let (left, right) = root.split_horizontally(700);
    let colors = [BLUE, RED, GREEN, MAGENTA, CYAN, BLACK];
    let rounds = runs.iter().map(|r| r.curve.len()).max().unwrap_or(1).max(2) - 1;
    let panels: [Panel; 2] = [
        ("recall@5 of evidence turns", |s| s.recall_at_5),
        ("wrong recall (non-evidence in top 5)", |s| s.wrong_at_5),
    ];
    let legend = [SeriesLabelPosition::LowerLeft, SeriesLabelPosition::UpperLeft];
    for ((area, (title, metric)), legend) in [left, right].iter().zip(panels).zip(legend) {
        let values: Vec<f64> = runs
            .iter()
            .flat_map(|r| r.curve.iter().flat_map(|p: &Round| [metric(&p.fed), metric(&p.held_apart)]))
            .collect();
        let lo = values.iter().copied().fold(1.0f64, f64::min);
        let hi = values.iter().copied().fold(0.0f64, f64::max);
        let pad = ((hi - lo) * 0.1).max(0.01);
        let mut chart = ChartBuilder::on(area)
            .caption(format!("LoCoMo dev, agent negatives = {negative}: {title}"), ("sans-serif", 18))
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d(0f64..rounds as f64, (lo - pad).max(0.0)..(hi + pad).min(1.0))
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("round (0 = before any outcome)")
            .x_labels(rounds + 1)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .draw()
            .map_err(|e| err(&e))?;
        for (i, run) in runs.iter().enumerate() {
            let width = if (run.strength - headline).abs() < 1e-6 { 3 } else { 1 };
            let color = colors[i % colors.len()].to_rgba();
            for (half, fed) in [("fed", true), ("held apart", false)] {
                let points: Vec<(f64, f64)> = run
                    .curve
                    .iter()
                    .map(|p| (p.round as f64, metric(if fed { &p.fed } else { &p.held_apart })))
                    .collect();
                let style = color.stroke_width(width);
                let label = format!("strength {} {half}", run.strength);
                if fed {
                    chart
                        .draw_series(LineSeries::new(points.clone(), style))
                        .map_err(|e| err(&e))?
                        .label(label)
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
                    chart
                        .draw_series(points.iter().map(|p| Circle::new(*p, 3, color.filled())))
                        .map_err(|e| err(&e))?;
                } else {
                    chart
                        .draw_series(DashedLineSeries::new(points.clone(), 6, 4, style))
                        .map_err(|e| err(&e))?
                        .label(label)
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 8, y)], style));
                    chart
                        .draw_series(points.iter().map(|p| TriangleMarker::new(*p, 4, color.filled())))
                        .map_err(|e| err(&e))?;
                }
            }
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(legend)
            .label_font(("sans-serif", 12))
            .draw()
            .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    eprintln!("wrote {}", out.display());
    Ok(())
}
