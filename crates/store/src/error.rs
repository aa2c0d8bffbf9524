//! The error of `Store::load`.

use std::io;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No session file with this id.
    #[error("session not found: {0}")]
    NotFound(String),
    #[error("session i/o error: {0}")]
    Io(#[from] io::Error),
    /// The file exists but does not start with a readable session header
    /// (e.g. the process died while creating it).
    #[error("corrupt session file: {0}")]
    Corrupt(String),
}
