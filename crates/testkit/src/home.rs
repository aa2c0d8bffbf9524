//! [`TestHome`]: a throwaway `JUCODE_HOME` plus a workspace directory.
//!
//! Each test gets its own profile so sessions, caches and config never leak between tests
//! that run in parallel, and never touch the developer's real `~/.jucode`.

use std::fs;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use crate::server::ScriptedServer;

/// Env var named by `api_key_env` in configs written by [`TestHome::with_server`].
pub const TEST_API_KEY_ENV: &str = "JUCODE_TEST_KEY";
/// Value [`crate::DriverBuilder::home`] puts in [`TEST_API_KEY_ENV`].
pub const TEST_API_KEY: &str = "test-key";
/// Model id configured by [`TestHome::with_server`].
pub const TEST_MODEL: &str = "test-model";

/// Temporary profile dir and workspace, both deleted on drop.
pub struct TestHome {
    home: TempDir,
    workspace: TempDir,
}

impl Default for TestHome {
    fn default() -> Self {
        Self::new()
    }
}

impl TestHome {
    /// An empty profile (no config.toml) and an empty workspace.
    pub fn new() -> TestHome {
        TestHome {
            home: tempfile::Builder::new()
                .prefix("jucode-home-")
                .tempdir()
                .expect("create temp JUCODE_HOME"),
            workspace: tempfile::Builder::new()
                .prefix("jucode-ws-")
                .tempdir()
                .expect("create temp workspace"),
        }
    }

    /// A profile whose default model `test-model` talks to `server` with `wire_api`
    /// (`responses`, `chat` or `anthropic`). See [`mock_config`].
    ///
    /// # Panics
    /// On an unknown `wire_api` (likely a typo; write a config by hand to test bad values).
    pub fn with_server(server: &ScriptedServer, wire_api: &str) -> TestHome {
        assert!(
            matches!(wire_api, "responses" | "chat" | "anthropic"),
            "unknown wire_api {wire_api:?}: use responses, chat or anthropic"
        );
        let home = TestHome::new();
        home.write_config(&mock_config(&server.base_url(), wire_api));
        home
    }

    /// The profile dir, to pass as `JUCODE_HOME`.
    pub fn path(&self) -> &Path {
        self.home.path()
    }

    /// A directory to run the engine in (its cwd / project root).
    pub fn workspace(&self) -> &Path {
        self.workspace.path()
    }

    pub fn config_path(&self) -> PathBuf {
        self.path().join("config.toml")
    }

    /// Replace `config.toml`.
    pub fn write_config(&self, toml: &str) {
        fs::write(self.config_path(), toml).expect("write config.toml");
    }

    /// Write a file under the profile dir (parents created); returns its path.
    pub fn write_file(&self, relative: &str, contents: &str) -> PathBuf {
        write_under(self.path(), relative, contents)
    }

    /// Write a file under the workspace (parents created); returns its path.
    pub fn write_workspace_file(&self, relative: &str, contents: &str) -> PathBuf {
        write_under(self.workspace(), relative, contents)
    }
}

fn write_under(root: &Path, relative: &str, contents: &str) -> PathBuf {
    let path = root.join(relative);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).expect("create parent dirs");
    }
    fs::write(&path, contents).unwrap_or_else(|e| panic!("write {path:?}: {e}"));
    path
}

/// The config.toml used by [`TestHome::with_server`]: provider `mock` at `base_url` with the
/// key in `JUCODE_TEST_KEY`, and a `test-model` with small, round limits and prices so
/// context and cost assertions are easy to compute by hand.
pub fn mock_config(base_url: &str, wire_api: &str) -> String {
    format!(
        r#"model = "{TEST_MODEL}"
provider = "mock"

[providers.mock]
wire_api = "{wire_api}"
base_url = "{base_url}"
api_key_env = "{TEST_API_KEY_ENV}"

[models."{TEST_MODEL}"]
provider = "mock"
context_window = 100000
context_limit = 80000
max_output_tokens = 8000
reasoning_efforts = ["low", "medium", "high"]
price = {{ input = 1.0, cached_input = 0.1, output = 2.0 }}
"#
    )
}
