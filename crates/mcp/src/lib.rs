//! jucode-mcp
