//! Per-model calibration: where a model puts the cosine of texts that have nothing to do
//! with each other. MiniLM gives unrelated English texts about 0.0 to 0.2;
//! multilingual-e5-small gives them 0.75 to 0.85. A cosine threshold tuned on one model
//! (the interjection gate, the relevance floor) means nothing on another, so both are set
//! in units of the model's own spread: `mean + z × sd` of the cosines between the query
//! of one and the passage of another of [`UNRELATED`], 40 short texts on 40 topics.
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

/// MiniLM's unrelated-pair mean and spread over [`UNRELATED`] (measured with
/// `amber-eval calibrate`, docs/EVAL.md "Per-model calibration"): the reference the
/// gate's `z` is read against.
const REFERENCE_MEAN: f32 = 0.045_354;
const REFERENCE_SD: f32 = 0.080_666;
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
}

impl Calibration {
    /// A cosine tuned on MiniLM, carried to this model: as many of its spreads above its
    /// unrelated mean as it was on MiniLM.
    pub fn carry(&self, minilm_cosine: f32) -> f32 {
        let z = (minilm_cosine - REFERENCE_MEAN) / REFERENCE_SD;
        self.unrelated_mean + z * self.unrelated_sd
    }

    /// The relevance floor: a hit whose best chunk is below it matches the query no
    /// better than unrelated text does (see [`crate::Query::floor`]).
    pub fn floor(&self) -> f32 {
        self.unrelated_mean + FLOOR_Z * self.unrelated_sd
    }

    /// The interjection gate for a gate tuned on MiniLM (`[interject] gate`).
    pub fn gate(&self, minilm_gate: f32) -> f32 {
        self.carry(minilm_gate)
    }

    /// A width of cosines on MiniLM (the judge's band below the gate), in this model's
    /// spread.
    pub fn spread(&self, minilm_width: f32) -> f32 {
        minilm_width * self.unrelated_sd / REFERENCE_SD
    }

    /// The default gate, carried.
    pub fn default_gate(&self) -> f32 {
        self.carry(REFERENCE_GATE)
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

    /// The calibration of `model` from the cosines of unrelated pairs.
    pub fn from_cosines(model: &str, mut cosines: Vec<f32>) -> Calibration {
        let n = cosines.len().max(1) as f32;
        let mean = cosines.iter().sum::<f32>() / n;
        let sd = (cosines.iter().map(|c| (c - mean) * (c - mean)).sum::<f32>() / n).sqrt();
        cosines.sort_by(f32::total_cmp);
        let p99 = cosines.get(((cosines.len().max(1) - 1) as f32 * 0.99) as usize).copied().unwrap_or(mean);
        Calibration {
            model: model.to_string(),
            unrelated_mean: mean,
            unrelated_sd: sd,
            unrelated_p99: p99,
            pairs: cosines.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_move_with_the_model_s_own_spread() {
        let minilm = Calibration::from_cosines(
            "minilm",
            vec![REFERENCE_MEAN - REFERENCE_SD, REFERENCE_MEAN + REFERENCE_SD],
        );
        assert!(
            (minilm.unrelated_mean - REFERENCE_MEAN).abs() < 1e-6
                && (minilm.unrelated_sd - REFERENCE_SD).abs() < 1e-6
        );
        assert!((minilm.gate(0.42) - 0.42).abs() < 1e-5, "MiniLM's gate is its own");
        assert!((minilm.floor() - (REFERENCE_MEAN + FLOOR_Z * REFERENCE_SD)).abs() < 1e-6);
        // A model that puts unrelated texts at 0.74 ± 0.03 (multilingual-e5-small).
        let e5 = Calibration::from_cosines("e5", vec![0.71, 0.77]);
        assert!((e5.unrelated_mean - 0.74).abs() < 1e-6 && (e5.unrelated_sd - 0.03).abs() < 1e-6);
        let z = (0.42 - REFERENCE_MEAN) / REFERENCE_SD;
        assert!((e5.gate(0.42) - (0.74 + z * 0.03)).abs() < 1e-5, "{}", e5.gate(0.42));
        assert!(e5.floor() > 0.74 && e5.floor() < e5.gate(0.42));
        assert!((e5.spread(0.05) - 0.05 * 0.03 / REFERENCE_SD).abs() < 1e-6);
        assert!(
            e5.describe(0.42).contains("relevance floor 0.79, interjection gate 0.88"),
            "{}",
            e5.describe(0.42)
        );
    }
}
