//! Appending to a session file.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::index::{self, IndexEntry};
use crate::load::HeaderLine;
use crate::record::{now_ms, Record, SessionHeader, HEADER_TYPE};

/// The buffer a record is serialized into is kept between appends, unless a
/// huge record grew it past this.
const KEEP_BUFFER: usize = 1024 * 1024;

/// An open session file. Each `append` is one `write` of one whole line to
/// a file opened with O_APPEND.
pub struct SessionWriter {
    file: File,
    path: PathBuf,
    dir: PathBuf,
    /// This session's index entry as last written.
    entry: IndexEntry,
    buf: Vec<u8>,
    /// A write failed part-way, so the file may end in a fragment; the next
    /// line must start with a newline to stay separate from it.
    needs_newline: bool,
}

impl SessionWriter {
    /// Creates `<id>.jsonl` (failing if it exists) with its header line, and
    /// the session's index entry.
    pub(crate) fn create(dir: &Path, header: &SessionHeader) -> io::Result<SessionWriter> {
        if !crate::valid_id(&header.id) {
            return Err(invalid_id(&header.id));
        }
        fs::create_dir_all(dir)?;
        let path = crate::session_path(dir, &header.id);
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create_new(true)
            .open(&path)?;
        let mut buf = serde_json::to_vec(&HeaderLine {
            kind: HEADER_TYPE.to_owned(),
            header,
        })?;
        buf.push(b'\n');
        file.write_all(&buf)?;
        let entry = IndexEntry {
            id: header.id.clone(),
            cwd: header.cwd.clone(),
            label: String::new(),
            created_at: header.created_at,
            updated_at: header.created_at,
            chat: header.chat,
        };
        index::upsert(dir, &entry)?;
        Ok(SessionWriter::new(file, path, dir, entry))
    }

    /// Opens an existing session for appending. A torn last line left by a
    /// killed writer is cut off first (or, if it is a whole record that only
    /// lacks its newline, completed), so that new records start on a line of
    /// their own.
    pub(crate) fn open(dir: &Path, id: &str) -> io::Result<SessionWriter> {
        if !crate::valid_id(id) {
            return Err(invalid_id(id));
        }
        let path = crate::session_path(dir, id);
        let mut file = OpenOptions::new().read(true).append(true).open(&path)?;
        // Also checks the header when the index does not know the session.
        let entry = index::entry_for(dir, id)?;
        repair_tail(&mut file)?;
        Ok(SessionWriter::new(file, path, dir, entry))
    }

    fn new(file: File, path: PathBuf, dir: &Path, entry: IndexEntry) -> SessionWriter {
        SessionWriter {
            file,
            path,
            dir: dir.to_owned(),
            entry,
            buf: Vec::with_capacity(4096),
            needs_newline: false,
        }
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.entry.id
    }

    /// The session file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record as one line.
    ///
    /// The line is serialized into one buffer, newline included, and written
    /// with a single `write_all` on an O_APPEND file, so a crash can only
    /// leave the last line torn, never a gap or an interleaving. There is no
    /// fsync per line on purpose: once `write` returns, the bytes are in the
    /// kernel's page cache and survive the process being killed (kill -9,
    /// panic, OOM); only a power loss or kernel crash could drop them, and
    /// syncing every streamed delta would cost a disk flush each. `flush` is
    /// still called, for the day this becomes a buffered writer.
    pub fn append(&mut self, record: &Record) -> io::Result<()> {
        self.buf.clear();
        if self.needs_newline {
            self.buf.push(b'\n');
        }
        serde_json::to_writer(&mut self.buf, record)?;
        self.buf.push(b'\n');
        let written = self
            .file
            .write_all(&self.buf)
            .and_then(|()| self.file.flush());
        self.needs_newline = written.is_err();
        if self.buf.capacity() > KEEP_BUFFER {
            self.buf = Vec::with_capacity(4096);
        }
        written
    }

    /// Sets the index label (the first user message) once; later calls, and
    /// calls on a resumed session that already has one, change nothing.
    pub fn set_label(&mut self, label: &str) -> io::Result<()> {
        if !self.entry.label.is_empty() {
            return Ok(());
        }
        let label = index::normalize_label(label);
        if label.is_empty() {
            return Ok(());
        }
        self.entry.label = label;
        self.entry.updated_at = self.entry.updated_at.max(now_ms());
        index::upsert(&self.dir, &self.entry)
    }

    /// Marks the session as updated now, in the index. Meant for turn ends:
    /// each call appends an index line.
    pub fn touch(&mut self) -> io::Result<()> {
        self.entry.updated_at = self.entry.updated_at.max(now_ms());
        index::upsert(&self.dir, &self.entry)
    }
}

fn invalid_id(id: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("invalid session id {id:?}"),
    )
}

/// Makes the file end with a newline after a crash mid-append: a torn last
/// line that is not a whole record is truncated away (it can never be
/// read), and one that is whole but lost its newline gets the newline.
fn repair_tail(file: &mut File) -> io::Result<()> {
    const CHUNK: u64 = 64 * 1024;
    let len = file.metadata()?.len();
    // Find where the last line starts, reading backwards: the torn line may
    // be a long tool output, but is usually short.
    let mut start = 0;
    let mut end = len;
    let mut chunk = Vec::new();
    while end > 0 {
        let from = end.saturating_sub(CHUNK);
        chunk.resize((end - from) as usize, 0);
        file.seek(SeekFrom::Start(from))?;
        file.read_exact(&mut chunk)?;
        if end == len && chunk.last() == Some(&b'\n') {
            return Ok(()); // already clean (or empty)
        }
        if let Some(pos) = chunk.iter().rposition(|&b| b == b'\n') {
            start = from + pos as u64 + 1;
            break;
        }
        end = from;
    }
    if len == 0 || start == 0 {
        // Nothing, or only a torn header: the caller's header check has
        // already refused such a file; leave it for inspection.
        return Ok(());
    }
    let mut tail = vec![0; (len - start) as usize];
    file.seek(SeekFrom::Start(start))?;
    file.read_exact(&mut tail)?;
    if serde_json::from_slice::<Record>(&tail).is_ok() {
        file.write_all(b"\n")
    } else {
        file.set_len(start)
    }
}
