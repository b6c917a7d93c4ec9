"""What the Python benchmarks share: a free loopback port for the runledgerd they start."""
import socket


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port
