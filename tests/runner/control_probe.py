"""An agent that tries to grade itself: every control route of the Ancha server, with every
credential it holds (none, each token, key and secret of its environment), at every base URL
it was given; and, when it finds another trial's (``PROBE_SHARED``), that trial's own routes
with its own credentials. It prints one ``PROBE-REPORT {json}`` line: how many it tried and
every answer that was not a refusal. Then it does its task (a message in #general).

Standard library only: it runs on the host and in the test image alike."""

import json
import os
import sys
import time
import urllib.error
import urllib.request
from urllib.parse import urlsplit

REFUSED = (401, 403, 404)
env = dict(os.environ)
own = env["ANCHA_ENV_ID"]


def call(method, url, credential, body=None):
    headers = {"content-type": "application/json"}
    if credential is not None:
        headers["authorization"] = "Bearer " + credential
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=20) as answer:  # headers only: /live streams
            return answer.status, answer.read(2000) if "live" not in url else b""
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(2000)
    except Exception as exc:  # noqa: BLE001 - nothing answering is a refusal too
        return type(exc).__name__, b""


def other_trial():
    """Another trial's ANCHA_* variables, when the test shares a folder between trials."""
    shared = env.get("PROBE_SHARED")
    if not shared:
        return None
    partial = os.path.join(shared, "." + own)
    with open(partial, "w") as out:
        json.dump({k: v for k, v in env.items() if k.startswith("ANCHA_")}, out)
    os.replace(partial, os.path.join(shared, own + ".json"))
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        for name in os.listdir(shared):
            if name.endswith(".json") and name != own + ".json":
                with open(os.path.join(shared, name)) as found:
                    return json.load(found)
        time.sleep(0.05)
    return None


other = other_trial()
secret_names = ("TOKEN", "KEY", "SECRET", "PASSWORD")
credentials = {"none": None}
for name, value in sorted(env.items()):
    if any(part in name for part in secret_names) and value and value.isascii() and "\n" not in value:
        credentials[name] = value
bases = sorted({"{0.scheme}://{0.netloc}".format(urlsplit(v)) for v in env.values()
                if v.startswith(("http://", "https://"))})
ids = [own, "no-such-env"] + ([other["ANCHA_ENV_ID"]] if other else [])

routes = [("GET", "/envs", None), ("POST", "/envs", {"scene": {}, "trial": 1})]
for env_id in ids:
    routes += [
        ("GET", f"/envs/{env_id}", None),
        ("GET", f"/envs/{env_id}/trace", None),
        ("GET", f"/envs/{env_id}/state", None),
        ("GET", f"/envs/{env_id}/records", None),
        ("GET", f"/envs/{env_id}/live", None),
        ("POST", f"/envs/{env_id}/checks", None),
        ("POST", f"/envs/{env_id}/waiting", {"waiting": True}),
        ("POST", f"/envs/{env_id}/endpoint", {"url": "http://127.0.0.1:9/", "startup_timeout": 1}),
        ("POST", f"/envs/{env_id}/grade", None),
        ("DELETE", f"/envs/{env_id}", None),
    ]
tried, opened = 0, []
for base in bases:
    for method, path, body in routes:
        for name, credential in credentials.items():
            status, text = call(method, base + path, credential, body)
            tried += 1
            if status not in REFUSED:
                opened.append([method, base + path, name, status, text.decode(errors="replace")[:200]])

if other:  # the other trial's own routes, with this trial's credentials
    theirs = [("GET", other["ANCHA_CONTEXT_URL"]), ("GET", other["ANCHA_EVENTS_URL"]),
              ("POST", other["ANCHA_DONE_URL"]), ("GET", other["ANCHA_GITHUB_URL"] + "/user")]
    for method, url in theirs:
        for name, credential in credentials.items():
            status, text = call(method, url, credential, {} if method == "POST" else None)
            tried += 1
            if status not in REFUSED:
                opened.append([method, url, name, status, text.decode(errors="replace")[:200]])

report = {"tried": tried, "opened": opened, "bases": bases, "credentials": sorted(credentials),
          "other": other is not None, "server_key_given": "ANCHA_SERVER_KEY" in env}
print("PROBE-REPORT " + json.dumps(report), flush=True)

post = urllib.request.Request(env["ANCHA_SLACK_URL"] + "/api/chat.postMessage",
                              data=json.dumps({"channel": "general", "text": "hi"}).encode(),
                              headers={"authorization": "Bearer " + env["ANCHA_SLACK_TOKEN"],
                                       "content-type": "application/json"})
print(json.load(urllib.request.urlopen(post, timeout=20)))
sys.exit(0)
