//! What the tests against a fake OpenAI-compatible endpoint share: the endpoint
//! (`amber_tiers::testing`, on 127.0.0.1), and a learner for it.
#![allow(dead_code)]

use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use amber_tiers::advice::Learner;
use amber_tiers::testing::{FakeModel, Reply, serve};

/// A fake endpoint: every request body is kept; `answer` gives the assistant's reply
/// for a body (None: hold the connection for 3 s, past the test's deadline).
pub struct Fake {
    pub url: String,
    pub bodies: Arc<Mutex<Vec<serde_json::Value>>>,
    pub answered: Arc<AtomicUsize>,
    pub model: FakeModel,
}

/// A [`Fake`] whose `answer` is given the system prompt and the user's message, joined
/// by a newline.
pub fn fake(answer: impl Fn(&str) -> Option<String> + Send + 'static) -> Fake {
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let seen = bodies.clone();
    let model = serve(move |req| {
        seen.lock().unwrap().push(req.json());
        match answer(&format!("{}\n{}", req.system(), req.user())) {
            Some(content) => Reply::Answer(content),
            None => Reply::hold(Duration::from_secs(3)),
        }
    });
    Fake { url: model.url.clone(), bodies, answered: model.answered.clone(), model }
}

pub fn learner(url: &str) -> Learner {
    Learner::new(url, "test-model", None, Duration::from_secs(5)).unwrap()
}
