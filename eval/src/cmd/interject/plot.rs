//! The figure of `amber-eval interject --plot`: precision against fire rate, and the rates
//! against the gate.

use std::path::Path;

use amber_eval::interject::{self, Group, Row, ScoreKind};

fn rate(o: &interject::Outcome, g: Group, f: impl Fn(&interject::Rates) -> Option<f64>) -> Option<f64> {
    o.groups.get(&g).and_then(f)
}

/// (fire rate, precision, gate).
type Point = (f64, f64, f64);

/// Left: precision against fire rate on answerable events, one point per gate (judge off,
/// and the oracle judge for each band). Right: the judge-off rates against the gate.
pub(super) fn plot(
    rows: &[Row],
    bands: &[f64],
    recommended: &[Option<(&Row, bool)>],
    (kind, dataset): (ScoreKind, &str),
    out: &Path,
) -> anyhow::Result<()> {
    use plotters::prelude::*;
    crate::cmd::font::register()?;
    let err = |e: &dyn std::fmt::Display| anyhow::anyhow!("drawing {}: {e}", out.display());
    let root = BitMapBackend::new(out, (1400, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let (left, right) = root.split_horizontally(700);
    let colors = [BLUE, RED, GREEN, MAGENTA, CYAN, BLACK, RGBColor(230, 140, 0)];

    #[derive(Clone, Copy, PartialEq)]
    enum Y {
        Precision,
        First,
        WithNegatives,
    }
    let max_fire = rows.first().map_or(1, |r| r.max_fire);
    let curve = |band: f64, oracle: bool, y: Y| -> Vec<Point> {
        rows.iter()
            .filter(|r| (r.band - band).abs() < 1e-9)
            .filter_map(|r| {
                let o = if oracle { &r.judge_oracle } else { &r.judge_off };
                let fire = rate(o, Group::Answerable, |x| Some(x.fire_rate))?;
                let p = match y {
                    Y::Precision => rate(o, Group::Answerable, |x| x.precision)?,
                    Y::First => rate(o, Group::Answerable, |x| x.precision_first)?,
                    Y::WithNegatives => o.precision_with_negatives?,
                };
                Some((fire, p, r.gate))
            })
            .collect()
    };
    let mut series: Vec<(String, Vec<Point>)> = vec![
        (format!("gate only, up to {max_fire} memories"), curve(bands[0], false, Y::Precision)),
        ("gate only, 1 memory".into(), curve(bands[0], false, Y::First)),
        (
            format!("gate only, up to {max_fire}, negatives mixed in"),
            curve(bands[0], false, Y::WithNegatives),
        ),
    ];
    for &b in bands.iter().filter(|b| **b > 0.0) {
        series
            .push((format!("gate + perfect band of {b:.2}, up to {max_fire}"), curve(b, true, Y::Precision)));
    }
    let lowest = series.iter().flat_map(|(_, p)| p.iter().map(|x| x.1)).fold(1.0f64, f64::min);
    let y0 = (((lowest - 0.05) * 10.0).floor() / 10.0).max(0.0);
    let mut chart = ChartBuilder::on(&left)
        .caption(
            format!("{dataset}: precision vs fire rate (answerable), one point per gate"),
            ("sans-serif", 20),
        )
        .margin(14)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0f64..1.0f64, y0..1.02f64)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("fire rate on answerable questions")
        .y_desc("precision of fired memories")
        .draw()
        .map_err(|e| err(&e))?;
    for (i, (label, pts)) in series.iter().enumerate() {
        let color = colors[i % colors.len()].to_rgba();
        let xy: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.1)).collect();
        chart
            .draw_series(LineSeries::new(xy.clone(), color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series(xy.iter().map(|p| Circle::new(*p, 3, color.filled()))).map_err(|e| err(&e))?;
        if i == 0 {
            // gate labels every 0.10
            chart
                .draw_series(pts.iter().filter(|p| ((p.2 * 10.0).round() - p.2 * 10.0).abs() < 1e-6).map(
                    |p| {
                        Text::new(
                            format!("{:.1}", p.2),
                            (p.0 + 0.01, p.1 - 0.01),
                            ("sans-serif", 13).into_font(),
                        )
                    },
                ))
                .map_err(|e| err(&e))?;
        }
    }
    for (row, first_only) in recommended.iter().flatten() {
        let o = &row.judge_off;
        let fire = rate(o, Group::Answerable, |x| Some(x.fire_rate)).unwrap_or(0.0);
        let p = if *first_only {
            rate(o, Group::Answerable, |x| x.precision_first)
        } else {
            rate(o, Group::Answerable, |x| x.precision)
        }
        .unwrap_or(0.0);
        let memories = if *first_only { 1 } else { max_fire };
        chart
            .draw_series(std::iter::once(Cross::new((fire, p), 8, BLACK.stroke_width(2))))
            .map_err(|e| err(&e))?
            .label(format!("recommended: gate {:.2}, {memories} memory max", row.gate))
            .legend(|(x, y)| Cross::new((x + 10, y), 6, BLACK.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerLeft)
        .draw()
        .map_err(|e| err(&e))?;

    let (g0, g1) = (
        rows.iter().map(|r| r.gate).fold(f64::INFINITY, f64::min),
        rows.iter().map(|r| r.gate).fold(0.0, f64::max),
    );
    let mut chart = ChartBuilder::on(&right)
        .caption(format!("{dataset}: rates against the gate (gate only, no band)"), ("sans-serif", 20))
        .margin(14)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(g0..g1.max(g0 + 0.01), 0.0f64..1.02f64)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc(format!("gate ({})", kind.as_str()))
        .y_desc("rate")
        .draw()
        .map_err(|e| err(&e))?;
    let widest = bands.iter().copied().fold(0.0, f64::max);
    type Pick = fn(&Row) -> Option<f64>;
    let lines: Vec<(String, f64, Pick)> = vec![
        ("fire rate, answerable".into(), bands[0], |r| {
            rate(&r.judge_off, Group::Answerable, |x| Some(x.fire_rate))
        }),
        ("precision, answerable".into(), bands[0], |r| {
            rate(&r.judge_off, Group::Answerable, |x| x.precision)
        }),
        ("precision with negatives".into(), bands[0], |r| r.judge_off.precision_with_negatives),
        ("silence, unrelated".into(), bands[0], |r| {
            rate(&r.judge_off, Group::Unrelated, |x| Some(x.silence_rate))
        }),
        ("silence, abstention".into(), bands[0], |r| {
            rate(&r.judge_off, Group::Abstention, |x| Some(x.silence_rate))
        }),
        ("silence, adversarial".into(), bands[0], |r| {
            rate(&r.judge_off, Group::Adversarial, |x| Some(x.silence_rate))
        }),
        (format!("band rate, answerable (band {widest:.2})"), widest, |r| {
            rate(&r.judge_off, Group::Answerable, |x| Some(x.band_rate))
        }),
    ];
    for (i, (label, band, pick)) in lines.into_iter().enumerate() {
        let pts: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| (r.band - band).abs() < 1e-9)
            .filter_map(|r| pick(r).map(|v| (r.gate, v)))
            .collect();
        if pts.is_empty() {
            continue;
        }
        let color = colors[i % colors.len()].to_rgba();
        chart
            .draw_series(LineSeries::new(pts, color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::MiddleRight)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    eprintln!("wrote {}", out.display());
    Ok(())
}
