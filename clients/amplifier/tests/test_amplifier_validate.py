"""`amplifier-core validate hook|tool` (the kernel's own structural and behavioural
checks) on the installed package's modules, and the entry points Amplifier loads them by."""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1]


def _cli() -> list[str]:
    exe = Path(sys.executable).with_name("amplifier-core")
    return [str(exe)] if exe.exists() else [shutil.which("amplifier-core") or "amplifier-core"]


@pytest.mark.parametrize(("kind", "module"), [("hook", "amplifier_module_hooks_amber"), ("tool", "amplifier_module_tool_amber")])
def test_the_kernel_validator_passes(kind, module):
    out = subprocess.run([*_cli(), "validate", kind, str(PKG / module)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "PASSED" in out.stdout and "0 errors, 0 warnings" in out.stdout, out.stdout


def test_the_entry_points_name_the_modules():
    eps = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="amplifier.modules")}
    assert eps.get("hooks-amber") == "amplifier_module_hooks_amber:mount"
    assert eps.get("tool-amber") == "amplifier_module_tool_amber:mount"
