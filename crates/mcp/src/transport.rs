//! A transport wrapper that notices when the server goes away.
//!
//! rmcp's running service ends quietly when its transport ends (a stdio
//! server exited, an HTTP stream died for good). The manager needs to know
//! so the server's state becomes `failed` instead of a `connected` that
//! answers nothing.

use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio_util::sync::CancellationToken;

pub(crate) struct Watched<T> {
    inner: T,
    ended: CancellationToken,
}

impl<T> Watched<T> {
    /// `ended` is cancelled when the inner transport yields its last message.
    pub fn new(inner: T, ended: CancellationToken) -> Self {
        Watched { inner, ended }
    }
}

impl<T: Transport<RoleClient> + 'static> Transport<RoleClient> for Watched<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await;
        if message.is_none() {
            self.ended.cancel();
        }
        message
    }

    fn close(&mut self) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
