"""Grading: checks on a trial's world, trace and (runner-side) a judge model.

- ``evaluate.evaluate_checks(env, specs)`` / ``evaluate.parse_check_specs(raw, scene)``: the server side.
- ``judge.evaluate_judge_checks(...)``: the runner side, with the user's own key.
- ``results.CheckResult`` and ``results.trial_verdict``: what both produce.
"""
