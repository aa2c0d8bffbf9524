//! The small YAML-ish frontmatter of command and skill files:
//!
//! ```text
//! ---
//! description: Review a file
//! argument-hint: FILE
//! ---
//! body…
//! ```
//!
//! Only `key: value` lines are read (values may be quoted); anything else in
//! the block is ignored. A file without the block is all body.

use std::collections::BTreeMap;

/// Keys (lowercased) with their values, and the body after the block.
pub fn split(text: &str) -> (BTreeMap<String, String>, &str) {
    let mut fields = BTreeMap::new();
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(first_end) = text.find('\n') else {
        return (fields, text);
    };
    if text[..first_end].trim_end() != "---" {
        return (fields, text);
    }
    let mut at = first_end + 1;
    while at < text.len() {
        let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
        let line = text[at..end].trim_end_matches('\r');
        let next = (end + 1).min(text.len());
        if line.trim_end() == "---" {
            return (fields, &text[next..]);
        }
        if let Some((key, value)) = line.split_once(':') {
            let key = key.trim();
            if !key.is_empty() && !key.starts_with('#') && !line.starts_with([' ', '\t']) {
                fields.insert(key.to_ascii_lowercase(), unquote(value.trim()).to_string());
            }
        }
        at = next;
    }
    // No closing line: not frontmatter after all.
    (BTreeMap::new(), text)
}

fn unquote(value: &str) -> &str {
    for q in ['"', '\''] {
        if value.len() >= 2 && value.starts_with(q) && value.ends_with(q) {
            return &value[1..value.len() - 1];
        }
    }
    value
}

/// The first non-empty line of `body`, cut to `max` characters: the
/// description of a file that has none.
pub fn first_line(body: &str, max: usize) -> String {
    let line = body
        .lines()
        .map(|l| l.trim().trim_start_matches('#').trim())
        .find(|l| !l.is_empty())
        .unwrap_or("");
    match line.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_fields_and_body() {
        let (f, body) = split("---\ndescription: Review \"it\"\nargument-hint: 'FILE'\r\n  nested: x\n---\nDo $ARGUMENTS\n");
        assert_eq!(f["description"], "Review \"it\"");
        assert_eq!(f["argument-hint"], "FILE");
        assert!(!f.contains_key("nested"));
        assert_eq!(body, "Do $ARGUMENTS\n");
    }

    #[test]
    fn no_block_means_all_body() {
        assert_eq!(split("just text\n---\n").1, "just text\n---\n");
        assert_eq!(split("---\nunclosed: yes\n").1, "---\nunclosed: yes\n");
        assert!(split("---\nunclosed: yes\n").0.is_empty());
        assert_eq!(split("---\n---\n").1, "");
        assert_eq!(first_line("\n# Title here\nmore", 5), "Title…");
    }
}
