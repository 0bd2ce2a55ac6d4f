"""Model gateway overhead: a model call through the gateway against the same call made
directly to the provider's stand-in.

    .venv/bin/python bench/gateway.py [--calls 400]

A local stand-in answers OpenAI chat completions at once: a JSON answer, or an SSE stream
of 20 chunks with a final usage chunk. It runs in a process of its own. A keep-alive httpx
client calls it directly, and another through a ``ModelGateway`` whose trial records every
call (reading its usage, pricing it and appending it to ``models.jsonl``); the two take turns,
so both meet the same load. The overhead is the difference of the medians (and of the 99th
percentiles) per call: the extra hop, the forwarding and the recording. Target: at most 2 ms
per call. The gateway's CPU per call (this process's CPU time through the gateway less that
of the direct calls) depends less on what else the machine runs than wall times do.
Prints a markdown table. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ancha.results.run_folder import TrialFolder
from ancha.runner.gateway import ModelGateway

WARMUP = 20
TARGET_MS = 2.0
USAGE = {"prompt_tokens": 1000, "completion_tokens": 500, "total_tokens": 1500}


async def completions(request: Request) -> Response:
    body = await request.json()
    base = {"id": "chatcmpl-bench", "created": 1700000000, "model": body["model"]}
    if not body.get("stream"):
        return JSONResponse({**base, "object": "chat.completion", "usage": USAGE, "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "word " * 100}}]})

    async def events() -> AsyncIterator[bytes]:
        chunk = {**base, "object": "chat.completion.chunk"}
        for _ in range(20):
            delta = {"index": 0, "delta": {"content": "word "}, "finish_reason": None}
            yield f"data: {json.dumps({**chunk, 'choices': [delta]})}\n\n".encode()
        yield f"data: {json.dumps({**chunk, 'choices': [], 'usage': USAGE})}\n\n".encode()
        yield b"data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


def serve_standin(port: int) -> None:
    app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False, lifespan="off")


def start_standin() -> tuple[str, subprocess.Popen[bytes]]:
    """The stand-in in a process of its own, as a provider is: it takes no CPU from the gateway's."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen([sys.executable, __file__, "--serve-standin", str(port)])
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.get(url + "/", timeout=1)
            return url, process
        except httpx.TransportError:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                raise SystemExit("the stand-in did not start") from None
            time.sleep(0.05)


def timings(direct: httpx.Client, through: httpx.Client, urls: tuple[str, str], stream: bool,
            calls: int) -> tuple[list[float], list[float], float]:
    """Wall times (ms) of direct calls and of calls through the gateway, made in turn so that
    both meet the same load, and the gateway's CPU per call (ms): this process's CPU time over
    the calls through it less that over the direct ones (the client's own work is the same)."""
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}], "stream": stream,
            **({"stream_options": {"include_usage": True}} if stream else {})}
    walls: tuple[list[float], list[float]] = ([], [])
    cpu = [0.0, 0.0]
    for i in range(calls + WARMUP):
        for side, (client, url) in enumerate(((direct, urls[0]), (through, urls[1]))):
            c0, t0 = time.process_time(), time.perf_counter()
            with client.stream("POST", url, json=body) as answer:
                for _ in answer.iter_raw():
                    pass
            if i >= WARMUP:
                walls[side].append((time.perf_counter() - t0) * 1000)
                cpu[side] += time.process_time() - c0
    return walls[0], walls[1], (cpu[1] - cpu[0]) * 1000 / calls


def p99(values: list[float]) -> float:
    return sorted(values)[int(len(values) * 0.99) - 1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--serve-standin", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_standin:
        serve_standin(args.serve_standin)
        return
    standin_url, standin = start_standin()
    rows = []
    with tempfile.TemporaryDirectory() as tmp, \
            ModelGateway(["api.openai.com"], upstreams={"api.openai.com": standin_url}) as gateway:
        trial = gateway.open_trial(TrialFolder(Path(tmp)).create())
        with httpx.Client(timeout=30) as direct, httpx.Client(timeout=30) as through:
            for stream in (False, True):
                urls = (standin_url + "/v1/chat/completions", f"{trial.url}/api.openai.com/v1/chat/completions")
                plain, gated, cpu = timings(direct, through, urls, stream, args.calls)
                rows.append(("streamed (SSE, 22 events)" if stream else "JSON answer", plain, gated, cpu))
        recorded = trial.cost()["calls"]
    standin.terminate()
    standin.wait()
    print(f"calls per row: {args.calls} (after {WARMUP} warm-up); recorded through the gateway: {recorded}\n")
    print("| call | direct p50 ms | gateway p50 ms | overhead p50 ms | direct p99 ms | gateway p99 ms "
          "| overhead p99 ms | gateway CPU per call ms | target (overhead p50) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, plain, gated, cpu in rows:
        d50, g50 = statistics.median(plain), statistics.median(gated)
        d99, g99 = p99(plain), p99(gated)
        met = "met" if g50 - d50 <= TARGET_MS else "not met"
        print(f"| {name} | {d50:.2f} | {g50:.2f} | {g50 - d50:.2f} | {d99:.2f} | {g99:.2f} | {g99 - d99:.2f} "
              f"| {cpu:.2f} | ≤ {TARGET_MS:.0f} ms ({met}) |")
    print(f"\nload average while it ran: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (wall times grow with it; "
          "the gateway's CPU per call much less)")


if __name__ == "__main__":
    main()
