//! Commands over the saved session: `/resume`, `/transcript`, `/tree`,
//! `/checkout`, `/compact`, and resuming at start (`--resume`, `--continue`).

use jucode_protocol::{CheckpointItem, Event, ResumeItem};
use jucode_store::{Record, StoreError};

use crate::actor::Session;
use crate::options::Resume;
use crate::persist::Persist;
use crate::replay::{self, Replayed};
use crate::resume_load::{self, ResumeLoad};
use crate::turn::TurnKind;

impl Session {
    fn busy(&self, what: &str) -> bool {
        if self.turn.is_some() {
            self.out.emit(Event::error(format!(
                "cannot {what} while a turn is running; interrupt it first"
            )));
            return true;
        }
        false
    }

    /// The saved records of this session (none before its first message).
    fn records(&self) -> Vec<Record> {
        let persist = self.persist.lock().expect("persist lock");
        match persist.store.load(persist.session_id()) {
            Ok(loaded) => loaded.records,
            Err(_) => Vec::new(),
        }
    }

    fn leaf(&self) -> Option<String> {
        self.persist.lock().expect("persist lock").leaf.clone()
    }

    /// Makes the session's history the branch ending at `leaf`.
    fn adopt_branch(&mut self, records: &[Record], leaf: Option<String>) -> Replayed {
        let mut replayed = replay::replay(records, leaf.as_deref(), false);
        self.history = std::mem::take(&mut replayed.history);
        self.context_base = None;
        replayed
    }

    pub(crate) fn resume_at_start(&mut self) {
        let store = self.persist.lock().expect("persist lock").store.clone();
        let target = match &self.options.resume {
            None => return,
            Some(Resume::Id(id)) => id.clone(),
            Some(Resume::Latest) => match store.latest_for_cwd(&self.options.cwd) {
                Some(entry) => entry.id,
                None => {
                    self.out.emit(Event::info(
                        "no earlier session in this folder; starting a new one",
                    ));
                    return;
                }
            },
        };
        match resume_load::load(&store, &target) {
            Ok(loaded) => self.adopt_session(loaded),
            Err(err) => self
                .out
                .emit(Event::error(describe_load_error(&target, err))),
        }
    }

    fn adopt_session(&mut self, mut loaded: ResumeLoad) {
        for skipped in &loaded.skipped {
            self.out.emit(Event::info(format!(
                "session {}: skipped damaged line {} ({})",
                loaded.header.id, skipped.line_number, skipped.reason
            )));
        }
        self.history = std::mem::take(&mut loaded.replayed.history);
        self.context_base = None;
        self.cost_usd = loaded.replayed.cost;
        self.engine.deferred.restore(&loaded.session_wide);
        *self.engine.plans.lock().expect("plans lock") = replay::plans(&loaded.session_wide);
        self.session_id = loaded.header.id.clone();
        self.out.set_session(&self.session_id);
        let store = self.persist.lock().expect("persist lock").store.clone();
        *self.persist.lock().expect("persist lock") =
            Persist::resumed(store, loaded.header, loaded.leaf);
    }

    pub(crate) fn resume_command(&mut self, rest: &str) {
        let store = self.persist.lock().expect("persist lock").store.clone();
        if rest.is_empty() {
            let items = store
                .list_for_cwd(&self.options.cwd)
                .into_iter()
                .map(|entry| ResumeItem {
                    active: entry.id == self.session_id,
                    label: if entry.label.is_empty() {
                        "(no messages)".to_string()
                    } else {
                        entry.label
                    },
                    id: entry.id,
                })
                .collect();
            self.out.emit(Event::ResumeView { items });
            return;
        }
        if self.busy("resume a session") {
            return;
        }
        match resume_load::load(&store, rest) {
            Ok(loaded) => {
                self.adopt_session(loaded);
                self.emit_startup_batch();
            }
            Err(err) => self.out.emit(Event::error(describe_load_error(rest, err))),
        }
    }

    pub(crate) fn transcript_command(&mut self) {
        let records = self.records();
        let replayed = replay::replay(&records, self.leaf().as_deref(), true);
        self.out.emit(Event::Transcript {
            items: replayed.transcript,
        });
    }

    pub(crate) fn tree_command(&mut self, rest: &str) {
        let records = self.records();
        if !rest.is_empty() {
            if self.busy("move in the tree") {
                return;
            }
            let Some(end) = replay::end_of_turn(&records, rest) else {
                self.out.emit(Event::error(format!(
                    "unknown tree node: {rest} (see /tree)"
                )));
                return;
            };
            self.persist
                .lock()
                .expect("persist lock")
                .move_leaf(Some(end.clone()));
            self.adopt_branch(&records, Some(end));
            self.report_persist_failure();
        }
        let nodes = replay::tree(&records, self.leaf().as_deref());
        self.out.emit(Event::TreeView { nodes });
    }

    pub(crate) fn checkout_command(&mut self, rest: &str) {
        let records = self.records();
        let replayed = replay::replay(&records, self.leaf().as_deref(), false);
        if rest.is_empty() {
            let items = replayed
                .turns
                .iter()
                .rev()
                .map(|turn| CheckpointItem {
                    id: turn.id.clone(),
                    label: replay::label(&turn.message.content),
                    detail: describe_changes(&turn.snapshots),
                })
                .collect();
            self.out.emit(Event::CheckpointView { items });
            return;
        }
        if self.busy("check out a checkpoint") {
            return;
        }
        let Some(index) = replayed.turns.iter().position(|t| t.id == rest) else {
            self.out.emit(Event::error(format!(
                "unknown checkpoint: {rest} (see /checkout)"
            )));
            return;
        };
        // The oldest snapshot of each file from this turn on is its content
        // before the turn: restore exactly those files, nothing else.
        let mut restore: Vec<(String, Option<Vec<u8>>)> = Vec::new();
        for turn in &replayed.turns[index..] {
            for (path, content) in &turn.snapshots {
                if !restore.iter().any(|(p, _)| p == path) {
                    restore.push((path.clone(), content.clone()));
                }
            }
        }
        let mut problems = Vec::new();
        for (path, content) in &restore {
            let result = match content {
                Some(bytes) => std::path::Path::new(path)
                    .parent()
                    .map(std::fs::create_dir_all)
                    .unwrap_or(Ok(()))
                    .and_then(|_| std::fs::write(path, bytes)),
                None => match std::fs::remove_file(path) {
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                    other => other,
                },
            };
            if let Err(err) = result {
                problems.push(format!("{path}: {err}"));
            }
        }
        let turn = &replayed.turns[index];
        let parent = turn.parent_id.clone();
        let message = turn.message.content.clone();
        self.persist
            .lock()
            .expect("persist lock")
            .move_leaf(parent.clone());
        self.adopt_branch(&records, parent);
        self.report_persist_failure();
        if problems.is_empty() {
            self.out.emit(Event::info(format!(
                "checked out {rest}: restored {} file(s)",
                restore.len()
            )));
        } else {
            self.out.emit(Event::error(format!(
                "checked out {rest}, but some files could not be restored: {}",
                problems.join("; ")
            )));
        }
        self.out.emit(Event::FillInput { content: message });
    }

    pub(crate) fn compact_command(&mut self, rest: &str) {
        if self.busy("compact") {
            return;
        }
        self.start_worker(TurnKind::Compact(rest.to_string()));
    }
}

fn describe_changes(snapshots: &[(String, Option<Vec<u8>>)]) -> String {
    if snapshots.is_empty() {
        return "no file changes".to_string();
    }
    let names: Vec<&str> = snapshots
        .iter()
        .map(|(p, _)| p.rsplit('/').next().unwrap_or(p))
        .collect();
    format!("{} file(s) changed: {}", names.len(), names.join(", "))
}

fn describe_load_error(id: &str, err: StoreError) -> String {
    match err {
        StoreError::NotFound(_) => format!("no session with id {id} (see /resume)"),
        other => format!("cannot load session {id}: {other}"),
    }
}
