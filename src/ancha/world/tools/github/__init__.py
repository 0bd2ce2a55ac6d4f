"""A replica of GitHub: REST, GraphQL and git over smart HTTP, as one tool folder.

Layout (after moto): ``replica.py`` the Tool (auth, rate limits, ETags, dispatch, 501
coverage gaps, domain events), ``scene_file.py`` the ``world.github`` section (written and
resolved), ``seed.py`` building the state from it, ``models/`` the state with GitHub's wire shapes,
``router.py`` path-template routing, ``call.py`` one request and GitHub's access rules,
``changes.py`` issue writes shared by routes (events + issue event log), ``routes/``
thin handlers per family, ``errors.py`` one class per kind of GitHub error,
``headers.py`` rate limits and fixed headers, ``events.py`` the domain events,
``coverage.py`` the generator of ``coverage_ledger.py``; ``git_*.py``/``smart_http.py``
real git, ``graphql/`` the GraphQL API.

What checks and other parts of the world read (stable names)::

    replica.state.repos                     # {"owner/name" lower-case: Repo}
    replica.state.repo(owner, name) -> Repo | None
    replica.state.users / .orgs             # {login lower-case: User / Org}
    replica.state.role(repo, account) -> "read".."admin" | None   # effective permission
    replica.agent                           # the agent's User
    replica.issue_token(login_or_ref, actor) -> "ghp_..."   # people ("person:laura") and "world"
    repo.issues[n] -> Issue                 # every number, pulls too (issue.pull is the Pull)
    repo.pulls[n] -> Pull                   # pull.issue holds title/body/labels/state/comments
    repo.git                                # git_store.RepoGit (None before it is built)
    repo.labels, repo.milestones, repo.collaborators, repo.deployments, repo.statuses,
    repo.check_runs, repo.releases, repo.production

Routes declare ``@route("GET", "/repos/{owner}/{repo}/issues/{issue_number}")`` (the
vendor's template) on a handler taking a ``Call``: ``call.repo(need="read"|"triage"|
"write"|"admin")``, ``call.issue(repo)``, ``call.user``, ``call.body``/``field_*``,
``call.page(items)``; they return JSON-able data (200) or ``Reply``/``created()``/
``no_content()``. Add a family by listing its module in ``routes/__init__.py``.
"""
