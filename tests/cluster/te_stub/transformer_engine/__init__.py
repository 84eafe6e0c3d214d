"""IMPORT-ONLY STAND-IN for NVIDIA Transformer Engine, for the cluster contract tests on a CPU. Not the real thing.

Megatron-Bridge imports `transformer_engine` unguarded in several modules (LoRA layers, TE layer specs), so its
configs, recipes, validation, tokenizers and dataset builders cannot be imported without it, although none of
them runs TE code. This package lets those imports succeed: every attribute of every `transformer_engine.*`
module is a placeholder class that can be named, subclassed and decorated with, but raises as soon as anything
instantiates or calls it. A test that reaches TE code therefore fails loudly instead of passing on a fake.

It is put on sys.path only by tests/cluster (make test-cluster); it is never installed and never shipped.
The dist-info beside it reports version 2.14.0, the Transformer Engine of the NeMo 26.04 container.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types

STAND_IN = True
__version__ = "2.14.0"


class StandInError(RuntimeError):
    """Transformer Engine code was reached on the stand-in: only the real GPU container can run it."""


def _refuse(name: str):
    def refuse(*args, **kwargs):
        raise StandInError(f"transformer_engine stand-in: {name} cannot run on a CPU contract test")

    return refuse


class _Placeholder(type):
    """Metaclass of every placeholder: subclassing works, attribute access yields more placeholders, calls fail."""

    def __getattr__(cls, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return _placeholder(f"{cls.__qualname__}.{attr}")

    def __call__(cls, *args, **kwargs):
        if cls.__dict__.get("_subclassed_by_user"):
            return super().__call__(*args, **kwargs)
        raise StandInError(
            f"transformer_engine stand-in: {cls.__qualname__} cannot run on a CPU contract test"
        )


def _placeholder(qualname: str) -> type:
    # torch.nn.Module as the base: libraries register TE classes as modules (issubclass checks at import time)
    import torch

    attrs = {"__qualname__": qualname, "__module__": __name__}
    return _Placeholder(qualname.rsplit(".", 1)[-1], (torch.nn.Module,), attrs)


class _StandInModule(types.ModuleType):
    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        value = _placeholder(f"{self.__name__}.{attr}")
        setattr(self, attr, value)
        return value


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves any `transformer_engine.*` / `transformer_engine_torch` submodule as a stand-in module."""

    PREFIXES = ("transformer_engine.", "transformer_engine_torch")

    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith(self.PREFIXES):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _StandInModule(spec.name)
        module.__path__ = []
        module.STAND_IN = True
        return module

    def exec_module(self, module):
        pass


if not any(isinstance(f, _Finder) for f in sys.meta_path):
    sys.meta_path.insert(0, _Finder())


def __getattr__(attr):
    if attr.startswith("__") and attr.endswith("__"):
        raise AttributeError(attr)
    return _placeholder(f"transformer_engine.{attr}")
