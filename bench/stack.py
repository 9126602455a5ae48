"""A local production-like stack for the load and fault runs, started and torn down by code.

``Stack`` runs the app as it runs in production (``DJANGO_ENV=production``):
gunicorn on 127.0.0.1:<free port> with the Dockerfile's configuration (deploy/gunicorn.conf.py:
workers and threads from the cores available), a Celery
worker (``celery -A config worker --concurrency 1``), a scratch PostgreSQL
database created on 127.0.0.1:5432 (user ``postgres``, trust auth) and Redis
as the broker — either a database number of the machine's Redis on 6379 that
nobody is using, or (``own_redis=True``) a redis-server of its own on another
free port, which the fault run may stop.  Before serving it runs migrate,
collectstatic, load_catalog and create_demo_users --force.

Everything it starts is its own child (own process group), and ``stop()`` —
called by ``with Stack() as stack:`` even when the body fails, and on SIGTERM
— stops those processes by id, drops the scratch database and empties the
Redis database it used.  Loopback only.

Only the standard library, ``psycopg`` and ``redis`` (both in requirements.txt).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PG_ADMIN_DSN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres connect_timeout=5"
SHARED_REDIS = ("127.0.0.1", 6379)
# Database numbers of the machine's Redis that a stack may borrow (.ci/run uses 0 and 1).
REDIS_DB_RANGE = range(4, 16)
GUNICORN_CONF = ROOT / "deploy" / "gunicorn.conf.py"  # as in the Dockerfile and docker-compose.yml
START_TIMEOUT_S = 60
STOP_TIMEOUT_S = 15


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:
    """In the child before exec: get SIGTERM if this script dies (even by SIGKILL), so nothing outlives it."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _say(message: str) -> None:
    print(f"[stack] {message}", file=sys.stderr, flush=True)


# The scratch databases this script created and has not dropped yet, with the process that
# made them: a later run drops a leftover only when it is listed here and that process is
# gone on this machine (same host and boot).  Anything else named stack_* is left alone.
REGISTRY = Path(os.environ.get("STACK_REGISTRY", ROOT / "bench" / "out" / "stack-databases.json"))


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def _registry_update(change) -> list[dict]:
    """Apply ``change(entries) -> entries`` to the registry under an exclusive lock; returns the result."""
    import fcntl

    REGISTRY.parent.mkdir(parents=True, exist_ok=True)
    with open(REGISTRY, "a+", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        try:
            entries = json.loads(handle.read() or "[]")
        except ValueError:
            entries = []
        entries = [e for e in entries if isinstance(e, dict) and isinstance(e.get("name"), str)]
        updated = change(entries)
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps(updated, indent=1))
    return updated


def registry_add(name: str) -> None:
    entry = {"name": name, "pid": os.getpid(), "host": socket.gethostname(), "boot_id": _boot_id()}
    _registry_update(lambda entries: [e for e in entries if e["name"] != name] + [entry])


def registry_remove(name: str) -> None:
    _registry_update(lambda entries: [e for e in entries if e["name"] != name])


def registry_leftovers() -> list[str]:
    """Registered databases whose creating process is gone: same host, and a dead pid or a new boot."""
    host, boot = socket.gethostname(), _boot_id()
    out = []
    for entry in _registry_update(lambda entries: entries):
        if entry.get("host") != host:
            continue  # another machine's stack: not ours to judge
        pid = entry.get("pid")
        if entry.get("boot_id") != boot or not isinstance(pid, int) or not _pid_alive(pid):
            out.append(entry["name"])
    return out


class StackError(RuntimeError):
    """The stack could not be started (the message says which step and where its log is)."""


class Stack:
    """gunicorn + Celery worker + scratch PostgreSQL database + Redis, on loopback.

    ``label`` names the scratch database (``stack_<label>_<pid>_<random>``) and
    the temporary folder (logs, media, static files).
    """

    def __init__(self, *, label: str = "bench", own_redis: bool = False, worker: bool = True) -> None:
        self.label = label
        self.own_redis = own_redis
        self.want_worker = worker
        self.tmp = Path(tempfile.mkdtemp(prefix=f"stack-{label}-"))
        self.media_root = self.tmp / "media"
        self.db_name = f"stack_{label}_{os.getpid()}_{secrets.token_hex(3)}"
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.redis_host, self.redis_port, self.redis_db = SHARED_REDIS[0], SHARED_REDIS[1], None
        self.redis_server: subprocess.Popen | None = None
        self.gunicorn: subprocess.Popen | None = None
        self.workers: list[subprocess.Popen] = []
        self._db_created = False
        self._stopped = False
        self.env: dict[str, str] = {}

    # ------------------------------------------------------------------ context

    def __enter__(self) -> Stack:
        self._previous_sigterm = signal.signal(signal.SIGTERM, self._on_sigterm)
        try:
            self.start()
        except BaseException:
            self.stop(keep_logs=True)
            raise
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.stop(keep_logs=exc_type is not None)
        signal.signal(signal.SIGTERM, self._previous_sigterm)

    def _on_sigterm(self, signum, frame):
        raise SystemExit(128 + signum)  # unwinds through __exit__, which stops everything

    # ------------------------------------------------------------------ start

    @property
    def broker_url(self) -> str:
        return f"redis://{self.redis_host}:{self.redis_port}/{self.redis_db}"

    @property
    def database_url(self) -> str:
        return f"postgres://postgres@127.0.0.1:5432/{self.db_name}"

    def start(self) -> None:
        started = time.perf_counter()
        self.media_root.mkdir(parents=True, exist_ok=True)
        if self.own_redis:
            self.start_redis()
        else:
            self._borrow_redis_db()
        self._create_database()
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_", "CELERY_"))},
            "DJANGO_ENV": "production",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "ALLOWED_HOSTS": "127.0.0.1",
            "DATABASE_URL": self.database_url,
            "CELERY_BROKER_URL": self.broker_url,
            "SECURE_SSL_REDIRECT": "0",
            "MEDIA_ROOT": str(self.media_root),
            "STATIC_ROOT": str(self.tmp / "static"),
            "LOG_LEVEL": "WARNING",
            "PYTHONUNBUFFERED": "1",
        }
        for args in (
            ["migrate", "--noinput"],
            ["collectstatic", "--noinput"],
            ["load_catalog"],
            ["create_demo_users", "--force"],
        ):
            self.manage(*args)
        self.gunicorn = self._spawn(
            "gunicorn",
            [
                str(BIN / "gunicorn"),
                "config.wsgi:application",
                "-c",
                str(GUNICORN_CONF),
                "--bind",
                f"127.0.0.1:{self.port}",
                "--no-control-socket",  # several stacks (and other gunicorns) may run at once
            ],
        )
        if self.want_worker:
            self.start_worker()
        self._wait_healthy()
        _say(
            f"up in {time.perf_counter() - started:.1f} s: {self.base_url} (db {self.db_name}, broker {self.broker_url})"
        )

    def manage(self, *args: str, timeout: float = 300) -> str:
        """Run ``manage.py <args>`` with the stack's environment; returns its output."""
        proc = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if proc.returncode != 0:
            raise StackError(
                f"manage.py {' '.join(args)} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
            )
        return proc.stdout

    def _spawn(self, name: str, argv: list[str]) -> subprocess.Popen:
        log = open(self.tmp / f"{name}.log", "ab")  # noqa: SIM115 - closed with the process
        proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        proc.log_file = log
        return proc

    def start_worker(self) -> subprocess.Popen:
        """Start one more Celery worker (concurrency 1) and wait until it takes jobs."""
        index = len(self.workers)
        worker = self._spawn(
            f"celery-{index}",
            [
                str(BIN / "celery"),
                "-A",
                "config",
                "worker",
                "--concurrency",
                "1",
                "--loglevel",
                "INFO",
                "--hostname",
                f"{self.label}{index}@%h",
                "--without-gossip",
                "--without-mingle",
            ],
        )
        self.workers.append(worker)
        self._wait_log(self.tmp / f"celery-{index}.log", b" ready.", worker)
        return worker

    def worker_children(self, worker: subprocess.Popen | None = None) -> list[int]:
        """Process ids of the worker's pool children (the processes that run the tasks)."""
        worker = worker or self.workers[-1]
        try:
            text = Path(f"/proc/{worker.pid}/task/{worker.pid}/children").read_text()
        except OSError:
            return []
        return [int(pid) for pid in text.split()]

    def _wait_log(self, path: Path, marker: bytes, proc: subprocess.Popen) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise StackError(f"{path.name} exited with {proc.returncode}; see {path}")
            if path.exists() and marker in path.read_bytes():
                return
            time.sleep(0.2)
        raise StackError(f"no {marker!r} in {path} after {START_TIMEOUT_S} s")

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        last = ""
        while time.monotonic() < deadline:
            if self.gunicorn.poll() is not None:
                raise StackError(
                    f"gunicorn exited with {self.gunicorn.returncode}; see {self.tmp / 'gunicorn.log'}"
                )
            try:
                with urllib.request.urlopen(self.base_url + "/healthz", timeout=5) as response:
                    if json.load(response).get("status") == "ok":
                        return
            except (OSError, ValueError) as exc:
                last = str(exc)
            time.sleep(0.3)
        raise StackError(
            f"/healthz not ok after {START_TIMEOUT_S} s ({last}); see {self.tmp / 'gunicorn.log'}"
        )

    # ------------------------------------------------------------------ redis

    def start_redis(self) -> None:
        """Start (or restart, on the same port) the stack's own redis-server."""
        if self.redis_port == SHARED_REDIS[1]:
            self.redis_port = free_port()
        self.redis_db = 0
        self.redis_server = subprocess.Popen(
            [
                shutil.which("redis-server") or "/usr/bin/redis-server",
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.redis_port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.tmp),
                "--protected-mode",
                "yes",
            ],
            stdout=open(self.tmp / "redis.log", "ab"),  # noqa: SIM115
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if self._redis().ping():
                    return
            except Exception:  # noqa: BLE001 - not up yet
                time.sleep(0.1)
        raise StackError(
            f"redis-server on port {self.redis_port} did not answer; see {self.tmp / 'redis.log'}"
        )

    def stop_redis(self) -> None:
        """Stop the stack's own redis-server (the broker goes away)."""
        if self.redis_server is not None and self.redis_server.poll() is None:
            self.redis_server.terminate()
            try:
                self.redis_server.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.redis_server.kill()
                self.redis_server.wait()
        self.redis_server = None

    def _redis(self, db: int | None = None):
        import redis

        return redis.Redis(
            host=self.redis_host,
            port=self.redis_port,
            db=self.redis_db if db is None else db,
            socket_timeout=3,
        )

    def _borrow_redis_db(self) -> None:
        """Claim an empty database number on the machine's Redis (a marker key, set only if absent)."""
        owner = f"stack:{self.label}:{os.getpid()}"
        # STACK_REDIS_DB: the one database number this machine's user may borrow (several people share its Redis).
        chosen = os.environ.get("STACK_REDIS_DB", "").strip()
        for db in [int(chosen)] if chosen else REDIS_DB_RANGE:
            client = self._redis(db)
            left = (client.get("stack-owner") or b"").decode()
            if left.startswith("stack:") and not _pid_alive(int(left.rsplit(":", 1)[1] or 0)):
                client.flushdb()  # left behind by a stack whose script was killed
            if client.dbsize() == 0 and client.set("stack-owner", owner, nx=True, ex=6 * 3600):
                if client.dbsize() == 1:
                    self.redis_db = db
                    return
                client.delete("stack-owner")
        raise StackError(f"no empty Redis database among {REDIS_DB_RANGE} on 127.0.0.1:6379")

    def _release_redis_db(self) -> None:
        if self.own_redis or self.redis_db is None:
            return
        try:
            client = self._redis()
            if (client.get("stack-owner") or b"").decode().startswith(f"stack:{self.label}:{os.getpid()}"):
                client.flushdb()
        except Exception as exc:  # noqa: BLE001 - best effort at teardown
            _say(f"could not empty Redis db {self.redis_db}: {exc}")

    # ------------------------------------------------------------------ database

    def _admin(self):
        import psycopg

        return psycopg.connect(PG_ADMIN_DSN, autocommit=True)

    def _create_database(self) -> None:
        with self._admin() as conn:
            existing = {name for (name,) in conn.execute("SELECT datname FROM pg_database").fetchall()}
            for name in registry_leftovers():
                # Only databases this script itself created (registered below) whose
                # script is gone: never another stack_* database whose owner we cannot see.
                if name in existing:
                    _say(f"dropping {name}, left behind by a stack whose script was killed")
                    conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                registry_remove(name)
            registry_add(self.db_name)
            conn.execute(f'CREATE DATABASE "{self.db_name}"')
        self._db_created = True

    def sql(self, query: str, params: tuple = ()) -> list[tuple]:
        """Run one statement in the scratch database (autocommit); returns the rows, if any."""
        import psycopg

        with psycopg.connect(
            f"host=127.0.0.1 port=5432 user=postgres dbname={self.db_name} connect_timeout=5", autocommit=True
        ) as conn:
            cursor = conn.execute(query, params)
            return cursor.fetchall() if cursor.description else []

    def _drop_database(self) -> None:
        if not self._db_created:
            return
        try:
            with self._admin() as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{self.db_name}" WITH (FORCE)')
            self._db_created = False
            registry_remove(self.db_name)
        except Exception as exc:  # noqa: BLE001 - reported, teardown continues
            _say(f"could not drop database {self.db_name}: {exc}")

    # ------------------------------------------------------------------ stop

    @staticmethod
    def _terminate(proc: subprocess.Popen | None, sig: int = signal.SIGTERM) -> None:
        """Stop a process this stack started, and its process group (gunicorn workers, pool children)."""
        if proc is None:
            return
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                pass
            try:
                proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
        else:
            # The leader is gone (e.g. SIGKILLed on purpose); reap any child it left in its group.
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        log = getattr(proc, "log_file", None)
        if log is not None:
            log.close()

    def stop_worker(self, worker: subprocess.Popen) -> None:
        self._terminate(worker)

    def stop(self, *, keep_logs: bool = False) -> None:
        if self._stopped:
            return
        self._stopped = True
        for worker in self.workers:
            self._terminate(worker)
        self._terminate(self.gunicorn)
        self._drop_database()
        self._release_redis_db()
        self.stop_redis()
        if keep_logs:
            _say(f"logs kept in {self.tmp}")
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)
        _say("stopped")


if __name__ == "__main__":
    # Smoke run: start, print where it listens, stop.
    with Stack(label="smoke") as stack:
        print(stack.base_url, stack.db_name, stack.broker_url)
