//! ACP prompt content → one engine input.
//!
//! * `text` blocks are concatenated as they come.
//! * `image` blocks are decoded into the session's scratch folder and
//!   attached as `images`.
//! * `resource_link` blocks with a `file://` URI are attached as `files`
//!   (other URIs stay in the text as a Markdown link).
//! * `resource` blocks: text is inlined as a fenced block under its URI;
//!   blobs are written to the scratch folder and attached (as an image when
//!   their MIME type is one).
//! * A prompt that is a single text block starting with a known slash
//!   command (`/model gpt-5.5 high`) runs that command instead.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource};
use base64::Engine as _;
use jucode_protocol::UserMessageOp;

pub enum PromptInput {
    Message(UserMessageOp),
    /// A slash command line, e.g. `/model other-model`.
    Command(String),
}

pub fn convert(
    blocks: Vec<ContentBlock>,
    scratch: &Path,
    commands: &[String],
) -> Result<PromptInput, String> {
    if let [ContentBlock::Text(block)] = blocks.as_slice() {
        let text = block.text.trim();
        if let Some(first) = text.split_whitespace().next() {
            if commands.iter().any(|c| c == first) {
                return Ok(PromptInput::Command(text.to_string()));
            }
        }
    }
    let mut text = String::new();
    let mut images = Vec::new();
    let mut files = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(block) => text.push_str(&block.text),
            ContentBlock::Image(image) => {
                let ext = image_extension(&image.mime_type)
                    .ok_or_else(|| format!("unsupported image type: {}", image.mime_type))?;
                images.push(write_scratch(scratch, &image.data, ext)?);
            }
            ContentBlock::ResourceLink(link) => match file_path(&link.uri) {
                Some(path) => files.push(path),
                None => text.push_str(&format!("[{}]({})", link.name, link.uri)),
            },
            ContentBlock::Resource(resource) => match resource.resource {
                EmbeddedResourceResource::TextResourceContents(res) => {
                    push_block(&mut text, &fenced(&res.uri, &res.text));
                }
                EmbeddedResourceResource::BlobResourceContents(res) => {
                    let mime = res.mime_type.as_deref().unwrap_or_default();
                    match image_extension(mime) {
                        Some(ext) => images.push(write_scratch(scratch, &res.blob, ext)?),
                        None => {
                            let ext = Path::new(&res.uri)
                                .extension()
                                .and_then(|e| e.to_str())
                                .filter(|e| e.chars().all(|c| c.is_ascii_alphanumeric()))
                                .unwrap_or("bin");
                            files.push(write_scratch(scratch, &res.blob, ext)?);
                        }
                    }
                }
                _ => return Err("unsupported embedded resource".into()),
            },
            ContentBlock::Audio(_) => return Err("audio prompts are not supported".into()),
            _ => return Err("unsupported content block".into()),
        }
    }
    if text.trim().is_empty() && images.is_empty() && files.is_empty() {
        return Err("the prompt is empty".into());
    }
    Ok(PromptInput::Message(UserMessageOp {
        content: text,
        images,
        files,
    }))
}

fn image_extension(mime: &str) -> Option<&'static str> {
    match mime {
        "image/png" => Some("png"),
        "image/jpeg" | "image/jpg" => Some("jpg"),
        "image/gif" => Some("gif"),
        "image/webp" => Some("webp"),
        _ => None,
    }
}

/// Decodes base64 `data` into a fresh file of the scratch folder.
fn write_scratch(scratch: &Path, data: &str, ext: &str) -> Result<String, String> {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| format!("attachment is not valid base64: {e}"))?;
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let path = scratch.join(format!("attachment-{n}.{ext}"));
    std::fs::write(&path, bytes)
        .map_err(|e| format!("cannot save an attachment to {}: {e}", path.display()))?;
    Ok(path.display().to_string())
}

/// Appends a block on lines of its own.
fn push_block(text: &mut String, block: &str) {
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(block);
    text.push('\n');
}

/// `uri`, then `text` in a code fence longer than any backtick run in it.
fn fenced(uri: &str, text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    let body = text.strip_suffix('\n').unwrap_or(text);
    format!("{uri}\n{fence}\n{body}\n{fence}")
}

/// The local path of a `file://` URI (percent-decoded).
fn file_path(uri: &str) -> Option<String> {
    let rest = uri.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(hi), Some(lo)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push(hi * 16 + lo);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    let path = PathBuf::from(String::from_utf8(out).ok()?);
    Some(path.display().to_string())
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_become_paths() {
        assert_eq!(
            file_path("file:///a/b%20c.rs").as_deref(),
            Some("/a/b c.rs")
        );
        assert_eq!(file_path("file://localhost/x").as_deref(), Some("/x"));
        assert_eq!(file_path("https://x/y"), None);
        assert_eq!(file_path("file:///bad%2").as_deref(), Some("/bad%2"));
    }

    #[test]
    fn fences_outgrow_the_backticks_inside() {
        assert_eq!(fenced("file:///a", "x\n"), "file:///a\n```\nx\n```");
        assert!(fenced("u", "a ```` b").contains("`````\na ```` b\n`````"));
    }
}
