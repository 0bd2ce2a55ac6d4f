"""The world kernel: what every tool stands on, and all a tool may import of the world.

The leaf parts of one trial's world (its clock, bus, trace, records, scheduler and event
feed, bounded JSON, plain numbers), the seam a tool declares itself through (``spec``,
``tool``), the shapes it hands the world (``reach``, ``webhook``, ``predicate``) and
``WorldPort`` (``port``), the narrow view of the world a tool is given. Nothing here
imports a tool, the registry or the environment.
"""
