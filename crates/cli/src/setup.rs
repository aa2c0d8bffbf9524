//! Turning flags and the profile into [`EngineOptions`].

use std::path::PathBuf;

use jucode_engine::{EngineOptions, Resume};

use crate::args::GlobalArgs;

/// Loads config and resolves the working directory. `chat` forces a chat
/// session; a cwd inside the profile's chats folder makes one too.
pub fn engine_options(
    global: &GlobalArgs,
    chat: bool,
    resume: Option<Resume>,
) -> Result<EngineOptions, String> {
    let profile = jucode_config::profile_dir();
    let config = jucode_config::load(&profile, &global.overrides);
    let chats = profile.join("chats");
    let mut cwd = match &global.cd {
        Some(dir) => absolute(dir)?,
        None => std::env::current_dir()
            .map_err(|e| format!("cannot read the current directory: {e}"))?,
    };
    if chat {
        std::fs::create_dir_all(&chats)
            .map_err(|e| format!("cannot create {}: {e}", chats.display()))?;
        if !is_inside(&cwd, &chats) {
            cwd = chats.clone();
        }
    }
    let chat = chat || is_inside(&cwd, &chats);
    Ok(EngineOptions {
        config,
        cwd,
        model: global.model.clone(),
        provider: global.provider.clone(),
        approval_mode: global.approval_mode,
        chat,
        resume,
    })
}

fn absolute(dir: &PathBuf) -> Result<PathBuf, String> {
    let path =
        std::fs::canonicalize(dir).map_err(|e| format!("cannot use -C {}: {e}", dir.display()))?;
    if !path.is_dir() {
        return Err(format!("-C {}: not a directory", dir.display()));
    }
    Ok(path)
}

fn is_inside(path: &std::path::Path, dir: &std::path::Path) -> bool {
    let canon = |p: &std::path::Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    canon(path).starts_with(canon(dir))
}

/// Logs go to stderr (never stdout, which carries the protocol), filtered
/// by `JUCODE_LOG` (default `warn`).
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("JUCODE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}
