//! Output shaping: caps that keep model context bounded, and UTF-8 decoding
//! of byte streams that may split characters across reads.

/// Keeps the first `max` bytes of `text` (on a char boundary), noting how
/// much was cut. For documents, where the beginning matters most.
pub(crate) fn keep_start(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let end = floor_boundary(text, max);
    format!("{}\n… ({} bytes trimmed)", &text[..end], text.len() - end)
}

/// Largest char boundary `<= i`.
pub(crate) fn floor_boundary(text: &str, i: usize) -> usize {
    if i >= text.len() {
        return text.len();
    }
    let mut i = i;
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Shortens one line to at most `max_chars` characters.
pub(crate) fn clip_line(line: &str, max_chars: usize) -> String {
    match line.char_indices().nth(max_chars) {
        None => line.to_string(),
        Some((cut, _)) => format!(
            "{}… [line truncated, {} more chars]",
            &line[..cut],
            line[cut..].chars().count()
        ),
    }
}

/// Incremental UTF-8 decoder: holds back an incomplete trailing sequence
/// until the next chunk completes it; invalid bytes become U+FFFD.
#[derive(Default)]
pub(crate) struct Utf8Stream {
    pending: Vec<u8>,
}

impl Utf8Stream {
    pub fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let mut out = String::new();
        loop {
            match std::str::from_utf8(&self.pending) {
                Ok(s) => {
                    out.push_str(s);
                    self.pending.clear();
                    return out;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    // Safety net: from_utf8 just validated this prefix.
                    out.push_str(std::str::from_utf8(&self.pending[..valid]).unwrap_or_default());
                    match e.error_len() {
                        // Incomplete sequence at the end: wait for more bytes.
                        None => {
                            self.pending.drain(..valid);
                            return out;
                        }
                        Some(bad) => {
                            out.push('\u{FFFD}');
                            self.pending.drain(..valid + bad);
                        }
                    }
                }
            }
        }
    }

    /// Whatever is still held back (an incomplete sequence at end of stream).
    pub fn finish(&mut self) -> String {
        let rest = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        rest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_start_trims_back() {
        assert_eq!(keep_start("abcdef", 2), "ab\n… (4 bytes trimmed)");
    }

    #[test]
    fn clip_long_line() {
        assert_eq!(clip_line("abc", 5), "abc");
        assert_eq!(
            clip_line("abcdef", 3),
            "abc… [line truncated, 3 more chars]"
        );
    }

    #[test]
    fn utf8_stream_joins_split_chars() {
        let bytes = "aé€b".as_bytes();
        let mut d = Utf8Stream::default();
        let mut out = String::new();
        for b in bytes {
            out.push_str(&d.push(std::slice::from_ref(b)));
        }
        out.push_str(&d.finish());
        assert_eq!(out, "aé€b");
        let mut d = Utf8Stream::default();
        assert_eq!(d.push(b"a\xffb"), "a\u{FFFD}b");
    }
}
