"""A check kind is one object: its form (key, file model, resolve, where it works, docs cells)
and, built from it, how it grades and which bus events can change it. Scene validation, task
files, grading and the docs tables all read the same objects."""

from __future__ import annotations

from typing import Any

import pytest

from ancha.checks.judge import RUNNER_GRADES_JUDGE
from ancha.checks.kinds import check_kind, check_kinds
from ancha.checks.task import task_rule_problems
from ancha.scene.check_kinds import CHECK_FORMS, CHECK_KEYS, FAMILIES, PLACES
from ancha.scene.file_model import scene_file_model
from ancha.scene.model import COMMON_CHECK_FIELDS, CheckSpec, Predicate, TraceCheck, Within
from ancha.world.kernel.predicate import CALL_TRACED, RECORD_ADDED
from ancha.world.registry import catalog, registry


def test_check_kinds__one_kind_per_form_in_the_forms_order() -> None:
    kinds = check_kinds()
    assert list(kinds) == list(CHECK_KEYS)
    assert [k.form for k in kinds.values()] == list(CHECK_FORMS)
    assert list(CHECK_KEYS) == ["trace", "state", "judge", "revealed", "knows", "told", "decided", "message",
                                "never", "before", "within"]


def test_check_kinds__check_spec_has_one_field_per_kind() -> None:
    assert [f for f in CheckSpec.model_fields if f not in COMMON_CHECK_FIELDS] == list(CHECK_KEYS)


def test_check_kinds__the_check_file_model_has_one_field_per_kind_with_its_description() -> None:
    model = scene_file_model(catalog())
    check = model.model_fields["checks"].annotation.__args__[0]  # type: ignore[union-attr]
    assert list(check.model_fields) == ["id", *CHECK_KEYS]
    assert check.model_fields["knows"].description == "[person, person.fact, ...]"
    assert check.model_fields["trace"].description is None


def test_check_kinds__judge_is_graded_after_the_trial_by_the_runner() -> None:
    judge = check_kind("judge")
    assert judge.after_trial is not None and judge.after_trial.reason == RUNNER_GRADES_JUDGE
    assert judge.after_trial.expected(CheckSpec(id="j", judge=" Friendly. ")) == "the judge agrees: Friendly."
    assert judge.events(CheckSpec(id="j", judge="x")) == frozenset()
    assert all(k.after_trial is None for key, k in check_kinds().items() if key != "judge")


def test_check_kinds__result_of_an_after_trial_kind_is_skipped_without_a_world() -> None:
    result = check_kind("judge").result(CheckSpec(id="j", judge="Friendly."), None, True)  # type: ignore[arg-type]
    assert (result.status, result.passed, result.required) == ("skipped", False, True)
    assert result.expected == "the judge agrees: Friendly." and result.explanation == RUNNER_GRADES_JUDGE


def test_check_kinds__events_that_can_change_a_check() -> None:
    called = Predicate(called="POST /x")
    decided = Predicate(decided=["mike", "severity"])
    assert check_kind("trace").events(CheckSpec(id="t", trace=TraceCheck(called=["*"]))) == {CALL_TRACED}
    assert check_kind("knows").events(CheckSpec(id="k", knows=["ben", "laura.beta_on"])) == {RECORD_ADDED}
    assert check_kind("before").events(CheckSpec(id="b", before=[decided, called])) == {CALL_TRACED, RECORD_ADDED}
    within = Within(event=Predicate(any=[called]), limit=60)
    assert check_kind("within").events(CheckSpec(id="w", within=within)) == {CALL_TRACED}
    key, state = next(iter(registry().states.items()))
    assert check_kind("state").events(CheckSpec(id="s", state={key: {}})) == state.events


@pytest.mark.parametrize("form", CHECK_FORMS, ids=lambda f: f.key)
def test_check_kinds__task_files_refuse_exactly_the_kinds_that_do_not_work_there(form: Any) -> None:
    problems = task_rule_problems([{"id": "x", form.key: {}}])
    if form.works_in_tasks:
        assert problems == []
    else:
        assert [(p.path, p.message, p.hint) for p in problems] == [(f"checks[0].{form.key}", *form.refused_in_tasks())]


def test_check_kinds__task_refusals_say_what_the_reference_says() -> None:
    judge, revealed = check_kind("judge").form, check_kind("revealed").form
    assert judge.refused_in_tasks() == (
        "judge checks do not work in task files (playground task files, hosted console tasks)",
        "judge checks work in scene files only (ancha run, ancha check); a task holds state and trace checks")
    assert revealed.refused_in_tasks()[0] == ("revealed is a process check; process checks do not work in task "
                                              "files (playground task files, hosted console tasks)")


def test_check_kinds__every_kind_belongs_to_a_family_that_works_in_one_set_of_places() -> None:
    for family in FAMILIES:
        forms = [f for f in CHECK_FORMS if f.family is family]
        assert forms, family.name
        assert len({f.works_in for f in forms}) == 1, family.name
    assert all("scene" in f.works_in and f.works_in <= set(PLACES) for f in CHECK_FORMS)
