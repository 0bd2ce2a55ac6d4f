"""Regenerating the vendor data Ancha ships: ``python -m ancha.vendor regenerate``.

The vendors' published API descriptions (OpenAPI files, JSON Schemas, GitHub's GraphQL SDL,
Slack's SDK metadata) are the input; what the product needs from them is written into each
tool's ``vendor/`` folder as structure only (see ``structure.py``), together with the
coverage ledgers and Slack's rate tiers derived from it. Nothing reads the descriptions at
run time: a fresh clone or an installed wheel has everything it needs.
"""
