"""The retention plan: properties (hypothesis, `now` passed in) and worked examples.

Invariant 6: nothing pinned is ever in the delete set; young, possibly active, future-dated and
unreadable sessions are kept; the plan does not depend on input order.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrubber.policy.model import Pins, RetentionPolicy
from scrubber.retention.plan import (
    Action,
    ArchiveFacts,
    Periods,
    RetentionRules,
    SessionKey,
    TrashedSession,
    needs_archive_status,
    plan_retention,
)
from scrubber.retention.rules import ArchiveStatus, Reason, Subject, pin_status

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Entry:
    id: str
    project: str
    cwd: str | None = None
    custom_title: str | None = None
    tags: tuple[str, ...] = ()
    last_timestamp: datetime | None = None
    mtime: float = 0.0
    size: int = 100
    readable: bool = True


def entry(
    sid: str,
    *,
    project: str = "p",
    days: float,
    mtime_days: float | None = None,
    **kw: object,
) -> Entry:
    last = NOW - timedelta(days=days)
    mtime = NOW - timedelta(days=days if mtime_days is None else mtime_days)
    return Entry(sid, project, last_timestamp=last, mtime=mtime.timestamp(), **kw)  # type: ignore[arg-type]


def rules(**kw: object) -> RetentionRules:
    base = RetentionRules(periods=Periods(30), keep_newest_per_project=0)
    return replace(base, **kw)  # type: ignore[arg-type]


def actions(plan: object) -> dict[str, tuple[Action, Reason]]:
    return {d.key.session_id: (d.action, d.reason) for d in plan.sessions}  # type: ignore[attr-defined]


# --- strategies -----------------------------------------------------------------------------

PROJECTS = ("-home-a-web", "-home-a-api", "-srv-ops")
TITLES = ("release", "notes", "secret plan", None)
TAGS = ("keep", "ops", "billing")
CWDS = (None, "/home/a/web", "/srv/ops")
DAY = 86400.0
# Offsets from now, in seconds: the boundaries of every rule, the future, and far past.
EDGES = (0.0, -30 * DAY, -30 * DAY - 1, -30 * DAY + 1, -3599.0, -3600.0, -3601.0, 1.0, -1.0,
         400 * DAY, -200 * DAY, -45 * DAY, -10 * DAY, -90 * DAY)  # fmt: skip


def _offset(bits: int) -> float:
    """Half the values land on an edge, the rest anywhere from 200 days ago to 10 days ahead."""
    if bits & 1:
        return EDGES[(bits >> 1) % len(EDGES)]
    return 10 * DAY - float((bits >> 1) % int(210 * DAY))


def _entry(index: int, bits: int) -> Entry:
    """One entry from one drawn integer: hypothesis draws are costly here (a few hundred
    microseconds each), so each entry is a single draw that shrinks towards 0 = simplest."""
    fields = [(bits >> shift) & 0xFF for shift in range(0, 64, 8)]
    ts_bits = bits >> 64
    mtime_bits = bits >> 100
    return Entry(
        id=f"{index:04d}-{'abcdef'[fields[0] % 6]}",
        project=PROJECTS[fields[1] % len(PROJECTS)],
        cwd=CWDS[fields[2] % len(CWDS)],
        custom_title=TITLES[fields[3] % len(TITLES)],
        tags=tuple(t for i, t in enumerate(TAGS) if fields[4] >> i & 1 and fields[4] & 0x80),
        last_timestamp=None if fields[5] % 5 == 4 else NOW + timedelta(seconds=_offset(ts_bits)),
        mtime=(NOW + timedelta(seconds=_offset(mtime_bits))).timestamp(),
        size=fields[6] * 1_000_003,
        readable=fields[7] % 7 != 6,
    )


def entries() -> st.SearchStrategy[list[Entry]]:
    return st.lists(st.integers(min_value=0, max_value=(1 << 140) - 1), max_size=25).map(
        lambda values: [_entry(i, bits) for i, bits in enumerate(values)]
    )


@st.composite
def pins_for(draw: st.DrawFn, items: list[Entry]) -> Pins:
    ids = [e.id for e in items]
    return Pins(
        sessions=tuple(draw(st.lists(st.sampled_from(ids), unique=True))) if ids else (),
        names=tuple(draw(st.lists(st.sampled_from(["release", "notes"]), unique=True))),
        tags=tuple(draw(st.lists(st.sampled_from(TAGS), unique=True, max_size=1))),
        projects=tuple(
            draw(st.lists(st.sampled_from(["-srv-*", "/home/a/web"]), unique=True, max_size=1))
        ),
    )


@st.composite
def scenarios(
    draw: st.DrawFn,
) -> tuple[list[Entry], RetentionRules, dict[SessionKey, ArchiveStatus]]:
    items = draw(entries())
    pins = draw(pins_for(items))
    chosen = RetentionRules(
        periods=Periods(
            draw(st.integers(1, 90)),
            {"/srv/ops": draw(st.integers(1, 90))} if draw(st.booleans()) else {},
        ),
        pins=pins,
        keep_newest_per_project=draw(st.integers(0, 3)),
        min_idle=timedelta(minutes=draw(st.integers(1, 180))),
        max_deletions=draw(st.integers(1, 30)),
        require_archive=draw(st.booleans()),
        can_archive=draw(st.booleans()),
        force=draw(st.booleans()),
    )
    kinds = list(ArchiveStatus)  # NOT_CHECKED too: it must never pass for VERIFIED
    codes = draw(st.integers(min_value=0, max_value=len(kinds) ** 25 - 1))
    statuses = {
        SessionKey(e.project, e.id): kinds[(codes // len(kinds) ** i) % len(kinds)]
        for i, e in enumerate(items)
    }
    return items, chosen, statuses


# --- properties -----------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(scenarios())
def test_nothing_pinned_is_ever_removed(
    scenario: tuple[list[Entry], RetentionRules, dict[SessionKey, ArchiveStatus]],
) -> None:
    items, chosen, statuses = scenario
    plan = plan_retention(items, chosen, NOW, archives=statuses)
    by_id = {e.id: e for e in items}
    for decision in plan.removals:
        item = by_id[decision.key.session_id]
        subject = Subject(item.id, item.project, item.cwd, item.custom_title, item.tags)
        assert pin_status(subject, chosen.pins) is False
        assert not decision.pinned


@settings(max_examples=150, deadline=None)
@given(scenarios())
def test_young_active_future_and_unreadable_sessions_are_kept(
    scenario: tuple[list[Entry], RetentionRules, dict[SessionKey, ArchiveStatus]],
) -> None:
    items, chosen, statuses = scenario
    plan = plan_retention(items, chosen, NOW, archives=statuses)
    removed = {d.key.session_id for d in plan.removals}
    for item in items:
        days = chosen.periods.days_for(item.cwd)
        mtime = datetime.fromtimestamp(item.mtime, UTC)
        last = item.last_timestamp or mtime
        if (
            not item.readable
            or last >= NOW - timedelta(days=days)  # young, or dated in the future
            or mtime > NOW - chosen.min_idle  # written recently, or an mtime in the future
        ):
            assert item.id not in removed, item


@settings(max_examples=100, deadline=None)
@given(scenarios(), st.randoms(use_true_random=False))
def test_plan_does_not_depend_on_input_order(
    scenario: tuple[list[Entry], RetentionRules, dict[SessionKey, ArchiveStatus]],
    rng: random.Random,
) -> None:
    items, chosen, statuses = scenario
    shuffled = list(items)
    rng.shuffle(shuffled)
    trashed = [
        TrashedSession(f"t{i}", "p", NOW - timedelta(days=i), Subject(f"t{i}", "p"))
        for i in range(5)
    ]
    shuffled_trash = list(trashed)
    rng.shuffle(shuffled_trash)
    first = plan_retention(items, chosen, NOW, archives=statuses, trashed=trashed)
    second = plan_retention(
        shuffled,
        chosen,
        NOW,
        archives=dict(reversed(list(statuses.items()))),
        trashed=shuffled_trash,
    )
    third = plan_retention(items[::-1], chosen, NOW, archives=statuses, trashed=trashed[::-1])
    assert first.sessions == second.sessions == third.sessions
    assert first.trash == second.trash == third.trash


@settings(max_examples=100, deadline=None)
@given(scenarios())
def test_cap_archive_and_newest_rules_hold(
    scenario: tuple[list[Entry], RetentionRules, dict[SessionKey, ArchiveStatus]],
) -> None:
    items, chosen, statuses = scenario
    plan = plan_retention(items, chosen, NOW, archives=statuses)
    if not chosen.force:
        assert len(plan.removals) <= chosen.max_deletions
    for decision in plan.removals:
        if chosen.require_archive:
            if decision.action is Action.TRASH:
                assert statuses[decision.key] is ArchiveStatus.VERIFIED
            else:
                assert decision.action is Action.ARCHIVE_THEN_TRASH and chosen.can_archive
        else:
            assert decision.action is Action.TRASH
    # The newest N of each project (by last activity) are never removed.
    removed = {d.key for d in plan.removals}
    for project in PROJECTS:
        ranked = sorted(
            (d for d in plan.sessions if d.key.project == project),
            key=lambda d: d.last_activity,
            reverse=True,
        )
        newest = ranked[: chosen.keep_newest_per_project]
        if len(ranked) > len(newest) and newest:
            # ties at the boundary may fall either way; strict ones may not
            strictly_newer = [
                d for d in newest if d.last_activity > ranked[len(newest)].last_activity
            ]
            assert not {d.key for d in strictly_newer} & removed
    # Every session gets exactly one decision.
    assert sorted(d.key for d in plan.sessions) == sorted(
        SessionKey(e.project, e.id) for e in items
    )


# --- worked examples ------------------------------------------------------------------------


def test_each_keep_reason_and_removal() -> None:
    items = [
        entry("pinned", days=90),
        entry("young", days=10),
        entry("active", days=90, mtime_days=0.01),  # old records, written 15 minutes ago
        entry("future", days=-3, mtime_days=40),  # a clock that ran ahead
        replace(entry("unreadable", days=90), readable=False, last_timestamp=None),
        entry("old", days=45),
        entry("boundary-kept", days=29.99),
        entry("boundary-due", days=30.01),
    ]
    plan = plan_retention(items, rules(pins=Pins(sessions=("pinned",))), NOW)
    assert actions(plan) == {
        "pinned": (Action.KEEP, Reason.PINNED),
        "young": (Action.KEEP, Reason.TOO_YOUNG),
        "active": (Action.KEEP, Reason.ACTIVE),
        "future": (Action.KEEP, Reason.ACTIVE),  # clamped to now: as if written just now
        "unreadable": (Action.KEEP, Reason.UNREADABLE),
        "old": (Action.TRASH, Reason.EXPIRED),
        "boundary-kept": (Action.KEEP, Reason.TOO_YOUNG),
        "boundary-due": (Action.TRASH, Reason.EXPIRED),
    }
    future = plan.decision(SessionKey("p", "future"))
    assert future is not None and future.last_activity == NOW  # clamped
    assert [d.key.session_id for d in plan.warnings] == ["unreadable"]


def test_age_comes_from_the_newest_timestamp_not_the_mtime() -> None:
    # A release that rewrote every mtime last week must not make old sessions young...
    old_inside = entry("old-inside", days=90, mtime_days=7)
    # ...and a fresh session whose mtime is old (copied from a backup) is not old.
    new_inside = entry("new-inside", days=2, mtime_days=90)
    no_records = replace(entry("no-records", days=0, mtime_days=60), last_timestamp=None)
    plan = plan_retention([old_inside, new_inside, no_records], rules(), NOW)
    assert actions(plan) == {
        "old-inside": (Action.TRASH, Reason.EXPIRED),
        "new-inside": (Action.KEEP, Reason.TOO_YOUNG),
        "no-records": (Action.TRASH, Reason.EXPIRED),
    }


def test_pins_by_name_tag_and_project_glob() -> None:
    items = [
        entry("a", days=90, custom_title="release notes"),
        entry("b", days=90, tags=("keep", "x")),
        entry("c", days=90, project="-srv-ops-api"),
        replace(entry("d", days=90), cwd="/home/a/web"),
        entry("e", days=90, custom_title="Release Notes"),  # names match exactly
    ]
    pins = Pins(names=("release notes",), tags=("keep",), projects=("-srv-*", "/home/a/*"))
    plan = plan_retention(items, rules(pins=pins), NOW)
    assert {k for k, v in actions(plan).items() if v[0] is Action.KEEP} == {"a", "b", "c", "d"}


def test_newest_per_project_counts_young_and_pinned_sessions() -> None:
    items = [
        entry("p-new", project="p", days=40),
        entry("p-old", project="p", days=50),
        entry("q-young", project="q", days=1),
        entry("q-old", project="q", days=60),
    ]
    plan = plan_retention(items, rules(keep_newest_per_project=1), NOW)
    assert actions(plan) == {
        "p-new": (Action.KEEP, Reason.NEWEST_IN_PROJECT),
        "p-old": (Action.TRASH, Reason.EXPIRED),
        "q-young": (Action.KEEP, Reason.TOO_YOUNG),
        "q-old": (Action.TRASH, Reason.EXPIRED),
    }


def test_cap_removes_the_oldest_first_and_force_lifts_it() -> None:
    items = [entry(f"s{i}", days=40 + i) for i in range(5)]
    plan = plan_retention(items, rules(max_deletions=2), NOW)
    assert sorted(d.key.session_id for d in plan.removals) == ["s3", "s4"]
    assert {d.key.session_id for d in plan.warnings} == {"s0", "s1", "s2"}
    assert all(d.reason is Reason.OVER_CAP for d in plan.warnings)
    assert len(plan_retention(items, rules(max_deletions=2, force=True), NOW).removals) == 5


def test_archive_first() -> None:
    items = [entry(name, days=60) for name in ("verified", "stale", "none", "broken")]
    statuses = {
        SessionKey("p", "verified"): ArchiveStatus.VERIFIED,
        SessionKey("p", "stale"): ArchiveStatus.STALE,
        SessionKey("p", "broken"): ArchiveStatus.UNVERIFIED,
    }
    with_archiver = plan_retention(
        items, rules(require_archive=True, can_archive=True), NOW, archives=statuses
    )
    assert actions(with_archiver) == {
        "verified": (Action.TRASH, Reason.EXPIRED),
        "stale": (Action.ARCHIVE_THEN_TRASH, Reason.EXPIRED),
        "none": (Action.ARCHIVE_THEN_TRASH, Reason.EXPIRED),
        "broken": (Action.ARCHIVE_THEN_TRASH, Reason.EXPIRED),
    }
    without = plan_retention(items, rules(require_archive=True), NOW, archives=statuses)
    assert actions(without)["verified"] == (Action.TRASH, Reason.EXPIRED)
    assert {d.key.session_id for d in without.warnings} == {"stale", "none", "broken"}
    assert all(d.reason is Reason.NO_VERIFIED_ARCHIVE for d in without.warnings)
    # Only sessions that would otherwise go need an archive check.
    young = entry("young", days=1)
    assert needs_archive_status([*items, young], rules(require_archive=True), NOW) == {
        SessionKey("p", n) for n in ("verified", "stale", "none", "broken")
    }
    assert needs_archive_status(items, rules(), NOW) == frozenset()


def test_an_archive_the_plan_did_not_check_is_not_checked_not_none() -> None:
    # Issue 14, item 13: the plan said "none" for every session whose archive it never looked
    # at, while `scrub sessions` showed the same archive as verified.
    items = [entry("due", days=60), entry("young", days=1)]
    checked = {SessionKey("p", "due"): ArchiveStatus.NONE}
    plan = plan_retention(items, rules(require_archive=True), NOW, archives=checked)
    archive = {d.key.session_id: d.archive for d in plan.sessions}
    assert archive == {"due": ArchiveStatus.NONE, "young": ArchiveStatus.NOT_CHECKED}
    assert actions(plan)["due"] == (Action.KEEP, Reason.NO_VERIFIED_ARCHIVE)
    unchecked = plan_retention(items, rules(require_archive=True), NOW)
    assert {d.archive for d in unchecked.sessions} == {ArchiveStatus.NOT_CHECKED}
    # Not checked is never taken for a verified archive.
    assert actions(unchecked)["due"] == (Action.KEEP, Reason.NO_VERIFIED_ARCHIVE)


def test_per_project_periods() -> None:
    a = replace(entry("a", days=20), cwd="/home/a/strict")
    b = replace(entry("b", days=20), cwd="/home/a/loose")
    plan = plan_retention([a, b], rules(periods=Periods(30, {"/home/a/strict": 14})), NOW)
    assert actions(plan) == {
        "a": (Action.TRASH, Reason.EXPIRED),
        "b": (Action.KEEP, Reason.TOO_YOUNG),
    }


def test_trash_grace_period_and_pins() -> None:
    trashed = [
        TrashedSession("expired", "p", NOW - timedelta(days=8), Subject("expired", "p")),
        TrashedSession("grace", "p", NOW - timedelta(days=6), Subject("grace", "p")),
        TrashedSession(
            "pinned", "p", NOW - timedelta(days=60), Subject("pinned", "p", custom_title="keep me")
        ),
        TrashedSession("future", "p", NOW + timedelta(days=60), Subject("future", "p")),
    ]
    plan = plan_retention([], rules(pins=Pins(names=("keep me",))), NOW, trashed=trashed)
    assert {t.session_id: t.reason for t in plan.trash} == {
        "expired": Reason.EXPIRED,
        "grace": Reason.IN_GRACE,
        "pinned": Reason.PINNED,
        "future": Reason.IN_GRACE,
    }
    assert [t.session_id for t in plan.trash_purges] == ["expired"]
    immediate = plan_retention([], rules(trash_days=0), NOW, trashed=trashed[1:2])
    assert [t.session_id for t in immediate.trash_purges] == ["grace"]


def test_archive_expiry_honours_pins_unknowns_and_local_sessions() -> None:
    def facts(ref: str, sid: str, days: int, **subject: object) -> ArchiveFacts:
        return ArchiveFacts(
            ref,
            sid,
            "p",
            NOW - timedelta(days=days),
            NOW - timedelta(days=days),
            Subject(sid, "p", **subject),  # type: ignore[arg-type]
        )

    files = [
        facts("a/old", "gone", 400),
        facts("a/new", "gone", 10),
        facts("b/pinned", "pinned", 400),
        facts("c/unknown", "secret", 400, title_known=False),
        facts("d/local-old", "local", 500),
        facts("d/local-new", "local", 400),
        facts("e/tagged", "tagged", 400, tags_known=False),
    ]
    local = entry("local", days=1)
    pins = Pins(sessions=("pinned",), names=("x",))
    plan = plan_retention([local], rules(pins=pins, archive_days=365), NOW, archive_files=files)
    assert {a.ref: a.reason for a in plan.archives} == {
        "a/old": Reason.EXPIRED,
        "a/new": Reason.NOT_EXPIRED,
        "b/pinned": Reason.PINNED,
        "c/unknown": Reason.PIN_UNKNOWN,
        "d/local-old": Reason.EXPIRED,  # superseded by a newer archive of the same session
        "d/local-new": Reason.PROTECTS_SESSION,
        "e/tagged": Reason.EXPIRED,  # no tag pins: unknown tags do not matter
    }
    forever = plan_retention([], rules(), NOW, archive_files=files)
    assert not forever.archive_purges


def test_an_archive_is_kept_by_a_pin_on_any_trashed_version_of_its_session() -> None:
    # The trash holds two versions of one session (restored over, twice), each with the title
    # it had then; a pin names only the older title. Judged on one version's title (the last
    # listed), an archive that protected nothing was purged.
    def version(title: str, days: int, number: int) -> TrashedSession:
        subject = Subject("renamed", "p", custom_title=title)
        return TrashedSession("renamed", "p", NOW - timedelta(days=days), subject, number)

    old_title, new_title = version("release notes", 3, 1), version("scratch", 2, 2)

    def archive(ref: str, days: int) -> ArchiveFacts:
        moment = NOW - timedelta(days=days)
        return ArchiveFacts(ref, "renamed", "p", moment, moment, Subject("renamed", "p"))

    # Both expired; the older one protects nothing (a newer archive of the session exists), so
    # only the pin keeps it.
    archives = [archive("r/older", 400), archive("r/newer", 380)]
    pinned = rules(pins=Pins(names=("release notes",)), archive_days=365)
    for trashed in ([old_title, new_title], [new_title, old_title]):
        plan = plan_retention([], pinned, NOW, archive_files=archives, trashed=trashed)
        assert {a.ref: a.reason for a in plan.archives} == {
            "r/older": Reason.PINNED,
            "r/newer": Reason.PINNED,
        }
        assert not plan.archive_purges
    unpinned = rules(pins=Pins(names=("other",)), archive_days=365)
    trashed = [old_title, new_title]
    plan = plan_retention([], unpinned, NOW, archive_files=archives, trashed=trashed)
    assert {a.ref: a.reason for a in plan.archives} == {
        "r/older": Reason.EXPIRED,
        "r/newer": Reason.PROTECTS_SESSION,
    }


def test_duplicate_keys_are_refused() -> None:
    with pytest.raises(ValueError, match="twice"):
        plan_retention([entry("a", days=1), entry("a", days=2)], rules(), NOW)


def test_rules_from_policy() -> None:
    policy = RetentionPolicy(
        keep_newest_per_project=2,
        min_idle_minutes=90,
        max_deletions_per_run=3,
        require_archive=True,
        trash_days=2,
        archive_days=400,
    )
    made = RetentionRules.from_policy(policy, Pins(), Periods(30), can_archive=True, force=True)
    assert (made.keep_newest_per_project, made.min_idle, made.max_deletions) == (
        2,
        timedelta(minutes=90),
        3,
    )
    assert (
        made.require_archive,
        made.can_archive,
        made.trash_days,
        made.archive_days,
        made.force,
    ) == (True, True, 2, 400, True)


def test_ties_are_broken_the_same_way_whatever_the_order() -> None:
    # Two copies of a session with the same timestamps (a bulk mtime rewrite, records copied).
    twins = [entry("twin-a", days=50), entry("twin-b", days=50), entry("twin-c", days=50)]
    chosen = rules(keep_newest_per_project=1, max_deletions=1)
    plans = [
        plan_retention(order, chosen, NOW) for order in (twins, twins[::-1], twins[1:] + twins[:1])
    ]
    assert plans[0].sessions == plans[1].sessions == plans[2].sessions
    assert actions(plans[0]) == {
        "twin-a": (Action.TRASH, Reason.EXPIRED),  # the cap takes the same one first
        "twin-b": (Action.KEEP, Reason.OVER_CAP),
        "twin-c": (Action.KEEP, Reason.NEWEST_IN_PROJECT),
    }
