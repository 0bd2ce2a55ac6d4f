"""The Okta replica: users, their lifecycle and groups behind Okta's Management API.

Stable interface (what the rest of Ancha relies on):

    world.okta: {users: [{ref, login, email, first_name, last_name, status, groups}],
                 groups: [{ref, name, description}]}          # ref kinds: user, group
    {{okta.url}} / ANCHA_OKTA_URL, {{okta.token}} / ANCHA_OKTA_TOKEN   # Authorization: SSWS <token>
    state check  okta.user: <$ref or login>, with status | status_in | exists (siblings)
    action       okta.user: {user, status, groups} | {login, email, first_name, last_name, status, groups}
    domain events  events.py (user_created, user_status_changed {user, from, to}, ...)
    agent_env    OKTA_TESTING_TESTINGDISABLEHTTPSCHECK=true (the official SDK refuses http otherwise)
    ledger       python -m ancha.world.tools.okta.coverage --regenerate | --check
"""
