"""The probe's knobs, scenes, cameras and questions (no Blender): each knob builds what it says,
every question's evidence names parts it can tell apart, answers are exact."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from vidbench.benchmarks.fourd.probe.camera import probe_ring
from vidbench.benchmarks.fourd.probe.commands import values_of
from vidbench.benchmarks.fourd.probe.knobs import Knobs, ObjectKnobs
from vidbench.benchmarks.fourd.probe.questions import probe_questions
from vidbench.benchmarks.fourd.probe.scenes import fits, input_views, probe_uid, sample_object
from vidbench.benchmarks.fourd.synthetic.evidence import END, START, event
from vidbench.benchmarks.fourd.synthetic.questions import gold_positions
from vidbench.benchmarks.fourd.synthetic.scene import (
    JUMP_HEIGHT,
    MOVE_DISTANCE,
    SLOTS,
    Behaviour,
    Part,
    label,
    state_at,
)
from vidbench.cli_types import non_negative
from vidbench.core.errors import ConfigError


def _questions(obj, index=0):
    rng = np.random.default_rng([0, index, 0x51])
    return probe_questions(obj, rng, gold_positions(0, index))


def test_knob_lists_spread_over_objects_and_bad_values_are_named() -> None:
    knobs = Knobs(lookalikes=(0, 1, 2, 3), occluders=(0, 1, 2), parts=(7,))
    assert knobs.period() == 12
    combos = {(knobs.of(i).lookalikes, knobs.of(i).occluders) for i in range(12)}
    assert len(combos) == 12  # coprime list lengths: every combination, equally often
    assert knobs.of(13) == knobs.of(1)
    with pytest.raises(ConfigError, match="--parts 3 leaves no room"):
        Knobs(parts=(3,), occluders=(1,), lookalikes=(2,))
    with pytest.raises(ConfigError, match="--motion-speed must be in 1..4"):
        Knobs(motion_speed=(0.5,))
    with pytest.raises(ConfigError, match="--lookalikes must be at most 6"):
        Knobs(parts=(9,), lookalikes=(7,))
    assert values_of(non_negative)("0, 2,3") == (0, 2, 3)
    with pytest.raises(argparse.ArgumentTypeError, match="whole number >= 0"):
        values_of(non_negative)("1,-1")


def test_motion_size_and_speed_scale_behaviours() -> None:
    slot = 2
    centre = sum(SLOTS[slot]) / 2
    move = Part("cube", "red", (0.0, 0.0, 0.0), 0.3, Behaviour("move", slot, direction="right"))
    big = Part("cube", "red", (0.0, 0.0, 0.0), 0.3, Behaviour("move", slot, "right", None, 2.0))
    assert state_at(move, 1.0).pos[0] == pytest.approx(MOVE_DISTANCE)
    assert state_at(big, 1.0).pos[0] == pytest.approx(2 * MOVE_DISTANCE)
    jump = Behaviour("jump", slot, amplitude=0.5, speed=4.0)
    t0, t1 = jump.window
    assert (t1 - t0) == pytest.approx((SLOTS[slot][1] - SLOTS[slot][0]) / 4)
    assert (t0 + t1) / 2 == pytest.approx(centre)  # still where the input samples a frame
    top = state_at(Part("sphere", "blue", (0.0, 0.0, 0.0), 0.3, jump), centre).pos[1]
    assert top == pytest.approx(0.5 * JUMP_HEIGHT)
    assert state_at(Part("sphere", "blue", (0, 0, 0), 0.3, jump), t1 + 0.01).pos[1] < 1e-9
    with pytest.raises(ValueError, match="speed"):
        Behaviour("move", 0, "left", speed=0.5)
    with pytest.raises(ValueError, match="amplitude"):
        Behaviour("grow", 0, amplitude=2.5)  # a shrink that far would reach size 0


def test_objects_follow_their_knobs() -> None:
    knobs = ObjectKnobs(parts=8, occluders=2, lookalikes=3, motion_size=1.5, motion_speed=2.0)
    for index in range(3):
        obj = sample_object(0, index, knobs)
        roles, parts = obj.roles, obj.scene.parts
        assert len(parts) == 8 and roles.count("occluder") == 2 and roles.count("lookalike") == 3
        colour, shape = obj.counted
        counted = [p for p, r in zip(parts, roles, strict=True) if r == "counted"]
        assert 1 <= len(counted) <= 3
        assert all(
            (p.colour, p.shape, p.behaviour.kind) == (colour, shape, "still") for p in counted
        )
        looks = [p for p, r in zip(parts, roles, strict=True) if r == "lookalike"]
        assert sum(p.shape == shape and p.colour != colour for p in looks) == 2  # k = 0, 2
        assert sum(p.colour == colour and p.shape != shape for p in looks) == 1  # k = 1
        others = [p for p, r in zip(parts, roles, strict=True) if r != "counted"]
        assert all((p.colour, p.shape) != (colour, shape) for p in others)
        assert len({label(p) for p in others}) == len(others)  # each names one part
        for p in parts:
            if p.behaviour.kind != "still":
                assert (p.behaviour.amplitude, p.behaviour.speed) == (1.5, 2.0)
        assert obj.views == obj.inputs == (1, 8, 16)
        assert obj.scene.first_view == obj.cameras[1]
        assert all(fits(p, [obj.cameras[v] for v in obj.views]) for p in parts)


def test_occluders_stand_between_a_counted_part_and_an_input_camera() -> None:
    obj = sample_object(3, 0, ObjectKnobs(parts=5, occluders=2, lookalikes=0))
    parts, roles = obj.scene.parts, obj.roles
    counted = [p for p, r in zip(parts, roles, strict=True) if r == "counted"]
    for occluder in (p for p, r in zip(parts, roles, strict=True) if r == "occluder"):
        covering = []
        for target in counted:
            for view in obj.inputs:
                ox, oy, o_ahead = obj.cameras[view].ndc(occluder.pos)
                tx, ty, t_ahead = obj.cameras[view].ndc(target.pos)
                if abs(ox - tx) < 1e-3 and abs(oy - ty) < 1e-3 and o_ahead < t_ahead:
                    covering.append((target, view))
        assert covering  # on the line of sight, nearer to the camera
        assert occluder.radius > covering[0][0].radius


def test_uids_cameras_and_draws_depend_on_seed_and_knobs() -> None:
    knobs = ObjectKnobs()
    assert probe_uid(0, 0, knobs) == sample_object(0, 0, knobs).scene.uid
    assert probe_uid(0, 0, knobs) != probe_uid(1, 0, knobs)
    assert probe_uid(0, 0, knobs) != probe_uid(0, 0, ObjectKnobs(occluders=1))
    assert sample_object(0, 2, knobs) == sample_object(0, 2, knobs)
    steady = probe_ring("x", 0, 0.0)
    assert all(c.position[2] == pytest.approx(2.5) for c in steady)  # the ring's middle height
    assert probe_ring("x", 0, 1.0) != probe_ring("x", 1, 1.0)
    assert input_views(1) == (0,) and input_views(3) == (1, 8, 16)
    assert sample_object(0, 0, ObjectKnobs(input_views=4)).views == (0, 6, 12, 18)
    assert sample_object(0, 0, knobs, all_views=True).views == tuple(range(24))


def test_questions_are_exact_and_name_parts_they_can_tell_apart() -> None:
    seen_subtasks = set()
    for index in range(6):
        obj = sample_object(0, index, ObjectKnobs(parts=7, lookalikes=2))
        questions, missing = _questions(obj, index)
        labels = [label(p) for p in obj.scene.parts]
        positions = gold_positions(0, index)
        for q in questions:
            seen_subtasks.add(q.subtask)
            assert q.draft.evidence
            assert all(
                labels.count(label(e.part)) == 1 or e.role == "counted part"
                for e in q.draft.evidence
            )
            assert q.record["Answer index"] in positions
            gold = q.record["Options"][q.record["Answer index"] - 1]
            if q.subtask == "Object Counting":
                colour, shape = obj.counted
                assert f"How many {colour} {shape}s" in q.record["Question"]
                assert gold[4:] == str(obj.roles.count("counted"))
                assert len(q.draft.evidence) == obj.roles.count("counted")
        assert set(missing) | {q.subtask for q in questions} == {
            "Object Counting",
            "Temporal Relationship",
            "Action",
            "Spatial Relationship",
            "Appearance",
        }
    assert len(seen_subtasks) == 5


def test_event_evidence_windows() -> None:
    move = Part("cube", "red", (0, 0, 0), 0.3, Behaviour("move", 1, direction="up"))
    before, after = event(move, "event")
    t0, t1 = move.behaviour.window
    assert before.window == (0.0, t0) and after.window[0] > t0 and after.window[1] == 1.0
    jump = Part("cube", "red", (0, 0, 0), 0.3, Behaviour("jump", 1))
    _, during = event(jump, "event")
    assert t0 < during.window[0] < sum(SLOTS[1]) / 2 < during.window[1] < t1
    appear = Part("cube", "red", (0, 0, 0), 0.3, Behaviour("appear", 3))
    (shown,) = event(appear, "event")
    assert shown.window == (appear.behaviour.instant, 1.0)
    assert START[1] == SLOTS[0][0] and END[0] == SLOTS[-1][1]
