"""A TCP forwarder for tests that need a server to appear, or vanish, at an address of their own.

Usage: forward.py LISTEN_PORT TARGET_HOST TARGET_PORT [LISTEN_HOST] — listens on
LISTEN_HOST:LISTEN_PORT (default 127.0.0.1) and copies bytes both ways to the target, one
thread per direction, until killed. A connection the target refuses or does not answer is
closed, and the forwarder goes on.
"""
import signal
import socket
import sys
import threading


def pump(source, target):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    finally:
        for s in (source, target):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def main():
    # A test process that watches SIGTERM itself ignores it, and children inherit that: be
    # stoppable by the test that started us.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    port, host, target_port = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    listen_host = sys.argv[4] if len(sys.argv) > 4 else "127.0.0.1"
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((listen_host, port))
    server.listen(64)
    print("listening", flush=True)
    while True:
        client, _ = server.accept()
        threading.Thread(target=connect, args=(client, host, target_port), daemon=True).start()


def connect(client, host, target_port):
    try:
        upstream = socket.create_connection((host, target_port))
    except OSError:
        client.close()
        return
    threading.Thread(target=pump, args=(client, upstream), daemon=True).start()
    threading.Thread(target=pump, args=(upstream, client), daemon=True).start()


if __name__ == "__main__":
    main()
