mod common;

use common::{delta, header, store};
use jucode_store::{children_index, path_to, roots, Record};

fn ids(chain: &[&Record]) -> Vec<String> {
    chain
        .iter()
        .map(|r| r.body["delta"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn path_to_follows_each_branch_of_a_tree() {
    // root ─ a ─ b ─┬─ c1 ─ d1      (first branch)
    //               └─ c2 ─ d2      (the engine moved back to b)
    let (_tmp, store) = store();
    let mut w = store.create(&header("tree", "/repo", 1)).unwrap();
    let root = delta(None, "root");
    let a = delta(Some(&root.id), "a");
    let b = delta(Some(&a.id), "b");
    let c1 = delta(Some(&b.id), "c1");
    let d1 = delta(Some(&c1.id), "d1");
    let c2 = delta(Some(&b.id), "c2");
    let d2 = delta(Some(&c2.id), "d2");
    for rec in [&root, &a, &b, &c1, &d1, &c2, &d2] {
        w.append(rec).unwrap();
    }
    let records = store.load("tree").unwrap().records;

    assert_eq!(
        ids(&path_to(&records, &d1.id)),
        ["root", "a", "b", "c1", "d1"]
    );
    assert_eq!(
        ids(&path_to(&records, &d2.id)),
        ["root", "a", "b", "c2", "d2"]
    );
    assert_eq!(ids(&path_to(&records, &b.id)), ["root", "a", "b"]);
    assert!(path_to(&records, "missing").is_empty());

    let children = children_index(&records);
    assert_eq!(children[b.id.as_str()], [c1.id.as_str(), c2.id.as_str()]);
    assert_eq!(children[root.id.as_str()], [a.id.as_str()]);
    assert!(!children.contains_key(d1.id.as_str()));
    assert_eq!(roots(&records), [root.id.as_str()]);
}

#[test]
fn path_to_survives_missing_parents_and_cycles() {
    let orphan = delta(Some("lost-in-a-corrupt-line"), "orphan");
    let child = delta(Some(&orphan.id), "child");
    let mut x = delta(None, "x");
    let mut y = delta(Some(&x.id), "y");
    x.parent_id = Some(y.id.clone());
    y.parent_id = Some(x.id.clone());
    let records = vec![orphan, child.clone(), x, y.clone()];

    assert_eq!(ids(&path_to(&records, &child.id)), ["orphan", "child"]);
    assert_eq!(path_to(&records, &y.id).len(), 2);
}

#[test]
fn path_to_finds_parents_written_after_their_child() {
    // Only a hand-edited or merged file would be out of order.
    let mut child = delta(None, "child");
    let parent = delta(None, "parent");
    child.parent_id = Some(parent.id.clone());
    let grandchild = delta(Some(&child.id), "grandchild");
    let records = vec![child, grandchild.clone(), parent];
    assert_eq!(
        ids(&path_to(&records, &grandchild.id)),
        ["parent", "child", "grandchild"]
    );
}
