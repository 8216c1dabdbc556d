//! The dispatch: each method of the registry (`amber_ipc::protocol::Method`) to its
//! handler in `methods/`. The `match` is exhaustive, so a method declared without a
//! handler does not compile; each arm parses the params as the registry declares them
//! ([`params`]) and serializes the handler's answer as the declared result type
//! ([`reply`]), so a handler taking or answering another type does not compile either.

use std::sync::Arc;

use amber_ipc::protocol::{ErrorKind, ErrorObject, METHODS, Method, MethodSpec, Request, method as m};
use serde_json::Value;

use crate::methods::{
    admin, advice, agents, capture, checkpoint, compile, doctor, documents, get_advice, graph, ingest, judge,
    learn, lift, memory, model, note_words, outcome, portable, review, runs, scope, session, sessions,
    threads,
};
use crate::peer::Peer;
use crate::state::Shared;

/// The params of method `M`, as the registry declares them (`null` is `{}`).
fn params<M: MethodSpec>(v: Value) -> Result<M::Params, ErrorObject> {
    crate::rpc::params(M::METHOD.name(), v)
}

/// Answers one request.
pub(crate) async fn dispatch(req: Request, shared: &Arc<Shared>, peer: Peer) -> Result<Value, ErrorObject> {
    let Some(method) = Method::from_name(&req.method) else {
        return Err(ErrorObject::new(
            ErrorKind::MethodNotFound,
            format!(
                "unknown method {:?}; this daemon serves {}",
                req.method.chars().take(64).collect::<String>(),
                METHODS.join(", ")
            ),
        ));
    };
    let p = req.params;
    let answer = async move {
        match method {
            Method::Hello => reply::<m::Hello>(admin::hello(shared, params::<m::Hello>(p)?).await),
            Method::Status => reply::<m::Status>(admin::status(shared, params::<m::Status>(p)?).await),
            Method::Reindex => reply::<m::Reindex>(admin::reindex(shared, params::<m::Reindex>(p)?).await),
            Method::Shutdown => reply::<m::Shutdown>(admin::shutdown(params::<m::Shutdown>(p)?).await),
            Method::Identity => {
                reply::<m::Identity>(admin::identity(shared, params::<m::Identity>(p)?).await)
            }
            Method::Remember => {
                reply::<m::Remember>(memory::remember(shared, peer, params::<m::Remember>(p)?).await)
            }
            Method::RememberBatch => reply::<m::RememberBatch>(
                memory::remember_batch(shared, peer, params::<m::RememberBatch>(p)?).await,
            ),
            Method::Recall => reply::<m::Recall>(memory::recall(shared, peer, params::<m::Recall>(p)?).await),
            Method::Forget => reply::<m::Forget>(memory::forget(shared, peer, params::<m::Forget>(p)?).await),
            Method::Purge => reply::<m::Purge>(memory::purge(shared, peer, params::<m::Purge>(p)?).await),
            Method::Unforget => {
                reply::<m::Unforget>(memory::unforget(shared, peer, params::<m::Unforget>(p)?).await)
            }
            Method::AgentRegister => reply::<m::AgentRegister>(
                agents::register(shared, peer, params::<m::AgentRegister>(p)?).await,
            ),
            Method::AgentRestore => {
                reply::<m::AgentRestore>(agents::restore(shared, peer, params::<m::AgentRestore>(p)?).await)
            }
            Method::Links => reply::<m::Links>(memory::links(shared, params::<m::Links>(p)?).await),
            Method::Capture => {
                reply::<m::Capture>(capture::capture(shared, peer, params::<m::Capture>(p)?).await)
            }
            Method::Get => reply::<m::Get>(scope::get(shared, peer, params::<m::Get>(p)?).await),
            Method::ResolveScope => {
                reply::<m::ResolveScope>(scope::resolve_method(shared, params::<m::ResolveScope>(p)?).await)
            }
            Method::Scopes => reply::<m::Scopes>(scope::list(shared, params::<m::Scopes>(p)?).await),
            Method::ScopeMove => {
                reply::<m::ScopeMove>(scope::move_method(shared, peer, params::<m::ScopeMove>(p)?).await)
            }
            Method::MemoryMove => {
                reply::<m::MemoryMove>(scope::move_memory(shared, peer, params::<m::MemoryMove>(p)?).await)
            }
            Method::Memories => {
                reply::<m::Memories>(scope::memories(shared, peer, params::<m::Memories>(p)?).await)
            }
            Method::Documents => {
                reply::<m::Documents>(documents::files(shared, peer, params::<m::Documents>(p)?).await)
            }
            Method::Document => {
                reply::<m::Document>(documents::sections(shared, peer, params::<m::Document>(p)?).await)
            }
            Method::SessionStart => {
                reply::<m::SessionStart>(session::start(shared, params::<m::SessionStart>(p)?).await)
            }
            Method::SessionEvent => {
                reply::<m::SessionEvent>(session::event(shared, peer, params::<m::SessionEvent>(p)?).await)
            }
            Method::SessionCheckpoint => reply::<m::SessionCheckpoint>(
                checkpoint::checkpoint(shared, peer, params::<m::SessionCheckpoint>(p)?).await,
            ),
            Method::SessionEnd => {
                reply::<m::SessionEnd>(session::end_method(shared, peer, params::<m::SessionEnd>(p)?).await)
            }
            Method::SessionShow => {
                reply::<m::SessionShow>(session::show(shared, params::<m::SessionShow>(p)?).await)
            }
            Method::KgAdd => reply::<m::KgAdd>(graph::add(shared, params::<m::KgAdd>(p)?).await),
            Method::KgInvalidate => {
                reply::<m::KgInvalidate>(graph::invalidate(shared, params::<m::KgInvalidate>(p)?).await)
            }
            Method::KgQuery => {
                reply::<m::KgQuery>(graph::query(shared, params::<m::KgQuery>(p)?, false).await)
            }
            Method::KgTimeline => {
                reply::<m::KgTimeline>(graph::query(shared, params::<m::KgTimeline>(p)?, true).await)
            }
            Method::KgTraverse => {
                reply::<m::KgTraverse>(graph::traverse(shared, params::<m::KgTraverse>(p)?).await)
            }
            Method::KgStats => reply::<m::KgStats>(graph::stats(shared, params::<m::KgStats>(p)?).await),
            Method::KgEntities => {
                reply::<m::KgEntities>(graph::entities(shared, params::<m::KgEntities>(p)?).await)
            }
            Method::Outcome => {
                reply::<m::Outcome>(outcome::outcome(shared, peer, params::<m::Outcome>(p)?).await)
            }
            Method::Outcomes => {
                reply::<m::Outcomes>(outcome::outcomes(shared, peer, params::<m::Outcomes>(p)?).await)
            }
            Method::Unarchive => {
                reply::<m::Unarchive>(outcome::unarchive(shared, peer, params::<m::Unarchive>(p)?).await)
            }
            Method::ModelUse => {
                reply::<m::ModelUse>(model::model_use(shared, peer, params::<m::ModelUse>(p)?).await)
            }
            Method::SetTrust => {
                reply::<m::SetTrust>(outcome::set_trust(shared, peer, params::<m::SetTrust>(p)?).await)
            }
            Method::Archived => {
                reply::<m::Archived>(outcome::archived(shared, peer, params::<m::Archived>(p)?).await)
            }
            Method::Audit => reply::<m::Audit>(outcome::audit(shared, peer, params::<m::Audit>(p)?).await),
            Method::Thread => {
                reply::<m::Thread>(threads::thread(shared, peer, params::<m::Thread>(p)?).await)
            }
            Method::Guard => reply::<m::Guard>(threads::guard(shared, params::<m::Guard>(p)?).await),
            Method::Release => reply::<m::Release>(threads::release(shared, params::<m::Release>(p)?).await),
            Method::Lift => reply::<m::Lift>(lift::lift(shared, params::<m::Lift>(p)?).await),
            Method::RunRecord => {
                reply::<m::RunRecord>(runs::record(shared, params::<m::RunRecord>(p)?).await)
            }
            Method::RunReward => {
                reply::<m::RunReward>(runs::reward(shared, peer, params::<m::RunReward>(p)?).await)
            }
            Method::Runs => reply::<m::Runs>(runs::list(shared, params::<m::Runs>(p)?).await),
            Method::RunShow => reply::<m::RunShow>(runs::show(shared, params::<m::RunShow>(p)?).await),
            Method::Review => reply::<m::Review>(review::review(shared, peer, params::<m::Review>(p)?).await),
            Method::GetAdvice => {
                reply::<m::GetAdvice>(get_advice::get(shared, params::<m::GetAdvice>(p)?).await)
            }
            Method::AdviceLearn => {
                reply::<m::AdviceLearn>(learn::learn(shared, params::<m::AdviceLearn>(p)?).await)
            }
            Method::AdviceShow => {
                reply::<m::AdviceShow>(advice::show(shared, params::<m::AdviceShow>(p)?).await)
            }
            Method::AdviceList => {
                reply::<m::AdviceList>(advice::list(shared, params::<m::AdviceList>(p)?).await)
            }
            Method::Ingest => reply::<m::Ingest>(ingest::ingest(shared, peer, params::<m::Ingest>(p)?).await),
            Method::Indexed => reply::<m::Indexed>(ingest::indexed(shared, params::<m::Indexed>(p)?).await),
            Method::Compile => {
                reply::<m::Compile>(compile::method(shared, peer, params::<m::Compile>(p)?).await)
            }
            Method::JudgeRuns => {
                reply::<m::JudgeRuns>(judge::judge(shared, params::<m::JudgeRuns>(p)?).await)
            }
            Method::NoteVerdict => reply::<m::NoteVerdict>(
                note_words::note_verdict(shared, peer, params::<m::NoteVerdict>(p)?).await,
            ),
            Method::Doctor => reply::<m::Doctor>(doctor::doctor(shared, params::<m::Doctor>(p)?).await),
            Method::Judgements => {
                reply::<m::Judgements>(judge::judgements(shared, params::<m::Judgements>(p)?).await)
            }
            Method::Export => {
                reply::<m::Export>(portable::export(shared, peer, params::<m::Export>(p)?).await)
            }
            Method::Import => {
                reply::<m::Import>(portable::import(shared, peer, params::<m::Import>(p)?).await)
            }
            Method::Backup => {
                reply::<m::Backup>(portable::backup(shared, peer, params::<m::Backup>(p)?).await)
            }
            Method::Sessions => reply::<m::Sessions>(sessions::list(shared, params::<m::Sessions>(p)?).await),
            Method::UiStart => {
                reply::<m::UiStart>(admin::ui_start(shared, peer, params::<m::UiStart>(p)?).await)
            }
        }
    };
    // A write asked on the task of a method declared a read is refused (`rpc::write_in_lane`).
    crate::rpc::DECLARED.scope(method.access(), answer).await
}

/// A handler's answer on the wire. Its type is the registry's result type of `M`, so a
/// handler that answers another type does not compile.
fn reply<M: MethodSpec>(r: Result<M::Result, ErrorObject>) -> Result<Value, ErrorObject> {
    crate::rpc::to_value(&r?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_kind_is_in_the_protocol_document_with_its_code() {
        let doc = include_str!("../../docs/PROTOCOL.md");
        let missing: Vec<String> = amber_ipc::protocol::ErrorKind::ALL
            .iter()
            .filter(|k| {
                !doc.lines()
                    .any(|l| l.contains(&format!("`{}`", k.as_str())) && l.contains(&k.code().to_string()))
            })
            .map(|k| format!("{} ({})", k.as_str(), k.code()))
            .collect();
        assert!(
            missing.is_empty(),
            "docs/PROTOCOL.md lacks a line naming these kinds with their codes: {missing:?}"
        );
    }

    #[test]
    fn every_method_has_its_section_in_the_protocol_document() {
        // A heading names one method or several (`#### `runs`, `run_show``).
        let headings: Vec<&str> =
            include_str!("../../docs/PROTOCOL.md").lines().filter(|l| l.starts_with('#')).collect();
        let missing: Vec<&str> = METHODS
            .iter()
            .copied()
            .filter(|m| !headings.iter().any(|h| h.contains(&format!("`{m}`"))))
            .collect();
        assert!(missing.is_empty(), "docs/PROTOCOL.md has no section for {missing:?}");
    }
}
