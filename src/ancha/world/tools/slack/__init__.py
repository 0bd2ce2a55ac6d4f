"""A replica of Slack's Web API: the agent's official slack_sdk talks to it unchanged."""
