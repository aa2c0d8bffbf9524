//! jucode-store: sessions on disk.
//!
//! Each session is an append-only JSONL file, `<sessions>/<id>.jsonl`: a
//! `{"type":"session_header", ...}` line, then one record a line in the
//! event vocabulary of the wire protocol (plus engine-only types such as
//! `history_item`). Records carry `id` and `parent_id`, making the session a
//! tree the engine can branch. Lines are written whole with one O_APPEND
//! write, so a killed process loses at most the line it was writing; such a
//! torn line is skipped, and reported, on load. `<sessions>/index.jsonl`
//! keeps one entry per session so listing does not open every file.
//!
//! ```
//! use jucode_store::{path_to, Record, SessionHeader, Store};
//! use serde_json::json;
//!
//! let tmp = tempfile::tempdir().unwrap();
//! let store = Store::new(tmp.path().join("sessions"));
//! let header = SessionHeader {
//!     id: "s1".into(),
//!     cwd: "/repo".into(),
//!     created_at: jucode_store::now_ms(),
//!     version: "0.3.0".into(),
//!     chat: false,
//! };
//! let mut writer = store.create(&header).unwrap();
//! let body = json!({ "type": "user_message", "content": "fix the build" });
//! let first = Record::new(None, body.as_object().unwrap().clone());
//! writer.append(&first).unwrap();
//! writer.set_label("fix the build").unwrap();
//! writer.touch().unwrap(); // at the end of the turn
//!
//! let loaded = store.load("s1").unwrap();
//! assert_eq!(path_to(&loaded.records, &first.id).len(), 1);
//! assert_eq!(store.list()[0].label, "fix the build");
//! ```

mod error;
mod index;
mod load;
mod record;
mod tree;
mod writer;

use std::io;
use std::path::{Path, PathBuf};

pub use error::StoreError;
pub use index::IndexEntry;
pub use load::{LoadedSession, RawRecord, SkippedLine};
pub use record::{new_record_id, now_ms, Record, SessionHeader, HEADER_TYPE};
pub use tree::{children_index, path_to, roots};
pub use writer::SessionWriter;

/// The sessions directory.
#[derive(Clone, Debug)]
pub struct Store {
    dir: PathBuf,
}

impl Store {
    /// A store over `sessions_dir`, which is created on the first write.
    pub fn new(sessions_dir: impl Into<PathBuf>) -> Store {
        Store {
            dir: sessions_dir.into(),
        }
    }

    /// The sessions directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Creates the session file `<id>.jsonl`, starting with the header, and
    /// its index entry. Fails with `AlreadyExists` if the id is taken and
    /// `InvalidInput` if it is not a safe file name (see [`Store::exists`]).
    pub fn create(&self, header: &SessionHeader) -> io::Result<SessionWriter> {
        SessionWriter::create(&self.dir, header)
    }

    /// Reopens an existing session for appending, e.g. after a resume.
    pub fn append_to(&self, id: &str) -> io::Result<SessionWriter> {
        SessionWriter::open(&self.dir, id)
    }

    /// Reads a whole session. Unreadable lines are skipped and listed in
    /// `skipped_lines`; only a missing or unreadable header fails the load.
    pub fn load(&self, id: &str) -> Result<LoadedSession, StoreError> {
        if !valid_id(id) {
            return Err(StoreError::NotFound(id.to_owned()));
        }
        load::load_file(&session_path(&self.dir, id), id)
    }

    /// Reads a session without building records: `visit` gets each record
    /// line's id, parent, type and raw JSON, in file order, to parse only
    /// what it needs (resuming a long session this way keeps memory to what
    /// the caller keeps). Damaged lines are skipped and reported.
    pub fn scan(
        &self,
        id: &str,
        visit: impl FnMut(RawRecord<'_>),
    ) -> Result<(SessionHeader, Vec<SkippedLine>), StoreError> {
        if !valid_id(id) {
            return Err(StoreError::NotFound(id.to_owned()));
        }
        load::scan_file(&session_path(&self.dir, id), id, visit)
    }

    /// Every session, most recently updated first.
    pub fn list(&self) -> Vec<IndexEntry> {
        index::list(&self.dir)
    }

    /// The sessions started in `cwd`, most recently updated first.
    pub fn list_for_cwd(&self, cwd: &Path) -> Vec<IndexEntry> {
        let mut list = self.list();
        // Path equality ignores trailing slashes and `.` components.
        list.retain(|entry| Path::new(&entry.cwd) == cwd);
        list
    }

    /// The most recently updated session started in `cwd`.
    pub fn latest_for_cwd(&self, cwd: &Path) -> Option<IndexEntry> {
        self.list_for_cwd(cwd).into_iter().next()
    }

    /// Whether a session file with this id exists. Ids are file names:
    /// ASCII letters, digits, `-`, `_` and `.`, not starting with `.`, and
    /// not `index` (taken by the index file).
    pub fn exists(&self, id: &str) -> bool {
        valid_id(id) && session_path(&self.dir, id).is_file()
    }
}

/// Whether `id` can name a session file without escaping the directory or
/// clashing with the index.
pub(crate) fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && !id.starts_with('.')
        && id != "index"
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

pub(crate) fn session_path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.jsonl"))
}
