"""The conversation tree: leaves, the active path, rewind forks, compact boundaries, and no
hang or crash on cycles, dangling parents or duplicates."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from scrubber.demo import build_demo_config, demo_manifest
from scrubber.transcript.chain import build_tree
from scrubber.transcript.records import Record, read_records


def rec(uuid: str | None, parent: str | None, kind: str = "user", **extra: Any) -> Record:
    raw: dict[str, Any] = {"type": kind, "parentUuid": parent}
    if uuid is not None:
        raw["uuid"] = uuid
    raw.update(extra)
    return Record(raw)


def uuids(nodes: tuple[Any, ...]) -> list[str]:
    return [node.uuid for node in nodes]


def test_empty_and_uuidless_input() -> None:
    tree = build_tree([])
    assert len(tree) == 0
    assert tree.active_path() == ()
    assert tree.newest_leaf is None
    tree = build_tree([Record({"type": "summary", "summary": "x"}), rec(None, None)])
    assert len(tree) == 0


def test_linear_chain() -> None:
    tree = build_tree([rec("a", None), rec("b", "a", "assistant"), rec("c", "b")])
    assert uuids(tree.roots) == ["a"]
    assert uuids(tree.leaves) == ["c"]
    assert uuids(tree.active_path()) == ["a", "b", "c"]
    assert tree.forks == ()
    assert tree.compact_boundaries == ()


def test_rewind_fork_and_the_newest_branch_wins() -> None:
    records = [
        rec("a", None),
        rec("b", "a", "assistant"),
        rec("c", "b"),
        rec("d", "c", "assistant"),  # old branch
        rec("e", "b"),  # /rewind to b: a new branch
        rec("f", "e", "assistant"),
    ]
    tree = build_tree(records)
    assert [(fork.parent, fork.children) for fork in tree.forks] == [("b", ("c", "e"))]
    assert uuids(tree.leaves) == ["d", "f"]
    assert uuids(tree.active_path()) == ["a", "b", "e", "f"]
    assert uuids(tree.active_path("d")) == ["a", "b", "c", "d"]
    assert tree.active_uuids() == frozenset("abef")


def test_progress_and_sidechain_leaves_lose_to_messages() -> None:
    records = [
        rec("a", None),
        rec("b", "a", "assistant"),
        rec("c", "a"),  # a rewind: c is a message leaf
        rec("p", "b", "progress"),  # a progress tick hanging off the old branch, later in file
        rec("s1", None, isSidechain=True),
        rec("s2", "s1", "assistant", isSidechain=True),
    ]
    tree = build_tree(records)
    assert uuids(tree.leaves) == ["c", "p", "s2"]
    assert tree.newest_leaf is not None and tree.newest_leaf.uuid == "c"
    # Only a progress tick ends the main chain (a session killed mid-tool): it is the leaf.
    tree = build_tree([records[0], records[1], records[3], records[4], records[5]])
    assert tree.newest_leaf is not None and tree.newest_leaf.uuid == "p"
    assert uuids(tree.active_path()) == ["a", "b", "p"]
    # Only a sidechain: it is all there is.
    tree = build_tree(records[4:])
    assert tree.newest_leaf is not None and tree.newest_leaf.uuid == "s2"


def test_newest_main_leaf_ignores_a_later_sidechain() -> None:
    records = [
        rec("a", None),
        rec("b", "a", "assistant"),
        rec("s1", "b", isSidechain=True),
        rec("c", "b"),
        rec("s2", "s1", "assistant", isSidechain=True),  # last in file, but a sidechain
    ]
    tree = build_tree(records)
    assert uuids(tree.active_path()) == ["a", "b", "c"]


def test_compact_boundary_is_a_root_with_a_logical_parent() -> None:
    records = [
        rec("a", None),
        rec("b", "a", "assistant"),
        rec("k", None, "system", subtype="compact_boundary", logicalParentUuid="b"),
        rec("s", "k", isCompactSummary=True),
        rec("c", "s", "assistant"),
    ]
    tree = build_tree(records)
    assert uuids(tree.compact_boundaries) == ["k"]
    assert uuids(tree.roots) == ["a", "k"]
    assert uuids(tree.active_path()) == ["k", "s", "c"]
    assert uuids(tree.active_path(across_compaction=True)) == ["a", "b", "k", "s", "c"]
    # b is a leaf of the physical tree: nothing names it as parentUuid
    assert "b" in uuids(tree.leaves)


def test_a_null_parent_with_a_logical_parent_counts_as_a_boundary() -> None:
    tree = build_tree([rec("a", None), rec("k", None, "system", logicalParentUuid="a")])
    assert uuids(tree.compact_boundaries) == ["k"]


def test_dangling_parent_makes_a_root() -> None:
    tree = build_tree([rec("b", "missing"), rec("c", "b")])
    assert uuids(tree.roots) == ["b"]
    assert tree.dangling == ("b",)
    assert uuids(tree.active_path()) == ["b", "c"]


def test_cycles_do_not_hang() -> None:
    records = [
        rec("x", "x"),  # its own parent
        rec("a", "b"),
        rec("b", "a"),  # a two-cycle
        rec("t", "a"),  # a tail hanging off the cycle
        rec("r", None),
        rec("z", "r"),
    ]
    tree = build_tree(records)
    assert set(tree.cycles) == {"x", "a", "b"}
    assert "t" in uuids(tree.leaves)
    assert uuids(tree.path_to("t")) == ["b", "a", "t"]
    assert uuids(tree.path_to("x")) == ["x"]
    assert uuids(tree.path_to("t", across_compaction=True)) == ["b", "a", "t"]
    assert uuids(tree.active_path()) == ["r", "z"]
    assert tree.path_to("nope") == ()


def test_duplicate_uuid_keeps_the_first_record() -> None:
    tree = build_tree([rec("a", None), rec("b", "a"), rec("b", None), rec("c", "b")])
    assert tree.duplicates == ("b",)
    assert tree.nodes["b"].parent_uuid == "a"
    assert tree.nodes["b"].index == 1
    assert uuids(tree.active_path()) == ["a", "b", "c"]


def test_demo_session_has_a_fork_and_a_compaction(tmp_path: Path) -> None:
    config = build_demo_config(tmp_path, seed=5)
    first = demo_manifest(seed=5).sessions[0]
    (path,) = config.glob(f"projects/*/{first}.jsonl")
    records = list(read_records(path))
    tree = build_tree(records)
    assert len(tree.forks) == 1
    assert len(tree.compact_boundaries) == 1
    assert tree.cycles == () and tree.dangling == ()
    path_nodes = tree.active_path()
    assert path_nodes[0].is_compact_boundary
    assert tree.newest_leaf is not None
    assert path_nodes[-1].uuid == tree.newest_leaf.uuid
    # Across the compaction, resume replays the rewound branch, not the abandoned one.
    full = tree.active_path(across_compaction=True)
    fork = tree.forks[0]
    on_path = {node.uuid for node in full}
    assert fork.parent in on_path
    assert fork.children[-1] in on_path
    assert fork.children[0] not in on_path
    assert full[0].parent_uuid is None


@settings(max_examples=200)
@given(
    st.lists(
        st.tuples(
            st.sampled_from("abcdefgh"),
            st.one_of(st.none(), st.sampled_from("abcdefghij")),
            st.booleans(),
        ),
        max_size=20,
    )
)
def test_any_parent_links_give_finite_walks(links: list[tuple[str, str | None, bool]]) -> None:
    records = [
        rec(u, p, "system" if boundary else "user", logicalParentUuid="a" if boundary else None)
        for u, p, boundary in links
    ]
    tree = build_tree(records)
    for node in tree.nodes.values():
        for across in (False, True):
            path = tree.path_to(node.uuid, across_compaction=across)
            assert len({n.uuid for n in path}) == len(path)
            assert path[-1].uuid == node.uuid
            if not across:
                for parent, child in pairwise(path):
                    assert child.parent_uuid == parent.uuid
    active = tree.active_path()
    if tree.leaves:
        assert active
        assert active[-1] in tree.leaves
    for leaf in tree.leaves:
        assert leaf.uuid not in tree.children
    for fork in tree.forks:
        assert len(fork.children) > 1
