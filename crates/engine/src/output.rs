//! The engine's side of the event stream.

use std::sync::{Arc, RwLock};

use jucode_protocol::Event;
use tokio::sync::mpsc;

/// An event and the session it belongs to (the wire's `session` field).
#[derive(Debug, Clone)]
pub struct Emitted {
    pub session: Arc<str>,
    pub event: Event,
}

/// A cloneable emitter. The session id is shared so that a `/resume` that
/// switches sessions re-labels every later event, workers included.
#[derive(Clone)]
pub struct Output {
    tx: mpsc::UnboundedSender<Emitted>,
    session: Arc<RwLock<Arc<str>>>,
}

impl Output {
    pub fn new(tx: mpsc::UnboundedSender<Emitted>) -> Self {
        Output {
            tx,
            session: Arc::new(RwLock::new(Arc::from(""))),
        }
    }

    pub fn set_session(&self, id: &str) {
        *self.session.write().expect("session lock") = Arc::from(id);
    }

    pub fn session(&self) -> Arc<str> {
        self.session.read().expect("session lock").clone()
    }

    /// Sends one event. A closed channel means the front-end is gone; the
    /// event has nowhere to go, so it is dropped.
    pub fn emit(&self, event: Event) {
        let session = self.session();
        let _ = self.tx.send(Emitted { session, event });
    }
}
