//! Token estimates with the o200k encoding (exact for GPT-4o/4.1/5, the
//! o-series and gpt-oss; an estimate for other models, whose
//! provider-reported usage is the ground truth).

use std::sync::OnceLock;

use bpe_openai::Tokenizer;

use crate::types::HistoryItem;

/// Per-item framing (role markers, separators) the text alone misses.
const ITEM_OVERHEAD: u64 = 4;
/// A rough figure for one attached image; providers bill images by size,
/// which the history does not record.
const IMAGE_ESTIMATE: u64 = 800;

static O200K: OnceLock<&'static Tokenizer> = OnceLock::new();

/// The tokenizer, built on first use (about 75 ms).
fn tokenizer() -> &'static Tokenizer {
    O200K.get_or_init(bpe_openai::o200k_base)
}

/// Builds the tokenizer now. The engine calls this on a background thread
/// at startup so that the dictionary setup never lands on a turn.
pub fn warm_up() {
    let _ = tokenizer().count("warm up");
}

pub fn count_tokens(text: &str) -> u64 {
    if text.is_empty() {
        return 0;
    }
    tokenizer().count(text) as u64
}

/// Estimated prompt tokens of a history: its texts plus a small overhead
/// per item.
pub fn count_history(items: &[HistoryItem]) -> u64 {
    items
        .iter()
        .map(|item| {
            ITEM_OVERHEAD
                + match item {
                    HistoryItem::User { text, images } => {
                        count_tokens(text) + IMAGE_ESTIMATE * images.len() as u64
                    }
                    HistoryItem::Assistant { text } | HistoryItem::Reasoning { text, .. } => {
                        count_tokens(text)
                    }
                    HistoryItem::ToolCall {
                        name, arguments, ..
                    } => count_tokens(name) + count_tokens(arguments),
                    HistoryItem::ToolResult { output, .. } => count_tokens(output),
                }
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_o200k() {
        warm_up();
        assert_eq!(count_tokens(""), 0);
        assert_eq!(count_tokens("hello world"), 2);
        assert_eq!(count_tokens("Hello, world!"), 4);
        let long = "fn main() { println!(\"hi\"); }\n".repeat(100);
        let n = count_tokens(&long);
        assert!(n > 500 && n < 1500, "{n}");
    }

    #[test]
    fn history_adds_overhead_per_item() {
        let items = vec![
            HistoryItem::User {
                text: "hello world".into(),
                images: vec![],
            },
            HistoryItem::Assistant {
                text: String::new(),
            },
            HistoryItem::ToolCall {
                call_id: "c".into(),
                name: "shell".into(),
                arguments: "{}".into(),
            },
            HistoryItem::ToolResult {
                call_id: "c".into(),
                output: "hello world".into(),
                is_error: false,
            },
        ];
        let expected = 4 * 4 + 2 + count_tokens("shell") + count_tokens("{}") + 2;
        assert_eq!(count_history(&items), expected);
        assert_eq!(count_history(&[]), 0);
    }

    #[test]
    fn usable_from_many_threads_at_once() {
        let handles: Vec<_> = (0..4)
            .map(|_| std::thread::spawn(|| count_tokens("the same text on every thread")))
            .collect();
        let counts: Vec<u64> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert!(counts.windows(2).all(|w| w[0] == w[1]));
    }
}
