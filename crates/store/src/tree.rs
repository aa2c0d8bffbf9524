//! The session tree: records point at their parent by `parent_id`, and the
//! engine branches by continuing from an older record.

use std::collections::{HashMap, HashSet};

use crate::record::Record;

/// The chain from the root down to `leaf_id`, following `parent_id`.
///
/// Empty if `leaf_id` is not a record. If an ancestor is missing (its line
/// was corrupt) the chain starts at the oldest ancestor still present. If
/// an id repeats, the nearest earlier record with it is the parent, and a
/// parent cycle (only possible in a hand-edited file) ends the walk instead
/// of looping.
pub fn path_to<'a>(records: &'a [Record], leaf_id: &str) -> Vec<&'a Record> {
    let Some(mut pos) = records.iter().rposition(|r| r.id == leaf_id) else {
        return Vec::new();
    };
    // Records are in write order, so a parent sits before its children: one
    // backward pass over the slice finds the whole chain, with no map to
    // build (several times faster on a 50,000-record session).
    let mut chain = vec![&records[pos]];
    while let Some(parent) = records[pos].parent_id.as_deref() {
        match records[..pos].iter().rposition(|r| r.id == parent) {
            Some(found) => {
                pos = found;
                chain.push(&records[pos]);
            }
            None => {
                // Missing, or after its child (an edited file): finish by id.
                walk_by_id(records, parent, &mut chain);
                break;
            }
        }
    }
    chain.reverse();
    chain
}

/// Extends `chain` (leaf first) from `next` upwards through a map by id.
fn walk_by_id<'a>(records: &'a [Record], next: &str, chain: &mut Vec<&'a Record>) {
    let mut by_id: HashMap<&str, &Record> = HashMap::with_capacity(records.len());
    for record in records {
        by_id.entry(record.id.as_str()).or_insert(record);
    }
    let mut seen: HashSet<&str> = chain.iter().map(|r| r.id.as_str()).collect();
    let mut next = Some(next);
    while let Some(id) = next {
        let Some(record) = by_id.get(id) else { break };
        if !seen.insert(&record.id) {
            break;
        }
        chain.push(record);
        next = record.parent_id.as_deref();
    }
}

/// Parent id → ids of its children, in file (that is, creation) order.
/// Roots are not anyone's child; see [`roots`].
pub fn children_index(records: &[Record]) -> HashMap<&str, Vec<&str>> {
    let mut children: HashMap<&str, Vec<&str>> = HashMap::new();
    for record in records {
        if let Some(parent) = record.parent_id.as_deref() {
            children.entry(parent).or_default().push(record.id.as_str());
        }
    }
    children
}

/// Ids of the records without a parent, in file order.
pub fn roots(records: &[Record]) -> Vec<&str> {
    records
        .iter()
        .filter(|r| r.parent_id.is_none())
        .map(|r| r.id.as_str())
        .collect()
}
