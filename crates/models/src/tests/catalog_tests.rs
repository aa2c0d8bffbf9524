use super::*;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn builtin_has_every_reference_model() {
    let c = Catalog::builtin();
    assert_eq!(c.as_of(), "2026-12");
    let ids: Vec<&str> = c.models().iter().map(|m| m.id.as_str()).collect();
    for id in [
        "gpt-5",
        "gpt-5-mini",
        "gpt-5-nano",
        "gpt-5.5",
        "gpt-5.4",
        "gpt-5.4-mini",
        "gpt-5.4-nano",
        "gpt-4.1",
        "gpt-4.1-mini",
        "gpt-4.1-nano",
        "o3",
        "o4-mini",
        "claude-opus-4-5",
        "claude-opus-4-6",
        "claude-sonnet-4-6",
        "claude-sonnet-4-5-20250929",
        "claude-haiku-4-5-20251001",
        "claude-sonnet-5",
        "claude-opus-4-7",
        "gpt-oss:20b",
        "qwen3-coder:30b",
    ] {
        assert!(ids.contains(&id), "{id} missing");
    }
    // Unique ids, stable order (the file's order).
    let unique: BTreeSet<&str> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len());
    assert_eq!(Catalog::builtin().models(), c.models());
    assert_eq!(ids[0], "gpt-5.5");

    for m in c.models() {
        assert!(
            ["openai", "anthropic", "ollama"].contains(&m.provider.as_str()),
            "{}",
            m.id
        );
        assert!(m.context_limit <= m.context_window, "{}", m.id);
        assert!(m.max_output_tokens > 0, "{}", m.id);
        if let Some(effort) = &m.default_effort {
            assert!(
                m.supports_effort(effort),
                "{}: default {effort} not offered",
                m.id
            );
        }
        if m.provider == "ollama" {
            assert_eq!(m.price, Price::FREE, "{}", m.id);
        }
    }
}

#[test]
fn builtin_values() {
    let c = Catalog::builtin();
    let gpt5 = c.get("gpt-5").unwrap();
    assert_eq!(gpt5.context_window, 400_000);
    assert_eq!(gpt5.context_limit, 320_000);
    assert_eq!(gpt5.max_output_tokens, 128_000);
    assert_eq!(gpt5.reasoning_efforts, ["minimal", "low", "medium", "high"]);
    assert_eq!(gpt5.price.cached_input, 0.125);

    let sonnet = c.get("claude-sonnet-4-5-20250929").unwrap();
    assert_eq!(
        (
            sonnet.price.input,
            sonnet.price.cache_write,
            sonnet.price.cached_input,
            sonnet.price.output
        ),
        (3.0, 3.75, 0.30, 15.0)
    );
    assert!(c.get("gpt-4.1").unwrap().reasoning_efforts.is_empty());
    assert_eq!(c.get("gpt-oss:20b").unwrap().context_window, 131_072);
    assert!(c.get("nope").is_none());
}

#[test]
fn cost_math() {
    let c = Catalog::builtin();
    // OpenAI: 5120 in of which 4096 cached, 310 out.
    let usage = Usage {
        input_tokens: 5120,
        cached_input_tokens: 4096,
        output_tokens: 310,
        reasoning_tokens: 192,
        ..Usage::default()
    };
    let expected = (1024.0 * 1.25 + 4096.0 * 0.125 + 310.0 * 10.0) / 1e6;
    assert!(close(c.get("gpt-5").unwrap().cost_usd(&usage), expected));

    // Anthropic: normalized usage, writes billed at 1.25×, reads at 0.1×.
    let usage = Usage {
        input_tokens: 472 + 12_000 + 100,
        cached_input_tokens: 12_000,
        cache_write_tokens: 100,
        output_tokens: 89,
        reasoning_tokens: 0,
    };
    let expected = (472.0 * 3.0 + 12_000.0 * 0.30 + 100.0 * 3.75 + 89.0 * 15.0) / 1e6;
    assert!(close(
        c.get("claude-sonnet-4-5-20250929")
            .unwrap()
            .cost_usd(&usage),
        expected
    ));

    // One million output tokens of gpt-5.5 is its output price.
    let usage = Usage {
        output_tokens: 1_000_000,
        ..Usage::default()
    };
    assert!(close(c.get("gpt-5.5").unwrap().cost_usd(&usage), 30.0));
    assert_eq!(c.get("qwen3-coder:30b").unwrap().cost_usd(&usage), 0.0);

    // gpt-5.4 above 272K input: 2× input, 1.5× output.
    let m = c.get("gpt-5.4").unwrap();
    let small = Usage {
        input_tokens: 272_000,
        output_tokens: 1000,
        ..Usage::default()
    };
    assert!(close(
        m.cost_usd(&small),
        (272_000.0 * 2.5 + 1000.0 * 15.0) / 1e6
    ));
    let big = Usage {
        input_tokens: 300_000,
        cached_input_tokens: 100_000,
        output_tokens: 1000,
        ..Usage::default()
    };
    assert!(close(
        m.cost_usd(&big),
        ((200_000.0 * 2.5 + 100_000.0 * 0.25) * 2.0 + 1000.0 * 15.0 * 1.5) / 1e6
    ));

    // Inconsistent usage never underflows.
    let odd = Usage {
        input_tokens: 10,
        cached_input_tokens: 20,
        ..Usage::default()
    };
    assert!(c.get("gpt-5").unwrap().cost_usd(&odd) > 0.0);
}

#[test]
fn overrides_change_known_models_and_add_new_ones() {
    let mut overrides = BTreeMap::new();
    overrides.insert(
        "qwen3-coder:30b".to_string(),
        ModelConfig {
            context_window: Some(32_768),
            ..ModelConfig::default()
        },
    );
    overrides.insert(
        "gpt-5".to_string(),
        ModelConfig {
            context_limit: Some(200_000),
            default_effort: Some("high".into()),
            price: Some(PriceConfig {
                input: 1.0,
                cached_input: Some(0.1),
                cache_write: None,
                output: 8.0,
            }),
            ..ModelConfig::default()
        },
    );
    overrides.insert(
        "my-model".to_string(),
        ModelConfig {
            provider: Some("lmstudio".into()),
            ..ModelConfig::default()
        },
    );
    overrides.insert(
        "claude-next".to_string(),
        ModelConfig {
            context_window: Some(500_000),
            reasoning_efforts: Some(vec!["low".into(), "high".into()]),
            price: Some(PriceConfig {
                input: 2.0,
                cached_input: None,
                cache_write: None,
                output: 10.0,
            }),
            ..ModelConfig::default()
        },
    );
    let c = Catalog::builtin().with_overrides(&overrides);
    let builtin_len = Catalog::builtin().models().len();
    assert_eq!(c.models().len(), builtin_len + 2);
    // New models come after the built-ins, in id order.
    assert_eq!(c.models()[builtin_len].id, "claude-next");
    assert_eq!(c.models()[builtin_len + 1].id, "my-model");

    let qwen = c.get("qwen3-coder:30b").unwrap();
    assert_eq!((qwen.context_window, qwen.context_limit), (32_768, 26_214));

    let gpt5 = c.get("gpt-5").unwrap();
    assert_eq!(gpt5.context_limit, 200_000);
    assert_eq!(gpt5.context_window, 400_000);
    assert_eq!(gpt5.default_effort.as_deref(), Some("high"));
    assert_eq!(
        (
            gpt5.price.input,
            gpt5.price.cached_input,
            gpt5.price.cache_write
        ),
        (1.0, 0.1, 1.0)
    );
    assert_eq!(gpt5.reasoning_efforts.len(), 4, "untouched fields are kept");

    let mine = c.get("my-model").unwrap();
    assert_eq!(mine.provider, "lmstudio");
    assert_eq!(
        (
            mine.context_window,
            mine.context_limit,
            mine.max_output_tokens
        ),
        (128_000, 102_400, 8192)
    );
    assert!(mine.reasoning_efforts.is_empty());
    assert_eq!(mine.default_effort, None);

    let next = c.get("claude-next").unwrap();
    assert_eq!(next.provider, "anthropic");
    assert_eq!(next.context_limit, 400_000);
    assert!(close(next.price.cached_input, 0.2));
    assert!(close(next.price.cache_write, 2.5));

    // A stated limit survives a window change, clamped to the window.
    let mut again = BTreeMap::new();
    again.insert(
        "gpt-5".to_string(),
        ModelConfig {
            context_window: Some(150_000),
            ..ModelConfig::default()
        },
    );
    let c2 = c.with_overrides(&again);
    assert_eq!(c2.get("gpt-5").unwrap().context_limit, 150_000);
}
