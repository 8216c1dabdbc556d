//! Who reads through `recall` and `get`, and what they may read: a person (the command
//! line, outside any agent) reads everything; an agent in a known session reads what that
//! session may be served, what its agent addressed to others and what it was served; an
//! agent in no known session reads only what is addressed to no one in particular.
//! Another agent's mail and diaries (`to: <agent>`, `to: self`) stay theirs.

use std::sync::Arc;

use amber_core::Memory;
use amber_core::origin::Trust;
use amber_ipc::protocol::ErrorObject;
use amber_tiers::session::{Session, anyone_may_read};

use crate::peer::Peer;
use crate::state::Shared;

/// The reader of a `recall` or `get`.
pub(crate) enum Reader {
    /// A person: everything.
    Person,
    /// An agent in this session.
    Agent(Box<Session>),
    /// An agent in no known session.
    Anonymous,
}

impl Reader {
    /// The reader for this peer and session (live or stored; an unknown one reads as no
    /// session).
    pub(crate) async fn of(
        shared: &Arc<Shared>,
        peer: Peer,
        session_id: Option<&str>,
    ) -> Result<Reader, ErrorObject> {
        let session = match session_id {
            Some(id) if peer.writer_trust() != Trust::Person => super::records::find(shared, id).await?,
            _ => None,
        };
        Ok(Reader::new(peer, session.map(|(s, _)| s)))
    }

    /// The reader for this peer in this session, if any.
    pub(crate) fn new(peer: Peer, session: Option<Session>) -> Reader {
        match session {
            _ if peer.writer_trust() == Trust::Person => Reader::Person,
            Some(s) => Reader::Agent(Box::new(s)),
            None => Reader::Anonymous,
        }
    }

    /// True when this reader may read the memory.
    pub(crate) fn may_read(&self, m: &Memory) -> bool {
        match self {
            Reader::Person => true,
            Reader::Agent(s) => s.may_read(m),
            Reader::Anonymous => anyone_may_read(m),
        }
    }
}
