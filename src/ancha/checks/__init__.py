"""Grading: checks on a trial's world, trace and (runner-side) a judge model.

- ``kinds.check_kinds()``: every check kind, one ``CheckKind`` each (its form, how it grades, which
  bus events can change it); the rest reads them.
- ``evaluate.evaluate_checks(env, specs)`` / ``evaluate.parse_check_specs(raw, env)``: the server side.
- ``task.load_task(path, scene)`` / ``task.parse_task(raw, env)``: task files (playgrounds), the kinds
  that work there only (state and trace), at most 20.
- ``judge.evaluate_judge_checks(...)``: the runner side, with the user's own key.
- ``results.CheckResult`` and ``results.trial_verdict``: what both produce.
"""
