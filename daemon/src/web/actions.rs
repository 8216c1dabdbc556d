//! The forms' POSTs, each one method of the registry called as the person (the web door),
//! so the same rules and logs apply as at the command line: forget, unforget (a
//! person's), unarchive, an outcome, a memory's trust (promote or demote), and a move to
//! another scope. The auth layer has already checked the form token and the origin. A
//! change answers 303 to the memory's page (after a move, its page under its new id).

use std::sync::Arc;

use amber_core::origin::Trust;
use amber_core::{MemoryId, Outcome};
use amber_ipc::protocol::{
    ErrorKind, ErrorObject, GetParams, IdParams, MemoryMoveParams, OutcomeParams, SetTrustParams, method as m,
};
use axum::Form;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::Web;
use super::html::{error, url};

/// A change's form (the form token is checked before this is read).
#[derive(Deserialize)]
pub(crate) struct ActionForm {
    #[serde(default)]
    result: Option<String>,
    #[serde(default)]
    note: Option<String>,
    #[serde(default)]
    trust: Option<String>,
    #[serde(default)]
    to: Option<String>,
}

fn invalid(msg: impl Into<String>) -> ErrorObject {
    ErrorObject::new(ErrorKind::InvalidParams, msg)
}

/// `POST /memory/{id}/{forget|unforget|unarchive|outcome|trust|move}`.
pub(crate) async fn act(
    State(web): State<Arc<Web>>,
    Path((id, action)): Path<(String, String)>,
    Form(f): Form<ActionForm>,
) -> Response {
    match run(&web, &id, &action, f).await {
        Ok(id) => (StatusCode::SEE_OTHER, [(header::LOCATION, format!("/memory/{}", url(id.as_str())))])
            .into_response(),
        Err(e) => error(&e),
    }
}

async fn run(web: &Web, id: &str, action: &str, f: ActionForm) -> Result<MemoryId, ErrorObject> {
    let whole = || id.parse::<MemoryId>().map_err(|e| invalid(e.to_string()));
    let memory = match action {
        "forget" => web.call::<m::Forget>(IdParams { id: whole()? }).await?.memory,
        "unforget" => web.call::<m::Unforget>(IdParams { id: whole()? }).await?.memory,
        "unarchive" => {
            web.call::<m::Unarchive>(GetParams { id: id.to_string(), session_id: None }).await?.memory
        }
        "outcome" => {
            let result = match f.result.as_deref() {
                Some("success") => Outcome::Success,
                Some("failure") => Outcome::Failure,
                Some("neutral") => Outcome::Neutral,
                other => {
                    return Err(invalid(format!(
                        "result must be success, failure or neutral, got {other:?}"
                    )));
                }
            };
            let note = f.note.filter(|n| !n.trim().is_empty());
            let p = OutcomeParams { memory_id: id.to_string(), result, session_id: None, agent: None, note };
            web.call::<m::Outcome>(p).await?.memory
        }
        "trust" => {
            let trust = match f.trust.as_deref() {
                Some("person") => Trust::Person,
                Some("agent") => Trust::Agent,
                Some("external") => Trust::External,
                other => {
                    return Err(invalid(format!("trust must be person, agent or external, got {other:?}")));
                }
            };
            web.call::<m::SetTrust>(SetTrustParams { id: id.to_string(), trust }).await?.memory
        }
        "move" => {
            let to = super::html::scope_param(f.to.as_deref())?
                .ok_or_else(|| invalid("name the scope to move it to"))?;
            let r = web.call::<m::MemoryMove>(MemoryMoveParams { id: id.to_string(), to }).await?;
            tracing::info!(door = "web", action, memory = %r.new_id, "changed from the web view");
            return Ok(r.new_id);
        }
        other => return Err(ErrorObject::new(ErrorKind::NotFound, format!("no such change: {other:?}"))),
    };
    tracing::info!(door = "web", action, memory = %memory.id, "changed from the web view");
    Ok(memory.id)
}
