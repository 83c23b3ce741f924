"""A TCP forwarder for tests that need a server to appear, or vanish, at an address of their own.

Usage: forward.py LISTEN_PORT TARGET_HOST TARGET_PORT — listens on 127.0.0.1:LISTEN_PORT and
copies bytes both ways to the target, one thread per direction, until killed.
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
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen(64)
    print("listening", flush=True)
    while True:
        client, _ = server.accept()
        upstream = socket.create_connection((host, target_port))
        threading.Thread(target=pump, args=(client, upstream), daemon=True).start()
        threading.Thread(target=pump, args=(upstream, client), daemon=True).start()


if __name__ == "__main__":
    main()
