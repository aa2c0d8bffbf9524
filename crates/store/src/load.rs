//! Reading session files back: the full load, and the cheap summary the
//! index is rebuilt from.

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::StoreError;
use crate::record::{Record, SessionHeader, HEADER_TYPE};

/// Large enough that a 50,000-record file is read in a few hundred
/// syscalls, small enough not to matter for memory.
const READ_BUFFER: usize = 256 * 1024;

/// A line that could not be turned into a record and was left out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedLine {
    /// 1-based, counting the header line.
    pub line_number: usize,
    pub reason: String,
}

/// A session file read back.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedSession {
    pub header: SessionHeader,
    /// In file order, which is write order: a parent always comes before its
    /// children.
    pub records: Vec<Record>,
    /// A torn last line (the process died mid-write) or corrupt lines.
    pub skipped_lines: Vec<SkippedLine>,
}

/// The first line of a session file, `{"type":"session_header", ...}`.
#[derive(Serialize, Deserialize)]
pub(crate) struct HeaderLine<T> {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(flatten)]
    pub header: T,
}

/// Reads lines into one reused buffer, so memory stays at the longest line
/// rather than the file size, and invalid UTF-8 only spoils its own line.
struct Lines {
    reader: BufReader<File>,
    buf: Vec<u8>,
    number: usize,
}

/// One line without its newline, and whether it had one.
struct Line<'a> {
    number: usize,
    bytes: &'a [u8],
    terminated: bool,
}

impl Lines {
    fn new(file: File) -> Lines {
        Lines {
            reader: BufReader::with_capacity(READ_BUFFER, file),
            buf: Vec::with_capacity(4096),
            number: 0,
        }
    }

    fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        // A single huge line (a multi-megabyte tool output) should not pin
        // its buffer for the rest of the file.
        if self.buf.capacity() > 4 * 1024 * 1024 {
            self.buf = Vec::with_capacity(4096);
        }
        self.buf.clear();
        if self.reader.read_until(b'\n', &mut self.buf)? == 0 {
            return Ok(None);
        }
        self.number += 1;
        let terminated = self.buf.last() == Some(&b'\n');
        let end = self.buf.len() - usize::from(terminated);
        Ok(Some(Line {
            number: self.number,
            bytes: &self.buf[..end],
            terminated,
        }))
    }
}

fn is_blank(bytes: &[u8]) -> bool {
    bytes.iter().all(u8::is_ascii_whitespace)
}

fn parse_header(bytes: &[u8]) -> Result<SessionHeader, String> {
    let line: HeaderLine<SessionHeader> =
        serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    if line.kind != HEADER_TYPE {
        return Err(format!("first line has type `{}`", line.kind));
    }
    Ok(line.header)
}

/// Reads the header: the first non-blank line.
fn read_header(lines: &mut Lines, what: &str) -> Result<SessionHeader, StoreError> {
    loop {
        let Some(line) = lines.next_line()? else {
            return Err(StoreError::Corrupt(format!(
                "{what}: header missing (empty file)"
            )));
        };
        if is_blank(line.bytes) {
            continue;
        }
        return parse_header(line.bytes)
            .map_err(|e| StoreError::Corrupt(format!("{what}: header missing ({e})")));
    }
}

/// Opens a session file and reads its header.
fn open_session(path: &Path, id: &str) -> Result<(Lines, SessionHeader), StoreError> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(StoreError::NotFound(id.to_owned()))
        }
        Err(e) => return Err(e.into()),
    };
    let mut lines = Lines::new(file);
    let header = read_header(&mut lines, id)?;
    Ok((lines, header))
}

pub(crate) fn load_file(path: &Path, id: &str) -> Result<LoadedSession, StoreError> {
    let (mut lines, header) = open_session(path, id)?;
    let mut records = Vec::new();
    let mut skipped_lines = Vec::new();
    while let Some(line) = lines.next_line()? {
        if is_blank(line.bytes) {
            continue;
        }
        // Straight from the line's bytes into the record: no intermediate
        // String or Value tree.
        let reason = match serde_json::from_slice::<Record>(line.bytes) {
            Ok(record) if record.kind().is_some() => {
                records.push(record);
                continue;
            }
            Ok(_) => "record has no string `type`".to_owned(),
            // Only a line the writer did not finish lacks its newline: every
            // append ends with one. (If the cut fell exactly before the
            // newline the record is whole and was kept above.)
            Err(e) if !line.terminated => format!("torn last line (incomplete write): {e}"),
            Err(e) => format!("corrupt line: {e}"),
        };
        skipped_lines.push(SkippedLine {
            line_number: line.number,
            reason,
        });
    }
    Ok(LoadedSession {
        header,
        records,
        skipped_lines,
    })
}

/// A record line as [`crate::Store::scan`] sees it. Body keys that clash
/// with the record's own (`id`, `parent_id`, `ts`) carry one extra leading
/// underscore in `json`, as in the file.
pub struct RawRecord<'a> {
    pub id: &'a str,
    pub parent_id: Option<&'a str>,
    pub kind: &'a str,
    pub json: &'a [u8],
}

#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow)]
    id: std::borrow::Cow<'a, str>,
    #[serde(borrow, default)]
    parent_id: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, rename = "type")]
    kind: std::borrow::Cow<'a, str>,
}

pub(crate) fn scan_file(
    path: &Path,
    id: &str,
    mut visit: impl FnMut(RawRecord<'_>),
) -> Result<(SessionHeader, Vec<SkippedLine>), StoreError> {
    let (mut lines, header) = open_session(path, id)?;
    let mut skipped_lines = Vec::new();
    while let Some(line) = lines.next_line()? {
        if is_blank(line.bytes) {
            continue;
        }
        // The head is parsed without allocating (ids and types have no
        // escapes) and the rest of the line is skipped, not built.
        let reason = match serde_json::from_slice::<Head<'_>>(line.bytes) {
            Ok(head)
                if line.terminated
                    || serde_json::from_slice::<serde::de::IgnoredAny>(line.bytes).is_ok() =>
            {
                visit(RawRecord {
                    id: &head.id,
                    parent_id: head.parent_id.as_deref(),
                    kind: &head.kind,
                    json: line.bytes,
                });
                continue;
            }
            Ok(_) => "torn last line (incomplete write)".to_owned(),
            Err(e) if !line.terminated => format!("torn last line (incomplete write): {e}"),
            Err(e) => format!("corrupt line: {e}"),
        };
        skipped_lines.push(SkippedLine {
            line_number: line.number,
            reason,
        });
    }
    Ok((header, skipped_lines))
}

/// What the index needs from a session file: its header and its first user
/// message. Stops at that message, which is normally near the top, so
/// rebuilding the index does not parse whole sessions.
pub(crate) fn summarize_file(path: &Path) -> Result<(SessionHeader, Option<String>), StoreError> {
    let mut lines = Lines::new(File::open(path)?);
    let header = read_header(&mut lines, &path.display().to_string())?;
    // Cheap byte test before parsing; serde_json writes `"type":"..."` with
    // no spaces.
    const NEEDLE: &[u8] = b"\"type\":\"user_message\"";
    while let Some(line) = lines.next_line()? {
        if !line.bytes.windows(NEEDLE.len()).any(|w| w == NEEDLE) {
            continue;
        }
        if let Ok(record) = serde_json::from_slice::<Record>(line.bytes) {
            if record.kind() == Some("user_message") {
                if let Some(content) = record.body.get("content").and_then(|v| v.as_str()) {
                    return Ok((header, Some(content.to_owned())));
                }
            }
        }
    }
    Ok((header, None))
}
