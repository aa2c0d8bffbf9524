//! jucode-mcp against real MCP servers (installed by `scripts/deps-mcp`),
//! in one test binary: each binary links rmcp, reqwest and rustls again,
//! which on a 2-core machine costs more than the tests themselves.

mod common;
mod everything;
mod lifecycle;
mod naming;
mod time;
