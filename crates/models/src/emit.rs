//! The path from the wire parsers to the engine's callback. Every delta is
//! passed on the moment it is parsed (no batching); across retries of one
//! request the emitter suppresses what the user has already seen, so a
//! resent request that streams the same text again shows it only once.

use std::collections::HashMap;

use crate::types::StreamEvent;

/// Text of one kind (reasoning, assistant text, one call's arguments) as
/// emitted so far in this call, and how far the current attempt has
/// re-covered it.
#[derive(Debug, Default)]
struct Replayed {
    /// Everything passed on so far, over all attempts.
    emitted: String,
    /// Bytes of `emitted` the current attempt has repeated so far.
    matched: usize,
    /// The current attempt said something different from what was shown;
    /// from then on its deltas pass through unchanged, since what is on
    /// screen cannot be taken back.
    diverged: bool,
}

impl Replayed {
    fn new_attempt(&mut self) {
        self.matched = 0;
        self.diverged = false;
    }

    /// Returns the part of `delta` that has not been shown yet. Cost is
    /// O(delta), so a long replayed answer stays cheap.
    fn unseen<'d>(&mut self, delta: &'d str) -> &'d str {
        if self.diverged {
            self.emitted.push_str(delta);
            return delta;
        }
        let shown = &self.emitted[self.matched..];
        let common = common_prefix(shown, delta);
        if common == delta.len() {
            // Entirely a repeat (or the first attempt with nothing shown
            // beyond this point and an empty delta).
            self.matched += common;
            return "";
        }
        if common == shown.len() {
            // Repeats the rest of what was shown, then goes beyond it.
            let new = &delta[common..];
            self.emitted.push_str(new);
            self.matched = self.emitted.len();
            return new;
        }
        self.diverged = true;
        let new = &delta[common..];
        self.emitted.push_str(new);
        new
    }
}

/// Length in bytes of the longest common prefix, on a char boundary.
fn common_prefix(a: &str, b: &str) -> usize {
    let mut n = a
        .as_bytes()
        .iter()
        .zip(b.as_bytes())
        .take_while(|(x, y)| x == y)
        .count();
    while !b.is_char_boundary(n) {
        n -= 1;
    }
    n
}

/// What the parsers call with each piece of progress.
pub(crate) struct Emitter<'a> {
    sink: &'a mut (dyn FnMut(StreamEvent) + Send),
    response_started: bool,
    reasoning: Replayed,
    text: Replayed,
    /// Call ids whose start was emitted, with their argument text so far.
    calls: HashMap<String, Replayed>,
}

impl<'a> Emitter<'a> {
    pub(crate) fn new(sink: &'a mut (dyn FnMut(StreamEvent) + Send)) -> Self {
        Emitter {
            sink,
            response_started: false,
            reasoning: Replayed::default(),
            text: Replayed::default(),
            calls: HashMap::new(),
        }
    }

    /// Called before a retry: the next attempt starts from the beginning.
    pub(crate) fn new_attempt(&mut self) {
        self.reasoning.new_attempt();
        self.text.new_attempt();
        for call in self.calls.values_mut() {
            call.new_attempt();
        }
    }

    /// Events that are not output (retry notices) pass straight through.
    pub(crate) fn raw(&mut self, event: StreamEvent) {
        (self.sink)(event);
    }

    /// Once per call, however many attempts it takes.
    pub(crate) fn response_started(&mut self) {
        if !self.response_started {
            self.response_started = true;
            (self.sink)(StreamEvent::ResponseStarted);
        }
    }

    pub(crate) fn reasoning(&mut self, delta: &str) {
        let new = self.reasoning.unseen(delta);
        if !new.is_empty() {
            (self.sink)(StreamEvent::ReasoningDelta(new.to_string()));
        }
    }

    pub(crate) fn text(&mut self, delta: &str) {
        let new = self.text.unseen(delta);
        if !new.is_empty() {
            (self.sink)(StreamEvent::TextDelta(new.to_string()));
        }
    }

    /// A call began. A retry that produces a call id already started (a
    /// server that reuses ids, or a replayed response) does not start it
    /// twice.
    pub(crate) fn tool_start(&mut self, call_id: &str, name: &str) {
        if self.calls.contains_key(call_id) {
            return;
        }
        self.calls.insert(call_id.to_string(), Replayed::default());
        (self.sink)(StreamEvent::ToolCallStart {
            call_id: call_id.to_string(),
            name: name.to_string(),
        });
    }

    pub(crate) fn tool_delta(&mut self, call_id: &str, delta: &str) {
        let Some(call) = self.calls.get_mut(call_id) else {
            // The parsers start a call before its arguments; a delta for an
            // unknown id is a server bug not worth showing.
            return;
        };
        let new = call.unseen(delta);
        if !new.is_empty() {
            (self.sink)(StreamEvent::ToolCallDelta {
                call_id: call_id.to_string(),
                delta: new.to_string(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(script: impl FnOnce(&mut Emitter<'_>)) -> Vec<StreamEvent> {
        let mut seen = Vec::new();
        let mut sink = |e: StreamEvent| seen.push(e);
        let mut em = Emitter::new(&mut sink);
        script(&mut em);
        drop(em);
        seen
    }

    fn texts(events: &[StreamEvent]) -> String {
        events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::TextDelta(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn first_attempt_passes_everything_through() {
        let ev = run(|em| {
            em.response_started();
            em.response_started();
            em.text("Hel");
            em.text("lo");
            em.reasoning("think");
        });
        assert_eq!(
            ev,
            vec![
                StreamEvent::ResponseStarted,
                StreamEvent::TextDelta("Hel".into()),
                StreamEvent::TextDelta("lo".into()),
                StreamEvent::ReasoningDelta("think".into()),
            ]
        );
    }

    #[test]
    fn retry_suppresses_the_repeated_prefix_and_emits_only_the_rest() {
        let ev = run(|em| {
            em.response_started();
            em.reasoning("Let me");
            em.text("Hello, wo");
            em.new_attempt();
            em.response_started();
            em.reasoning("Let");
            em.reasoning(" me check");
            // Chunked differently this time.
            em.text("Hel");
            em.text("lo, w");
            em.text("orld");
            em.text("!");
        });
        assert_eq!(
            ev,
            vec![
                StreamEvent::ResponseStarted,
                StreamEvent::ReasoningDelta("Let me".into()),
                StreamEvent::TextDelta("Hello, wo".into()),
                StreamEvent::ReasoningDelta(" check".into()),
                StreamEvent::TextDelta("rld".into()),
                StreamEvent::TextDelta("!".into()),
            ]
        );
        assert_eq!(texts(&ev), "Hello, world!");
    }

    #[test]
    fn a_diverging_retry_emits_from_the_point_of_difference() {
        let ev = run(|em| {
            em.text("The answer is 4");
            em.new_attempt();
            em.text("The answer: ");
            em.text("four");
        });
        assert_eq!(texts(&ev), "The answer is 4: four");
    }

    #[test]
    fn multibyte_prefix_does_not_split_chars() {
        let ev = run(|em| {
            em.text("né");
            em.new_attempt();
            // 'é' and 'è' share their first UTF-8 byte.
            em.text("nè!");
        });
        assert_eq!(texts(&ev), "néè!");
    }

    #[test]
    fn a_third_attempt_still_dedups() {
        let ev = run(|em| {
            em.text("ab");
            em.new_attempt();
            em.text("abcd");
            em.new_attempt();
            em.text("abcdef");
        });
        assert_eq!(texts(&ev), "abcdef");
    }

    #[test]
    fn tool_calls_start_once_and_arguments_dedup() {
        let ev = run(|em| {
            em.tool_start("call_1", "shell");
            em.tool_delta("call_1", "{\"cmd\":");
            em.new_attempt();
            em.tool_start("call_1", "shell");
            em.tool_delta("call_1", "{\"cmd\":\"ls\"}");
            em.tool_start("call_2", "read");
            em.tool_delta("call_2", "{}");
            em.tool_delta("nobody", "{}");
        });
        assert_eq!(
            ev,
            vec![
                StreamEvent::ToolCallStart {
                    call_id: "call_1".into(),
                    name: "shell".into()
                },
                StreamEvent::ToolCallDelta {
                    call_id: "call_1".into(),
                    delta: "{\"cmd\":".into()
                },
                StreamEvent::ToolCallDelta {
                    call_id: "call_1".into(),
                    delta: "\"ls\"}".into()
                },
                StreamEvent::ToolCallStart {
                    call_id: "call_2".into(),
                    name: "read".into()
                },
                StreamEvent::ToolCallDelta {
                    call_id: "call_2".into(),
                    delta: "{}".into()
                },
            ]
        );
    }
}
