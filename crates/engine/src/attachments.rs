//! Images and files attached to a user message.

use std::path::Path;

use base64::Engine as _;
use jucode_models::{HistoryItem, ImageInput};
use jucode_protocol::{Event, QueuedMessage};

use crate::output::Output;

/// Largest image we attach; bigger ones are skipped with an `info`.
const MAX_IMAGE_BYTES: u64 = 20 * 1024 * 1024;

/// The history item the model sees for a user message: the text, one
/// `[Attached file …]` line per file, and the images that could be read.
/// Images that cannot be attached are reported as `info` and skipped.
pub fn prepare(msg: &QueuedMessage, out: &Output) -> HistoryItem {
    prepare_with(msg, &mut |problem| out.emit(Event::info(problem)))
}

/// The same, without reporting images that cannot be read (when a session
/// is rebuilt from its file, the problem was reported the first time).
pub fn prepare_quiet(msg: &QueuedMessage) -> HistoryItem {
    prepare_with(msg, &mut |_| {})
}

fn prepare_with(msg: &QueuedMessage, report: &mut dyn FnMut(String)) -> HistoryItem {
    let mut text = msg.content.clone();
    for file in &msg.files {
        let name = Path::new(file)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| file.clone());
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&format!("[Attached file \"{name}\" is saved at: {file}]"));
    }
    let mut images = Vec::new();
    for path in &msg.images {
        match load_image(Path::new(path)) {
            Ok(image) => images.push(image),
            Err(why) => report(format!("image not attached: {path}: {why}")),
        }
    }
    HistoryItem::User { text, images }
}

fn load_image(path: &Path) -> Result<ImageInput, String> {
    let media_type = match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        _ => return Err("not a supported image type (png, jpeg, gif, webp)".into()),
    };
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a file".into());
    }
    if meta.len() > MAX_IMAGE_BYTES {
        return Err(format!("larger than {} MB", MAX_IMAGE_BYTES / 1024 / 1024));
    }
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    Ok(ImageInput {
        media_type: media_type.to_string(),
        data_base64: base64::engine::general_purpose::STANDARD.encode(bytes),
    })
}
