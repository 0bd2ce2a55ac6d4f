"""The replicated tools, one folder each (``slack/``, ``github/``, ...).

Each folder declares itself with one ``ToolSpec`` in its ``spec.py``; the registry
(``ancha.world.registry``) collects them. A tool imports only the world kernel
(``ancha.world.kernel``), ``ancha.scene`` and ``ancha.config``: never another tool, the
registry or the environment.
"""
