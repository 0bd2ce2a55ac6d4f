"""The console: a web view of runs and trials (``ancha ui``, and ``ancha serve`` at ``/ui``).

Server-rendered Jinja2 pages over the run folders (``results/run_folder.py``), with a
little JavaScript for what must move: a running trial's timeline, fed by the server's
live stream (``server/live.py``).
"""
