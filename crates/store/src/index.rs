//! `sessions/index.jsonl`: one `IndexEntry` a line, appended on every
//! change (the last line for an id wins), so that listing sessions reads one
//! small file instead of opening every session.
//!
//! Several engine processes may share the directory. Upserts are single
//! O_APPEND writes, which do not interleave. Rewrites (compaction, repair)
//! go through a temp file and a rename, so readers see the old or the new
//! index, never half of one; an upsert that lands between a rewrite's read
//! and its rename is lost, which costs at worst a stale label or
//! `updated_at` until that session's next `touch`, and a session missing
//! from the index is added back by the next `list` (see `list`).

use std::collections::{HashMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};

use crate::load::summarize_file;
use crate::valid_id;

pub(crate) const INDEX_FILE: &str = "index.jsonl";
const SESSION_EXT: &str = ".jsonl";
/// The index is rewritten once it has more lines than this many per session.
const COMPACT_FACTOR: usize = 4;
const MAX_LABEL_CHARS: usize = 200;

/// One session as listed.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct IndexEntry {
    pub id: String,
    pub cwd: String,
    /// The first user message, on one line and shortened; empty until set.
    #[serde(default)]
    pub label: String,
    /// Epoch milliseconds.
    pub created_at: u64,
    /// Epoch milliseconds of the last `touch` (or label, or creation).
    pub updated_at: u64,
    #[serde(default)]
    pub chat: bool,
}

/// A label fit for a one-line list: whitespace runs collapsed to one space,
/// at most `MAX_LABEL_CHARS` characters.
pub(crate) fn normalize_label(text: &str) -> String {
    let mut out = String::new();
    for (n, word) in text.split_whitespace().enumerate() {
        if n > 0 {
            out.push(' ');
        }
        out.push_str(word);
        if out.len() > MAX_LABEL_CHARS * 4 {
            break; // enough to cut from; don't copy a huge message
        }
    }
    if out.chars().count() > MAX_LABEL_CHARS {
        out = out.chars().take(MAX_LABEL_CHARS - 1).collect();
        out.push('…');
    }
    out
}

pub(crate) fn index_path(dir: &Path) -> PathBuf {
    dir.join(INDEX_FILE)
}

/// The index as read: the latest entry per id, and how many lines held them.
pub(crate) struct IndexContents {
    pub entries: HashMap<String, IndexEntry>,
    pub lines: usize,
}

/// Reads the index. Unparsable lines (a torn last line, garbage) are
/// skipped; an index that exists but yields nothing from non-empty content
/// is reported as `InvalidData`, so that callers rebuild it.
pub(crate) fn read_index(dir: &Path) -> io::Result<IndexContents> {
    // The index is small (a few hundred bytes per session, at most
    // COMPACT_FACTOR lines each), so one read is cheapest.
    let bytes = fs::read(index_path(dir))?;
    let mut entries = HashMap::new();
    let mut lines = 0;
    for line in bytes.split(|&b| b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        lines += 1;
        if let Ok(entry) = serde_json::from_slice::<IndexEntry>(line) {
            entries.insert(entry.id.clone(), entry);
        }
    }
    if entries.is_empty() && lines > 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "session index has no readable entry",
        ));
    }
    Ok(IndexContents { entries, lines })
}

/// Whether the file ends in a newline (true for an empty file).
fn ends_with_newline(file: &mut File) -> io::Result<bool> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(true);
    }
    file.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

/// Appends `entry` as the newest line for its id, then compacts the index if
/// it has grown past `COMPACT_FACTOR` lines per session.
pub(crate) fn upsert(dir: &Path, entry: &IndexEntry) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(index_path(dir))?;
    let mut buf = Vec::with_capacity(256);
    // After a torn last line, start on a fresh line: otherwise this entry
    // would be glued to the fragment and lost with it.
    if !ends_with_newline(&mut file)? {
        buf.push(b'\n');
    }
    serde_json::to_writer(&mut buf, entry)?;
    buf.push(b'\n');
    file.write_all(&buf)?;
    drop(file);

    // Compaction is housekeeping: the entry is already stored, so a failure
    // here is not the caller's error, and the next upsert tries again.
    if let Ok(index) = read_index(dir) {
        if index.lines > COMPACT_FACTOR * index.entries.len() {
            let _ = rewrite(dir, index.entries.values());
        }
    }
    Ok(())
}

/// Replaces the index with exactly `entries`, atomically.
pub(crate) fn rewrite<'a>(
    dir: &Path,
    entries: impl IntoIterator<Item = &'a IndexEntry>,
) -> io::Result<()> {
    let mut sorted: Vec<&IndexEntry> = entries.into_iter().collect();
    // Oldest first, like an index that was only ever appended to.
    sorted.sort_by(|a, b| (a.updated_at, &a.id).cmp(&(b.updated_at, &b.id)));
    let mut buf = Vec::with_capacity(sorted.len() * 200);
    for entry in sorted {
        serde_json::to_writer(&mut buf, entry)?;
        buf.push(b'\n');
    }
    fs::create_dir_all(dir)?;
    // Unique per process and call; the `.tmp` suffix keeps it out of the
    // session scan even if a crash leaves it behind.
    let tmp = dir.join(format!(
        ".{INDEX_FILE}.{}.{}.tmp",
        std::process::id(),
        crate::record::new_record_id()
    ));
    let result = (|| {
        let mut file = File::create(&tmp)?;
        file.write_all(&buf)?;
        // Rare (compaction and repair only), and without it a power loss
        // right after the rename could leave an empty index.
        file.sync_all()?;
        fs::rename(&tmp, index_path(dir))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// The ids of the session files in `dir`.
pub(crate) fn session_ids_on_disk(dir: &Path) -> io::Result<HashSet<String>> {
    let mut ids = HashSet::new();
    for dirent in fs::read_dir(dir)? {
        let name = dirent?.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(id) = name.strip_suffix(SESSION_EXT) {
            if valid_id(id) {
                ids.insert(id.to_owned());
            }
        }
    }
    Ok(ids)
}

/// An index entry built from the session file itself: header, first user
/// message, and the file's modification time as `updated_at`.
pub(crate) fn entry_from_file(dir: &Path, id: &str) -> io::Result<IndexEntry> {
    let path = crate::session_path(dir, id);
    let (header, first_message) = summarize_file(&path).map_err(|e| match e {
        crate::StoreError::Io(e) => e,
        other => io::Error::new(io::ErrorKind::InvalidData, other.to_string()),
    })?;
    let modified = fs::metadata(&path)?
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as u64);
    Ok(IndexEntry {
        // The file name is what `load` opens, so it is the id that counts.
        id: id.to_owned(),
        cwd: header.cwd,
        label: first_message
            .as_deref()
            .map(normalize_label)
            .unwrap_or_default(),
        created_at: header.created_at,
        updated_at: modified.max(header.created_at),
        chat: header.chat,
    })
}

/// The latest entry for `id`: from the index, else from its file.
pub(crate) fn entry_for(dir: &Path, id: &str) -> io::Result<IndexEntry> {
    if let Ok(mut index) = read_index(dir) {
        if let Some(entry) = index.entries.remove(id) {
            return Ok(entry);
        }
    }
    entry_from_file(dir, id)
}

/// Every session, newest `updated_at` first.
///
/// The index is checked against the directory listing (one `read_dir`, no
/// file opened): sessions the index lacks (it was deleted, unreadable, or
/// lost an upsert to a race) are read from their files and written back,
/// and entries whose file is gone are dropped.
pub(crate) fn list(dir: &Path) -> Vec<IndexEntry> {
    let Ok(on_disk) = session_ids_on_disk(dir) else {
        return Vec::new(); // no directory yet: no sessions
    };
    let (mut entries, mut changed) = match read_index(dir) {
        Ok(index) => {
            let compactable = index.lines > COMPACT_FACTOR * index.entries.len();
            (index.entries, compactable)
        }
        Err(_) => (HashMap::new(), true),
    };
    let before = entries.len();
    entries.retain(|id, _| on_disk.contains(id));
    changed |= entries.len() != before;
    for id in &on_disk {
        if !entries.contains_key(id) {
            // A file with an unreadable header is not a session to list.
            if let Ok(entry) = entry_from_file(dir, id) {
                entries.insert(id.clone(), entry);
                changed = true;
            }
        }
    }
    if changed {
        // Best effort: listing works from memory even if the directory is
        // read-only.
        let _ = rewrite(dir, entries.values());
    }
    let mut list: Vec<IndexEntry> = entries.into_values().collect();
    list.sort_by(|a, b| {
        b.updated_at
            .cmp(&a.updated_at)
            .then(b.created_at.cmp(&a.created_at))
            .then_with(|| a.id.cmp(&b.id))
    });
    list
}
