"""Issue 13: bench/stack.py drops only the scratch databases it created itself.

Before, a starting stack dropped every ``stack_*`` database whose name held
the pid of a process it could not see — another container's, another user's,
or one merely named like it.  Now leftovers come from the stack's own registry
(bench/out/stack-databases.json), checked against host, boot and pid.  The
PostgreSQL server is replaced by a recording stand-in, so this runs anywhere.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def stack(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("bench_stack_under_test", ROOT / "bench" / "stack.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "REGISTRY", tmp_path / "stack-databases.json")
    return module


class FakeServer:
    """Answers ``SELECT datname FROM pg_database`` and records every statement."""

    def __init__(self, databases):
        self.databases = set(databases)
        self.statements = []

    def connect(self):
        server = self

        class Conn:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

            def execute(self, sql, params=()):
                server.statements.append(sql)
                if sql.startswith("DROP DATABASE"):
                    server.databases.discard(sql.split('"')[1])
                if sql.startswith("CREATE DATABASE"):
                    server.databases.add(sql.split('"')[1])

                class Cursor:
                    def fetchall(self_inner):
                        return [(name,) for name in sorted(server.databases)]

                return Cursor()

        return Conn()


def dead_pid() -> int:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    return int(done.stdout)


def test_a_starting_stack_leaves_unregistered_stack_databases_alone(stack, monkeypatch):
    stranger = f"stack_load_{dead_pid()}_abc123"  # looks like a leftover, but not ours
    server = FakeServer({"postgres", stranger})
    monkeypatch.setattr(stack.Stack, "_admin", lambda self: server.connect())
    s = stack.Stack(label="t")
    s._create_database()
    assert stranger in server.databases
    assert not any(stranger in sql for sql in server.statements if sql.startswith("DROP"))
    assert [e["name"] for e in json.loads(stack.REGISTRY.read_text())] == [s.db_name]
    s._drop_database()
    assert s.db_name not in server.databases
    assert json.loads(stack.REGISTRY.read_text()) == []


def test_a_registered_leftover_of_a_dead_run_is_dropped_a_live_ones_kept(stack, monkeypatch):
    host = socket.gethostname()
    boot = stack._boot_id()
    dead = {"name": "stack_bench_1_dead00", "pid": dead_pid(), "host": host, "boot_id": boot}
    alive = {"name": "stack_bench_2_live00", "pid": os.getpid(), "host": host, "boot_id": boot}
    elsewhere = {"name": "stack_bench_3_else00", "pid": dead_pid(), "host": host + "-other", "boot_id": boot}
    stack.REGISTRY.write_text(json.dumps([dead, alive, elsewhere]))
    server = FakeServer({"postgres", dead["name"], alive["name"], elsewhere["name"]})
    monkeypatch.setattr(stack.Stack, "_admin", lambda self: server.connect())
    s = stack.Stack(label="t")
    s._create_database()
    assert dead["name"] not in server.databases
    assert alive["name"] in server.databases and elsewhere["name"] in server.databases
    names = [e["name"] for e in json.loads(stack.REGISTRY.read_text())]
    assert names == [alive["name"], elsewhere["name"], s.db_name]
