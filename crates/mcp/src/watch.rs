//! Per-connection background work: re-listing on list-changed
//! notifications, and noticing a server that went away.

use std::sync::{Arc, Weak};
use std::time::Duration;

use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::service::RoleClient;
use rmcp::Peer;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio_util::sync::CancellationToken;

use crate::client::{list_all, Connection, Refresh};
use crate::errors::describe;
use crate::manager::{Phase, Shared};

/// Bound on one re-listing after a list-changed notification.
const RELIST_TIMEOUT: Duration = Duration::from_secs(30);

/// Starts the tasks of a freshly stored connection. They hold only weak
/// references, and end when the connection's `closed` token is cancelled.
pub(crate) fn spawn(
    shared: Weak<Shared>,
    name: String,
    gen: u64,
    connection: &Arc<Connection>,
    refresh: UnboundedReceiver<Refresh>,
) {
    let closed = connection.closed.clone();
    if connection.is_modern() {
        // The 2026 revision pushes nothing unasked: list changes come only
        // through `subscriptions/listen`. Legacy servers push
        // `list_changed` on their own, which the handler forwards.
        let peer = connection.peer.clone();
        tokio::spawn(listen(peer, connection.refresh_tx.clone(), closed.clone()));
    }
    let watched = Watched {
        shared,
        name,
        gen,
        connection: Arc::downgrade(connection),
        closed,
    };
    let transport_closed = connection.transport_closed.clone();
    let peer = connection.peer.clone();
    tokio::spawn(watched.run(peer, transport_closed, refresh));
}

struct Watched {
    shared: Weak<Shared>,
    name: String,
    gen: u64,
    connection: Weak<Connection>,
    closed: CancellationToken,
}

impl Watched {
    async fn run(
        self,
        peer: Peer<RoleClient>,
        transport_closed: CancellationToken,
        mut refresh: UnboundedReceiver<Refresh>,
    ) {
        loop {
            tokio::select! {
                biased;
                _ = self.closed.cancelled() => return,
                _ = transport_closed.cancelled() => return self.server_gone().await,
                Some(_) = refresh.recv() => {
                    // Servers often send several notifications in a row; one
                    // listing covers them all.
                    while refresh.try_recv().is_ok() {}
                    let listed = tokio::select! {
                        _ = self.closed.cancelled() => return,
                        listed = tokio::time::timeout(RELIST_TIMEOUT, list_all(&peer)) => listed,
                    };
                    match listed {
                        Ok(Ok(lists)) => self.store(lists),
                        Ok(Err(e)) => tracing::warn!(server = %self.name, "re-listing failed: {e}"),
                        Err(_) => tracing::warn!(server = %self.name, "re-listing timed out"),
                    }
                }
            }
        }
    }

    /// Keeps the new lists; announces a change only if there is one (a
    /// legacy server-everything, for one, says "changed" right after
    /// connecting).
    fn store(&self, lists: crate::client::Lists) {
        let Some(connection) = self.connection.upgrade() else {
            return;
        };
        let changed = {
            let mut current = connection.lists.lock().unwrap_or_else(|p| p.into_inner());
            let changed = current.tools != lists.tools || current.prompts != lists.prompts;
            *current = lists;
            changed
        };
        if let (true, Some(shared)) = (changed, self.shared.upgrade()) {
            shared.notify();
        }
    }

    /// The transport ended without JuCode closing it: `failed`, with
    /// whatever the server said on stderr.
    async fn server_gone(self) {
        let Some(connection) = self.connection.upgrade() else {
            return;
        };
        let message = connection
            .stderr_note("the server closed the connection".into())
            .await;
        let Some(shared) = self.shared.upgrade() else {
            return;
        };
        let mut replaced = false;
        shared.with_entry(&self.name, self.gen, |phase| {
            if matches!(phase, Phase::Connected(c) if Arc::ptr_eq(c, &connection)) {
                *phase = Phase::Failed(message);
                replaced = true;
            }
        });
        if replaced {
            shared.notify();
        }
        // Reap the service task and kill anything left of the group.
        connection.close().await;
    }
}

/// Holds a `subscriptions/listen` open and forwards list changes. A server
/// answering -32601 has no push; its lists are then only what was listed at
/// connect time.
async fn listen(
    peer: Peer<RoleClient>,
    refresh: UnboundedSender<Refresh>,
    closed: CancellationToken,
) {
    let filter = SubscriptionFilter::builder()
        .tools_list_changed()
        .prompts_list_changed()
        .build();
    let subscribed = tokio::select! {
        _ = closed.cancelled() => return,
        s = tokio::time::timeout(RELIST_TIMEOUT, peer.listen(filter)) => s,
    };
    let mut subscription = match subscribed {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return tracing::debug!("no list-change subscription: {}", describe(&e)),
        Err(_) => return tracing::debug!("subscriptions/listen timed out"),
    };
    loop {
        let next = tokio::select! {
            _ = closed.cancelled() => return,
            next = subscription.next() => next,
        };
        let kind = match next {
            Ok(Some(ServerNotification::ToolListChangedNotification(_))) => Refresh::Tools,
            Ok(Some(ServerNotification::PromptListChangedNotification(_))) => Refresh::Prompts,
            Ok(Some(_)) => continue,
            Ok(None) | Err(_) => return,
        };
        if refresh.send(kind).is_err() {
            return;
        }
    }
}
