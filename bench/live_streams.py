#!/usr/bin/env python3
"""Live event streams under load (docs/performance.md, "Live streams").

Starts runledgerd on a fresh data folder, opens N readers of
GET /v1/events/live, appends M events (enqueues, from a few threads), and
checks that every reader got every event once, in order. Prints the server's
resident memory before and with the readers, its CPU while they sit idle and
per event delivered, and how long after its enqueue was answered an event
reached the readers (p50/p99 over all readers and events).

Usage: bench/live_streams.py [--bin build/bin] [--readers 1000] [--events 2000]
"""
import argparse
import http.client
import json
import os
import selectors
import socket
import subprocess
import sys
import tempfile
import threading
import time

from loopback import free_port, rss_mib

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--readers", type=int, default=1000)
    ap.add_argument("--events", type=int, default=2000)
    ap.add_argument("--idle-s", type=float, default=10.0)
    a = ap.parse_args()

    data = tempfile.mkdtemp(prefix="rl-live-bench-")
    port = free_port()
    server = subprocess.Popen(
        [os.path.join(a.bin, "runledgerd"), "--listen", f"127.0.0.1:{port}", "--data", data],
        stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                c.request("GET", "/v1/health")
                if c.getresponse().status == 200:
                    break
            except OSError:
                time.sleep(0.05)
        rss_before = rss_mib(server.pid)

        sel = selectors.DefaultSelector()
        readers = []
        for i in range(a.readers):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"GET /v1/events/live?after=0 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            s.setblocking(False)
            r = {"sock": s, "buf": b"", "ids": [], "seen_at": {}}
            readers.append(r)
            sel.register(s, selectors.EVENT_READ, r)

        def pump(until):
            while time.monotonic() < until:
                for key, _ in sel.select(timeout=0.05):
                    r = key.data
                    chunk = r["sock"].recv(1 << 16)
                    if not chunk:
                        sel.unregister(r["sock"])
                        continue
                    now = time.monotonic()
                    r["buf"] += chunk
                    while True:
                        at = r["buf"].find(b"id: ")
                        if at < 0:
                            break
                        end = r["buf"].find(b"\n", at)
                        if end < 0:
                            break
                        seq = int(r["buf"][at + 4:end])
                        r["ids"].append(seq)
                        r["seen_at"][seq] = now
                        r["buf"] = r["buf"][end:]

        pump(time.monotonic() + 2.0)
        rss_readers = rss_mib(server.pid)
        cpu0 = cpu_s(server.pid)
        pump(time.monotonic() + a.idle_s)
        idle_cpu = (cpu_s(server.pid) - cpu0) / a.idle_s

        answered_at = {}
        lock = threading.Lock()

        def enqueue(worker, count):
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            for n in range(count):
                body = json.dumps({"id": f"b{worker}-{n}", "kind": "k", "target": f"t{worker}"})
                c.request("POST", "/v1/jobs", body, {"Content-Type": "application/json"})
                reply = c.getresponse()
                text = reply.read()
                assert reply.status == 201, text
                with lock:
                    answered_at[f"b{worker}-{n}"] = time.monotonic()

        threads = [threading.Thread(target=enqueue, args=(w, a.events // 8)) for w in range(8)]
        cpu1 = cpu_s(server.pid)
        for t in threads:
            t.start()
        deadline = time.monotonic() + 120
        total = (a.events // 8) * 8
        while time.monotonic() < deadline:
            pump(time.monotonic() + 0.2)
            if all(len(r["ids"]) >= total for r in readers) and not any(t.is_alive() for t in threads):
                break
        for t in threads:
            t.join()
        busy_cpu = cpu_s(server.pid) - cpu1
        rss_after = rss_mib(server.pid)

        # The seq of each job's event, from the log, to match arrival times.
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        seq_of_job = {}
        after = 0
        while True:
            c.request("GET", f"/v1/events?after={after}&limit=10000")
            page = json.loads(c.getresponse().read())
            for e in page["events"]:
                seq_of_job[e["stream"].split("/", 1)[1]] = e["seq"]
            if not page["events"]:
                break
            after = page["events"][-1]["seq"]
        delays = []
        for job, t_answer in answered_at.items():
            seq = seq_of_job[job]
            for r in readers:
                if seq in r["seen_at"]:
                    delays.append(max(0.0, r["seen_at"][seq] - t_answer))
        delays.sort()
        # One event at a time on a quiet server: how long until every reader has it.
        probes = []
        pc = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for n in range(20):
            body = json.dumps({"id": f"probe-{n}", "kind": "k", "target": "probe"})
            pc.request("POST", "/v1/jobs", body, {"Content-Type": "application/json"})
            assert pc.getresponse().read()
            t_answer = time.monotonic()
            want = total + n + 1
            until = time.monotonic() + 30
            while time.monotonic() < until and any(len(r["ids"]) < want for r in readers):
                pump(time.monotonic() + 0.01)
            last = max(r["seen_at"].get(want, until) for r in readers)
            probes.append(max(0.0, last - t_answer))
            time.sleep(0.1)
        probes.sort()
        total += 20
        wrong = sum(1 for r in readers if r["ids"] != list(range(1, total + 1)))
        sent = (total - 20) * a.readers
        print(f"readers: {a.readers}, events: {total}, readers with a gap, duplicate or wrong order: {wrong}")
        print(f"server RSS: {rss_before:.1f} MiB alone, {rss_readers:.1f} MiB with the readers "
              f"({(rss_readers - rss_before) * 1024 / a.readers:.1f} KiB each), {rss_after:.1f} MiB after")
        print(f"server CPU with the readers idle: {idle_cpu * 100:.2f}% of a core")
        print(f"server CPU per event sent to a reader: {busy_cpu / sent * 1e6:.2f} us "
              f"({busy_cpu:.2f} s for {sent} deliveries, enqueues included)")
        if delays:
            p50 = delays[len(delays) // 2] * 1000
            p99 = delays[int(len(delays) * 0.99)] * 1000
            print(f"under the burst, from an enqueue's reply to its event at a reader (this "
                  f"script's own reading included): p50 {p50:.1f} ms, p99 {p99:.1f} ms")
        print(f"one event at a time, until all {a.readers} readers have it: "
              f"median {probes[len(probes) // 2] * 1000:.1f} ms, max {probes[-1] * 1000:.1f} ms")
        return 1 if wrong else 0
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(main())
