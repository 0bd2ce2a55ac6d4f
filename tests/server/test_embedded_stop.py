"""Stopping the embedded server ends its thread and frees its ports, even while a client
follows a trial's live stream."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import httpx

from ancha.scene.loading import load_scene
from ancha.server.embedded import EmbeddedServer
from ancha.world.registry import catalog

SCENE = "name: quiet\ntask: wait\nworld:\n  slack:\n    channels: [{ name: general }]\n"


def test_embedded_server__stops_with_its_ports_free_while_a_live_stream_is_open(tmp_path: Path) -> None:
    (tmp_path / "scene.yaml").write_text(SCENE)
    scene = load_scene(tmp_path / "scene.yaml", catalog())
    server = EmbeddedServer().start()
    context = httpx.post(f"{server.url}/envs", json={"scene": scene.model_dump(mode="json", by_alias=True)}).json()
    polled: list[object] = []
    streaming = threading.Event()

    def follow_live() -> None:  # a stream that lasts as long as the trial: the world's live events
        try:
            with httpx.stream("GET", f"{server.url}/envs/{context['env_id']}/live", timeout=60) as answer:
                for _ in answer.iter_bytes():
                    streaming.set()
            polled.append(answer.status_code)
        except httpx.HTTPError as exc:
            polled.append(exc)

    follower = threading.Thread(target=follow_live)
    follower.start()
    assert streaming.wait(30)  # the stream is open and sending
    server.stop()
    follower.join(10)
    assert not server._thread.is_alive() and not follower.is_alive()
    assert len(polled) == 1  # ended or cut, never left hanging
    for port in (server.port, server.tls_port):
        with socket.socket() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((server.host, port))  # nothing listens there any more
