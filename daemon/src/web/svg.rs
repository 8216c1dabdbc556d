//! Charts drawn by the server as inline SVG: a memory's weight over time, the lift's
//! served-against-withheld comparison, and the knowledge graph around an entity. Every
//! label is escaped text; nothing is fetched and no script runs.

use std::fmt::Write;

use amber_core::Millis;

use super::html::{esc, opening, time};

/// A memory's weight after each word on it, over time: a step line on 0..1 with a dot
/// per word (green success, red failure, grey otherwise) and the 0.10 archive line.
pub(crate) fn weight_chart(points: &[(Millis, f32, &str)]) -> String {
    let (w, h, pad) = (560.0_f64, 180.0_f64, 36.0_f64);
    if points.is_empty() {
        return String::from("<p class=muted>No word on it yet: its weight is where it started.</p>");
    }
    let t0 = points.first().map_or(0, |p| p.0) as f64;
    let t1 = points.last().map_or(0, |p| p.0) as f64;
    let span = (t1 - t0).max(1.0);
    let x = |t: Millis| pad + (t as f64 - t0) / span * (w - 2.0 * pad);
    let y = |v: f32| h - pad + -(f64::from(v.clamp(0.0, 1.0))) * (h - 2.0 * pad);
    let mut s = format!(
        "<svg role=img aria-label=\"weight over time\" width={w} height={h} viewBox=\"0 0 {w} {h}\" xmlns=\"http://www.w3.org/2000/svg\">"
    );
    for v in [0.0_f32, 0.5, 1.0] {
        let _ = write!(
            s,
            "<line x1={pad} x2={} y1={y1:.1} y2={y1:.1} stroke=#e4dfd3 /><text x=4 y={:.1} font-size=11>{v:.1}</text>",
            w - pad,
            y(v) + 4.0,
            y1 = y(v)
        );
    }
    let _ = write!(
        s,
        "<line x1={pad} x2={} y1={a:.1} y2={a:.1} stroke=#c0392b stroke-dasharray=4 /><text x={} y={:.1} font-size=10 fill=#c0392b>archive 0.10</text>",
        w - pad,
        w - pad - 70.0,
        y(0.1) - 3.0,
        a = y(0.1)
    );
    let mut d = String::new();
    for (i, (t, v, _)) in points.iter().enumerate() {
        let _ = write!(d, "{}{:.1},{:.1} ", if i == 0 { "M" } else { "L" }, x(*t), y(*v));
    }
    let _ = write!(s, "<path d=\"{d}\" fill=none stroke=#3b2f1e stroke-width=2 />");
    for (t, v, result) in points {
        let fill = match *result {
            "success" => "#1d6b2f",
            "failure" => "#c0392b",
            _ => "#888",
        };
        let _ = write!(
            s,
            "<circle cx={:.1} cy={:.1} r=4 fill={fill}><title>{} {} → {v:.2}</title></circle>",
            x(*t),
            y(*v),
            esc(&time(*t)),
            esc(result)
        );
    }
    let _ = write!(
        s,
        "<text x={pad} y={} font-size=11>{}</text><text x={} y={} font-size=11 text-anchor=end>{}</text></svg>",
        h - 8.0,
        esc(&time(t0 as Millis)),
        w - pad,
        h - 8.0,
        esc(&time(t1 as Millis))
    );
    s
}

/// One arm of the lift's comparison: its name, sessions, mean reward and spread.
pub(crate) struct Bar<'a> {
    pub label: &'a str,
    pub n: usize,
    pub mean: Option<f64>,
    pub sd: Option<f64>,
}

/// The mean reward of served and withheld (holdout) sessions as two bars with their
/// standard deviation, on the rewards' range -1..1.
pub(crate) fn lift_chart(bars: &[Bar<'_>]) -> String {
    let (w, h, pad) = (420.0_f64, 240.0_f64, 34.0_f64);
    let y = |v: f64| h - pad - (v.clamp(-1.0, 1.0) + 1.0) / 2.0 * (h - 2.0 * pad);
    let mut s = format!(
        "<svg role=img aria-label=\"mean reward, served against withheld\" width={w} height={h} viewBox=\"0 0 {w} {h}\" xmlns=\"http://www.w3.org/2000/svg\">"
    );
    for v in [-1.0, 0.0, 1.0] {
        let stroke = if v == 0.0 { "#999" } else { "#e4dfd3" };
        let _ = write!(
            s,
            "<line x1={pad} x2={} y1={a:.1} y2={a:.1} stroke={stroke} /><text x=4 y={:.1} font-size=11>{v:+.0}</text>",
            w - pad,
            y(v) + 4.0,
            a = y(v)
        );
    }
    let slot = (w - 2.0 * pad) / bars.len().max(1) as f64;
    for (i, b) in bars.iter().enumerate() {
        let cx = pad + slot * (i as f64 + 0.5);
        let colour = if i == 0 { "#d08c1e" } else { "#7d8a99" };
        if let Some(m) = b.mean {
            let (top, bottom) = (y(m).min(y(0.0)), y(m).max(y(0.0)));
            let _ = write!(
                s,
                "<rect x={:.1} y={top:.1} width={:.1} height={:.1} fill={colour}><title>mean {m:.3}</title></rect>",
                cx - slot * 0.3,
                slot * 0.6,
                (bottom - top).max(1.0)
            );
            if let Some(sd) = b.sd {
                let _ = write!(
                    s,
                    "<line x1={cx:.1} x2={cx:.1} y1={:.1} y2={:.1} stroke=#222 />",
                    y(m + sd),
                    y(m - sd)
                );
            }
            let _ =
                write!(s, "<text x={cx:.1} y={:.1} font-size=12 text-anchor=middle>{m:.2}</text>", top - 6.0);
        } else {
            let _ = write!(
                s,
                "<text x={cx:.1} y={:.1} font-size=12 text-anchor=middle>no rewards</text>",
                y(0.0) - 6.0
            );
        }
        let _ = write!(
            s,
            "<text x={cx:.1} y={:.1} font-size=12 text-anchor=middle>{} (n={})</text>",
            h - 10.0,
            esc(b.label),
            b.n
        );
    }
    s.push_str("</svg>");
    s
}

/// A node of the drawn graph: its name and its distance from the centre.
pub(crate) struct Node {
    pub id: i64,
    pub name: String,
    pub hops: usize,
}

/// An edge of the drawn graph: subject, object and the predicate.
pub(crate) struct Edge {
    pub from: i64,
    pub to: i64,
    pub label: String,
}

/// The graph around an entity: the centre in the middle, each hop on a ring further
/// out, edges labelled with their predicate.
pub(crate) fn graph(nodes: &[Node], edges: &[Edge]) -> String {
    let (w, h) = (760.0_f64, 520.0_f64);
    let (cx, cy) = (w / 2.0, h / 2.0);
    let mut place = std::collections::HashMap::new();
    let max_hops = nodes.iter().map(|n| n.hops).max().unwrap_or(0).max(1);
    for ring in 0..=max_hops {
        let on: Vec<&Node> = nodes.iter().filter(|n| n.hops == ring).collect();
        let r = ring as f64 * (h / 2.0 - 40.0) / max_hops as f64;
        for (i, n) in on.iter().enumerate() {
            let a = std::f64::consts::TAU * i as f64 / on.len().max(1) as f64 + ring as f64 * 0.4;
            place.insert(n.id, (cx + r * 1.3 * a.cos(), cy + r * a.sin()));
        }
    }
    let mut s = format!(
        "<svg role=img aria-label=\"knowledge graph\" width={w} height={h} viewBox=\"0 0 {w} {h}\" xmlns=\"http://www.w3.org/2000/svg\">"
    );
    for e in edges {
        let (Some(a), Some(b)) = (place.get(&e.from), place.get(&e.to)) else { continue };
        let _ = write!(
            s,
            "<line x1={:.1} y1={:.1} x2={:.1} y2={:.1} stroke=#b9ad93 /><text x={:.1} y={:.1} font-size=10 fill=#7a6a4a text-anchor=middle>{}</text>",
            a.0,
            a.1,
            b.0,
            b.1,
            (a.0 + b.0) / 2.0,
            (a.1 + b.1) / 2.0 - 3.0,
            esc(&opening(&e.label, 24))
        );
    }
    for n in nodes {
        let Some(p) = place.get(&n.id) else { continue };
        let (r, fill) = if n.hops == 0 { (9.0, "#d08c1e") } else { (6.0, "#3b2f1e") };
        let _ = write!(
            s,
            "<a href=\"/graph?entity={}\"><circle cx={:.1} cy={:.1} r={r} fill={fill} /><text x={:.1} y={:.1} font-size=12 text-anchor=middle>{}</text></a>",
            super::html::url(&n.name),
            p.0,
            p.1,
            p.0,
            p.1 - 12.0,
            esc(&opening(&n.name, 28))
        );
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_in_charts_are_escaped() {
        let g = graph(
            &[
                Node { id: 1, name: "<script>x</script>".into(), hops: 0 },
                Node { id: 2, name: "b".into(), hops: 1 },
            ],
            &[Edge { from: 1, to: 2, label: "<b>".into() }],
        );
        assert!(!g.contains("<script>") && g.contains("&lt;script&gt;") && g.contains("&lt;b&gt;"));
        let c = weight_chart(&[(0, 1.0, "success"), (1000, 0.5, "failure")]);
        assert!(c.starts_with("<svg") && c.contains("circle"));
        let l = lift_chart(&[Bar { label: "served", n: 3, mean: Some(0.7), sd: Some(0.1) }]);
        assert!(l.contains("served (n=3)"));
    }
}
