//! Per-model calibration: where a model puts the cosine of texts that have nothing to do
//! with each other. MiniLM gives unrelated English texts about 0.0 to 0.2;
//! multilingual-e5-small gives them 0.75 to 0.85. A cosine threshold tuned on one model
//! (the interjection gate, the relevance floor) means nothing on another, so both are set
//! in units of the model's own spread over [`UNRELATED`], 40 short texts on 40 topics:
//! the floor, which judges one hit, in `mean + z × sd` of the cosines between the query
//! of one text and the passage of another; the gate, which judges the best candidate of
//! a store, in `mean + z × sd` of each text's best cosine among the other 39.
//!
//! The `z` of each threshold was measured on MiniLM with dev data (docs/EVAL.md,
//! "Per-model calibration"): the gate's 0.42, and the floor's 1.5. With MiniLM the
//! calibrated values are those numbers again; with any other model they move with its
//! distribution. The calibration is computed the first time a model is asked for
//! it (80 short texts embedded), kept in the store's metadata under the model's id, and
//! done again when the model changes (`amber model use`).

/// Forty short texts on forty unrelated topics, in the lengths and registers memories
/// and prompts have (questions, statements, commands, notes).
pub const UNRELATED: [&str; 40] = [
    "How long should I rest bread dough before shaping the loaves?",
    "The Andromeda galaxy is on a collision course with the Milky Way in about four billion years.",
    "Can I deduct home office expenses if I am a salaried employee?",
    "Cast on 64 stitches with a 4 mm circular needle and knit in the round for 5 cm.",
    "The referee showed a second yellow card in the 87th minute and the team played with ten men.",
    "Which kernel parameter controls the maximum number of open file descriptors?",
    "Grandma's tomato plants need watering twice a day when it is this hot.",
    "The Treaty of Westphalia ended the Thirty Years' War in 1648.",
    "What is the best way to remove red wine stains from a wool carpet?",
    "Our flight to Reykjavik leaves at 6:40 and we land before noon local time.",
    "Use a torque wrench to tighten the wheel nuts to 110 newton-metres in a star pattern.",
    "She practised the Chopin nocturne for an hour every evening before the recital.",
    "Honeybees communicate the direction of flowers with a waggle dance.",
    "Remind me to renew the car insurance before the end of the month.",
    "The mortgage rate was fixed at 3.1 percent for the first five years.",
    "How do I teach a puppy to stop biting shoelaces?",
    "Photosynthesis converts light energy into chemical energy stored as glucose.",
    "The marathon route passes the cathedral at kilometre 23.",
    "What temperature should a medium-rare steak reach inside?",
    "The novel follows three generations of a family of lighthouse keepers.",
    "Replace the furnace filter every three months during the heating season.",
    "Is it safe to take ibuprofen together with a cold remedy?",
    "The chess opening known as the Sicilian Defence starts with 1.e4 c5.",
    "Volcanic ash grounded flights across northern Europe for six days.",
    "My daughter wants a birthday party with a dinosaur theme this year.",
    "The choir rehearses on Thursday evenings in the church hall.",
    "Which watercolour paper weight works best for wet-on-wet washes?",
    "The city council voted to extend the tram line to the airport.",
    "Sourdough starter smells of acetone when it is hungry.",
    "How many vacation days do I have left this year?",
    "The ancient library of Alexandria held hundreds of thousands of scrolls.",
    "Rotate the tyres every ten thousand kilometres to even out wear.",
    "A haiku has three lines of five, seven and five syllables.",
    "The orchestra tuned to an A at 442 hertz.",
    "What is the visa policy for a two-week trip to Japan?",
    "Compost needs a balance of green and brown material to break down well.",
    "The goalkeeper saved two penalties in the shoot-out.",
    "Whales sing songs that change slowly over the years.",
    "Please book a table for four at the Italian place on Friday.",
    "The museum's new wing displays Bronze Age jewellery from Crete.",
];

/// MiniLM's best-of-the-others over [`UNRELATED`] (measured with `amber-eval calibrate`,
/// docs/EVAL.md "Per-model calibration"): for each text's query, its best cosine among
/// the other 39 passages; their mean and spread. The gate's reference: the
/// gate reads the best candidate of a store, so it is carried in the units of a best, not
/// of a pair.
const REFERENCE_BEST_MEAN: f32 = 0.246_905;
const REFERENCE_BEST_SD: f32 = 0.076_769;
/// The gate tuned on MiniLM (`[interject] gate`'s default).
const REFERENCE_GATE: f32 = 0.42;
/// The relevance floor, in spreads above the unrelated mean: on LongMemEval_S dev
/// (session level, MiniLM) 99% of the questions' best gold hits are above z 1.66; at
/// 1.5 about 7% of unrelated pairs pass (MiniLM's floor: 0.166).
const FLOOR_Z: f32 = 1.5;

/// Where a model puts unrelated texts, and the thresholds set from it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Calibration {
    /// The model's id.
    pub model: String,
    /// The mean cosine of unrelated pairs.
    pub unrelated_mean: f32,
    /// Their standard deviation.
    pub unrelated_sd: f32,
    /// Their 99th percentile.
    pub unrelated_p99: f32,
    /// Pairs measured.
    pub pairs: usize,
    /// The mean of each text's best cosine among the others (absent from a calibration
    /// kept before it was measured: such a one is measured again).
    #[serde(default)]
    pub best_mean: Option<f32>,
    /// Their standard deviation.
    #[serde(default)]
    pub best_sd: Option<f32>,
}

impl Calibration {
    /// Whether every figure the thresholds read was measured.
    pub fn is_complete(&self) -> bool {
        self.best_mean.is_some() && self.best_sd.is_some()
    }

    /// The interjection gate for a gate tuned on MiniLM (`[interject] gate`): as many
    /// spreads above this model's best-of-the-others mean as it was on MiniLM's. (Carried
    /// by unrelated pairs instead, multilingual-e5-small's gate sat where it fired on a
    /// fifth of LoCoMo's answerable turns against MiniLM's 99%: docs/EVAL.md.)
    pub fn gate(&self, minilm_gate: f32) -> f32 {
        let z = (minilm_gate - REFERENCE_BEST_MEAN) / REFERENCE_BEST_SD;
        self.best_mean.unwrap_or(REFERENCE_BEST_MEAN) + z * self.best_sd.unwrap_or(REFERENCE_BEST_SD)
    }

    /// A width of cosines on MiniLM near the gate (the judge's band below it), in this
    /// model's spread of bests.
    pub fn spread(&self, minilm_width: f32) -> f32 {
        minilm_width * self.best_sd.unwrap_or(REFERENCE_BEST_SD) / REFERENCE_BEST_SD
    }

    /// The default gate, carried.
    pub fn default_gate(&self) -> f32 {
        self.gate(REFERENCE_GATE)
    }

    /// The relevance floor: a hit whose best chunk is below it matches the query no
    /// better than unrelated text does (see [`crate::Query::floor`]).
    pub fn floor(&self) -> f32 {
        self.unrelated_mean + FLOOR_Z * self.unrelated_sd
    }

    /// In words, for a person: where the model puts unrelated texts, the floor, and the
    /// gate `minilm_gate` (`[interject] gate`) carried to it.
    pub fn describe(&self, minilm_gate: f32) -> String {
        format!(
            "{} puts unrelated texts at cosine {:.2} ± {:.2}: relevance floor {:.2}, interjection gate {:.2} \
             (tuned as {minilm_gate:.2} on MiniLM)",
            self.model,
            self.unrelated_mean,
            self.unrelated_sd,
            self.floor(),
            self.gate(minilm_gate)
        )
    }

    /// The calibration of `model` from each text's cosines with the others (one row per
    /// text's query).
    pub fn from_rows(model: &str, rows: &[Vec<f32>]) -> Calibration {
        let (mean, sd) = mean_sd(rows.iter().flatten().copied());
        let mut cosines: Vec<f32> = rows.iter().flatten().copied().collect();
        cosines.sort_by(f32::total_cmp);
        let p99 = cosines.get(((cosines.len().max(1) - 1) as f32 * 0.99) as usize).copied().unwrap_or(mean);
        let bests = rows.iter().filter_map(|r| r.iter().copied().max_by(f32::total_cmp));
        let (best_mean, best_sd) = mean_sd(bests);
        Calibration {
            model: model.to_string(),
            unrelated_mean: mean,
            unrelated_sd: sd,
            unrelated_p99: p99,
            pairs: cosines.len(),
            best_mean: Some(best_mean),
            best_sd: Some(best_sd),
        }
    }
}

/// The mean and (population) standard deviation of `xs`.
fn mean_sd(xs: impl Iterator<Item = f32> + Clone) -> (f32, f32) {
    let n = xs.clone().count().max(1) as f32;
    let mean = xs.clone().sum::<f32>() / n;
    (mean, (xs.map(|c| (c - mean) * (c - mean)).sum::<f32>() / n).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MiniLM's unrelated-pair mean and spread over [`UNRELATED`] (`amber-eval
    /// calibrate`, docs/EVAL.md "Per-model calibration").
    const REFERENCE_MEAN: f32 = 0.045_354;
    const REFERENCE_SD: f32 = 0.080_666;

    fn model(mean: f32, sd: f32, best_mean: f32, best_sd: f32) -> Calibration {
        Calibration {
            model: "m".into(),
            unrelated_mean: mean,
            unrelated_sd: sd,
            unrelated_p99: mean + 2.0 * sd,
            pairs: 1560,
            best_mean: Some(best_mean),
            best_sd: Some(best_sd),
        }
    }

    #[test]
    fn pairs_and_bests_are_read_from_the_rows() {
        let c = Calibration::from_rows("m", &[vec![0.1, 0.3], vec![0.2, 0.5]]);
        assert!((c.unrelated_mean - 0.275).abs() < 1e-6, "{c:?}");
        assert!((c.unrelated_sd - 0.021_875_f32.sqrt()).abs() < 1e-6, "{c:?}");
        assert_eq!(c.pairs, 4);
        // Each row's best: 0.3 and 0.5.
        assert!(
            (c.best_mean.unwrap() - 0.4).abs() < 1e-6 && (c.best_sd.unwrap() - 0.1).abs() < 1e-6,
            "{c:?}"
        );
        assert!(c.is_complete());
    }

    #[test]
    fn thresholds_move_with_the_model_s_own_spread() {
        let minilm = model(REFERENCE_MEAN, REFERENCE_SD, REFERENCE_BEST_MEAN, REFERENCE_BEST_SD);
        assert!((minilm.gate(0.42) - 0.42).abs() < 1e-5, "MiniLM's gate is its own");
        assert!((minilm.spread(0.05) - 0.05).abs() < 1e-6);
        assert!((minilm.floor() - (REFERENCE_MEAN + FLOOR_Z * REFERENCE_SD)).abs() < 1e-6);
        // A model that puts unrelated texts at 0.742 ± 0.031, and each text's best among
        // the others at 0.80 ± 0.027 (multilingual-e5-small).
        let e5 = model(0.742, 0.031, 0.80, 0.027);
        let z = (0.42 - REFERENCE_BEST_MEAN) / REFERENCE_BEST_SD;
        assert!((e5.gate(0.42) - (0.80 + z * 0.027)).abs() < 1e-5, "{}", e5.gate(0.42));
        // The gate is carried by bests, not pairs: by pairs it would be 0.88.
        let by_pairs = 0.742 + (0.42 - REFERENCE_MEAN) / REFERENCE_SD * 0.031;
        assert!(e5.gate(0.42) < by_pairs - 0.02, "{} against {by_pairs}", e5.gate(0.42));
        assert!(e5.floor() > 0.742 && e5.floor() < e5.gate(0.42));
        assert!((e5.spread(0.05) - 0.05 * 0.027 / REFERENCE_BEST_SD).abs() < 1e-6);
        assert!(
            e5.describe(0.42).contains("relevance floor 0.79, interjection gate 0.86"),
            "{}",
            e5.describe(0.42)
        );
    }

    #[test]
    fn a_calibration_kept_before_bests_were_measured_is_incomplete() {
        let old =
            r#"{"model":"m","unrelated_mean":0.74,"unrelated_sd":0.03,"unrelated_p99":0.81,"pairs":1560}"#;
        let c: Calibration = serde_json::from_str(old).unwrap();
        assert!(!c.is_complete() && c.best_mean.is_none());
    }
}
