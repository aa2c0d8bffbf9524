//! Argument types of the built-in tools, parsed from the model's JSON text.
//!
//! Parsing is lenient where models are known to be sloppy (numbers sent as
//! strings, unknown extra fields, empty argument text) and strict where a
//! guess could do harm (a missing `path` or `old_text` is an error).

use serde::de::{DeserializeOwned, Deserializer};
use serde::Deserialize;

/// Parses `args` for tool `tool`, turning every failure into a message the
/// model can act on.
pub(crate) fn parse<T: DeserializeOwned>(tool: &str, args: &str) -> Result<T, String> {
    // Some models send "" for a call without arguments.
    let text = if args.trim().is_empty() { "{}" } else { args };
    serde_json::from_str(text).map_err(|e| {
        format!("invalid arguments for `{tool}`: {e}. Arguments must be a JSON object matching the tool's schema.")
    })
}

#[derive(Debug, Deserialize)]
pub(crate) struct BashArgs {
    pub command: String,
    /// Seconds.
    #[serde(default, deserialize_with = "opt_number")]
    pub timeout: Option<f64>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ReadArgs {
    pub path: String,
    /// 1-based first line.
    #[serde(default, deserialize_with = "opt_number")]
    pub offset: Option<f64>,
    /// Number of lines.
    #[serde(default, deserialize_with = "opt_number")]
    pub limit: Option<f64>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WriteArgs {
    pub path: String,
    pub content: String,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct EditPair {
    pub old_text: String,
    pub new_text: String,
    #[serde(default)]
    pub replace_all: Option<bool>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct EditArgs {
    pub path: String,
    #[serde(default)]
    pub old_text: Option<String>,
    #[serde(default)]
    pub new_text: Option<String>,
    #[serde(default)]
    pub replace_all: Option<bool>,
    /// Multi-edit form, applied in order.
    #[serde(default)]
    pub edits: Option<Vec<EditPair>>,
}

impl EditArgs {
    /// The edits to apply in order, whichever form the model used.
    pub fn pairs(&self) -> Result<Vec<EditPair>, String> {
        let mut pairs = Vec::new();
        match (&self.old_text, &self.new_text) {
            (Some(old), Some(new)) => pairs.push(EditPair {
                old_text: old.clone(),
                new_text: new.clone(),
                replace_all: self.replace_all,
            }),
            (Some(_), None) => return Err("`new_text` is required with `old_text`".into()),
            (None, Some(_)) => return Err("`old_text` is required with `new_text`".into()),
            (None, None) => {}
        }
        if let Some(edits) = &self.edits {
            pairs.extend(edits.iter().cloned());
        }
        if pairs.is_empty() {
            return Err(
                "`edit` needs `old_text` and `new_text` (or `edits`: [{old_text, new_text}])"
                    .into(),
            );
        }
        Ok(pairs)
    }
}

#[derive(Debug, Deserialize)]
pub(crate) struct ListArgs {
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub glob: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct SearchArgs {
    pub pattern: String,
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub glob: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WebFetchArgs {
    pub url: String,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WebSearchArgs {
    pub query: String,
}

/// Accepts `5`, `5.5`, `"5"` or `null`: models often quote numbers.
fn opt_number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum NumOrText {
        Num(f64),
        Text(String),
    }
    match Option::<NumOrText>::deserialize(d)? {
        None => Ok(None),
        Some(NumOrText::Num(n)) => Ok(Some(n)),
        Some(NumOrText::Text(s)) if s.trim().is_empty() => Ok(None),
        Some(NumOrText::Text(s)) => s
            .trim()
            .parse::<f64>()
            .map(Some)
            .map_err(|_| serde::de::Error::custom(format!("expected a number, got {s:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_may_be_quoted() {
        let a: BashArgs = parse("bash", r#"{"command":"ls","timeout":"5"}"#).unwrap();
        assert_eq!(a.timeout, Some(5.0));
        let a: ReadArgs = parse("read", r#"{"path":"x","offset":3,"limit":null}"#).unwrap();
        assert_eq!((a.offset, a.limit), (Some(3.0), None));
    }

    #[test]
    fn missing_field_is_a_readable_error() {
        let e = parse::<WriteArgs>("write", r#"{"path":"x"}"#).unwrap_err();
        assert!(e.contains("invalid arguments for `write`"), "{e}");
        assert!(e.contains("content"), "{e}");
        let e = parse::<WriteArgs>("write", "not json").unwrap_err();
        assert!(e.contains("invalid arguments"), "{e}");
    }

    #[test]
    fn edit_forms() {
        let a: EditArgs = parse("edit", r#"{"path":"x","old_text":"a","new_text":"b"}"#).unwrap();
        assert_eq!(a.pairs().unwrap().len(), 1);
        let a: EditArgs = parse(
            "edit",
            r#"{"path":"x","edits":[{"old_text":"a","new_text":"b"},{"old_text":"c","new_text":"d"}]}"#,
        )
        .unwrap();
        assert_eq!(a.pairs().unwrap().len(), 2);
        let a: EditArgs = parse("edit", r#"{"path":"x"}"#).unwrap();
        assert!(a.pairs().is_err());
    }
}
