"""What the Python benchmarks share: a runledgerd they start on loopback, a
folder of finished jobs for it, and its resident memory."""
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def rss_mib(pid):
    """The resident memory of process `pid`, in MiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def add_folder_args(ap, jobs):
    """--bin, and --jobs and --data of the finished-jobs folder (default: a
    new one of `jobs` jobs)."""
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--jobs", type=int, default=jobs)
    ap.add_argument("--data", default="")


def folder_from_args(a, prefix):
    """The folder of add_folder_args' flags, made when it is empty or missing."""
    return finished_jobs_folder(a.bin, a.jobs, a.data or tempfile.mkdtemp(prefix=prefix))


def finished_jobs_folder(bin_dir, jobs, data):
    """`data`, holding `jobs` finished jobs: made by `runledger bench memory`
    when it is empty or missing (kept for the next run)."""
    if not os.path.isdir(data) or not os.listdir(data):
        print(f"generating {jobs} finished jobs in {data} ...", file=sys.stderr)
        subprocess.run([f"{bin_dir}/runledger", "bench", "memory", "--finished-jobs", str(jobs),
                        "--data", data], check=True, stdout=subprocess.DEVNULL)
    return data


def start_server(bin_dir, data, extra=(), wait_s=120):
    """runledgerd on a free loopback port and `data`, once /v1/health answers:
    (the process, its port, the health reply)."""
    port = free_port()
    server = subprocess.Popen([f"{bin_dir}/runledgerd", "--listen", f"127.0.0.1:{port}",
                               "--data", data, *extra])
    deadline = time.time() + wait_s
    while True:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", "/v1/health")
            r = c.getresponse()
            if r.status == 200:
                return server, port, json.loads(r.read())
        except OSError:
            pass
        if time.time() > deadline or server.poll() is not None:
            server.kill()
            sys.exit("runledgerd did not start")
        time.sleep(0.1)
