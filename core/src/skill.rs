//! Skills: procedures a model compiles from the team's own documents (a scope's
//! `compile_sources`), each with the sources it cites, and the step graph compiled
//! from it. Unlike an advice note, a skill keeps the exact tools, commands, values and
//! checks its sources give. Both are versioned documents; the checks here are pure.

use crate::{Millis, Scope};

/// The most steps a skill or a step graph has.
pub const MAX_STEPS: usize = 30;
/// The metadata key of a memory holding a skill (`amber compile`).
pub const SKILL_KEY: &str = "skill";

/// The metadata key of the invalidation that retires a skill's version (replaced by a
/// newer one, or its documents gone).
pub const REVISION_KEY: &str = "skill_revision";

/// True when a memory's metadata holds a skill, or the revision that retired one.
pub fn is_skill(metadata: &serde_json::Value) -> bool {
    metadata.get(SKILL_KEY).is_some_and(serde_json::Value::is_object)
        || metadata.get(REVISION_KEY).is_some_and(serde_json::Value::is_object)
}
/// The most `If` lines a skill has.
pub const MAX_IFS: usize = 20;
/// The longest name (of a skill, a step, an input or an output), in characters.
pub const MAX_NAME_CHARS: usize = 48;
/// The longest line of a skill (its `When`, a step, an `If` line), in characters.
pub const MAX_LINE_CHARS: usize = 1_000;
/// The longest string of a step graph, in characters.
pub const MAX_GRAPH_CHARS: usize = 500;
/// The most items in one list of a step graph (triggers, inputs, a step's outputs...).
pub const MAX_GRAPH_ITEMS: usize = 30;
/// The most sources one skill cites.
pub const MAX_CITES: usize = 64;

/// A source a skill was compiled from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct SourceRef {
    /// The file, relative to the project root, as ingested.
    pub path: String,
    /// The SHA-256 (hex) of the file's text the skill was compiled from.
    pub sha256: String,
}

/// One step of a step graph.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GraphStep {
    /// Its name, kebab-case (`check-the-config`), unique in the graph.
    pub name: String,
    /// What it does, one line.
    pub does: String,
    /// The named inputs it takes: inputs of the graph or outputs of earlier steps.
    #[serde(default)]
    pub inputs: Vec<String>,
    /// The named outputs it gives.
    #[serde(default)]
    pub outputs: Vec<String>,
}

/// A skill as a step graph: what it is for, what triggers it, when not to use it, and
/// its steps in order with named inputs and outputs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StepGraph {
    /// What the skill achieves, one line.
    pub purpose: String,
    /// Requests or events that call for it.
    pub triggers: Vec<String>,
    /// When not to use it.
    #[serde(default)]
    pub not_for: Vec<String>,
    /// The named inputs the graph starts from.
    #[serde(default)]
    pub inputs: Vec<String>,
    /// The steps, in order.
    pub steps: Vec<GraphStep>,
}

/// One version of a skill.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Skill {
    /// Where it lives (the scope whose sources it was compiled from).
    pub scope: Scope,
    /// Its key in the scope, kebab-case.
    pub name: String,
    /// Its version, from 1.
    pub version: u32,
    /// Which tasks it is for.
    pub when: String,
    /// The steps, in order, with the exact tools, values and checks of the sources.
    pub steps: Vec<String>,
    /// One line per edge case, `If ... then ...`.
    #[serde(default)]
    pub ifs: Vec<String>,
    /// The sources it rests on (at least one).
    pub cites: Vec<SourceRef>,
    /// The same procedure as a step graph.
    pub graph: StepGraph,
    /// The model that compiled it (`openai:<model>`).
    pub model: String,
    /// When this version was compiled.
    pub created_at: Millis,
}

/// True when `s` is kebab-case: lower-case ASCII letters and digits in words joined by
/// single `-`, at most [`MAX_NAME_CHARS`].
pub fn is_kebab(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_NAME_CHARS
        && s.split('-')
            .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()))
}

/// `s` made kebab-case (lower-cased, every run of other characters one `-`); None when
/// nothing is left or it is longer than [`MAX_NAME_CHARS`].
pub fn kebab(s: &str) -> Option<String> {
    let lower: String =
        s.trim().to_lowercase().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    let k = lower.split('-').filter(|w| !w.is_empty()).collect::<Vec<_>>().join("-");
    is_kebab(&k).then_some(k)
}

fn check_text(what: &str, s: &str, max: usize) -> Result<(), String> {
    if s.trim().is_empty() {
        return Err(format!("{what} is empty"));
    }
    let n = s.chars().count();
    if n > max {
        return Err(format!("{what} is {n} characters, at most {max}"));
    }
    Ok(())
}

fn check_names(what: &str, names: &[String]) -> Result<(), String> {
    if names.len() > MAX_GRAPH_ITEMS {
        return Err(format!("{what} lists {} names, at most {MAX_GRAPH_ITEMS}", names.len()));
    }
    match names.iter().find(|n| !is_kebab(n)) {
        Some(bad) => Err(format!("{what}: {bad:?} is not a kebab-case name")),
        None => Ok(()),
    }
}

fn check_lines(what: &str, lines: &[String]) -> Result<(), String> {
    if lines.len() > MAX_GRAPH_ITEMS {
        return Err(format!("{what} has {} lines, at most {MAX_GRAPH_ITEMS}", lines.len()));
    }
    lines.iter().try_for_each(|l| check_text(what, l, MAX_GRAPH_CHARS))
}

impl StepGraph {
    /// Checks the graph: a purpose, at least one trigger, 1 to [`MAX_STEPS`] steps with
    /// unique kebab-case names and a `does` line each, kebab-case input and output
    /// names, every step input a graph input or an output of an earlier step, and every
    /// string at most [`MAX_GRAPH_CHARS`] characters.
    pub fn validate(&self) -> Result<(), String> {
        check_text("the purpose", &self.purpose, MAX_GRAPH_CHARS)?;
        if self.triggers.is_empty() {
            return Err("the graph has no trigger".into());
        }
        check_lines("a trigger", &self.triggers)?;
        check_lines("a not-for line", &self.not_for)?;
        check_names("the graph's inputs", &self.inputs)?;
        if self.steps.is_empty() || self.steps.len() > MAX_STEPS {
            return Err(format!("the graph has {} steps, it must have 1 to {MAX_STEPS}", self.steps.len()));
        }
        let mut available: Vec<&str> = self.inputs.iter().map(String::as_str).collect();
        let mut names: Vec<&str> = Vec::new();
        for (i, step) in self.steps.iter().enumerate() {
            let at = format!("step {} ({:?})", i + 1, step.name);
            if !is_kebab(&step.name) {
                return Err(format!("{at}: the name is not kebab-case"));
            }
            if names.contains(&step.name.as_str()) {
                return Err(format!("{at}: the name is used twice"));
            }
            names.push(&step.name);
            check_text(&format!("{at}: what it does"), &step.does, MAX_GRAPH_CHARS)?;
            check_names(&format!("{at}: inputs"), &step.inputs)?;
            check_names(&format!("{at}: outputs"), &step.outputs)?;
            if let Some(missing) = step.inputs.iter().find(|n| !available.contains(&n.as_str())) {
                return Err(format!(
                    "{at}: input {missing:?} is neither a graph input nor an output of an earlier step"
                ));
            }
            available.extend(step.outputs.iter().map(String::as_str));
        }
        Ok(())
    }
}

impl Skill {
    /// The skill as markdown: `## When`, `## Steps` (numbered), `## If` (one `- If ...`
    /// line each; left out when there is none) and `## Sources` (path and the first 12
    /// characters of its SHA-256).
    pub fn text(&self) -> String {
        let mut out = format!("## When\n{}\n\n## Steps\n", self.when.trim());
        for (i, step) in self.steps.iter().enumerate() {
            out.push_str(&format!("{}. {}\n", i + 1, step.trim()));
        }
        if !self.ifs.is_empty() {
            out.push_str("\n## If\n");
            for line in &self.ifs {
                let line = line.trim();
                let has_if = line.get(..3).is_some_and(|p| p.eq_ignore_ascii_case("if "));
                out.push_str(&if has_if { format!("- {line}\n") } else { format!("- If {line}\n") });
            }
        }
        out.push_str("\n## Sources\n");
        for c in &self.cites {
            let short: String = c.sha256.chars().take(12).collect();
            out.push_str(&format!("- {} ({short})\n", c.path));
        }
        out
    }

    /// Checks the skill: a kebab-case name, a version from 1, a `When` line, 1 to
    /// [`MAX_STEPS`] steps, at most [`MAX_IFS`] `If` lines, lines of at most
    /// [`MAX_LINE_CHARS`], 1 to [`MAX_CITES`] distinct cited paths with a SHA-256 each,
    /// and a valid graph.
    pub fn validate(&self) -> Result<(), String> {
        if !is_kebab(&self.name) {
            return Err(format!("the name {:?} is not kebab-case", self.name));
        }
        if self.version == 0 {
            return Err("versions start at 1".into());
        }
        check_text("the When line", &self.when, MAX_LINE_CHARS)?;
        if self.steps.is_empty() || self.steps.len() > MAX_STEPS {
            return Err(format!("the skill has {} steps, it must have 1 to {MAX_STEPS}", self.steps.len()));
        }
        for (i, step) in self.steps.iter().enumerate() {
            check_text(&format!("step {}", i + 1), step, MAX_LINE_CHARS)?;
        }
        if self.ifs.len() > MAX_IFS {
            return Err(format!("the skill has {} If lines, at most {MAX_IFS}", self.ifs.len()));
        }
        for (i, line) in self.ifs.iter().enumerate() {
            check_text(&format!("If line {}", i + 1), line, MAX_LINE_CHARS)?;
        }
        if self.cites.is_empty() {
            return Err("the skill cites no source".into());
        }
        if self.cites.len() > MAX_CITES {
            return Err(format!("the skill cites {} sources, at most {MAX_CITES}", self.cites.len()));
        }
        for (i, c) in self.cites.iter().enumerate() {
            if c.path.trim().is_empty() {
                return Err("a cited source has no path".into());
            }
            if c.sha256.len() != 64
                || !c.sha256.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            {
                return Err(format!("the cited source {} has no SHA-256 in lower-case hex", c.path));
            }
            if self.cites[..i].iter().any(|o| o.path == c.path) {
                return Err(format!("the source {} is cited twice", c.path));
            }
        }
        self.graph.validate().map_err(|e| format!("the step graph: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(name: &str, inputs: &[&str], outputs: &[&str]) -> GraphStep {
        GraphStep {
            name: name.into(),
            does: format!("does {name}"),
            inputs: inputs.iter().map(|s| s.to_string()).collect(),
            outputs: outputs.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn graph(steps: Vec<GraphStep>) -> StepGraph {
        StepGraph {
            purpose: "Release a build".into(),
            triggers: vec!["a release is asked for".into()],
            not_for: vec![],
            inputs: vec!["version".into()],
            steps,
        }
    }

    fn skill() -> Skill {
        Skill {
            scope: "proj".parse().unwrap(),
            name: "cut-a-release".into(),
            version: 1,
            when: "A release is due.".into(),
            steps: vec!["Run `make dist VERSION=1.2`.".into(), "Check `sha256sum -c SUMS`.".into()],
            ifs: vec!["If the check fails then rebuild.".into(), "the tag exists, bump it.".into()],
            cites: vec![SourceRef { path: "docs/release.md".into(), sha256: "ab".repeat(32) }],
            graph: graph(vec![step("build", &["version"], &["tarball"]), step("verify", &["tarball"], &[])]),
            model: "openai:m".into(),
            created_at: 5,
        }
    }

    #[test]
    fn kebab_names_are_checked_and_made() {
        assert!(is_kebab("read-the-config2"));
        for bad in ["", "Read", "a--b", "-a", "a-", "a_b", "a/b", &"x".repeat(49)] {
            assert!(!is_kebab(bad), "{bad:?}");
        }
        assert_eq!(kebab("  Cut a Release (v2)! ").as_deref(), Some("cut-a-release-v2"));
        assert_eq!(kebab("--"), None);
        assert_eq!(kebab(&"x".repeat(49)), None);
    }

    #[test]
    fn a_graph_needs_inputs_produced_earlier_and_unique_kebab_names() {
        assert_eq!(skill().graph.validate(), Ok(()));
        let later = graph(vec![step("verify", &["tarball"], &[]), step("build", &["version"], &["tarball"])]);
        assert!(later.validate().unwrap_err().contains("earlier step"));
        let twice = graph(vec![step("build", &[], &[]), step("build", &[], &[])]);
        assert!(twice.validate().unwrap_err().contains("twice"));
        let upper = graph(vec![step("Build It", &[], &[])]);
        assert!(upper.validate().unwrap_err().contains("kebab"));
        let bad_output = graph(vec![step("build", &[], &["The Tarball"])]);
        assert!(bad_output.validate().unwrap_err().contains("kebab"));
        assert!(graph(vec![]).validate().unwrap_err().contains("1 to 30"));
        assert!(graph((0..31).map(|i| step(&format!("s{i}"), &[], &[])).collect()).validate().is_err());
        let mut g = graph(vec![step("build", &[], &[])]);
        g.triggers.clear();
        assert!(g.validate().unwrap_err().contains("trigger"));
        let mut g = graph(vec![step("build", &[], &[])]);
        g.purpose = " ".into();
        assert!(g.validate().unwrap_err().contains("purpose"));
        let mut g = graph(vec![step("build", &[], &[])]);
        g.steps[0].does = "x".repeat(501);
        assert!(g.validate().unwrap_err().contains("at most 500"));
        g.steps[0].does.clear();
        assert!(g.validate().unwrap_err().contains("empty"));
    }

    #[test]
    fn a_skill_cites_a_source_and_has_steps() {
        assert_eq!(skill().validate(), Ok(()));
        let mut s = skill();
        s.cites.clear();
        assert!(s.validate().unwrap_err().contains("cites no source"));
        let mut s = skill();
        s.cites[0].sha256 = "XYZ".into();
        assert!(s.validate().unwrap_err().contains("SHA-256"));
        let mut s = skill();
        s.cites.push(s.cites[0].clone());
        assert!(s.validate().unwrap_err().contains("twice"));
        let mut s = skill();
        s.steps.clear();
        assert!(s.validate().is_err());
        let mut s = skill();
        s.name = "Cut A Release".into();
        assert!(s.validate().unwrap_err().contains("kebab"));
        let mut s = skill();
        s.graph.steps[1].inputs = vec!["signature".into()];
        assert!(s.validate().unwrap_err().starts_with("the step graph"));
    }

    #[test]
    fn the_text_has_when_numbered_steps_if_lines_and_sources() {
        let t = skill().text();
        assert_eq!(
            t,
            format!(
                "## When\nA release is due.\n\n## Steps\n1. Run `make dist VERSION=1.2`.\n2. Check `sha256sum -c \
                 SUMS`.\n\n## If\n- If the check fails then rebuild.\n- If the tag exists, bump it.\n\n## \
                 Sources\n- docs/release.md ({})\n",
                "ab".repeat(6)
            )
        );
        let mut s = skill();
        s.ifs.clear();
        assert!(!s.text().contains("## If"));
    }

    #[test]
    fn a_skill_round_trips_through_json() {
        let s = skill();
        let back: Skill = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back, s);
    }
}
