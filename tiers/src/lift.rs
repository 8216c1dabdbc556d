//! Lift: does serving memory help? Rewarded sessions that were served memory against
//! those of the holdout arm (routed as usual, served nothing), compared by mean reward
//! with a one-sided Welch z test. No model.

use serde::{Deserialize, Serialize};

/// Below this many rewarded sessions in either arm, the answer is "not enough data".
pub const MIN_PER_ARM: usize = 30;
/// The one-sided significance level for "lift".
pub const ALPHA: f64 = 0.05;

/// One arm's rewards.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Arm {
    /// Rewarded sessions.
    pub n: usize,
    /// Their mean reward (-1..1), when there is one.
    pub mean: Option<f64>,
    /// The sample standard deviation, when n >= 2.
    pub sd: Option<f64>,
}

impl Arm {
    /// The arm of these rewards.
    pub fn of(xs: &[f64]) -> Arm {
        let n = xs.len();
        if n == 0 {
            return Arm::default();
        }
        let mean = xs.iter().sum::<f64>() / n as f64;
        let sd =
            (n >= 2).then(|| (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt());
        Arm { n, mean: Some(mean), sd }
    }
}

/// What the comparison says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Fewer than [`MIN_PER_ARM`] rewarded sessions in an arm.
    NotEnoughData,
    /// Served sessions score higher, one-sided p < [`ALPHA`].
    Lift,
    /// No evidence that serving helps.
    NoLift,
}

/// The comparison of served against withheld sessions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lift {
    /// Sessions served memory.
    pub served: Arm,
    /// Sessions of the holdout arm.
    pub withheld: Arm,
    /// Mean reward served minus withheld.
    pub difference: Option<f64>,
    /// Welch's z of the difference.
    pub z: Option<f64>,
    /// One-sided p (served > withheld).
    pub p: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
    /// The minimum per arm, for the reader.
    pub min_per_arm: usize,
}

/// Compares served rewards against withheld ones.
pub fn lift(served: &[f64], withheld: &[f64]) -> Lift {
    let (a, b) = (Arm::of(served), Arm::of(withheld));
    let difference = a.mean.zip(b.mean).map(|(x, y)| x - y);
    let mut out = Lift {
        served: a,
        withheld: b,
        difference,
        z: None,
        p: None,
        verdict: Verdict::NotEnoughData,
        min_per_arm: MIN_PER_ARM,
    };
    if a.n < MIN_PER_ARM || b.n < MIN_PER_ARM {
        return out;
    }
    let Some((z, p)) = welch(&a, &b) else { return out };
    out.z = Some(z);
    out.p = Some(p);
    out.verdict = if p < ALPHA { Verdict::Lift } else { Verdict::NoLift };
    out
}

/// Welch's z of `mean(a) - mean(b)` and its one-sided p (a > b), when both arms have
/// a mean and a standard deviation (n >= 2 each).
pub fn welch(a: &Arm, b: &Arm) -> Option<(f64, f64)> {
    let (sa, sb) = (a.sd?, b.sd?);
    let d = a.mean? - b.mean?;
    let se = (sa * sa / a.n as f64 + sb * sb / b.n as f64).sqrt();
    Some(if se > 0.0 {
        let z = d / se;
        (z, 0.5 * erfc(z / std::f64::consts::SQRT_2))
    } else if d > 0.0 {
        (f64::INFINITY, 0.0)
    } else {
        (0.0, 0.5)
    })
}

/// The complementary error function (W. J. Cody's rational approximations as in
/// Numerical Recipes' `erfcc`, fractional error under 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small seeded generator (splitmix64) and a normal draw (Box-Muller).
    struct Rng(u64);
    impl Rng {
        fn unit(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        }
        fn normal(&mut self) -> f64 {
            let (u, v) = (self.unit().max(1e-12), self.unit());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        }
        /// A reward around `mean` as sessions give them: clipped to -1..1.
        fn reward(&mut self, mean: f64) -> f64 {
            (mean + 0.6 * self.normal()).clamp(-1.0, 1.0)
        }
    }

    fn arms(seed: u64, n: usize, effect: f64) -> (Vec<f64>, Vec<f64>) {
        let mut r = Rng(seed);
        let served = (0..n).map(|_| r.reward(0.1 + effect)).collect();
        let withheld = (0..n).map(|_| r.reward(0.1)).collect();
        (served, withheld)
    }

    #[test]
    fn erfc_matches_known_values() {
        for (x, want) in [
            (0.0, 1.0),
            (0.5, 0.479_500_122),
            (1.0, 0.157_299_207),
            (2.0, 0.004_677_735),
            (-1.0, 1.842_700_793),
        ] {
            assert!((erfc(x) - want).abs() < 1e-6, "erfc({x}) = {}", erfc(x));
        }
    }

    #[test]
    fn a_planted_lift_is_found_at_400_per_arm_and_a_null_is_not() {
        let (s, w) = arms(7, 400, 0.2);
        let l = lift(&s, &w);
        assert_eq!(l.verdict, Verdict::Lift, "{l:?}");
        let d = l.difference.unwrap();
        assert!((0.12..0.28).contains(&d), "{d}");
        let (s, w) = arms(7, 400, 0.0);
        let l = lift(&s, &w);
        assert_eq!(l.verdict, Verdict::NoLift, "{l:?}");
        // Over 200 seeds: the planted effect is found nearly always, the null rarely
        // (a one-sided 5% test: about 5% false alarms).
        let verdict = |seed: u64, effect: f64| {
            let (s, w) = arms(seed, 400, effect);
            lift(&s, &w).verdict
        };
        let found = (0..200).filter(|&s| verdict(s, 0.2) == Verdict::Lift).count();
        let alarms = (0..200).filter(|&s| verdict(s, 0.0) == Verdict::Lift).count();
        eprintln!("planted +0.2 found in {found}/200 seeds; null called lift in {alarms}/200");
        assert!(found >= 196, "power: {found}/200");
        assert!(alarms <= 20, "false alarms: {alarms}/200");
    }

    #[test]
    fn too_few_sessions_is_not_enough_data() {
        let (s, w) = arms(3, MIN_PER_ARM - 1, 0.5);
        let l = lift(&s, &w);
        assert_eq!(l.verdict, Verdict::NotEnoughData);
        assert!(l.z.is_none() && l.p.is_none() && l.difference.is_some());
        assert_eq!(lift(&[], &[]).served.n, 0);
    }
}
