//! The `jucode-testkit serve-model` binary and `TestHome` config.

mod common;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Command, Stdio};

use common::post;
use jucode_testkit::{mock_config, ScriptedResponse, ScriptedServer, TestHome};

struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(script: &[ScriptedResponse], extra: &[&str]) -> (KillOnDrop, SocketAddr, TestHome) {
    let home = TestHome::new();
    let path = home.write_file("script.json", &serde_json::to_string(script).unwrap());
    let mut child = Command::new(env!("CARGO_BIN_EXE_jucode-testkit"))
        .arg("serve-model")
        .arg("--script")
        .arg(&path)
        .args(extra)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening http://")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"));
    let addr = url.strip_suffix("/v1").unwrap().parse().unwrap();
    (KillOnDrop(child), addr, home)
}

#[test]
fn serve_model_plays_script_once() {
    let (_child, addr, _home) = serve(
        &[
            ScriptedResponse::text("scripted hello").with_usage(10, 0, 2, 0),
            ScriptedResponse::status(429).with_retry_after("1"),
        ],
        &[],
    );
    let r = post(addr, "/v1/chat/completions", "{}");
    assert_eq!(r.status, 200);
    assert!(r.body().contains("scripted"));
    let r = post(addr, "/v1/responses", "{}");
    assert_eq!((r.status, r.header("retry-after")), (429, Some("1")));
    assert_eq!(post(addr, "/v1/messages", "{}").status, 418);
}

#[test]
fn serve_model_repeat_and_port() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let (_child, addr, _home) = serve(
        &[ScriptedResponse::text("again")],
        &["--repeat", "--port", &port.to_string()],
    );
    assert_eq!(addr.port(), port);
    for _ in 0..3 {
        assert!(post(addr, "/v1/messages", "{}").body().contains("again"));
    }
}

#[test]
fn serve_model_rejects_bad_usage() {
    let out = Command::new(env!("CARGO_BIN_EXE_jucode-testkit"))
        .arg("serve-model")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--script is required"));
}

#[test]
fn with_server_writes_a_valid_config() {
    let server = ScriptedServer::start();
    for wire in ["responses", "chat", "anthropic"] {
        let home = TestHome::with_server(&server, wire);
        let text = std::fs::read_to_string(home.config_path()).unwrap();
        assert_eq!(text, mock_config(&server.base_url(), wire));
        let config: toml::Value = toml::from_str(&text).unwrap();
        assert_eq!(config["model"].as_str(), Some("test-model"));
        let provider = &config["providers"]["mock"];
        assert_eq!(provider["wire_api"].as_str(), Some(wire));
        assert_eq!(
            provider["base_url"].as_str(),
            Some(server.base_url().as_str())
        );
        assert_eq!(provider["api_key_env"].as_str(), Some("JUCODE_TEST_KEY"));
        let model = &config["models"]["test-model"];
        assert_eq!(model["context_window"].as_integer(), Some(100000));
        assert_eq!(model["price"]["cached_input"].as_float(), Some(0.1));
        assert!(home.workspace().is_dir());
        assert_ne!(home.workspace(), home.path());
    }
}

#[test]
fn home_files_and_cleanup() {
    let home = TestHome::new();
    assert!(!home.config_path().exists());
    let f = home.write_workspace_file("src/lib.rs", "fn main() {}");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "fn main() {}");
    assert!(f.starts_with(home.workspace()));
    home.write_config("model = \"x\"\n");
    let dirs = (home.path().to_path_buf(), home.workspace().to_path_buf());
    drop(home);
    assert!(!dirs.0.exists() && !dirs.1.exists());
}

#[test]
#[should_panic(expected = "unknown wire_api")]
fn with_server_rejects_typos() {
    let server = ScriptedServer::start();
    TestHome::with_server(&server, "completions");
}
