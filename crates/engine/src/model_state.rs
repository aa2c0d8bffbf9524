//! Which model and provider the session uses, and the `model_status` /
//! `model_view` events that describe them.

use jucode_config::Config;
use jucode_models::{resolve_endpoint, Catalog, Endpoint, ModelInfo, ProviderProblem};
use jucode_protocol::{Event, ModelViewItem};

use crate::output::Output;

pub const DEFAULT_MODEL: &str = "gpt-5.5";
pub const DEFAULT_PROVIDER: &str = "openai";

pub struct ModelState {
    pub catalog: Catalog,
    pub model: String,
    pub provider: String,
    pub effort: Option<String>,
    /// Set after a request could not reach the provider; cleared by the
    /// next success. Lets `model_status.state` say `unavailable`.
    pub unreachable: bool,
    last_status: Option<Event>,
}

impl ModelState {
    /// Picks model, provider and effort from flags and config.
    /// Precedence: flags, then config.toml, then the catalog's defaults.
    pub fn new(
        config: &Config,
        model_flag: Option<&str>,
        provider_flag: Option<&str>,
    ) -> ModelState {
        let catalog = Catalog::builtin().with_overrides(&config.models);
        let model = model_flag
            .map(str::to_string)
            .or_else(|| config.model.clone())
            .unwrap_or_else(|| DEFAULT_MODEL.to_string());
        let catalog_provider = catalog.get(&model).map(|m| m.provider.clone());
        // An explicit -m names a model; its provider follows it unless
        // --provider says otherwise. Without -m, config's provider wins.
        let provider = provider_flag
            .map(str::to_string)
            .or_else(|| {
                if model_flag.is_some() {
                    catalog_provider.clone().or_else(|| config.provider.clone())
                } else {
                    config.provider.clone().or_else(|| catalog_provider.clone())
                }
            })
            .unwrap_or_else(|| DEFAULT_PROVIDER.to_string());
        let mut state = ModelState {
            catalog,
            model,
            provider,
            effort: None,
            unreachable: false,
            last_status: None,
        };
        state.effort = state.pick_effort(config.reasoning_effort.as_deref());
        state
    }

    /// The catalog entry of the active model, or defaults for a model the
    /// catalog does not know (a local model, say).
    pub fn info(&self) -> ModelInfo {
        self.catalog
            .get(&self.model)
            .cloned()
            .unwrap_or_else(|| ModelInfo::unknown(&self.model, &self.provider))
    }

    fn pick_effort(&self, wanted: Option<&str>) -> Option<String> {
        let info = self.info();
        match wanted {
            Some(e) if info.reasoning_efforts.iter().any(|x| x == e) => Some(e.to_string()),
            _ => info.default_effort.clone(),
        }
    }

    pub fn endpoint(&self, config: &Config) -> Result<Endpoint, ProviderProblem> {
        resolve_endpoint(&self.provider, config)
    }

    pub fn status_event(&self, config: &Config) -> Event {
        let info = self.info();
        let state = match self.endpoint(config) {
            Ok(_) if self.unreachable => "unavailable",
            Ok(_) => "ready",
            Err(ProviderProblem::MissingCredentials { .. }) => "missing_credentials",
            Err(ProviderProblem::UnknownProvider { .. }) => "unknown_provider",
            Err(_) => "invalid_config",
        };
        Event::ModelStatus {
            provider: self.provider.clone(),
            model: self.model.clone(),
            reasoning_effort: self.effort.clone(),
            context_window: info.context_window,
            context_limit: info.context_limit,
            max_output_tokens: info.max_output_tokens,
            reasoning_efforts: info.reasoning_efforts.clone(),
            state: state.to_string(),
        }
    }

    /// Emits `model_status` unless it equals the last one emitted.
    pub fn emit_status(&mut self, config: &Config, out: &Output) {
        let event = self.status_event(config);
        if self.last_status.as_ref() != Some(&event) {
            self.last_status = Some(event.clone());
            out.emit(event);
        }
    }

    /// Forgets the last status so the next `emit_status` always emits
    /// (after `/resume`, the front-end expects the batch again).
    pub fn forget_status(&mut self) {
        self.last_status = None;
    }

    pub fn view_event(&self) -> Event {
        let mut models: Vec<ModelViewItem> = self
            .catalog
            .models()
            .iter()
            .map(|m| ModelViewItem {
                model: m.id.clone(),
                active: m.id == self.model,
                context_window: m.context_window,
                max_output_tokens: m.max_output_tokens,
                reasoning_efforts: m.reasoning_efforts.clone(),
            })
            .collect();
        if !models.iter().any(|m| m.active) {
            let info = self.info();
            models.push(ModelViewItem {
                model: info.id,
                active: true,
                context_window: info.context_window,
                max_output_tokens: info.max_output_tokens,
                reasoning_efforts: info.reasoning_efforts,
            });
        }
        Event::ModelView {
            models,
            active_effort: self.effort.clone(),
        }
    }

    /// `/model NAME [EFFORT]`. The model must be in the catalog (built-in or
    /// config); the effort must be one the model supports.
    pub fn switch(&mut self, name: &str, effort: Option<&str>) -> Result<(), String> {
        let Some(info) = self.catalog.get(name).cloned() else {
            return Err(format!(
                "unknown model: {name} (see /model for the list, or add it under [models.\"{name}\"] in config.toml)"
            ));
        };
        let effort = match effort {
            Some(e) if info.reasoning_efforts.iter().any(|x| x == e) => Some(e.to_string()),
            Some(e) if info.reasoning_efforts.is_empty() => {
                return Err(format!(
                    "model {name} does not take a reasoning effort (got {e})"
                ))
            }
            Some(e) => {
                return Err(format!(
                    "unknown reasoning effort `{e}` for {name} (expected one of: {})",
                    info.reasoning_efforts.join(", ")
                ))
            }
            None => self
                .effort
                .clone()
                .filter(|e| info.reasoning_efforts.contains(e))
                .or(info.default_effort.clone()),
        };
        self.model = info.id.clone();
        self.provider = info.provider.clone();
        self.effort = effort;
        self.unreachable = false;
        Ok(())
    }
}
