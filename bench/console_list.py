#!/usr/bin/env python3
"""The console's job list over a long history (docs/performance.md, "Live
streams and the console"): the API calls the Jobs and Now pages make, timed
against a runledgerd whose folder holds N finished jobs.

The folder is made by `runledger bench memory --finished-jobs N --data DIR`
when it is empty or missing (at 1,000,000 jobs that takes several minutes;
give the same --data again to measure once more). Each call is made ROUNDS
times on one keep-alive connection; the medians and maxima are printed, and
every page is checked: 200, JSON, at most its limit of jobs, in id order,
and the next page starts after the last id of the one before.

Usage: bench/console_list.py [--bin build/bin] [--jobs 1000000] [--data DIR] [--rounds 9]
"""
import argparse
import http.client
import json
import sys
import time

from loopback import add_folder_args, folder_from_args, start_server


def main():
    ap = argparse.ArgumentParser()
    add_folder_args(ap, jobs=1_000_000)
    ap.add_argument("--rounds", type=int, default=9)
    a = ap.parse_args()
    data = folder_from_args(a, "runledger-console-list-")
    server, port, _ = start_server(a.bin, data, ["--log-level", "warn"])
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

        def get(path):
            t = time.perf_counter()
            conn.request("GET", path)
            r = conn.getresponse()
            body = r.read()
            ms = (time.perf_counter() - t) * 1000
            if r.status != 200:
                sys.exit(f"{path}: {r.status} {body[:200]!r}")
            return ms, json.loads(body)

        _, first = get("/v1/jobs?limit=50")
        sample = first["jobs"][7]
        middle = get("/v1/jobs?limit=1&after=" + first["jobs"][-1]["id"][:4] + "5")[1]["jobs"]
        deep = middle[0]["id"] if middle else first["jobs"][-1]["id"]
        calls = {
            "Jobs: first page": "/v1/jobs?limit=50",
            "Jobs: a page deep in the list": f"/v1/jobs?limit=50&after={deep}",
            "Jobs: state SUCCEEDED": "/v1/jobs?limit=50&state=SUCCEEDED",
            "Jobs: one kind": f"/v1/jobs?limit=50&kind={sample['kind']}",
            "Jobs: one target": f"/v1/jobs?limit=50&target={sample['target']}",
            "Now: RUNNING (none)": "/v1/jobs?state=RUNNING&limit=1000",
            "Now: FAILED (none)": "/v1/jobs?state=FAILED&limit=1000",
        }
        print(f"{a.jobs} finished jobs; {a.rounds} rounds per call; milliseconds, client side")
        worst = 0.0
        for name, path in calls.items():
            times = []
            for _ in range(a.rounds):
                ms, page = get(path)
                times.append(ms)
                ids = [j["id"] for j in page["jobs"]]
                limit = 1000 if "limit=1000" in path else 50
                if len(ids) > limit or ids != sorted(ids):
                    sys.exit(f"{path}: {len(ids)} jobs, or not in id order")
                if page.get("next") is not None and page["next"] != ids[-1]:
                    sys.exit(f"{path}: next is {page['next']}, the last id is {ids[-1]}")
            times.sort()
            worst = max(worst, times[-1])
            print(f"  {name:34s} median {times[len(times) // 2]:7.2f}  max {times[-1]:7.2f}"
                  f"  ({len(page['jobs'])} jobs)")
        print(f"slowest call: {worst:.2f} ms (goal: 200 ms a page)")
    finally:
        server.terminate()
        server.wait(timeout=60)


if __name__ == "__main__":
    main()
