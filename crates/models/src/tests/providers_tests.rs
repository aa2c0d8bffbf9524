use std::collections::BTreeMap;

use super::*;

fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
    move |name| {
        pairs
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
            .filter(|v| !v.is_empty())
    }
}

#[test]
fn builtins_with_defaults() {
    let env = env_of(&[("OPENAI_API_KEY", "sk-1"), ("ANTHROPIC_API_KEY", "ak-2")]);
    let config = Config::default();

    let openai = resolve_endpoint_with("openai", &config, &env).unwrap();
    assert_eq!(openai.wire_api, WireApi::Responses);
    assert_eq!(openai.base_url, "https://api.openai.com/v1");
    assert_eq!(openai.api_key.as_deref(), Some("sk-1"));

    let anthropic = resolve_endpoint_with("anthropic", &config, &env).unwrap();
    assert_eq!(anthropic.wire_api, WireApi::Anthropic);
    assert_eq!(anthropic.base_url, "https://api.anthropic.com/v1");
    assert_eq!(anthropic.api_key.as_deref(), Some("ak-2"));

    let ollama = resolve_endpoint_with("ollama", &config, &env).unwrap();
    assert_eq!(ollama.wire_api, WireApi::Chat);
    assert_eq!(ollama.base_url, "http://127.0.0.1:11434/v1");
    assert_eq!(ollama.api_key, None);
    // The key never shows in Debug output.
    assert!(!format!("{openai:?}").contains("sk-1"));
}

#[test]
fn base_url_env_and_config_precedence() {
    let env = env_of(&[
        ("OPENAI_API_KEY", "k"),
        ("OPENAI_BASE_URL", "http://proxy:8080/v1/"),
    ]);
    let mut config = Config::default();
    assert_eq!(
        resolve_endpoint_with("openai", &config, &env)
            .unwrap()
            .base_url,
        "http://proxy:8080/v1"
    );

    config.providers.insert(
        "openai".into(),
        ProviderConfig {
            base_url: Some("https://gw.example/v1".into()),
            wire_api: Some("chat".into()),
            headers: BTreeMap::from([("OpenAI-Organization".to_string(), "org".to_string())]),
            ..ProviderConfig::default()
        },
    );
    let e = resolve_endpoint_with("openai", &config, &env).unwrap();
    assert_eq!(e.base_url, "https://gw.example/v1");
    assert_eq!(e.wire_api, WireApi::Chat);
    assert_eq!(
        e.headers,
        vec![("OpenAI-Organization".to_string(), "org".to_string())]
    );
    assert_eq!(
        e.api_key.as_deref(),
        Some("k"),
        "key env kept from the built-in"
    );
}

#[test]
fn missing_credentials_names_the_env_var() {
    let env = env_of(&[("OPENAI_API_KEY", "")]);
    let err = resolve_endpoint_with("openai", &Config::default(), &env).unwrap_err();
    assert_eq!(
        err,
        ProviderProblem::MissingCredentials {
            provider: "openai".into(),
            env_var: "OPENAI_API_KEY".into()
        }
    );
    assert_eq!(
        err.to_string(),
        "no API key for provider `openai`: set $OPENAI_API_KEY"
    );
}

#[test]
fn config_only_providers() {
    let env = env_of(&[("OR_KEY", "or-123")]);
    let mut config = Config::default();
    config.providers.insert(
        "openrouter".into(),
        ProviderConfig {
            base_url: Some("https://openrouter.ai/api/v1".into()),
            api_key_env: Some("OR_KEY".into()),
            ..ProviderConfig::default()
        },
    );
    config.providers.insert(
        "bad".into(),
        ProviderConfig {
            base_url: Some("http://x".into()),
            wire_api: Some("grpc".into()),
            ..ProviderConfig::default()
        },
    );
    config
        .providers
        .insert("nowhere".into(), ProviderConfig::default());
    config.providers.insert(
        "nokey".into(),
        ProviderConfig {
            base_url: Some("http://x".into()),
            api_key_env: Some("NOKEY_KEY".into()),
            ..ProviderConfig::default()
        },
    );

    let e = resolve_endpoint_with("openrouter", &config, &env).unwrap();
    assert_eq!(
        (e.wire_api, e.base_url.as_str(), e.api_key.as_deref()),
        (
            WireApi::Chat,
            "https://openrouter.ai/api/v1",
            Some("or-123")
        )
    );

    assert_eq!(
        resolve_endpoint_with("bad", &config, &env).unwrap_err(),
        ProviderProblem::BadWireApi {
            provider: "bad".into(),
            value: "grpc".into()
        }
    );
    assert_eq!(
        resolve_endpoint_with("nowhere", &config, &env).unwrap_err(),
        ProviderProblem::MissingBaseUrl {
            provider: "nowhere".into()
        }
    );
    assert!(matches!(
        resolve_endpoint_with("nokey", &config, &env).unwrap_err(),
        ProviderProblem::MissingCredentials { env_var, .. } if env_var == "NOKEY_KEY"
    ));
    let unknown = resolve_endpoint_with("mystery", &config, &env).unwrap_err();
    assert_eq!(
        unknown,
        ProviderProblem::UnknownProvider {
            name: "mystery".into(),
            known: [
                "openai",
                "anthropic",
                "ollama",
                "bad",
                "nokey",
                "nowhere",
                "openrouter"
            ]
            .map(String::from)
            .to_vec(),
        }
    );
}

#[test]
fn empty_key_env_turns_auth_off() {
    let mut config = Config::default();
    config.providers.insert(
        "anthropic".into(),
        ProviderConfig {
            api_key_env: Some(String::new()),
            base_url: Some("http://localhost:9000".into()),
            ..ProviderConfig::default()
        },
    );
    let e = resolve_endpoint_with("anthropic", &config, &env_of(&[])).unwrap();
    assert_eq!(e.api_key, None);
    assert_eq!(e.wire_api, WireApi::Anthropic);
}
