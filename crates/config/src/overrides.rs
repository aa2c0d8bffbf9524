//! `-c key=value` overrides: a dotted key and a TOML value.

/// Applies one `key=value` to the table. The value is parsed as TOML; when
/// that fails it is taken as a plain string, so `-c model=gpt-5` works
/// without quotes.
pub fn apply_override(table: &mut toml::Table, raw: &str) -> Result<(), String> {
    let Some((key, value)) = raw.split_once('=') else {
        return Err(format!("-c {raw}: expected key=value"));
    };
    let key = key.trim();
    if key.is_empty() {
        return Err(format!("-c {raw}: empty key"));
    }
    let value = parse_value(value.trim());
    let parts: Vec<&str> = key.split('.').map(|p| p.trim_matches('"')).collect();
    let (last, parents) = parts.split_last().expect("split yields at least one part");
    let mut current = table;
    for part in parents {
        let entry = current
            .entry(part.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        current = match entry {
            toml::Value::Table(t) => t,
            _ => return Err(format!("-c {raw}: `{part}` is not a table")),
        };
    }
    current.insert(last.to_string(), value);
    Ok(())
}

fn parse_value(text: &str) -> toml::Value {
    let doc = format!("v = {text}");
    match doc.parse::<toml::Table>() {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or_else(|| toml::Value::String(text.into())),
        Err(_) => toml::Value::String(text.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_and_plain_values() {
        let mut t = toml::Table::new();
        apply_override(&mut t, "model=gpt-5").unwrap();
        apply_override(&mut t, "models.\"x\".context_window=1000").unwrap();
        apply_override(&mut t, "providers.local.headers={a=\"b\"}").unwrap();
        assert_eq!(t["model"].as_str(), Some("gpt-5"));
        assert_eq!(t["models"]["x"]["context_window"].as_integer(), Some(1000));
        assert_eq!(t["providers"]["local"]["headers"]["a"].as_str(), Some("b"));
        assert!(apply_override(&mut t, "novalue").is_err());
    }
}
