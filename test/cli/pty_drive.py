"""Runs a command on a pseudo-terminal and answers its prompts.

usage: python3 pty_drive.py SCRIPT_JSON -- command args...
SCRIPT_JSON: [["text to wait for", "answer to type"], ...]
PTY_COLS (env): the terminal's width in columns (unset: the pty's own, often 0).
Prints everything the command wrote; exits with the command's exit code (124 on time-out).
"""
import fcntl, json, os, pty, select, struct, sys, termios, time

script = json.loads(sys.argv[1])
cmd = sys.argv[sys.argv.index('--') + 1:]
pid, fd = pty.fork()
if pid == 0:
    if os.environ.get('PTY_COLS'):
        fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack('HHHH', 24, int(os.environ['PTY_COLS']), 0, 0))
    os.execvp(cmd[0], cmd)

out = b''
deadline = time.time() + 20
step = 0
while True:
    if time.time() > deadline:
        os.kill(pid, 9)
        sys.stdout.write(out.decode('utf8', 'replace'))
        sys.exit(124)
    r, _, _ = select.select([fd], [], [], 0.1)
    if r:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        out += data
    if step < len(script) and script[step][0].encode() in out.split(b'\x00')[-1]:
        time.sleep(0.05)
        os.write(fd, script[step][1].encode())
        out += b'\x00'
        step += 1
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.replace(b'\x00', b'').decode('utf8', 'replace'))
sys.exit(os.waitstatus_to_exitcode(status))
