"""Grading: checks on a trial's world, trace and (runner-side) a judge model.

- ``evaluate.evaluate_checks(env, specs)`` / ``evaluate.parse_check_specs(raw, env)``: the server side.
- ``task.load_task(path, scene)`` / ``task.parse_task(raw, env)``: task files (playgrounds), state and
  trace checks only, at most 20.
- ``judge.evaluate_judge_checks(...)``: the runner side, with the user's own key.
- ``results.CheckResult`` and ``results.trial_verdict``: what both produce.
"""
