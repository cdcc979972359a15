"""Runs a command on a pseudo-terminal and copies what it writes to stdout as it comes (unbuffered).

usage: python3 pty_stream.py -- command args...
Exits with the command's exit code. The test reads the output while the command runs.
"""
import os, pty, sys

cmd = sys.argv[sys.argv.index('--') + 1:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(cmd[0], cmd)
while True:
    try:
        data = os.read(fd, 4096)
    except OSError:
        break
    if not data:
        break
    os.write(1, data)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
