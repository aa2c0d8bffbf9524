//! JSON Schema export of the protocol, generated from the types so it cannot
//! drift. `jucode serve --print-schema` prints it; docs/protocol.schema.json
//! is a checked-in copy that a test compares against.

use serde_json::{json, Value};

use crate::{Event, Op, PROTOCOL_VERSION};

/// The schema of every op and every event, as one JSON document.
pub fn protocol_schema() -> Value {
    json!({
        "protocol": PROTOCOL_VERSION,
        "ops": schemars::schema_for!(Op),
        "events": schemars::schema_for!(Event),
    })
}
