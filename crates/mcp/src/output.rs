//! Turning MCP results into the plain text a model reads.

use rmcp::model::{CallToolResult, ContentBlock, GetPromptResult, ResourceContents};

/// Tool output beyond this is cut. The end is kept: tools tend to put the
/// outcome (errors, summaries) last.
pub const MAX_OUTPUT_BYTES: usize = 30 * 1024;

/// Text blocks joined by newlines; other blocks as a short bracketed note;
/// `structuredContent` (compact JSON) when there is no text at all.
pub(crate) fn tool_output(result: &CallToolResult) -> String {
    let has_text = result
        .content
        .iter()
        .any(|b| matches!(b, ContentBlock::Text(_)));
    let mut parts: Vec<String> = Vec::new();
    if !has_text {
        if let Some(structured) = &result.structured_content {
            parts.push(structured.to_string());
        }
    }
    parts.extend(result.content.iter().map(block_text));
    cap(parts.join("\n"))
}

/// Each message's text, in order, separated by blank lines.
pub(crate) fn prompt_text(result: &GetPromptResult) -> String {
    let parts: Vec<String> = result
        .messages
        .iter()
        .map(|m| block_text(&m.content))
        .collect();
    parts.join("\n\n")
}

fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(i) => format!("[image: {}]", i.mime_type),
        ContentBlock::Audio(a) => format!("[audio: {}]", a.mime_type),
        ContentBlock::ResourceLink(r) => format!("[resource link: {}]", r.uri),
        ContentBlock::Resource(r) => match &r.resource {
            // Embedded text is content the server chose to hand over; the
            // model should see it, not just its URI.
            ResourceContents::TextResourceContents { uri, text, .. } => {
                format!("[resource: {uri}]\n{text}")
            }
            ResourceContents::BlobResourceContents { uri, mime_type, .. } => match mime_type {
                Some(mime) => format!("[resource: {uri} ({mime})]"),
                None => format!("[resource: {uri}]"),
            },
            _ => "[resource]".to_owned(),
        },
        _ => "[unsupported content]".to_owned(),
    }
}

/// Keeps the last [`MAX_OUTPUT_BYTES`] (on a char boundary) behind a note
/// saying how much was dropped.
pub(crate) fn cap(text: String) -> String {
    if text.len() <= MAX_OUTPUT_BYTES {
        return text;
    }
    let mut start = text.len() - MAX_OUTPUT_BYTES;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("[… {start} bytes of output cut …]\n{}", &text[start..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ImageContent, PromptMessage, Role};
    use serde_json::json;

    #[test]
    fn joins_text_and_notes_other_blocks() {
        let r = CallToolResult::success(vec![
            ContentBlock::text("one"),
            ContentBlock::Image(ImageContent::new("AAAA", "image/png")),
            ContentBlock::text("two"),
        ]);
        assert_eq!(tool_output(&r), "one\n[image: image/png]\ntwo");
    }

    #[test]
    fn structured_content_when_no_text() {
        let mut r = CallToolResult::success(vec![]);
        r.structured_content = Some(json!({"t": "12:00"}));
        assert_eq!(tool_output(&r), r#"{"t":"12:00"}"#);
        // With text present the text wins (servers mirror structured output).
        let mut r = CallToolResult::success(vec![ContentBlock::text("12:00")]);
        r.structured_content = Some(json!({"t": "12:00"}));
        assert_eq!(tool_output(&r), "12:00");
    }

    #[test]
    fn cap_keeps_the_end() {
        let text = format!("{}END", "é".repeat(20_000));
        let capped = cap(text);
        assert!(capped.ends_with("END"));
        assert!(capped.starts_with("[… "));
        assert!(capped.len() <= MAX_OUTPUT_BYTES + 40);
        assert_eq!(cap("short".into()), "short");
    }

    #[test]
    fn prompt_messages_joined() {
        let r = GetPromptResult::new(vec![
            PromptMessage::new_text(Role::User, "a"),
            PromptMessage::new_text(Role::Assistant, "b"),
        ]);
        assert_eq!(prompt_text(&r), "a\n\nb");
    }
}
