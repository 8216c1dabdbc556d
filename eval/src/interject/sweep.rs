//! The sweep of the calibration: every gate and band over the events, the target, the
//! recommended gate and band, and the markdown table.

use serde::Serialize;

use super::{Event, Group, Judge, Outcome, Policy, Rates, outcome, round6};

/// One row of a sweep: a gate, a band and a cap, with the judge off and with the oracle.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// The gate.
    pub gate: f64,
    /// The band width.
    pub band: f64,
    /// The most memories per interjection.
    pub max_fire: usize,
    /// With the judge off (the band never fires).
    pub judge_off: Outcome,
    /// With a judge that says yes exactly to gold candidates.
    pub judge_oracle: Outcome,
}

/// Thresholds from `from` to `to` inclusive by `step` (rounded to 6 decimals).
pub fn thresholds(from: f64, to: f64, step: f64) -> Vec<f64> {
    if step <= 0.0 || to < from {
        return vec![round6(from)];
    }
    let n = ((to - from) / step + 1e-6).floor() as usize;
    (0..=n).map(|i| round6(from + i as f64 * step)).collect()
}

/// Every combination of gate, band and cap, gates innermost.
pub fn sweep(events: &[Event], gates: &[f64], bands: &[f64], max_fire: &[usize]) -> Vec<Row> {
    let mut rows = Vec::new();
    for &m in max_fire {
        for &band in bands {
            for &gate in gates {
                let p = |judge| Policy { gate, band, max_fire: m, judge };
                rows.push(Row {
                    gate,
                    band,
                    max_fire: m,
                    judge_off: outcome(events, &p(Judge::Off)),
                    judge_oracle: outcome(events, &p(Judge::Oracle)),
                });
            }
        }
    }
    rows
}

/// The target on answerable events: precision of fired memories at least
/// `min_precision` with a fire rate at least `min_fire`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Target {
    /// Least precision of fired memories.
    pub min_precision: f64,
    /// Least fire rate.
    pub min_fire: f64,
}

impl Target {
    /// Whether an outcome meets the target on answerable events, with the precision of
    /// every fired memory, or (`first_only`) of each interjection's first memory: the
    /// precision of the same setting with one memory per interjection.
    pub fn met_by(&self, o: &Outcome, first_only: bool) -> bool {
        o.groups.get(&Group::Answerable).is_some_and(|r| {
            let p = if first_only { r.precision_first } else { r.precision };
            r.fire_rate >= self.min_fire && p.is_some_and(|p| p >= self.min_precision)
        })
    }

    /// Whether an outcome meets the target with negatives mixed in: the fire rate on
    /// answerable events, the precision over answerable and negative events together
    /// ([`Outcome::precision_with_negatives`]).
    pub fn met_with_negatives_by(&self, o: &Outcome) -> bool {
        o.groups.get(&Group::Answerable).is_some_and(|r| r.fire_rate >= self.min_fire)
            && o.precision_with_negatives.is_some_and(|p| p >= self.min_precision)
    }
}

fn silence(o: &Outcome, g: Group) -> f64 {
    o.groups.get(&g).map_or(0.0, |r| r.silence_rate)
}

/// The gate to recommend with the judge off. Among the rows of the narrowest band (with the
/// judge off the band changes nothing) whose answerable rates meet `target` (see
/// [`Target::met_by`]), the one that stays silent most often on unrelated events, then on
/// abstention events, then the higher gate. `None` if no row meets the target.
pub fn recommend_gate<'a>(rows: &'a [Row], target: &Target, first_only: bool) -> Option<&'a Row> {
    let narrowest = rows.iter().map(|r| r.band).min_by(f64::total_cmp)?;
    rows.iter().filter(|r| r.band == narrowest && target.met_by(&r.judge_off, first_only)).max_by(|a, b| {
        let (x, y) = (&a.judge_off, &b.judge_off);
        silence(x, Group::Unrelated)
            .total_cmp(&silence(y, Group::Unrelated))
            .then(silence(x, Group::Abstention).total_cmp(&silence(y, Group::Abstention)))
            .then(a.gate.total_cmp(&b.gate))
    })
}

/// The band to pair with `gate`: the widest band of the rows whose judge calls per
/// unrelated event stay at most `max_calls` (those events should stay silent: each call
/// costs time and risks a wrong yes); 0 if there is none.
pub fn recommend_band(rows: &[Row], gate: f64, max_calls: f64) -> f64 {
    rows.iter()
        .filter(|r| (r.gate - gate).abs() < 1e-9)
        .filter(|r| {
            r.judge_off.groups.get(&Group::Unrelated).map_or(0.0, |u| u.judge_calls_per_event) <= max_calls
        })
        .map(|r| r.band)
        .max_by(f64::total_cmp)
        .unwrap_or(0.0)
}

fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"))
}

fn get(o: &Outcome, g: Group, f: impl Fn(&Rates) -> Option<f64>) -> String {
    pct(o.groups.get(&g).and_then(f))
}

/// The markdown table of rows (one line per row, in the given order).
pub fn markdown_table<'a>(rows: impl IntoIterator<Item = &'a Row>) -> String {
    let mut out = String::from(
        "| gate | band | max | fire (off) | precision (off) | precision, first (off) | prec. w/ negatives (off) \
         | silence abs (off) | silence unrelated (off) | silence adversarial (off) | band rate \
         | judge calls unrelated | fire (oracle) | precision (oracle) | prec. w/ negatives (oracle) |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let (off, or) = (&r.judge_off, &r.judge_oracle);
        out.push_str(&format!(
            "| {:.2} | {:.2} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.gate,
            r.band,
            r.max_fire,
            get(off, Group::Answerable, |x| Some(x.fire_rate)),
            get(off, Group::Answerable, |x| x.precision),
            get(off, Group::Answerable, |x| x.precision_first),
            pct(off.precision_with_negatives),
            get(off, Group::Abstention, |x| Some(x.silence_rate)),
            get(off, Group::Unrelated, |x| Some(x.silence_rate)),
            get(off, Group::Adversarial, |x| Some(x.silence_rate)),
            get(off, Group::Answerable, |x| Some(x.band_rate)),
            get(off, Group::Unrelated, |x| Some(x.judge_calls_per_event)),
            get(or, Group::Answerable, |x| Some(x.fire_rate)),
            get(or, Group::Answerable, |x| x.precision),
            pct(or.precision_with_negatives),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interject::Event;
    use crate::interject::tests::{c, close, fixture, p};

    #[test]
    fn sweep_thresholds_and_recommendation() {
        let gates = thresholds(0.30, 0.90, 0.02);
        assert_eq!(gates.len(), 31);
        assert_eq!(gates[0], 0.30);
        assert_eq!(gates[21], 0.72);
        assert_eq!(gates[30], 0.90);
        assert_eq!(thresholds(0.5, 0.4, 0.1), [0.5]);
        let ev = fixture();
        let rows = sweep(&ev, &[0.60, 0.68, 0.76, 0.82], &[0.0, 0.10], &[1, 2]);
        assert_eq!(rows.len(), 16);
        assert_eq!((rows[0].max_fire, rows[0].band, rows[0].gate), (1, 0.0, 0.60));
        assert_eq!((rows[15].max_fire, rows[15].band, rows[15].gate), (2, 0.10, 0.82));
        let cap2: Vec<Row> = rows.iter().filter(|r| r.max_fire == 2).cloned().collect();
        // Judge off, cap 2, answerable (A, B), abstention C, unrelated D:
        // 0.60: A fires 0.80 g + 0.65, B 0.70 + 0.66 g: fire 1, precision 2/4, first 1/2; C fires
        // 0.68: A 0.80 g, B 0.70: fire 1, precision 1/2; C fires
        // 0.76: A 0.80 g only: fire 1/2, precision 1; C (0.75) silent
        // 0.82: nothing fires. D never fires.
        let t = Target { min_precision: 0.9, min_fire: 0.5 };
        assert_eq!(recommend_gate(&cap2, &t, false).map(|r| r.gate), Some(0.76));
        assert_eq!(recommend_gate(&cap2, &t, true).map(|r| r.gate), Some(0.76));
        // a looser target: 0.60, 0.68 and 0.76 meet it; 0.76 is silent on C
        let loose = Target { min_precision: 0.5, min_fire: 0.5 };
        assert_eq!(recommend_gate(&cap2, &loose, false).map(|r| r.gate), Some(0.76));
        // fire >= 0.9: 0.60 and 0.68, equally silent; the higher gate wins
        let busy = Target { min_precision: 0.5, min_fire: 0.9 };
        assert_eq!(recommend_gate(&cap2, &busy, false).map(|r| r.gate), Some(0.68));
        assert!(recommend_gate(&cap2, &Target { min_precision: 1.0, min_fire: 0.6 }, false).is_none());
        assert!(t.met_by(&cap2[2].judge_off, false));
        assert!(t.met_with_negatives_by(&cap2[2].judge_off), "A's gold alone fired: 1/1");
        assert!(!t.met_by(&cap2[0].judge_off, false), "gate 0.60: precision 0.5");
        assert!(!t.met_by(&cap2[0].judge_off, true), "gate 0.60: first memories 1/2");
        // A alone at 0.60 fires 0.80 g and 0.65: precision 1/2, but its first memory is gold
        let a_only = outcome(&ev[..1], &p(0.60, 0.0, 2, Judge::Off));
        assert!(!t.met_by(&a_only, false));
        assert!(t.met_by(&a_only, true));
        let table = markdown_table(&rows[..2]);
        assert_eq!(table.lines().count(), 4);
        assert!(
            table
                .lines()
                .nth(2)
                .unwrap()
                .starts_with("| 0.60 | 0.00 | 1 | 1.000 | 0.500 | 0.500 | 0.333 | 0.000 | 1.000 |"),
            "{table}"
        );
    }

    #[test]
    fn band_recommendation_bounds_judge_calls_on_unrelated_events() {
        // unrelated U scores 0.55: inside [0.55, 0.60) and [0.50, 0.60), so both bands call once
        let ev =
            vec![fixture()[0].clone(), Event { group: Group::Unrelated, candidates: vec![c(0.55, false)] }];
        let rows = sweep(&ev, &[0.60], &[0.0, 0.05, 0.10], &[2]);
        assert!(close(rows[1].judge_off.groups[&Group::Unrelated].judge_calls_per_event, 1.0));
        assert_eq!(recommend_band(&rows, 0.60, 0.1), 0.0);
        assert_eq!(recommend_band(&rows, 0.60, 1.0), 0.10);
        assert_eq!(recommend_band(&rows, 0.70, 1.0), 0.0, "no row at that gate");
    }

    #[test]
    fn adversarial_events_are_reported_but_not_negatives() {
        // answerable A fires its gold 0.80; adversarial V fires its related turn 0.70 and a
        // wrong 0.65: neither counts in the precision with negatives, which stays A's 1/1
        let ev = vec![
            Event { group: Group::Answerable, candidates: vec![c(0.80, true)] },
            Event { group: Group::Adversarial, candidates: vec![c(0.70, true), c(0.65, false)] },
        ];
        let o = outcome(&ev, &p(0.60, 0.0, 2, Judge::Off));
        let v = o.groups[&Group::Adversarial];
        assert_eq!((v.events, v.fired_events, v.fired, v.fired_gold), (1, 1, 2, 1));
        assert!(close(v.silence_rate, 0.0));
        assert!(close(o.precision_with_negatives.unwrap(), 1.0));
        assert!(!Group::Adversarial.is_negative());
        let rows = sweep(&ev, &[0.60, 0.75], &[0.0], &[2]);
        let table = markdown_table(&rows);
        // silence abs "-", silence unrelated "-", silence adversarial 0 at 0.60 and 1 at 0.75
        assert!(table.lines().nth(2).unwrap().contains("| - | - | 0.000 |"), "{table}");
        assert!(table.lines().nth(3).unwrap().contains("| - | - | 1.000 |"), "{table}");
    }
}
