"""The hosted console: Ancha's console (``ancha.console``) served by ``agentos serve`` under
``/ui``, per workspace, over the runs uploaded to it (``ancha push``)."""
