//! A subagent's transcript, kept within fixed bounds: at most 300 items and
//! 256 KB of text (older steps give way to one "… earlier steps trimmed"
//! item), tool input and output cut to 4 KB each (output keeps its end).

use serde_json::{json, Value};

const MAX_ITEMS: usize = 300;
const MAX_BYTES: usize = 256 * 1024;
const MAX_TOOL_TEXT: usize = 4 * 1024;
pub const TRIMMED: &str = "… earlier steps trimmed";

#[derive(Default)]
pub struct Transcript {
    items: Vec<Value>,
    bytes: usize,
    trimmed: bool,
}

fn head(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

fn tail(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("…{}", &text[start..])
}

fn size(item: &Value) -> usize {
    ["content", "input", "output"]
        .iter()
        .filter_map(|k| item.get(*k).and_then(Value::as_str))
        .map(str::len)
        .sum()
}

impl Transcript {
    pub fn items(&self) -> Vec<Value> {
        self.items.clone()
    }

    fn push(&mut self, item: Value) {
        self.bytes += size(&item);
        self.items.push(item);
        self.enforce_caps();
    }

    /// Drops the oldest steps until both caps hold. The task (item 0)
    /// always stays; the "trimmed" marker sits right after it.
    fn enforce_caps(&mut self) {
        while self.items.len() > MAX_ITEMS || self.bytes > MAX_BYTES {
            let first_step = if self.trimmed { 2 } else { 1 };
            if self.items.len() <= first_step + 1 {
                break;
            }
            let removed = self.items.remove(first_step);
            self.bytes -= size(&removed);
            if !self.trimmed {
                self.trimmed = true;
                let marker = json!({"role": "assistant", "content": TRIMMED, "trimmed": true});
                self.bytes += size(&marker);
                self.items.insert(1, marker);
            }
        }
    }

    pub fn user(&mut self, text: &str) {
        self.push(json!({"role": "user", "content": text}));
    }

    pub fn assistant(&mut self, text: &str) {
        self.push(json!({"role": "assistant", "content": text}));
    }

    pub fn reasoning(&mut self, text: &str) {
        self.push(json!({"role": "reasoning", "content": text}));
    }

    pub fn tool_started(&mut self, call_id: &str, name: &str, input: &str) {
        self.push(json!({
            "role": "tool", "call_id": call_id, "name": name,
            "input": head(input, MAX_TOOL_TEXT), "output": "", "running": true, "is_error": false,
        }));
    }

    pub fn tool_finished(&mut self, call_id: &str, output: &str, is_error: bool) {
        let output = tail(output, MAX_TOOL_TEXT);
        if let Some(item) = self
            .items
            .iter_mut()
            .rev()
            .find(|i| i["role"] == "tool" && i["call_id"] == call_id)
        {
            self.bytes += output.len();
            item["output"] = Value::String(output);
            item["running"] = Value::Bool(false);
            item["is_error"] = Value::Bool(is_error);
        }
        // Re-check the byte cap now that an output arrived.
        self.enforce_caps();
    }

    /// The agent stopped: nothing is running any more.
    pub fn finish_running(&mut self) {
        for item in &mut self.items {
            if item["running"] == true {
                item["running"] = Value::Bool(false);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_items_and_keeps_the_task() {
        let mut t = Transcript::default();
        t.user("the task");
        for i in 0..400 {
            t.assistant(&format!("step {i}"));
        }
        let items = t.items();
        assert_eq!(items.len(), 300);
        assert_eq!(items[0]["content"], "the task");
        assert_eq!(items[1]["content"], TRIMMED);
        assert_eq!(items[299]["content"], "step 399");
    }

    #[test]
    fn cuts_tool_text_and_bytes() {
        let mut t = Transcript::default();
        t.user("task");
        t.tool_started("c1", "bash", &"i".repeat(10_000));
        t.tool_finished("c1", &format!("{}END", "o".repeat(10_000)), false);
        let items = t.items();
        assert!(items[1]["input"].as_str().unwrap().len() <= 4 * 1024 + 4);
        let out = items[1]["output"].as_str().unwrap();
        assert!(out.ends_with("END") && out.len() <= 4 * 1024 + 4);
        for i in 0..200 {
            t.assistant(&format!("{i}{}", "x".repeat(2_000)));
        }
        let total: usize = t.items().iter().map(size).sum();
        assert!(total <= MAX_BYTES);
        assert_eq!(t.items()[1]["content"], TRIMMED);
    }
}
