"""AgentOS: agent workflows with checks on every run, evaluations and a release gate.

    agentos keys create --workspace acme      # prints aos_live_...
    agentos serve                             # http://127.0.0.1:8000, agentos.db in the user data dir
    AGENTOS_DATABASE_URL=postgresql+psycopg://... agentos serve

In code: `agentos.api.app.create_app(database_url)` builds the ASGI app and
`agentos.keys.create_key(database_url, workspace)` issues a key.
"""
