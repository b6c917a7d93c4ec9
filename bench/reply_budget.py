#!/usr/bin/env python3
"""Many big reads at once against the reply budget (docs/performance.md,
"Big reads at once"; docs/operations.md, `--reply-bytes-max`).

Starts runledgerd on a folder of N finished jobs (made by `runledger bench
memory --finished-jobs N` on the first run), then R readers at once each GET
/v1/events?limit=10000 (a few MB a reply) `--rounds` times on a keep-alive
connection, reading each reply slowly when `--slow` (64 KiB every 10 ms),
while a prober (a process of its own) asks /v1/health every 100 ms. A GET on a keep-alive
connection the server closed while idle is sent again on a new one, as
HTTP clients do, and counted. Prints the replies by status,
the server's resident memory before, at its peak and 5 s after, and the
health probe's latency. Checks its own results, never its speed: every 200
is the page asked for (events in seq order after `after`), every 503 says
`Retry-After`, and every health probe is answered 200; exit 1 otherwise.

Usage: bench/reply_budget.py [--bin build/bin] [--jobs 20000] [--data DIR]
                             [--readers 128] [--rounds 3] [--slow]
                             [--reply-bytes-max N]
"""
import argparse
import http.client
import json
import random
import subprocess
import sys
import threading
import time

from loopback import add_folder_args, folder_from_args, rss_mib, start_server

PAGE = 10_000

# Asks /v1/health every 100 ms until a line comes on stdin, then prints
# "status:ms" for each probe.
PROBER = """
import http.client, sys, threading, time
port = int(sys.argv[1])
done = threading.Event()
threading.Thread(target=lambda: (sys.stdin.readline(), done.set()), daemon=True).start()
results = []
while not done.is_set():
    t = time.perf_counter()
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        c.request("GET", "/v1/health")
        status = c.getresponse().status
        c.close()
    except OSError:
        status = 0
    results.append(f"{status}:{(time.perf_counter() - t) * 1000:.1f}")
    time.sleep(0.1)
print(" ".join(results))
"""


def percentile(values, p):
    if not values:
        return 0.0
    s = sorted(values)
    return s[min(len(s) - 1, int(len(s) * p))]


def main():
    ap = argparse.ArgumentParser()
    add_folder_args(ap, jobs=20_000)
    ap.add_argument("--readers", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--slow", action="store_true")
    ap.add_argument("--reply-bytes-max", type=int, default=0)
    a = ap.parse_args()

    data = folder_from_args(a, "runledger-reply-budget-")
    extra = ["--log-level", "error"]
    if a.reply_bytes_max:
        extra += ["--reply-bytes-max", str(a.reply_bytes_max)]
    server, port, health = start_server(a.bin, data, extra)
    problems = []
    try:
        last_seq = health["last_seq"]
        rss_before = rss_mib(server.pid)

        lock = threading.Lock()
        statuses = {}
        served_bytes = [0]
        idle_closes = [0]
        stop = threading.Event()
        rss_peak = [rss_before]
        probes = []
        replies = []  # (reader, after, status, Retry-After, body)

        def reader(i):
            rng = random.Random(i)
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            used = False
            for _ in range(a.rounds):
                after = rng.randrange(0, max(1, last_seq - PAGE))
                target = f"/v1/events?after={after}&limit={PAGE}"
                try:
                    try:
                        conn.request("GET", target)
                        r = conn.getresponse()
                    except (http.client.RemoteDisconnected, ConnectionResetError,
                            BrokenPipeError):
                        if not used:
                            raise
                        # The server closed the connection while it was idle
                        # (its keep-alive timeout runs from the moment it
                        # handed its last reply to the kernel, and reading a
                        # few MB slowly can outlast it): a GET is sent again
                        # on a new connection, as HTTP clients do.
                        with lock:
                            idle_closes[0] += 1
                        conn.close()
                        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                        used = False
                        conn.request("GET", target)
                        r = conn.getresponse()
                    used = True
                    if a.slow:
                        body = bytearray()
                        while chunk := r.read(64 * 1024):
                            body += chunk
                            time.sleep(0.01)
                    else:
                        body = r.read()
                except (OSError, http.client.HTTPException) as e:
                    with lock:
                        problems.append(f"reader {i}: {e} (on a {'reused' if used else 'new'} "
                                    f"connection)")
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                    used = False
                    continue
                # Checked once every reader is done: parsing a few MB holds
                # the interpreter, and the other readers would wait for it
                # with a connection open and their request not sent, past the
                # server's read timeout.
                with lock:
                    replies.append((i, after, r.status, r.getheader("Retry-After"), body))
                if r.status == 503:
                    time.sleep(1)

        def check(i, after, status, retry_after, body):
            statuses[status] = statuses.get(status, 0) + 1
            served_bytes[0] += len(body)
            if status == 200:
                seqs = [e["seq"] for e in json.loads(body)["events"]]
                want = list(range(after + 1, min(after + PAGE, last_seq) + 1))
                if seqs != want:
                    problems.append(f"reader {i}: a page after {after} is not the log")
            elif status == 503:
                if retry_after is None:
                    problems.append(f"reader {i}: a 503 without Retry-After")
            else:
                problems.append(f"reader {i}: status {status}")

        # The prober is a process of its own: in this one it would wait for
        # the readers' threads to let go of the interpreter, and time that.
        prober_process = subprocess.Popen(
            [sys.executable, "-c", PROBER, str(port)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True)

        def prober():
            stop.wait()
            out, _ = prober_process.communicate("stop\n")
            for line in out.split():
                status, ms = line.split(":")
                probes.append(float(ms))
                if status != "200":
                    problems.append(f"a health probe got {status if status != '0' else 'no answer in 5 s'}")

        def sampler():
            while not stop.is_set():
                rss_peak[0] = max(rss_peak[0], rss_mib(server.pid))
                time.sleep(0.05)

        helpers = [threading.Thread(target=prober), threading.Thread(target=sampler)]
        for h in helpers:
            h.start()
        began = time.monotonic()
        readers = [threading.Thread(target=reader, args=(i,)) for i in range(a.readers)]
        for t in readers:
            t.start()
        for t in readers:
            t.join()
        took = time.monotonic() - began
        stop.set()
        for h in helpers:
            h.join()
        time.sleep(5)
        rss_after = rss_mib(server.pid)
        for reply in replies:
            check(*reply)

        print(f"{last_seq} events in the log; {a.readers} readers x {a.rounds} reads of "
              f"{PAGE} events{' read slowly' if a.slow else ''}, in {took:.1f} s")
        print(f"  replies by status    {dict(sorted(statuses.items()))}")
        print(f"  served               {served_bytes[0] / 2**20:.0f} MiB")
        print(f"  idle keep-alive connections the server closed, the GET sent again: "
              f"{idle_closes[0]}")
        print(f"  server RSS MiB       before {rss_before:.0f}, peak {rss_peak[0]:.0f}, "
              f"5 s after {rss_after:.0f}")
        print(f"  /v1/health ms        p50 {percentile(probes, 0.5):.1f}, "
              f"p99 {percentile(probes, 0.99):.1f}, max {max(probes or [0]):.1f} "
              f"({len(probes)} probes)")
    finally:
        server.terminate()
        server.wait()
    for p in problems[:20]:
        print("  problem:", p)
    if problems:
        sys.exit(1)


if __name__ == "__main__":
    main()
