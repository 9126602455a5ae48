#!/usr/bin/env python3
"""Extract the ``vllm serve`` command-line flags of one vLLM release from its source.

Reads the Python sources (no import: vLLM needs torch) and writes the flag list
that ``tests/engine/test_recipes.py`` checks every generated bundle against::

    pip download --no-deps --only-binary :all: --python-version 3.12 \\
        --platform manylinux_2_28_x86_64 vllm==0.27.1 -d /tmp/vllm
    unzip -q /tmp/vllm/vllm-0.27.1-*.whl 'vllm/*' -d /tmp/vllm/src
    python scripts/extract_vllm_flags.py vllm /tmp/vllm/src 0.27.1 > tests/data/vllm-flags/vllm-0.27.1.json
    python scripts/extract_vllm_flags.py bench /tmp/vllm/src 0.27.1 > tests/data/vllm-flags/vllm-0.27.1-bench-serve.json

Where the flags come from (vLLM ≥ 0.10 layout):

* ``vllm/entrypoints/openai/cli_args.py``: ``make_arg_parser`` adds ``--headless``,
  ``--api-server-count``, ``--config`` … explicitly, then ``FrontendArgs.add_cli_args``
  adds ``--<field>`` for every field of ``FrontendArgs`` and its bases;
* ``vllm/engine/arg_utils.py``: ``EngineArgs.add_cli_args`` / ``AsyncEngineArgs.add_cli_args``
  call ``group.add_argument("--flag", **xxx_kwargs["field"])`` with
  ``xxx_kwargs = get_kwargs(SomeConfig)``;
* ``get_kwargs`` gives a field typed ``bool`` (without ``str``) an
  ``argparse.BooleanOptionalAction``, which also creates ``--no-<flag>``; a field
  typed with a ``Literal`` gets ``choices``.  Field types are read from the
  config dataclasses in ``vllm/config/*.py``.

vLLM's ``FlexibleArgumentParser`` accepts ``_`` for ``-`` in flag names, so the
test normalises before it looks a flag up.

For vLLM-Ascend the engine flags are vLLM's; its own settings travel in
``--additional-config`` JSON, read in ``vllm_ascend/ascend_config.py``::

    git show releases/v0.23.0:vllm_ascend/ascend_config.py > /tmp/ascend_config.py
    python scripts/extract_vllm_flags.py ascend /tmp/ascend_config.py 0.23.0 \\
        > tests/data/vllm-flags/vllm-ascend-0.23.0-additional-config.json
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path


def _annotation_text(node: ast.AST | None) -> str:
    return ast.unparse(node) if node is not None else ""


def _literal_values(node: ast.AST) -> list[str] | None:
    """The strings of ``Literal["a", "b"]`` (or None)."""
    if isinstance(node, ast.Subscript) and _annotation_text(node.value).endswith("Literal"):
        inner = node.slice
        elts = inner.elts if isinstance(inner, ast.Tuple) else [inner]
        values = [e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return values or None
    return None


class _Types:
    """Field annotations of every class, and module-level Literal aliases, in the given files."""

    def __init__(self, files: list[Path]):
        self.fields: dict[str, dict[str, ast.AST]] = {}
        self.bases: dict[str, list[str]] = {}
        self.literals: dict[str, list[str]] = {}
        for path in files:
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in tree.body:
                if isinstance(node, ast.Assign | ast.AnnAssign):
                    target = node.targets[0] if isinstance(node, ast.Assign) else node.target
                    if isinstance(target, ast.Name) and node.value is not None:
                        values = _literal_values(node.value)
                        if values:
                            self.literals[target.id] = values
                elif isinstance(node, ast.ClassDef):
                    self.bases[node.name] = [_annotation_text(b) for b in node.bases]
                    own = self.fields.setdefault(node.name, {})
                    for item in node.body:
                        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                            own[item.target.id] = item.annotation

    def field(self, cls: str, name: str) -> ast.AST | None:
        seen = set()
        stack = [cls]
        while stack:
            c = stack.pop(0)
            if c in seen:
                continue
            seen.add(c)
            if name in self.fields.get(c, {}):
                return self.fields[c][name]
            stack += self.bases.get(c, [])
        return None

    def all_fields(self, cls: str) -> dict[str, ast.AST]:
        out: dict[str, ast.AST] = {}
        for base in reversed(self.bases.get(cls, [])):
            out.update(self.all_fields(base))
        out.update(self.fields.get(cls, {}))
        return out

    def is_bool(self, annotation: ast.AST | None) -> bool:
        """``get_kwargs`` gives BooleanOptionalAction to bool fields, except ``bool | str`` ones."""
        names = set(re.findall(r"[A-Za-z_]+", _annotation_text(annotation)))
        return "bool" in names and "str" not in names

    def choices(self, annotation: ast.AST | None) -> list[str] | None:
        """Literal options, enforced as argparse ``choices`` only when ``str`` is not also allowed."""
        if annotation is None or "str" in set(re.findall(r"[A-Za-z_]+", _annotation_text(annotation))):
            return None
        for node in ast.walk(annotation):
            values = _literal_values(node)
            if values:
                return values
            if isinstance(node, ast.Name) and node.id in self.literals:
                return self.literals[node.id]
        return None


def _add_flag(out: dict[str, dict], flags: list[str], annotation, types: _Types, boolean: bool) -> None:
    longs = [f for f in flags if f.startswith("--")]
    choices = types.choices(annotation)
    for flag in longs:
        entry: dict = {}
        if choices and not boolean:
            entry["choices"] = sorted(choices)
        out[flag] = entry
        if boolean:
            out["--no-" + flag[2:]] = {}


def vllm_flags(root: Path) -> dict[str, dict]:
    config_files = sorted((root / "vllm" / "config").glob("*.py"))
    cli_args = root / "vllm" / "entrypoints" / "openai" / "cli_args.py"
    arg_utils = root / "vllm" / "engine" / "arg_utils.py"
    types = _Types([*config_files, cli_args, arg_utils])
    out: dict[str, dict] = {}

    # make_arg_parser's own arguments, then FrontendArgs fields
    tree = ast.parse(cli_args.read_text(encoding="utf-8"))
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef) and fn.name == "make_arg_parser":
            for call in ast.walk(fn):
                if isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "add_argument":
                    flags = [
                        a.value for a in call.args if isinstance(a, ast.Constant) and str(a.value)[:1] == "-"
                    ]
                    boolean = any(
                        k.arg == "action" and "BooleanOptionalAction" in _annotation_text(k.value)
                        for k in call.keywords
                    )
                    _add_flag(out, flags, None, types, boolean)
    for name, annotation in types.all_fields("FrontendArgs").items():
        _add_flag(out, ["--" + name.replace("_", "-")], annotation, types, types.is_bool(annotation))

    # EngineArgs / AsyncEngineArgs
    tree = ast.parse(arg_utils.read_text(encoding="utf-8"))
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        if cls.name not in ("EngineArgs", "AsyncEngineArgs"):
            continue
        for fn in (n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "add_cli_args"):
            kwargs_of: dict[str, str] = {}
            for node in ast.walk(fn):
                if (
                    isinstance(node, ast.Assign)
                    and isinstance(node.value, ast.Call)
                    and _annotation_text(node.value.func) == "get_kwargs"
                    and isinstance(node.targets[0], ast.Name)
                ):
                    kwargs_of[node.targets[0].id] = _annotation_text(node.value.args[0])
            for call in ast.walk(fn):
                if not (isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "add_argument"):
                    continue
                flags = [
                    a.value for a in call.args if isinstance(a, ast.Constant) and str(a.value)[:1] == "-"
                ]
                annotation = None
                boolean = False
                for k in call.keywords:
                    if k.arg == "action" and "BooleanOptionalAction" in _annotation_text(k.value):
                        boolean = True
                    if k.arg is not None:
                        continue
                    # **xxx_kwargs["field"]  or  **{**xxx_kwargs["field"], "default": None}
                    spreads = [k.value]
                    if isinstance(k.value, ast.Dict):
                        spreads = [
                            v for key, v in zip(k.value.keys, k.value.values, strict=True) if key is None
                        ]
                    for sub in spreads:
                        if (
                            isinstance(sub, ast.Subscript)
                            and isinstance(sub.value, ast.Name)
                            and isinstance(sub.slice, ast.Constant)
                            and sub.value.id in kwargs_of
                        ):
                            annotation = types.field(kwargs_of[sub.value.id], sub.slice.value)
                            boolean = boolean or types.is_bool(annotation)
                _add_flag(out, flags, annotation, types, boolean)
    return dict(sorted(out.items()))


def bench_serve_flags(root: Path) -> dict[str, dict]:
    """``vllm bench serve`` flags: every ``add_argument`` in vllm/benchmarks/serve.py and the dataset parser."""
    out: dict[str, dict] = {}
    files = [
        root / "vllm" / "benchmarks" / "serve.py",
        *sorted((root / "vllm" / "benchmarks" / "datasets").glob("*.py")),
    ]
    for path in files:
        if not path.exists():
            continue
        for call in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "add_argument":
                flags = [
                    a.value for a in call.args if isinstance(a, ast.Constant) and str(a.value)[:2] == "--"
                ]
                boolean = any(
                    k.arg == "action" and "BooleanOptionalAction" in _annotation_text(k.value)
                    for k in call.keywords
                )
                for flag in flags:
                    out[flag] = {}
                    if boolean:
                        out["--no-" + flag[2:]] = {}
    return dict(sorted(out.items()))


def ascend_additional_config(path: Path) -> dict[str, list[str]]:
    """Top-level ``--additional-config`` keys and the keys of ``ascend_compilation_config``."""
    text = path.read_text(encoding="utf-8")
    top = set(re.findall(r'additional_config\.get\(\s*"(\w+)"', text))
    top |= set(re.findall(r'_get_config_value\(\s*additional_config,\s*"(\w+)"', text))
    tree = ast.parse(text)
    nested: dict[str, list[str]] = {}
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        if cls.name == "AscendCompilationConfig":
            for fn in (n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"):
                nested["ascend_compilation_config"] = sorted(
                    a.arg for a in fn.args.args + fn.args.kwonlyargs if a.arg != "self"
                )
    return {"top_level": sorted(top), **nested}


def main(argv: list[str]) -> int:
    if len(argv) != 4 or argv[1] not in ("vllm", "ascend", "bench"):
        print(__doc__, file=sys.stderr)
        return 2
    kind, where, version = argv[1], Path(argv[2]), argv[3]
    if kind == "vllm":
        doc = {
            "package": "vllm",
            "version": version,
            "source": (
                f"vllm {version} wheel from PyPI: vllm/entrypoints/openai/cli_args.py (make_arg_parser, "
                "FrontendArgs), vllm/engine/arg_utils.py (EngineArgs.add_cli_args), vllm/config/*.py (field types)"
            ),
            "extracted_by": "scripts/extract_vllm_flags.py",
            "flags": vllm_flags(where),
        }
    elif kind == "bench":
        doc = {
            "package": "vllm",
            "version": version,
            "source": f"vllm {version} wheel from PyPI: vllm/benchmarks/serve.py (add_cli_args), "
            "vllm/benchmarks/datasets/ (add_dataset_parser)",
            "extracted_by": "scripts/extract_vllm_flags.py",
            "flags": bench_serve_flags(where),
        }
    else:
        doc = {
            "package": "vllm-ascend",
            "version": version,
            "source": f"vllm-project/vllm-ascend releases/v{version}: vllm_ascend/ascend_config.py",
            "extracted_by": "scripts/extract_vllm_flags.py",
            "additional_config": ascend_additional_config(where),
        }
    json.dump(doc, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
