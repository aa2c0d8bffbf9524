use jucode_protocol::{
    event_line, parse_op, ApprovalMode, Event, Op, OpError, QueueIndexOp, OP_NAMES,
};

#[test]
fn parses_every_kind_of_op() {
    let op = parse_op(r#"{"op":"user_message","content":"hi","session":"ignored"}"#).unwrap();
    match op {
        Op::UserMessage(m) => {
            assert_eq!(m.content, "hi");
            assert!(m.images.is_empty());
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        parse_op(r#"{"op":"steer","index":-1}"#).unwrap(),
        Op::Steer(QueueIndexOp { index: Some(-1) })
    );
    assert!(matches!(
        parse_op(r#"{"op":"set_approval_mode","mode":"auto-edit"}"#).unwrap(),
        Op::SetApprovalMode(m) if m.mode == ApprovalMode::AutoEdit
    ));
    assert!(matches!(
        parse_op(r#"{"op":"shutdown"}"#).unwrap(),
        Op::Shutdown(_)
    ));
    assert_eq!(OP_NAMES.len(), 17);
}

#[test]
fn errors_name_the_problem() {
    let invalid = |line: &str| match parse_op(line) {
        Err(OpError::Invalid(why)) => why,
        other => panic!("{line}: {other:?}"),
    };
    assert!(invalid("[]").contains("expected a JSON object, got an array"));
    assert!(invalid("42").contains("got a number"));
    assert!(invalid("\"x\"").contains("got a string"));
    assert!(invalid("{broken").contains("not valid JSON"));
    assert!(invalid(r#"{"content":"x"}"#).contains("missing field `op`"));
    assert!(invalid(r#"{"op":5}"#).contains("field `op` must be a string"));
    assert!(invalid(r#"{"op":"user_message"}"#).contains("missing field `content`"));
    let why = invalid(r#"{"op":"set_attended","attended":"yes"}"#);
    assert!(why.contains("field `attended`"), "{why}");
    let why = invalid(r#"{"op":"user_message","content":"x","images":[1]}"#);
    assert!(why.contains("field `images[0]`"), "{why}");
    let why = invalid(r#"{"op":"set_approval_mode","mode":"yolo"}"#);
    assert!(why.contains("field `mode`"), "{why}");
    assert_eq!(
        parse_op(r#"{"op":"dance"}"#),
        Err(OpError::Unknown("dance".into()))
    );
    assert_eq!(
        OpError::Unknown("dance".into()).to_string(),
        "unknown op: dance"
    );
}

#[test]
fn event_lines_carry_the_session_except_hello() {
    let hello = Event::Hello {
        protocol: 2,
        version: "0.3.0".into(),
    };
    assert_eq!(
        event_line(&hello, None),
        r#"{"type":"hello","protocol":2,"version":"0.3.0"}"#
    );
    assert_eq!(
        event_line(&Event::Connecting, Some("s1")),
        r#"{"type":"connecting","session":"s1"}"#
    );
    assert_eq!(
        event_line(&Event::status("ready"), Some("s\"1")),
        r#"{"type":"status","message":"ready","session":"s\"1"}"#
    );
    let req = Event::ApprovalRequest {
        call_id: "c".into(),
        name: "bash".into(),
        summary: "rm".into(),
        subagent_id: None,
        hunks: None,
    };
    assert_eq!(
        event_line(&req, Some("s")),
        r#"{"type":"approval_request","call_id":"c","name":"bash","summary":"rm","subagent_id":null,"hunks":null,"session":"s"}"#
    );
}

#[test]
fn events_round_trip() {
    let event = Event::ContextUsage {
        tokens: 5,
        tokenizer: "o200k".into(),
        cost: 0.5,
    };
    let line = event_line(&event, Some("s"));
    let back: Event = serde_json::from_str(&line).unwrap();
    assert_eq!(back, event);
}
