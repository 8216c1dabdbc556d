//! The dispatch: each method of the registry (`amber_ipc::protocol::Method`) to its
//! handler in `methods/`. The `match` is exhaustive, so a method declared without a
//! handler does not compile, and each arm parses the params as the registry declares them
//! ([`params`]), so a handler taking another type does not compile either. In debug
//! builds (every test of the daemon) each reply is checked against the declared result
//! type; a reply of another shape is an internal error, logged.

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
    let v = match method {
        Method::Hello => admin::hello(shared, params::<m::Hello>(p)?).await,
        Method::Status => admin::status(shared, params::<m::Status>(p)?).await,
        Method::Reindex => admin::reindex(shared, params::<m::Reindex>(p)?).await,
        Method::Shutdown => admin::shutdown(params::<m::Shutdown>(p)?).await,
        Method::Identity => admin::identity(shared, params::<m::Identity>(p)?).await,
        Method::Remember => memory::remember(shared, peer, params::<m::Remember>(p)?).await,
        Method::RememberBatch => memory::remember_batch(shared, peer, params::<m::RememberBatch>(p)?).await,
        Method::Recall => memory::recall(shared, peer, params::<m::Recall>(p)?).await,
        Method::Forget => memory::forget(shared, peer, params::<m::Forget>(p)?).await,
        Method::Purge => memory::purge(shared, peer, params::<m::Purge>(p)?).await,
        Method::Unforget => memory::unforget(shared, peer, params::<m::Unforget>(p)?).await,
        Method::AgentRegister => agents::register(shared, peer, params::<m::AgentRegister>(p)?).await,
        Method::AgentRestore => agents::restore(shared, peer, params::<m::AgentRestore>(p)?).await,
        Method::Links => memory::links(shared, params::<m::Links>(p)?).await,
        Method::Capture => capture::capture(shared, peer, params::<m::Capture>(p)?).await,
        Method::Get => scope::get(shared, peer, params::<m::Get>(p)?).await,
        Method::ResolveScope => scope::resolve_method(shared, params::<m::ResolveScope>(p)?).await,
        Method::Scopes => scope::list(shared, params::<m::Scopes>(p)?).await,
        Method::ScopeMove => scope::move_method(shared, peer, params::<m::ScopeMove>(p)?).await,
        Method::MemoryMove => scope::move_memory(shared, peer, params::<m::MemoryMove>(p)?).await,
        Method::Memories => scope::memories(shared, peer, params::<m::Memories>(p)?).await,
        Method::Documents => documents::files(shared, peer, params::<m::Documents>(p)?).await,
        Method::Document => documents::sections(shared, peer, params::<m::Document>(p)?).await,
        Method::SessionStart => session::start(shared, params::<m::SessionStart>(p)?).await,
        Method::SessionEvent => session::event(shared, peer, params::<m::SessionEvent>(p)?).await,
        Method::SessionCheckpoint => {
            checkpoint::checkpoint(shared, peer, params::<m::SessionCheckpoint>(p)?).await
        }
        Method::SessionEnd => session::end_method(shared, peer, params::<m::SessionEnd>(p)?).await,
        Method::SessionShow => session::show(shared, params::<m::SessionShow>(p)?).await,
        Method::KgAdd => graph::add(shared, params::<m::KgAdd>(p)?).await,
        Method::KgInvalidate => graph::invalidate(shared, params::<m::KgInvalidate>(p)?).await,
        Method::KgQuery => graph::query(shared, params::<m::KgQuery>(p)?, false).await,
        Method::KgTimeline => graph::query(shared, params::<m::KgTimeline>(p)?, true).await,
        Method::KgTraverse => graph::traverse(shared, params::<m::KgTraverse>(p)?).await,
        Method::KgStats => graph::stats(shared, params::<m::KgStats>(p)?).await,
        Method::KgEntities => graph::entities(shared, params::<m::KgEntities>(p)?).await,
        Method::Outcome => outcome::outcome(shared, peer, params::<m::Outcome>(p)?).await,
        Method::Outcomes => outcome::outcomes(shared, peer, params::<m::Outcomes>(p)?).await,
        Method::Unarchive => outcome::unarchive(shared, peer, params::<m::Unarchive>(p)?).await,
        Method::ModelUse => model::model_use(shared, peer, params::<m::ModelUse>(p)?).await,
        Method::SetTrust => outcome::set_trust(shared, peer, params::<m::SetTrust>(p)?).await,
        Method::Archived => outcome::archived(shared, peer, params::<m::Archived>(p)?).await,
        Method::Audit => outcome::audit(shared, peer, params::<m::Audit>(p)?).await,
        Method::Thread => threads::thread(shared, peer, params::<m::Thread>(p)?).await,
        Method::Guard => threads::guard(shared, params::<m::Guard>(p)?).await,
        Method::Release => threads::release(shared, params::<m::Release>(p)?).await,
        Method::Lift => lift::lift(shared, params::<m::Lift>(p)?).await,
        Method::RunRecord => runs::record(shared, params::<m::RunRecord>(p)?).await,
        Method::RunReward => runs::reward(shared, peer, params::<m::RunReward>(p)?).await,
        Method::Runs => runs::list(shared, params::<m::Runs>(p)?).await,
        Method::RunShow => runs::show(shared, params::<m::RunShow>(p)?).await,
        Method::Review => review::review(shared, peer, params::<m::Review>(p)?).await,
        Method::GetAdvice => get_advice::get(shared, params::<m::GetAdvice>(p)?).await,
        Method::AdviceLearn => learn::learn(shared, params::<m::AdviceLearn>(p)?).await,
        Method::AdviceShow => advice::show(shared, params::<m::AdviceShow>(p)?).await,
        Method::AdviceList => advice::list(shared, params::<m::AdviceList>(p)?).await,
        Method::Ingest => ingest::ingest(shared, peer, params::<m::Ingest>(p)?).await,
        Method::Indexed => ingest::indexed(shared, params::<m::Indexed>(p)?).await,
        Method::Compile => compile::method(shared, peer, params::<m::Compile>(p)?).await,
        Method::JudgeRuns => judge::judge(shared, params::<m::JudgeRuns>(p)?).await,
        Method::NoteVerdict => note_words::note_verdict(shared, peer, params::<m::NoteVerdict>(p)?).await,
        Method::Doctor => doctor::doctor(shared, params::<m::Doctor>(p)?).await,
        Method::Judgements => judge::judgements(shared, params::<m::Judgements>(p)?).await,
        Method::Export => portable::export(shared, peer, params::<m::Export>(p)?).await,
        Method::Import => portable::import(shared, peer, params::<m::Import>(p)?).await,
        Method::Backup => portable::backup(shared, peer, params::<m::Backup>(p)?).await,
        Method::Sessions => sessions::list(shared, params::<m::Sessions>(p)?).await,
        Method::UiStart => admin::ui_start(shared, peer, params::<m::UiStart>(p)?).await,
    }?;
    checked(method, v)
}

/// The reply, checked against the registry's result type in debug builds.
#[cfg(debug_assertions)]
fn checked(method: Method, v: Value) -> Result<Value, ErrorObject> {
    match method.check_result(&v) {
        Ok(()) => Ok(v),
        Err(e) => {
            tracing::error!(method = method.name(), cause = %e, "a reply is not the registry's result type");
            Err(ErrorObject::new(
                ErrorKind::Internal,
                format!("internal error: {}'s reply is not its declared result type: {e}", method.name()),
            ))
        }
    }
}

#[cfg(not(debug_assertions))]
fn checked(_: Method, v: Value) -> Result<Value, ErrorObject> {
    Ok(v)
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
