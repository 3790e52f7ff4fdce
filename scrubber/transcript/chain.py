"""The conversation tree of a transcript: uuid / parentUuid links.

Claude Code links each record to the previous one with `parentUuid`. `/rewind` appends a new
branch that points at an earlier parent and leaves the old branch in the file, so the file is a
tree (a forest, with compaction): a parent with several children is a fork. A compact boundary
(`system`/`compact_boundary`) starts a new root (`parentUuid: null`) and remembers where it came
from in `logicalParentUuid`. Resuming walks back from the newest leaf to a root.

Input is whatever a file holds, so the tree tolerates everything: records without a uuid are
not nodes, a uuid seen twice keeps its first record (the later ones are listed in
`duplicates`), a parent that is not in the file makes a root (listed in `dangling`), and a
parent cycle is cut (its members are listed in `cycles`); no walk can loop or recurse.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from scrubber.transcript.records import Record

# Records that hang off the chain without being part of what a resume replays.
_NOT_RESUMABLE_LEAF_TYPES = frozenset({"progress"})


@dataclass(frozen=True, slots=True)
class Node:
    """One record in the tree. `index` is its position in the input (file order)."""

    uuid: str
    parent_uuid: str | None
    logical_parent_uuid: str | None
    index: int
    line: int
    type: str | None
    is_sidechain: bool
    is_compact_boundary: bool


@dataclass(frozen=True, slots=True)
class Fork:
    """A parent with more than one child; children in file order (the last is the newest)."""

    parent: str
    children: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ConversationTree:
    nodes: Mapping[str, Node] = field(repr=False)
    children: Mapping[str, tuple[str, ...]] = field(repr=False)
    roots: tuple[Node, ...]
    leaves: tuple[Node, ...]
    forks: tuple[Fork, ...]
    compact_boundaries: tuple[Node, ...]
    duplicates: tuple[str, ...] = ()
    dangling: tuple[str, ...] = ()  # uuids of nodes whose parent is not in the file
    cycles: tuple[str, ...] = ()  # uuids of nodes on a parent cycle

    def __len__(self) -> int:
        return len(self.nodes)

    @property
    def newest_leaf(self) -> Node | None:
        """The leaf a resume starts from: the last one in file order that belongs to the main
        conversation, preferring a real message over a progress tick; a sidechain leaf only
        when there is nothing else."""
        main = [leaf for leaf in self.leaves if not leaf.is_sidechain]
        messages = [leaf for leaf in main if leaf.type not in _NOT_RESUMABLE_LEAF_TYPES]
        pool = messages or main or list(self.leaves)
        return max(pool, key=lambda node: node.index) if pool else None

    def parent_of(self, node: Node, *, across_compaction: bool = False) -> Node | None:
        if node.parent_uuid is not None:
            return self.nodes.get(node.parent_uuid)
        if across_compaction and node.logical_parent_uuid is not None:
            return self.nodes.get(node.logical_parent_uuid)
        return None

    def path_to(self, uuid: str, *, across_compaction: bool = False) -> tuple[Node, ...]:
        """The nodes from a root down to `uuid` (empty when unknown).

        A compact boundary is a root; `across_compaction` follows its `logicalParentUuid` to
        the conversation before it. A cycle stops the walk where it would repeat.
        """
        node = self.nodes.get(uuid)
        path: list[Node] = []
        seen: set[str] = set()
        while node is not None and node.uuid not in seen:
            seen.add(node.uuid)
            path.append(node)
            node = self.parent_of(node, across_compaction=across_compaction)
        path.reverse()
        return tuple(path)

    def active_path(
        self, leaf: str | None = None, *, across_compaction: bool = False
    ) -> tuple[Node, ...]:
        """The branch a resume replays: root to `leaf` (default: the newest leaf)."""
        if leaf is None:
            newest = self.newest_leaf
            if newest is None:
                return ()
            leaf = newest.uuid
        return self.path_to(leaf, across_compaction=across_compaction)

    def active_uuids(self, *, across_compaction: bool = False) -> frozenset[str]:
        return frozenset(
            node.uuid for node in self.active_path(across_compaction=across_compaction)
        )


def _is_boundary(record: Record) -> bool:
    return record.is_compact_boundary or (
        record.parent_uuid is None and record.logical_parent_uuid is not None
    )


def _find_cycles(nodes: Mapping[str, Node]) -> set[str]:
    """The uuids on parent cycles, in linear time: walk up from each unvisited node, and a walk
    that meets its own trail has found a cycle."""
    state: dict[str, int] = {}  # 1: on the current walk, 2: done
    on_cycle: set[str] = set()
    for start in nodes:
        if start in state:
            continue
        trail: list[str] = []
        current: str | None = start
        while current is not None and current in nodes and current not in state:
            state[current] = 1
            trail.append(current)
            current = nodes[current].parent_uuid
        if current is not None and state.get(current) == 1:
            on_cycle.update(trail[trail.index(current) :])
        for uuid in trail:
            state[uuid] = 2
    return on_cycle


def build_tree(records: Iterable[Record]) -> ConversationTree:
    """The conversation tree of a transcript's records (in file order)."""
    nodes: dict[str, Node] = {}
    duplicates: list[str] = []
    for index, record in enumerate(records):
        uuid = record.uuid
        if uuid is None:
            continue
        if uuid in nodes:
            duplicates.append(uuid)
            continue
        nodes[uuid] = Node(
            uuid=uuid,
            parent_uuid=record.parent_uuid,
            logical_parent_uuid=record.logical_parent_uuid,
            index=index,
            line=record.line,
            type=record.type,
            is_sidechain=record.is_sidechain,
            is_compact_boundary=_is_boundary(record),
        )

    children: dict[str, list[str]] = {}
    roots: list[Node] = []
    dangling: list[str] = []
    for node in nodes.values():
        parent = node.parent_uuid
        if parent is None:
            roots.append(node)
        elif parent not in nodes:
            roots.append(node)
            dangling.append(node.uuid)
        else:
            children.setdefault(parent, []).append(node.uuid)

    cycles = _find_cycles(nodes)
    leaves = tuple(node for node in nodes.values() if node.uuid not in children)
    forks = tuple(Fork(parent, tuple(kids)) for parent, kids in children.items() if len(kids) > 1)
    boundaries = tuple(node for node in nodes.values() if node.is_compact_boundary)
    return ConversationTree(
        nodes=nodes,
        children={parent: tuple(kids) for parent, kids in children.items()},
        roots=tuple(roots),
        leaves=leaves,
        forks=tuple(sorted(forks, key=lambda fork: nodes[fork.parent].index)),
        compact_boundaries=boundaries,
        duplicates=tuple(duplicates),
        dangling=tuple(dangling),
        cycles=tuple(sorted(cycles, key=lambda uuid: nodes[uuid].index)),
    )
